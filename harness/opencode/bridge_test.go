package opencode_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/harness/opencode"
	"github.com/harnessflow/harnessflow/protocol"
)

// codexShell is the client shell of Codex 0.171 (exec_command).
func codexShell(t *testing.T) bridge.ClientShell {
	t.Helper()
	tools := []protocol.ToolSpec{{Type: protocol.ToolTypeFunction, Name: "exec_command",
		Parameters: json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"},"workdir":{"type":"string"},"yield_time_ms":{"type":"number"}},"required":["cmd"]}`)}}
	c := bridge.DetectShell(tools)
	if c.Kind != bridge.ShellExecCommand {
		t.Fatalf("client shell %v, want exec_command", c.Kind)
	}
	return c
}

// run bridges one opencode call to Codex's exec_command and runs the
// command as Codex would (bash -lc in the workdir, else in dir).
func run(t *testing.T, dir, tool string, args any) (string, int) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := opencode.Table().Lookup(tool)
	if !ok {
		t.Fatalf("no mapping for %s", tool)
	}
	sc, err := m.Build(raw)
	if err != nil {
		t.Fatalf("%s %s: %v", tool, raw, err)
	}
	sc.CallID = "call_1"
	item, err := codexShell(t).Item(sc)
	if err != nil {
		t.Fatal(err)
	}
	fc, ok := item.(*protocol.FunctionCall)
	if !ok || fc.Name != "exec_command" {
		t.Fatalf("%s became %#v, want an exec_command call", tool, item)
	}
	var ex struct{ Cmd, Workdir string }
	if err := json.Unmarshal([]byte(fc.Arguments), &ex); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", ex.Cmd)
	cmd.Dir = dir
	if ex.Workdir != "" {
		cmd.Dir = ex.Workdir
	}
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	// The reverse direction: the client's call goes back to the model as
	// the opencode call it made.
	back, backArgs, ok := opencode.Table().ReverseItem(fc)
	if !ok || back != tool {
		t.Errorf("%s: reversed to %q (%v)", tool, back, ok)
	} else if tool != "bash" && backArgs != string(raw) {
		t.Errorf("%s: reversed arguments %s, want %s", tool, backArgs, raw)
	}
	return string(out), code
}

// Each bridged tool does on a real directory what the opencode tool means,
// with file names holding spaces and quotes.
func TestBridgedTools(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	name := filepath.Join(dir, `it's a "file".txt`)

	if out, code := run(t, dir, "write", map[string]any{"filePath": name, "content": "one\ntwo $HOME `x`\nthree\n"}); code != 0 {
		t.Fatalf("write: exit %d: %s", code, out)
	}
	if data, _ := os.ReadFile(name); string(data) != "one\ntwo $HOME `x`\nthree\n" {
		t.Errorf("write: file holds %q", data)
	}

	out, code := run(t, dir, "read", map[string]any{"filePath": name, "offset": 2, "limit": 1})
	if code != 0 || out != "     2\ttwo $HOME `x`\n" {
		t.Errorf("read: exit %d, %q", code, out)
	}
	if out, code := run(t, dir, "read", map[string]any{"filePath": name + ".missing"}); code == 0 {
		t.Errorf("read of a missing file succeeded: %q", out)
	}

	if out, code := run(t, dir, "edit", map[string]any{"filePath": name, "oldString": "two $HOME", "newString": "2 'quoted'"}); code != 0 {
		t.Fatalf("edit: exit %d: %s", code, out)
	}
	if data, _ := os.ReadFile(name); string(data) != "one\n2 'quoted' `x`\nthree\n" {
		t.Errorf("edit: file holds %q", data)
	}
	if out, code := run(t, dir, "edit", map[string]any{"filePath": name, "oldString": "absent", "newString": "x"}); code == 0 {
		t.Errorf("edit of absent text succeeded: %q", out)
	}
	if err := os.WriteFile(filepath.Join(dir, "r.txt"), []byte("a a a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := run(t, dir, "edit", map[string]any{"filePath": filepath.Join(dir, "r.txt"), "oldString": "a", "newString": "b", "replaceAll": true}); code != 0 {
		t.Fatalf("edit replaceAll: exit %d: %s", code, out)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "r.txt")); string(data) != "b b b" {
		t.Errorf("edit replaceAll: file holds %q", data)
	}

	sub := filepath.Join(dir, "sub dir")
	if err := os.MkdirAll(filepath.Join(sub, "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"x.go", "deep/y.go", "deep/z.txt"} {
		if err := os.WriteFile(filepath.Join(sub, f), []byte("func main() {}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, code = run(t, dir, "glob", map[string]any{"pattern": "**/*.go", "path": sub})
	if code != 0 || !strings.Contains(out, filepath.Join(sub, "x.go")) || !strings.Contains(out, filepath.Join(sub, "deep", "y.go")) || strings.Contains(out, "z.txt") {
		t.Errorf("glob: exit %d, %q", code, out)
	}

	out, code = run(t, dir, "grep", map[string]any{"pattern": "func +main", "path": sub, "include": "*.go"})
	if code != 0 || strings.Count(out, ":1:func main() {}") != 2 || strings.Contains(out, "z.txt") {
		t.Errorf("grep: exit %d, %q", code, out)
	}
	if _, code := run(t, dir, "grep", map[string]any{"pattern": "nothing-matches-this", "path": sub}); code != 1 {
		t.Errorf("grep without a match: exit %d, want 1", code)
	}

	out, code = run(t, dir, "bash", map[string]any{"command": "pwd; printf '%s\\n' \"$0\" >/dev/null; ls", "workdir": sub, "description": "look"})
	if code != 0 || !strings.HasPrefix(out, sub+"\n") || !strings.Contains(out, "x.go") {
		t.Errorf("bash: exit %d, %q", code, out)
	}
}

// Every tool has a schema with "$schema" and valid JSON; the tools without
// a bridge are exactly skill, task, todowrite and webfetch.
func TestToolSet(t *testing.T) {
	table := opencode.Table()
	if err := table.Validate(); err != nil {
		t.Fatal(err)
	}
	var unbridged []string
	for _, n := range opencode.ToolNames {
		if _, ok := table.Lookup(n); !ok {
			unbridged = append(unbridged, n)
		}
	}
	if strings.Join(unbridged, ",") != "skill,task,todowrite,webfetch" {
		t.Errorf("tools without a bridge: %v", unbridged)
	}
}
