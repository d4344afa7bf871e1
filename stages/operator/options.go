package operator

import (
	"fmt"
	"slices"
	"strings"
)

// Options are a stage's options as a kind's New reads them: by name, each
// typed. A missing option is its zero value; an option of another type, or
// one New never read, is an error naming the kind and the option.
type Options struct {
	kind string
	m    map[string]any
	used map[string]bool
}

// NewOptions returns options for a kind called kind (for tests of a
// kind's New; New makes them itself).
func NewOptions(kind string, m map[string]any) *Options {
	return &Options{kind: kind, m: m, used: map[string]bool{}}
}

// Errorf returns an error about option name of the stage.
func (o *Options) Errorf(name, format string, args ...any) error {
	return fmt.Errorf("operator: stage %q: option %q: %s", o.kind, name, fmt.Sprintf(format, args...))
}

func (o *Options) get(name string) (any, bool) {
	o.used[name] = true
	v, ok := o.m[name]
	return v, ok
}

// Bool reads a boolean option.
func (o *Options) Bool(name string) (bool, error) {
	v, ok := o.get(name)
	if !ok {
		return false, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, o.Errorf(name, "want a boolean, got %s", typeName(v))
	}
	return b, nil
}

// String reads a string option.
func (o *Options) String(name string) (string, error) {
	v, ok := o.get(name)
	if !ok {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", o.Errorf(name, "want a string, got %s", typeName(v))
	}
	return s, nil
}

// Strings reads a list of strings.
func (o *Options) Strings(name string) ([]string, error) {
	v, ok := o.get(name)
	if !ok {
		return nil, nil
	}
	switch l := v.(type) {
	case []string:
		return l, nil
	case []any:
		out := make([]string, len(l))
		for i, e := range l {
			s, ok := e.(string)
			if !ok {
				return nil, o.Errorf(name, "element %d: want a string, got %s", i+1, typeName(e))
			}
			out[i] = s
		}
		return out, nil
	}
	return nil, o.Errorf(name, "want a list of strings, got %s", typeName(v))
}

// unused reports the options New did not read.
func (o *Options) unused() error {
	var extra, known []string
	for k := range o.m {
		if !o.used[k] {
			extra = append(extra, k)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	for k := range o.used {
		known = append(known, k)
	}
	slices.Sort(extra)
	slices.Sort(known)
	want := "it takes none"
	if len(known) > 0 {
		want = "want " + strings.Join(known, ", ")
	}
	return fmt.Errorf("operator: stage %q: unknown option %q (%s)", o.kind, extra[0], want)
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case int, int64, float64, int32, uint64:
		return "a number"
	case []any, []string:
		return "a list"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("%T", v)
}
