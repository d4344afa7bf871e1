package qwencode_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/qwencode"
	"github.com/harnessflow/harnessflow/protocol"
)

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// listing is FolderListing of dir read through an env with the workspace
// policy p, as the harness reads it.
func listing(dir string, p harness.WorkspacePolicy) string {
	env := &harness.Env{Workspace: harness.Workspace{Cwd: dir}, Files: p}
	return qwencode.FolderListing(dir, env.ReadWorkDir)
}

func TestFolderListing(t *testing.T) {
	dir := t.TempDir()
	touch(t, filepath.Join(dir, "b.txt"))
	touch(t, filepath.Join(dir, ".env"))
	touch(t, filepath.Join(dir, "a", "x"))
	touch(t, filepath.Join(dir, "a.txt"))
	touch(t, filepath.Join(dir, ".git", "HEAD"))
	got := listing(dir, harness.WorkspaceLocal)
	// "a.txt" < "a/" bytewise: the slash sorts after the dot.
	want := dir + "/\n├───a.txt\n├───a/\n└───b.txt"
	if got != want {
		t.Errorf("listing:\n%s\nwant:\n%s", got, want)
	}

	many := t.TempDir()
	for i := range 25 {
		touch(t, filepath.Join(many, fmt.Sprintf("f%02d", i)))
	}
	lines := strings.Split(listing(many, harness.WorkspaceLocal), "\n")
	if len(lines) != 1+qwencode.MaxListing || lines[20] != "└───f19" || lines[19] != "├───f18" {
		t.Errorf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}

	if got := listing(filepath.Join(dir, "missing"), harness.WorkspaceLocal); got != filepath.Join(dir, "missing")+"/" {
		t.Errorf("missing directory: %q", got)
	}
	if got := listing("relative/dir", harness.WorkspaceLocal); got != "relative/dir/" {
		t.Errorf("relative directory: %q", got)
	}
	if got := listing(dir, harness.WorkspaceNone); got != dir+"/" {
		t.Errorf("workspace policy none: %q", got)
	}
}

// The setup message names the client's date, the OS and the working
// directory with symbolic links resolved, and lists it.
func TestSetupMessage(t *testing.T) {
	real := t.TempDir()
	touch(t, filepath.Join(real, "go.mod"))
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symlinks:", err)
	}
	realPath, err := filepath.EvalSymlinks(real)
	if err != nil {
		t.Fatal(err)
	}
	req, err := protocol.DecodeRequest([]byte(`{"model":"qwen3-coder","input":[
		{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n<cwd>` + link + `</cwd>\n<current_date>2026-07-04</current_date>\n</environment_context>"}]},
		{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }
	turn, err := harness.Plan(context.Background(), harness.Config{Now: now}, harness.NameQwenCode, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct {
			Role    string
			Content json.RawMessage
		}
	}
	if err := json.Unmarshal(turn.Shaped.Body, &body); err != nil {
		t.Fatal(err)
	}
	var parts []struct{ Type, Text string }
	if err := json.Unmarshal(body.Messages[1].Content, &parts); err != nil || len(parts) != 1 || parts[0].Type != "text" {
		t.Fatalf("setup message content %s: want one text part (%v)", body.Messages[1].Content, err)
	}
	text := parts[0].Text
	for _, want := range []string{"Saturday, July 4, 2026", "Operating system: linux", "Working directory: " + realPath + "\n",
		"\n\n" + realPath + "/\n└───go.mod"} {
		if !strings.Contains(text, want) {
			t.Errorf("setup message lacks %q:\n%s", want, text)
		}
	}
	if !strings.HasSuffix(text, "└───go.mod") {
		t.Errorf("setup message does not end with the listing:\n%s", text)
	}
	if body.Messages[2].Role != "assistant" {
		t.Errorf("third message is %s, want the assistant acknowledgement", body.Messages[2].Role)
	}
}

func TestNormalizeArguments(t *testing.T) {
	tests := []struct{ tool, in, want string }{
		{"read_file", `{"pages":"1-2","limit":5,"file_path":"a","x":1}`, `{"file_path":"a","limit":5,"pages":"1-2"}`},
		{"read_file", `{}`, `{}`},
		{"read_file", `null`, `null`},
		{"edit", `{"replace_all":true,"new_string":"n","old_string":"o","file_path":"f"}`, `{"file_path":"f","old_string":"o","new_string":"n","replace_all":true}`},
		{"run_shell_command", `{"command":"ls","timeout":{"a" : 1}}`, `{"command":"ls","timeout":{"a":1}}`},
		{"other", `{ "b" : 1 , "a" : [ 1, 2 ] }`, `{"b":1,"a":[1,2]}`},
		{"other", `not json`, `not json`},
		{"other", ``, ``},
	}
	for _, tt := range tests {
		if got := qwencode.NormalizeArguments(tt.tool, tt.in); got != tt.want {
			t.Errorf("NormalizeArguments(%s, %s) = %s, want %s", tt.tool, tt.in, got, tt.want)
		}
	}
}

// Valid JSON stays valid JSON; nothing panics.
func FuzzNormalizeArguments(f *testing.F) {
	for _, s := range []string{`{"file_path":"a","offset":1}`, `{"command":"x","directory":"/"}`, `[1]`, `"s"`, `{`, ``} {
		f.Add("read_file", s)
		f.Add("run_shell_command", s)
		f.Add("other", s)
	}
	f.Fuzz(func(t *testing.T, tool, args string) {
		got := qwencode.NormalizeArguments(tool, args)
		if json.Valid([]byte(args)) && !json.Valid([]byte(got)) {
			t.Errorf("NormalizeArguments(%q, %q) = %q: not JSON", tool, args, got)
		}
	})
}
