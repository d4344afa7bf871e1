package harness

import (
	"errors"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/pipeline"
)

func TestCheckVariant(t *testing.T) {
	s := Spec{Name: "t", Variants: []VariantSpec{
		{Name: "format", Values: []string{"json", "xml"}, Default: "json"},
		{Name: "exec", Values: []string{"tmux", "plain"}, Default: "tmux"},
		{Name: "request", Values: []string{"fork"}},
	}}
	const choices = "(choices: format: json (default) or xml; exec: tmux (default) or plain; request: fork or none (default))"
	tests := []struct {
		variant string
		err     string // "" for valid
	}{
		{"", ""},
		{"xml", ""},
		{"XML, plain", ""},
		{"json,tmux,fork", ""},
		{"plain,", ""},
		{"yaml", `harness "t": variant "yaml": unknown value "yaml" ` + choices},
		{"xml,json", `harness "t": variant "xml,json": two values of format ` + choices},
		{"xml,screen", `unknown value "screen"`},
	}
	for _, tt := range tests {
		err := s.CheckVariant(tt.variant)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("CheckVariant(%q) = %v", tt.variant, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("CheckVariant(%q) = %v, want %q", tt.variant, err, tt.err)
		case err != nil:
			var ve *VariantError
			if !errors.As(err, &ve) || ve.Harness != "t" || ve.Variant != tt.variant {
				t.Errorf("CheckVariant(%q) = %#v, want a *VariantError", tt.variant, err)
			}
		}
	}
	if err := (Spec{Name: "n"}).CheckVariant("fork"); err == nil || !strings.Contains(err.Error(), "(it has no variants)") {
		t.Errorf("a harness without variants: %v", err)
	}
}

func TestRegisterChecksVariants(t *testing.T) {
	for _, c := range []struct {
		name string
		vs   []VariantSpec
		err  string
	}{
		{"no name", []VariantSpec{{Values: []string{"a"}}}, "without a name or values"},
		{"no values", []VariantSpec{{Name: "d"}}, "without a name or values"},
		{"upper case", []VariantSpec{{Name: "d", Values: []string{"Fork"}}}, "not lower case"},
		{"comma", []VariantSpec{{Name: "d", Values: []string{"a,b"}}}, "holds a comma"},
		{"shared value", []VariantSpec{{Name: "d", Values: []string{"a"}}, {Name: "e", Values: []string{"a"}}}, `value "a" in both d and e`},
		{"bad default", []VariantSpec{{Name: "d", Values: []string{"a"}, Default: "b"}}, `default "b" is not one of its values`},
	} {
		s := Spec{Name: "variants-test-" + strings.ReplaceAll(c.name, " ", "-"), Request: func(*Env) (*pipeline.Graph, error) { return nil, nil }, Variants: c.vs}
		if err := Register(s); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: Register = %v, want %q", c.name, err, c.err)
		}
		if _, ok := Lookup(s.Name); ok {
			t.Errorf("%s: a refused spec is registered", c.name)
		}
	}
}
