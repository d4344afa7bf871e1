package main

import (
	"strings"
	"testing"
)

// --variant names a registered harness and one of its declared variants;
// anything else is refused with the choices. --terminus-exec is an alias of
// the terminus-2 exec variant.
func TestVariantFlag(t *testing.T) {
	const req = `{"model":"m","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]}`
	for _, c := range []struct {
		args []string
		code int
		want string // in stderr (code 2) or stdout (code 0)
	}{
		{[]string{"--variant", "nosuch=foo", "--harness", "minimal"}, 2, `--variant: unknown harness "nosuch"`},
		{[]string{"--variant", "terminus-2=yaml", "--harness", "terminus-2"}, 2, `unknown value "yaml" (choices: format: json (default) or xml; exec: tmux (default) or plain)`},
		{[]string{"--variant", "terminus-2=xml,json", "--harness", "terminus-2"}, 2, `two values of format`},
		{[]string{"--variant", "minimal=fork", "--harness", "minimal"}, 2, `(it has no variants)`},
		{[]string{"--variant", "qwen-code=fok", "--harness", "qwen-code"}, 2, `choices: request: fork or none (default)`},
		{[]string{"--variant", "terminus-2=xml,plain", "--harness", "terminus-2"}, 0, `<response>`},
		{[]string{"--terminus-exec", "plain", "--harness", "terminus-2"}, 0, `"temperature":0.7`},
		{[]string{"--terminus-exec", "screen", "--harness", "terminus-2"}, 2, `--terminus-exec: want tmux or plain`},
	} {
		args := append([]string{"shape", "--wire", "chat"}, append(c.args, "-")...)
		code, out, errOut := cli(t, req, args...)
		got := out
		if c.code != 0 {
			got = errOut
		}
		if code != c.code || !strings.Contains(got, c.want) {
			t.Errorf("%v: exit %d, stdout %.200q, stderr %q; want %d and %q", c.args, code, out, errOut, c.code, c.want)
		}
	}
}

// `harnesses` lists each harness's variants under it, the default starred.
func TestHarnessesListsVariants(t *testing.T) {
	code, out, errOut := cli(t, "", "harnesses")
	if code != exitOK {
		t.Fatalf("harnesses: %d %s", code, errOut)
	}
	for _, want := range []string{"  variant format    json*|xml ", "  variant exec      tmux*|plain ", "  variant mode      tool*|text "} {
		if !strings.Contains(out, want) {
			t.Errorf("harnesses lacks %q:\n%s", want, out)
		}
	}
}
