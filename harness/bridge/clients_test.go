package bridge

import (
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/protocol"
)

// The shell tools of the inbound clients, in their schemas' shapes
// (descriptions our own).
const (
	claudeBash = `{"type":"function","name":"Bash","parameters":{"type":"object","properties":{` +
		`"command":{"type":"string","description":"The command to run"},` +
		`"timeout":{"type":"number","description":"Optional timeout in milliseconds"},` +
		`"description":{"type":"string"},"run_in_background":{"type":"boolean"}},"required":["command"]}}`
	opencodeBash = `{"type":"function","name":"bash","parameters":{"type":"object","properties":{` +
		`"command":{"type":"string"},"timeout":{"type":"number","description":"Optional timeout in milliseconds"},` +
		`"workdir":{"type":"string"},"description":{"type":"string"}},"required":["command","description"]}}`
	secondsBash = `{"type":"function","name":"bash","parameters":{"type":"object","properties":{` +
		`"command":{"type":"string"},"timeout":{"type":"number","description":"Timeout in seconds"}},"required":["command"]}}`
)

// TestInboundClientShells: Claude Code's Bash and opencode's bash are
// found as the client's shell; a bridged call fills their timeout (in
// milliseconds), opencode's required description and workdir, and leaves a
// timeout of another unit and an optional description out.
func TestInboundClientShells(t *testing.T) {
	for _, c := range []struct {
		name, tool string
		want       string
	}{
		{"claude code", claudeBash, `{"command":"cd /w || exit 1; ls -la","timeout":5000}`},
		{"opencode", opencodeBash, `{"command":"ls -la","workdir":"/w","timeout":5000,"description":"Run: ls -la"}`},
		{"seconds", secondsBash, `{"command":"cd /w || exit 1; ls -la"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			shell := DetectShell(tools(t, updatePlan, c.tool))
			if shell.Kind != ShellExecCommand || shell.key() != "command" {
				t.Fatalf("detected %v %q key %q", shell.Kind, shell.Name, shell.key())
			}
			item, err := shell.Item(ShellCall{CallID: "c1", Script: "ls -la", Workdir: "/w", TimeoutMS: 5000})
			if err != nil {
				t.Fatal(err)
			}
			fc, ok := item.(*protocol.FunctionCall)
			if !ok || fc.Name != shell.Name || fc.Arguments != c.want {
				t.Errorf("call %+v\nwant arguments %s", item, c.want)
			}
		})
	}
}

func TestDescribeLine(t *testing.T) {
	long := "echo " + strings.Repeat("a", 70)
	for in, want := range map[string]string{
		"# bridge: note\nmake test\nmore": "Run: make test",
		"":                                "Run: ",
		long:                              "Run: " + long[:57] + "...",
	} {
		if got := describeLine(in); got != want {
			t.Errorf("describeLine(%q) = %q, want %q", in, got, want)
		}
	}
}
