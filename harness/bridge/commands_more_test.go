package bridge

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadTailCommand(t *testing.T) {
	lines := []string{"one", "two", "three", "four", "five"}
	content := strings.Join(lines, "\n") // no final newline
	numbered := func(from, to int) string {
		var b strings.Builder
		for i := from; i <= to && i <= len(lines); i++ {
			b.WriteString(fmt.Sprintf("%6d\t%s\n", i, lines[i-1]))
		}
		return b.String()
	}
	tests := map[string]struct {
		back, limit int
		want        string
	}{
		"last line":        {1, 0, numbered(5, 5)},
		"last three":       {3, 0, numbered(3, 5)},
		"two of last four": {4, 2, numbered(2, 3)},
		"more than all":    {50, 0, numbered(1, 5)},
		"zero is the last": {0, 0, numbered(5, 5)},
	}
	for _, sh := range shells(t) {
		for _, name := range trickyNames {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, name), content, 0o644)
			for tn, tc := range tests {
				out, stderr, code := run(t, sh, dir, ReadTailCommand(name, tc.back, tc.limit))
				if code != 0 || out != tc.want {
					t.Errorf("%s: tail read %q %s: code %d stderr %q\n%s", sh.name, name, tn, code, stderr, cmp.Diff(tc.want, out))
				}
			}
		}
		out, stderr, code := run(t, sh, t.TempDir(), ReadTailCommand("missing", 1, 0))
		if code != 1 || out != "" || stderr != "read: missing: no such file\n" {
			t.Errorf("%s: missing file: code %d out %q stderr %q", sh.name, code, out, stderr)
		}
	}
}

func TestAppendCommand(t *testing.T) {
	for _, sh := range shells(t) {
		for _, name := range trickyNames {
			dir := t.TempDir()
			p := filepath.Join(dir, "sub", name)
			rel := filepath.Join("sub", name)
			for i, chunk := range []string{"first\n", tricky, "a\x00b"} {
				out, stderr, code := run(t, sh, dir, AppendCommand(rel, chunk))
				want := fmt.Sprintf("Appended %d bytes to %s\n", len(chunk), rel)
				if code != 0 || out != want {
					t.Fatalf("%s: append %d to %q: code %d out %q stderr %q", sh.name, i, name, code, out, stderr)
				}
			}
			if got := readFile(t, p); got != "first\n"+tricky+"a\x00b" {
				t.Errorf("%s: %q holds %q", sh.name, name, got)
			}
		}
	}
}

func TestUnavailableSpec(t *testing.T) {
	m := UnavailableSpec{Tool: "TodoList", Why: "no to-do list here; it's 'quoted'"}.Mapping()
	sc, err := m.Build(json.RawMessage(`{"todos":[{"title":"x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	cmd, _ := json.Marshal(map[string]string{"cmd": sc.Script})
	tool, args, ok := Table{m}.Reverse("exec_command", string(cmd))
	if !ok || tool != "TodoList" || args != `{"todos":[{"title":"x"}]}` {
		t.Errorf("reverse = %q %q %v", tool, args, ok)
	}
	if _, err := m.Build(json.RawMessage(`[1]`)); err == nil {
		t.Error("arguments that are not an object: no error")
	}
	for _, sh := range shells(t) {
		out, stderr, code := run(t, sh, t.TempDir(), sc.Script)
		if code != 2 || out != "" || stderr != "harnessflow: TodoList cannot run here: no to-do list here; it's 'quoted'\n" {
			t.Errorf("%s: code %d out %q stderr %q", sh.name, code, out, stderr)
		}
	}
}

func TestWriteSpecAppendMode(t *testing.T) {
	m := WriteSpec{Tool: "Write", Mode: "mode", Append: "append"}.Mapping()
	for mode, want := range map[string]string{`"append"`: " >> ", `"overwrite"`: " > ", `null`: " > "} {
		sc, err := m.Shell(json.RawMessage(`{"path":"f","content":"x","mode":` + mode + `}`))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(sc.Script, want+"f &&") {
			t.Errorf("mode %s: %q lacks %q", mode, sc.Script, want)
		}
	}
}

func TestWallTime(t *testing.T) {
	tests := map[string]struct {
		text, want string
		ok         bool
	}{
		"framed":     {"Chunk ID: 1\nWall time: 0.0123 seconds\nProcess exited with code 0\nOutput:\nx\n", "0.0123", true},
		"in output":  {"Chunk ID: 1\nOutput:\nWall time: 9 seconds\n", "", false},
		"not framed": {"Wall time: 1 seconds\n", "", false},
		"bad number": {"Chunk ID: 1\nWall time: soon seconds\nOutput:\n", "", false},
	}
	for name, tc := range tests {
		got, ok := WallTime(tc.text)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: WallTime = %q %v, want %q %v", name, got, ok, tc.want, tc.ok)
		}
	}
}
