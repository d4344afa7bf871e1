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
	messages := func(variant string) []struct {
		Role    string
		Content json.RawMessage
	} {
		cfg := harness.Config{Now: now}
		if variant != "" {
			cfg.Variants = map[string]string{harness.NameQwenCode: variant}
		}
		turn, err := harness.Plan(context.Background(), cfg, harness.NameQwenCode, req, nil)
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
		return body.Messages
	}
	checkSetup := func(what, text string) {
		for _, want := range []string{"Saturday, July 4, 2026", "Operating system: linux", "Working directory: " + realPath + "\n",
			"\n\n" + realPath + "/\n└───go.mod"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s lacks %q:\n%s", what, want, text)
			}
		}
	}

	// Qwen Code 0.24: the system prompt, then one user message whose text
	// parts are the skills, setup, deferred-tools and date reminders and the
	// task.
	msgs := messages("")
	var parts []struct{ Type, Text string }
	if len(msgs) != 2 || msgs[1].Role != "user" {
		t.Fatalf("%d messages, want the system prompt and one user message", len(msgs))
	}
	if err := json.Unmarshal(msgs[1].Content, &parts); err != nil || len(parts) != 5 {
		t.Fatalf("first user message %s: want five text parts (%v)", msgs[1].Content, err)
	}
	for i, p := range parts[:4] {
		if !strings.HasPrefix(p.Text, "<system-reminder>\n") || !strings.HasSuffix(p.Text, "\n</system-reminder>") {
			t.Errorf("part %d is not a system reminder:\n%s", i, p.Text)
		}
	}
	if !strings.Contains(parts[0].Text, "skill") || !strings.Contains(parts[2].Text, "tool_search") {
		t.Errorf("skills reminder %q, tools reminder %q", parts[0].Text, parts[2].Text)
	}
	if !strings.HasSuffix(parts[1].Text, "└───go.mod\n</system-reminder>") {
		t.Errorf("setup reminder:\n%s", parts[1].Text)
	}
	checkSetup("setup reminder", parts[1].Text)
	if !strings.Contains(parts[3].Text, "Saturday, July 4, 2026") || parts[4].Text != "hi" {
		t.Errorf("date reminder %q, task %q", parts[3].Text, parts[4].Text)
	}

	// The variant fork: a setup user message of one part and an assistant
	// acknowledgement before the history.
	msgs = messages(qwencode.VariantFork)
	if err := json.Unmarshal(msgs[1].Content, &parts); err != nil || len(parts) != 1 || parts[0].Type != "text" {
		t.Fatalf("fork setup message content %s: want one text part (%v)", msgs[1].Content, err)
	}
	checkSetup("fork setup message", parts[0].Text)
	if !strings.HasSuffix(parts[0].Text, "└───go.mod") {
		t.Errorf("setup message does not end with the listing:\n%s", parts[0].Text)
	}
	if msgs[2].Role != "assistant" {
		t.Errorf("third message is %s, want the assistant acknowledgement", msgs[2].Role)
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
