package bridge

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// EditsSpec runs its replacements in order; the first that fails stops
// the rest with its message and exit status 1.
func TestEditsSpec(t *testing.T) {
	m := EditsSpec{Tool: "edit"}.Mapping()
	tests := []struct {
		name, before, args, after string
		code                      int
		stderr                    string
	}{
		{"two edits", "a\nb\nc\n", `{"path":"f","edits":[{"oldText":"a","newText":"A"},{"oldText":"c","newText":"C"}]}`, "A\nb\nC\n", 0, ""},
		{"second fails, first stays", "a\nb\n", `{"path":"f","edits":[{"oldText":"a","newText":"A"},{"oldText":"zz","newText":"Z"}]}`, "A\nb\n", 1, "old string not found"},
		{"first fails, second never runs", "a\nb\n", `{"path":"f","edits":[{"oldText":"zz","newText":"Z"},{"oldText":"b","newText":"B"}]}`, "a\nb\n", 1, "old string not found"},
	}
	for _, sh := range shells(t) {
		for _, tt := range tests {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "f"), tt.before, 0o644)
			sc, err := m.Build(json.RawMessage(tt.args))
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			_, stderr, code := run(t, sh, dir, sc.Script)
			got, _ := os.ReadFile(filepath.Join(dir, "f"))
			if code != tt.code || string(got) != tt.after || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("%s (%s): code %d, file %q, stderr %q; want %d, %q, %q", tt.name, sh.name, code, got, stderr, tt.code, tt.after, tt.stderr)
			}
		}
	}
	for _, bad := range []string{`{"path":"f"}`, `{"path":"f","edits":[]}`, `{"path":"f","edits":"x"}`, `{"edits":[{"oldText":"a","newText":"b"}]}`,
		`{"path":"f","edits":[{"oldText":1,"newText":"b"}]}`, `[1]`} {
		if _, err := m.Build(json.RawMessage(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// An unavailable tool's call fails on the client with a message naming
// the tool and the reason.
func TestUnavailableSpecReverses(t *testing.T) {
	m := UnavailableSpec{Tool: "websearch", Why: "no search engine here"}.Mapping()
	sc, err := m.Build(json.RawMessage(`{"query":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, sh := range shells(t) {
		stdout, stderr, code := run(t, sh, t.TempDir(), sc.Script)
		if code != 2 || stdout != "" || stderr != "harnessflow: websearch cannot run here: no search engine here\n" {
			t.Errorf("%s: code %d, stdout %q, stderr %q", sh.name, code, stdout, stderr)
		}
	}
	if tool, args, ok := (Table{m}).Reverse("exec_command", `{"cmd":`+quoteJSON(sc.Script)+`}`); !ok || tool != "websearch" || args != `{"query":"x"}` {
		t.Errorf("reverse: %q %q %v", tool, args, ok)
	}
	if _, err := m.Build(json.RawMessage(`"x"`)); err == nil {
		t.Error("arguments that are not an object: no error")
	}
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
