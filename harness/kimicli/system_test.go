package kimicli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/internal/kimistyle"
	"github.com/harnessflow/harnessflow/harness/kimicli"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// dirReader reads the working directory dir through an env with the
// workspace policy local, as the harness does.
func dirReader(dir string) kimicli.DirReader {
	env := &harness.Env{Workspace: harness.Workspace{Cwd: dir}, Files: harness.WorkspaceLocal}
	return env.ReadWorkDir
}

func TestListDirectory(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "b.txt"), "")
	write(t, filepath.Join(dir, "a.txt"), "")
	write(t, filepath.Join(dir, ".hidden"), "")
	write(t, filepath.Join(dir, "src", "main.go"), "")
	write(t, filepath.Join(dir, "src", "util", "x.go"), "")
	write(t, filepath.Join(dir, "docs", "index.md"), "")
	outside := t.TempDir()
	write(t, filepath.Join(outside, "secret.txt"), "")
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	got, err := kimicli.ListDirectory(dirReader(dir))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"├── docs/",
		"│   └── index.md",
		"├── src/",
		"│   ├── util/",
		"│   └── main.go",
		"├── .hidden",
		"├── a.txt",
		"├── b.txt",
		"└── link", // a symbolic link is listed, never followed
	}, "\n")
	if got != want {
		t.Errorf("listing:\n%s\nwant:\n%s", got, want)
	}
}

func TestListDirectoryLimits(t *testing.T) {
	dir := t.TempDir()
	for i := range 35 {
		write(t, filepath.Join(dir, fmt.Sprintf("f%02d", i)), "")
	}
	for i := range 12 {
		write(t, filepath.Join(dir, "d", fmt.Sprintf("k%02d", i)), "")
	}
	got, err := kimicli.ListDirectory(dirReader(dir))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(got, "\n")
	// d/ with 10 children and a count line, 29 files, the count line.
	if n := len(lines); n != 1+10+1+29+1 {
		t.Fatalf("%d lines, want 42:\n%s", n, got)
	}
	if lines[0] != "├── d/" || lines[1] != "│   ├── k00" || lines[10] != "│   ├── k09" || lines[11] != "│   └── (2 more)" {
		t.Errorf("subdirectory lines:\n%s", strings.Join(lines[:12], "\n"))
	}
	if lines[12] != "├── f00" || lines[40] != "├── f28" || lines[41] != "└── (6 more entries)" {
		t.Errorf("root lines:\n%s", strings.Join(lines[12:], "\n"))
	}
	if _, err := kimicli.ListDirectory(dirReader(filepath.Join(dir, "missing"))); err == nil {
		t.Error("listing a missing directory: no error")
	}
	empty := t.TempDir()
	if got, _ := kimicli.ListDirectory(dirReader(empty)); got != "(the directory is empty)" {
		t.Errorf("empty directory: %q", got)
	}
	none := &harness.Env{Workspace: harness.Workspace{Cwd: dir}, Files: harness.WorkspaceNone}
	if got, err := kimicli.ListDirectory(none.ReadWorkDir); err == nil {
		t.Errorf("workspace policy none: listed\n%s", got)
	}
}

func TestAgentsMD(t *testing.T) {
	docs := []harness.ProjectDoc{{Dir: "/repo", Text: "root rules"}, {Text: "no directory named"}, {Dir: "/repo/pkg/", Text: "pkg rules"}}
	got := kimicli.AgentsMD(docs)
	want := "<!-- From: /repo/AGENTS.md -->\nroot rules\n\n" +
		"<!-- From: AGENTS.md -->\nno directory named\n\n" +
		"<!-- From: /repo/pkg/AGENTS.md -->\npkg rules"
	if got != want {
		t.Errorf("AGENTS.md:\n%s\nwant:\n%s", got, want)
	}
	if got := kimicli.AgentsMD(nil); got != "" {
		t.Errorf("no docs: %q", got)
	}
}

func TestAgentsMDBudget(t *testing.T) {
	docs := []harness.ProjectDoc{{Dir: "/w", Text: strings.Repeat("é", 20000)}, {Dir: "/w/sub", Text: "deep file is kept first"}}
	got := kimicli.AgentsMD(docs)
	if len(got) > kimicli.AgentsMDBudget {
		t.Errorf("%d bytes, over the budget of %d", len(got), kimicli.AgentsMDBudget)
	}
	if !strings.HasSuffix(got, "deep file is kept first") {
		t.Errorf("the last file was not kept whole: …%s", got[len(got)-40:])
	}
	if !strings.Contains(got, "é") || !utf8.ValidString(got) {
		t.Error("the cut text is not valid UTF-8")
	}
}

// envRequest is a request whose environment block names cwd.
func envRequest(cwd string, extra ...string) *protocol.ResponsesRequest {
	items := `{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>` + cwd +
		`</cwd>\n  <shell>zsh</shell>\n</environment_context>"}]},{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}`
	for _, e := range extra {
		items += "," + e
	}
	req, err := protocol.DecodeRequest([]byte(`{"model":"kimi-k2","input":[` + items + `]}`))
	if err != nil {
		panic(err)
	}
	return req
}

func system(t *testing.T, req *protocol.ResponsesRequest) string {
	t.Helper()
	now := time.Date(2026, 3, 4, 5, 6, 7, 891011000, time.FixedZone("", 3600))
	turn, err := harness.Plan(context.Background(), harness.Config{Now: func() time.Time { return now }}, harness.NameKimiCLI, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct{ Role, Content string }
	}
	if err := json.Unmarshal(turn.Shaped.Body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Messages) == 0 || body.Messages[0].Role != "system" {
		t.Fatalf("no system message: %s", turn.Shaped.Body)
	}
	return body.Messages[0].Content
}

// agentsMessage is Codex's AGENTS.md user message for dir.
func agentsMessage(dir, text string) string {
	b, _ := json.Marshal("# AGENTS.md instructions for " + dir + "\n\n<INSTRUCTIONS>\n" + text + "\n</INSTRUCTIONS>")
	return `{"type":"message","role":"user","content":[{"type":"input_text","text":` + string(b) + `}]}`
}

// The system prompt lists the client's working directory when this machine
// can read it, carries the AGENTS.md text of the request (never a file of
// this machine), and says the time and shell.
func TestSystemPromptWorkspace(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "main.go"), "package main")
	write(t, filepath.Join(dir, "AGENTS.md"), "A file on the proxy's disk: never read.")
	got := system(t, envRequest(dir, agentsMessage(dir, "Run go vet before you finish.")))
	for _, want := range []string{
		"- Working directory: " + dir + "\n",
		"```\n├── AGENTS.md\n└── main.go\n```",
		"# Project instructions",
		"<!-- From: " + filepath.Join(dir, "AGENTS.md") + " -->\nRun go vet before you finish.",
		"- Current time: 2026-03-04T00:00:00.000000+00:00",
		"- Shell: zsh (`/bin/zsh`)",
		"- Operating system: Linux",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "never read") {
		t.Error("an AGENTS.md file of this machine reached the system prompt")
	}
	if strings.HasSuffix(got, "\n") {
		t.Error("system prompt ends with a newline")
	}

	// A directory this machine does not have: no listing.
	got = system(t, envRequest(filepath.Join(dir, "elsewhere")))
	if strings.Contains(got, "```") || strings.Contains(got, "<!-- From:") || strings.Contains(got, "# Project instructions") {
		t.Errorf("listing or AGENTS.md for a missing directory:\n%s", got)
	}
	if !strings.Contains(got, "- Working directory: "+filepath.Join(dir, "elsewhere")) {
		t.Error("the working directory is not named")
	}
}

// Developer texts: contextual fragments are left out, others trimmed and
// joined after the guidance.
func TestSystemPromptDeveloperSection(t *testing.T) {
	dev := func(text string) string {
		b, _ := json.Marshal(text)
		return `{"type":"message","role":"developer","content":[{"type":"input_text","text":` + string(b) + `}]}`
	}
	got := system(t, envRequest("/nonexistent", dev("<permissions instructions>\nx\n</permissions instructions>"), dev("  first rule  "), dev("   "), dev("second rule")))
	i := strings.Index(got, "\n\n# Additional Developer Instructions\n\n<extra_instruction>\n")
	if i < 0 {
		t.Fatalf("no developer section with the guidance first:\n%s", got)
	}
	if !strings.HasSuffix(got, "</extra_instruction>\n\nfirst rule\n\nsecond rule") {
		t.Errorf("developer section:\n%s", got[i:])
	}
	if strings.Contains(got, "permissions instructions") {
		t.Error("a contextual developer fragment reached the system prompt")
	}
}

func TestReasoningTable(t *testing.T) {
	tests := []struct {
		effort   string // "" = no reasoning object
		toggle   bool
		wantEff  string
		wantThnk string
	}{
		{"", false, "", ""},
		{"", true, "", `{"type":"disabled"}`},
		{"none", false, "", ""},
		{"none", true, "", `{"type":"disabled"}`},
		{"Thinking", true, "", `{"type":"enabled"}`},
		{"thinking", false, "thinking", `{"type":"enabled"}`},
		{"minimal", false, "low", `{"type":"enabled"}`},
		{"low", true, "low", `{"type":"enabled"}`},
		{"medium", false, "medium", `{"type":"enabled"}`},
		{"high", false, "high", `{"type":"enabled"}`},
		{"xhigh", true, "high", `{"type":"enabled"}`},
		{"max", false, "high", `{"type":"enabled"}`},
		{"ultra", false, "high", `{"type":"enabled"}`},
		{"Custom-7", false, "Custom-7", `{"type":"enabled"}`},
	}
	for _, tt := range tests {
		req := &protocol.ResponsesRequest{}
		if tt.effort != "" {
			req.Reasoning = &protocol.ReasoningConfig{Effort: tt.effort}
		}
		eff, th := kimicli.Reasoning(req, tt.toggle)
		if eff != tt.wantEff || string(th) != tt.wantThnk {
			t.Errorf("Reasoning(%q, toggle=%v) = %q, %s; want %q, %s", tt.effort, tt.toggle, eff, th, tt.wantEff, tt.wantThnk)
		}
	}
}

// The success verdict never travels on the wire, but an engine-made output
// can carry it: a failed output is wrapped as an error system text.
func TestSystemTexts(t *testing.T) {
	no, yes := false, true
	tests := []struct {
		in   request.Output
		want string
	}{
		{request.Output{Text: "boom", Success: &no}, "<system>ERROR: boom</system>"},
		{request.Output{Text: "<system>ERROR: already</system>", Success: &no}, "<system>ERROR: already</system>"},
		{request.Output{Text: kimistyle.EmptyOutput, Success: &no}, kimistyle.EmptyOutput},
		{request.Output{Text: "", Success: &no}, "<system>ERROR: </system>"},
		{request.Output{Text: " \n", Success: &yes}, kimistyle.EmptyOutput},
		{request.Output{Text: "a\x00b"}, kimistyle.NonTextOutput},
		{request.Output{Text: "fine"}, "fine"},
	}
	for _, tt := range tests {
		o := tt.in
		kimistyle.SystemTexts(&o)
		if o.Text != tt.want {
			t.Errorf("SystemTexts(%q, success %v) = %q, want %q", tt.in.Text, tt.in.Success, o.Text, tt.want)
		}
	}
}
