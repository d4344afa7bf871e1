package promtext

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Check reports the first way page breaks the text exposition format as
// this package writes it, for tests of /metrics pages: every line ends in a
// newline; a family has at most one HELP and one TYPE line, TYPE is a known
// type and comes before the family's samples; a family's samples are not
// interleaved with another's; names, label names and escapes are well
// formed; values are numbers; no series appears twice; and every histogram
// series has a +Inf bucket and a _count.
func Check(page []byte) error {
	if len(page) > 0 && page[len(page)-1] != '\n' {
		return fmt.Errorf("promtext: page does not end in a newline")
	}
	types := map[string]string{}
	helps := map[string]bool{}
	closed := map[string]bool{}
	series := map[string]bool{}
	infs, counts := map[string]bool{}, map[string]bool{}
	current := ""
	enter := func(family string) error {
		if family == current {
			return nil
		}
		if closed[family] {
			return fmt.Errorf("family %s split by another family", family)
		}
		if current != "" {
			closed[current] = true
		}
		current = family
		return nil
	}
	for i, line := range strings.Split(strings.TrimSuffix(string(page), "\n"), "\n") {
		if len(page) == 0 {
			break
		}
		err := func() error {
			if rest, ok := strings.CutPrefix(line, "# "); ok {
				kw, rest, _ := strings.Cut(rest, " ")
				name, text, _ := strings.Cut(rest, " ")
				if kw != "HELP" && kw != "TYPE" {
					return nil // a comment
				}
				if !validName(name, true) {
					return fmt.Errorf("bad metric name %q", name)
				}
				if err := enter(name); err != nil {
					return err
				}
				if kw == "HELP" {
					if helps[name] {
						return fmt.Errorf("second HELP for %s", name)
					}
					helps[name] = true
					return checkEscapes(text, false)
				}
				if _, ok := types[name]; ok {
					return fmt.Errorf("second TYPE for %s", name)
				}
				switch text {
				case "counter", "gauge", "histogram", "summary", "untyped":
				default:
					return fmt.Errorf("unknown type %q", text)
				}
				types[name] = text
				return nil
			}
			name, labels, value, err := splitSample(line)
			if err != nil {
				return err
			}
			family, suffix := name, ""
			for _, s := range [...]string{"_bucket", "_sum", "_count"} {
				if base, ok := strings.CutSuffix(name, s); ok && types[base] == "histogram" {
					family, suffix = base, s
				}
			}
			if _, ok := types[family]; !ok {
				return fmt.Errorf("sample of %s before its TYPE", name)
			}
			if err := enter(family); err != nil {
				return err
			}
			key := name + "{" + strings.Join(labels, ",") + "}"
			if series[key] {
				return fmt.Errorf("series %s twice", key)
			}
			series[key] = true
			if _, err := strconv.ParseFloat(value, 64); err != nil {
				return fmt.Errorf("bad value %q", value)
			}
			if types[family] == "histogram" {
				var rest []string
				le := ""
				for _, l := range labels {
					if v, ok := strings.CutPrefix(l, "le="); ok {
						le = v
					} else {
						rest = append(rest, l)
					}
				}
				id := family + "{" + strings.Join(rest, ",") + "}"
				switch {
				case suffix == "_bucket" && le == `"+Inf"`:
					infs[id] = true
				case suffix == "_count":
					counts[id] = true
				}
			}
			return nil
		}()
		if err != nil {
			return fmt.Errorf("promtext: line %d %q: %w", i+1, line, err)
		}
	}
	for id := range counts {
		if !infs[id] {
			return fmt.Errorf("promtext: histogram %s has no +Inf bucket", id)
		}
	}
	for id := range infs {
		if !counts[id] {
			return fmt.Errorf("promtext: histogram %s has no _count", id)
		}
	}
	return nil
}

// splitSample splits a sample line into its name, its labels (name="value"
// as written) and its value.
func splitSample(line string) (name string, labels []string, value string, err error) {
	end := strings.IndexAny(line, "{ ")
	if end < 0 {
		return "", nil, "", fmt.Errorf("no value")
	}
	name, rest := line[:end], line[end:]
	if !validName(name, true) {
		return "", nil, "", fmt.Errorf("bad metric name %q", name)
	}
	if rest[0] == '{' {
		rest = rest[1:]
		for !strings.HasPrefix(rest, "}") {
			eq := strings.Index(rest, `="`)
			if eq < 0 || !validName(rest[:eq], false) {
				return "", nil, "", fmt.Errorf("bad label in %q", rest)
			}
			j := eq + 2
			for ; j < len(rest) && rest[j] != '"'; j++ {
				if rest[j] == '\\' {
					j++
				}
			}
			if j >= len(rest) {
				return "", nil, "", fmt.Errorf("unterminated label value")
			}
			if err := checkEscapes(rest[eq+2:j], true); err != nil {
				return "", nil, "", err
			}
			labels = append(labels, rest[:j+1])
			rest = rest[j+1:]
			if r, ok := strings.CutPrefix(rest, ","); ok {
				rest = r
			} else if !strings.HasPrefix(rest, "}") {
				return "", nil, "", fmt.Errorf("labels not separated")
			}
		}
		rest = rest[1:]
	}
	value, ok := strings.CutPrefix(rest, " ")
	if !ok || value == "" || strings.Contains(value, " ") {
		return "", nil, "", fmt.Errorf("bad value part %q", rest)
	}
	return name, labels, value, nil
}

func checkEscapes(s string, quoted bool) error {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 >= len(s) || bytes.IndexByte([]byte(`\n"`), s[i+1]) < 0 || (s[i+1] == '"' && !quoted) {
				return fmt.Errorf("bad escape in %q", s)
			}
			i++
		case '"':
			if quoted {
				return fmt.Errorf("unescaped quote in %q", s)
			}
		}
	}
	return nil
}

func validName(s string, metric bool) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		ok := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' || metric && c == ':'
		if !ok {
			return false
		}
	}
	return true
}
