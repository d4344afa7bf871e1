package harness

import (
	"fmt"
	"slices"
	"strings"
)

// VariantSpec is one dimension of a harness's variants (for terminus-2: the
// reply format, and the execution mode). A variant string names at most one
// value of each dimension, comma-separated ("xml,plain"); a dimension it
// does not name keeps its default. Variants are picked per harness by
// `--variant HARNESS=VARIANT`, a configuration file's variants table or a
// model-capabilities entry.
type VariantSpec struct {
	// Name names the dimension ("format").
	Name string
	// Values are the values the dimension takes, lower case.
	Values []string
	// Default is the value in effect when none is named; "" when the
	// default has no name of its own (the captured agent's behaviour).
	Default string
	// Doc says in one line what the values change.
	Doc string
}

// MarkedValues returns the dimension's values with mark appended to the
// default one.
func (d VariantSpec) MarkedValues(mark string) []string {
	vs := make([]string, len(d.Values))
	for i, v := range d.Values {
		vs[i] = v
		if v == d.Default {
			vs[i] += mark
		}
	}
	return vs
}

// VariantError is the error of a variant string a harness does not know.
type VariantError struct {
	// Harness is the harness name.
	Harness string
	// Variant is the variant string as given.
	Variant string
	// Problem says what is wrong with it.
	Problem string
	// Choices lists what the harness accepts, one entry per dimension
	// ("format: json (default) or xml").
	Choices []string
}

// Error implements error: the problem and every choice.
func (e *VariantError) Error() string {
	if len(e.Choices) == 0 {
		return fmt.Sprintf("harness %q: variant %q: %s (it has no variants)", e.Harness, e.Variant, e.Problem)
	}
	return fmt.Sprintf("harness %q: variant %q: %s (choices: %s)", e.Harness, e.Variant, e.Problem, strings.Join(e.Choices, "; "))
}

// choices describes the variants of s, one entry per dimension.
func (s Spec) choices() []string {
	out := make([]string, 0, len(s.Variants))
	for _, d := range s.Variants {
		vs := d.MarkedValues(" (default)")
		list := strings.Join(vs, " or ")
		if d.Default == "" {
			list = strings.Join(vs, ", ") + " or none (default)"
		}
		out = append(out, d.Name+": "+list)
	}
	return out
}

// CheckVariant checks a variant string against the harness's variants:
// every comma-separated value (case and surrounding spaces aside) belongs to
// one dimension, and no dimension is named twice. "" is always valid.
func (s Spec) CheckVariant(v string) error {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	seen := make([]bool, len(s.Variants))
	for _, tok := range strings.Split(v, ",") {
		t := strings.ToLower(strings.TrimSpace(tok))
		if t == "" {
			continue
		}
		i := slices.IndexFunc(s.Variants, func(d VariantSpec) bool { return slices.Contains(d.Values, t) })
		if i < 0 {
			return &VariantError{Harness: s.Name, Variant: v, Problem: fmt.Sprintf("unknown value %q", t), Choices: s.choices()}
		}
		if seen[i] {
			return &VariantError{Harness: s.Name, Variant: v, Problem: "two values of " + s.Variants[i].Name, Choices: s.choices()}
		}
		seen[i] = true
	}
	return nil
}

// checkVariants checks a spec's variant declarations: named dimensions,
// values that are lower case, not empty and not shared between dimensions,
// and a default among the values (or "").
func (s Spec) checkVariants() error {
	seen := map[string]string{}
	for _, d := range s.Variants {
		if d.Name == "" || len(d.Values) == 0 {
			return fmt.Errorf("variants: a dimension without a name or values")
		}
		for _, v := range d.Values {
			if v == "" || v != strings.ToLower(v) || strings.ContainsAny(v, ", ") {
				return fmt.Errorf("variants: %s: value %q is empty, not lower case or holds a comma or space", d.Name, v)
			}
			if other, dup := seen[v]; dup {
				return fmt.Errorf("variants: value %q in both %s and %s", v, other, d.Name)
			}
			seen[v] = d.Name
		}
		if d.Default != "" && !slices.Contains(d.Values, d.Default) {
			return fmt.Errorf("variants: %s: default %q is not one of its values", d.Name, d.Default)
		}
	}
	return nil
}

// CheckVariant checks a variant string for the harness called name: an
// [*UnknownHarnessError] when no harness of this build has that name, a
// [*VariantError] when the harness has no such variant.
func CheckVariant(name, variant string) error { return Default().CheckVariant(name, variant) }

// CheckVariant is [CheckVariant] for the harnesses of r.
func (r *Registry) CheckVariant(name, variant string) error {
	if err := r.CheckName(name); err != nil {
		return err
	}
	s, _ := r.Lookup(name)
	return s.CheckVariant(variant)
}
