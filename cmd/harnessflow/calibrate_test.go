package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// calibrate's usage errors exit 2 with one line naming the problem; a
// failure of the agent run (here a COMMAND that does not exist) exits 1.
func TestCalibrateCLIErrors(t *testing.T) {
	empty := t.TempDir()
	two := t.TempDir()
	for _, h := range []string{"opencode", "qwen-code"} {
		if err := os.MkdirAll(filepath.Join(two, h), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(two, h, "calibration.json"), []byte(`{}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"calibrate", "claude-code"}, exitUsage, "missing -- COMMAND"},
		{[]string{"calibrate", "--", "claude"}, exitUsage, "missing HARNESS"},
		{[]string{"calibrate", "nope", "--", "x"}, exitUsage, `unknown HARNESS "nope"`},
		{[]string{"calibrate", "claude-code", "extra", "--", "x"}, exitUsage, `unexpected argument "extra"`},
		{[]string{"calibrate", "claude-code", "--timeout", "0s", "--", "x"}, exitUsage, "--timeout must be positive"},
		{[]string{"calibrate", "--check", empty, "--", "x"}, exitUsage, "holds no HARNESS/calibration.json"},
		{[]string{"calibrate", "--check", two, "--", "x"}, exitUsage, "name the HARNESS"},
		{[]string{"calibrate", "claude-code", "--out", t.TempDir(), "--", "/nonexistent/hf-agent"}, exitError, "command not found"},
		{[]string{"calibrate", "claude-code", "--wire", "chat", "--", "x"}, exitError, "speaks the wires messages"},
	}
	for _, c := range cases {
		code, out, errOut := cli(t, "", c.args...)
		if code != c.code || out != "" || !strings.Contains(errOut, c.want) || !strings.HasPrefix(errOut, "harnessflow calibrate: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d with %q", c.args, code, out, errOut, c.code, c.want)
		}
	}
	code, _, errOut := cli(t, "", "calibrate", "--help")
	if code != exitOK || !strings.Contains(errOut, "ANTHROPIC_BASE_URL") || !strings.Contains(errOut, "--check") {
		t.Errorf("--help: exit %d, %q", code, errOut)
	}
}
