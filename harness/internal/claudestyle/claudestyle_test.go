package claudestyle

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/prompts"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/wire/anthropic"
)

// codexTools are the shell and patch tools Codex 0.171 advertises.
const codexTools = `[{"type":"function","name":"exec_command","description":"Runs a command.","strict":false,"parameters":{"type":"object",
 "properties":{"cmd":{"type":"string"},"workdir":{"type":"string"},"yield_time_ms":{"type":"number"}},"required":["cmd"]}},
 {"type":"custom","name":"apply_patch","description":"patch","format":{"type":"grammar","syntax":"lark","definition":"start: x"}}]`

func client(t *testing.T, tools string) bridge.ClientShell {
	t.Helper()
	var specs []protocol.ToolSpec
	if err := json.Unmarshal([]byte(tools), &specs); err != nil {
		t.Fatal(err)
	}
	return bridge.DetectShell(specs)
}

// bashRun runs a generated command line with bash in dir.
func bashRun(t *testing.T, dir, cmd string) (string, int) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	c := exec.Command(bash, "-c", cmd)
	c.Dir = dir
	out, err := c.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// Every native tool of the family, called as the model calls it, reaches
// Codex as an exec_command (Write: an apply_patch) that does what the tool
// does, on a real directory; and the client's call reads back as the
// model's native call.
func TestMappingsOnDisk(t *testing.T) {
	table := Table(ToolBash, ToolRead, ToolWrite, ToolEdit, ToolGlob, ToolGrep)
	if err := table.Validate(); err != nil {
		t.Fatal(err)
	}
	sh := client(t, codexTools)
	shellOnly := client(t, codexTools[:strings.Index(codexTools, `,
 {"type":"custom"`)]+"]")
	tests := []struct {
		name   string
		tool   string
		args   string
		client bridge.ClientShell
		check  func(t *testing.T, dir, out string, code int)
		patch  bool   // the client item is an apply_patch call
		back   string // the native arguments read back, when not args
	}{
		{name: "Bash", tool: ToolBash, args: `{"command":"printf 'a b\\n' > made.txt && cat made.txt","description":"make a file","timeout":5000}`, client: sh,
			back: `{"command":"printf 'a b\\n' > made.txt && cat made.txt"}`, // a plain command keeps only its line
			check: func(t *testing.T, dir, out string, code int) {
				if code != 0 || out != "a b\n" {
					t.Errorf("output %q, exit %d", out, code)
				}
			}},
		{name: "Read", tool: ToolRead, args: `{"file_path":"notes.txt","offset":2,"limit":2}`, client: sh,
			check: func(t *testing.T, dir, out string, code int) {
				if code != 0 || out != "     2\ttwo\n     3\tthree\n" {
					t.Errorf("output %q, exit %d", out, code)
				}
			}},
		{name: "Read missing", tool: ToolRead, args: `{"file_path":"nope.txt"}`, client: sh,
			check: func(t *testing.T, dir, out string, code int) {
				if code == 0 || !strings.Contains(out, "no such file") {
					t.Errorf("output %q, exit %d", out, code)
				}
			}},
		{name: "Write (shell)", tool: ToolWrite, args: `{"file_path":"sub/new.txt","content":"x $HOME 'q'\n"}`, client: shellOnly,
			check: func(t *testing.T, dir, out string, code int) {
				if got, _ := os.ReadFile(filepath.Join(dir, "sub/new.txt")); code != 0 || string(got) != "x $HOME 'q'\n" {
					t.Errorf("file %q, exit %d, output %q", got, code, out)
				}
			}},
		{name: "Write (apply_patch)", tool: ToolWrite, args: `{"file_path":"sub/new.txt","content":"line 1\n\nline 3\n"}`, client: sh, patch: true},
		{name: "Edit", tool: ToolEdit, args: `{"file_path":"notes.txt","old_string":"two","new_string":"2"}`, client: sh,
			check: func(t *testing.T, dir, out string, code int) {
				if got, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); code != 0 || string(got) != "one\n2\nthree\nfour\n" {
					t.Errorf("file %q, exit %d, output %q", got, code, out)
				}
			}},
		{name: "Edit not unique", tool: ToolEdit, args: `{"file_path":"notes.txt","old_string":"o","new_string":"0"}`, client: sh,
			check: func(t *testing.T, dir, out string, code int) {
				if got, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); code == 0 || string(got) != notes {
					t.Errorf("file %q, exit %d, output %q", got, code, out)
				}
			}},
		{name: "Edit replace_all", tool: ToolEdit, args: `{"file_path":"notes.txt","old_string":"o","new_string":"0","replace_all":true}`, client: sh,
			check: func(t *testing.T, dir, out string, code int) {
				if got, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); code != 0 || string(got) != "0ne\ntw0\nthree\nf0ur\n" {
					t.Errorf("file %q, exit %d", got, code)
				}
			}},
		{name: "Glob", tool: ToolGlob, args: `{"pattern":"**/*.go"}`, client: sh,
			check: func(t *testing.T, dir, out string, code int) {
				if code != 0 || out != "./main.go\n./pkg/lib.go\n" {
					t.Errorf("output %q, exit %d", out, code)
				}
			}},
		{name: "Grep", tool: ToolGrep, args: `{"pattern":"func [A-Z]","glob":"*.go","output_mode":"content"}`, client: sh,
			check: func(t *testing.T, dir, out string, code int) {
				if code != 0 || out != "./pkg/lib.go:2:func Lib() {}\n" {
					t.Errorf("output %q, exit %d", out, code)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range map[string]string{"notes.txt": notes, "main.go": "package main\nfunc main() {}\n", "pkg/lib.go": "package pkg\nfunc Lib() {}\n"} {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// What the bridge stage sends the client for the model's call.
			opts := bridge.Options{Client: tc.client, Table: table}
			out := runBridge(t, opts, &protocol.FunctionCall{ID: "fc_1", CallID: "toolu_1", Name: tc.tool, Arguments: tc.args})
			if tc.patch {
				c, ok := out.(*protocol.CustomToolCall)
				if !ok || c.Name != "apply_patch" {
					t.Fatalf("client item %#v, want an apply_patch call", out)
				}
				path, content, ok := bridge.ParseAddFilePatch(c.Input)
				if !ok || path != "sub/new.txt" || content != "line 1\n\nline 3\n" {
					t.Errorf("patch %q", c.Input)
				}
			} else {
				fc, ok := out.(*protocol.FunctionCall)
				if !ok || fc.Name != "exec_command" {
					t.Fatalf("client item %#v, want exec_command", out)
				}
				var a struct {
					Cmd string `json:"cmd"`
				}
				if err := json.Unmarshal([]byte(fc.Arguments), &a); err != nil {
					t.Fatal(err)
				}
				stdout, code := bashRun(t, dir, a.Cmd)
				tc.check(t, dir, stdout, code)
			}
			// The client's call in a later request reads back as the
			// model's own call.
			want := tc.args
			if tc.back != "" {
				want = tc.back
			}
			tool, args, ok := table.ReverseItem(out)
			if !ok || tool != tc.tool || !jsonEqual(t, args, want) {
				t.Errorf("reversed to %s %s, %v; want %s %s", tool, args, ok, tc.tool, want)
			}
		})
	}
}

const notes = "one\ntwo\nthree\nfour\n"

func runBridge(t *testing.T, opts bridge.Options, call *protocol.FunctionCall) protocol.ResponseItem {
	t.Helper()
	st := bridge.Stage(opts)
	var out []protocol.ResponseEvent
	if err := st.Push(t.Context(), protocol.Done(call), func(ev protocol.ResponseEvent) { out = append(out, ev) }); err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 {
		t.Fatalf("events %+v", out)
	}
	return out[0].Item
}

func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return cmp.Equal(x, y)
}

func TestRender(t *testing.T) {
	framed := func(code int, out string) string {
		return "Chunk ID: ab12\nWall time: 0.01 seconds\nProcess exited with code " + itoa(code) + "\nOriginal token count: 2\nOutput:\n" + out
	}
	no := false
	r := Results{EmptyBash: "(nothing)", NoMatches: "none found", ErrorFalse: []string{ToolBash}}
	tests := []struct {
		name, tool string
		o          request.Output
		want       string
		isError    *bool
	}{
		{"bash success trimmed", ToolBash, request.Output{Text: framed(0, "  hi\n\n")}, "hi", ptr(false)},
		{"bash empty", ToolBash, request.Output{Text: framed(0, "")}, "(nothing)", ptr(false)},
		{"bash exit 2", ToolBash, request.Output{Text: framed(2, "boom\n")}, "Exit code 2\nboom", ptr(true)},
		{"bash reported failure", ToolBash, request.Output{Text: "denied", Success: &no}, "<tool_use_error>denied</tool_use_error>", ptr(true)},
		{"read success", ToolRead, request.Output{Text: framed(0, "     1\tx\n")}, "     1\tx\n", nil},
		{"read failure", ToolRead, request.Output{Text: framed(1, "read: a: no such file\n")}, "<tool_use_error>read: a: no such file\n</tool_use_error>", ptr(true)},
		{"grep no match", ToolGrep, request.Output{Text: framed(1, "")}, "none found", nil},
		{"grep error", ToolGrep, request.Output{Text: framed(2, "grep: bad regex\n")}, "<tool_use_error>grep: bad regex\n</tool_use_error>", ptr(true)},
		{"aborted", ToolBash, request.Output{Text: "aborted"}, "<tool_use_error>aborted</tool_use_error>", ptr(true)},
		{"todo", ToolTodoWrite, request.Output{Text: "ok\n\n"}, "ok", nil},
		{"not framed", "Other", request.Output{Text: "plain"}, "plain", nil},
		{"patch output", ToolWrite, request.Output{Text: "Exit code: 0\nWall time: 0.1 seconds\nOutput:\nSuccess. Updated the following files:\nA x\n"},
			"Success. Updated the following files:\nA x\n", nil},
	}
	for _, tc := range tests {
		if tc.o.Item == nil && tc.name != "aborted" {
			tc.o.Item = &protocol.FunctionCallOutput{}
		}
		got := r.Render(tc.tool, &tc.o)
		if got.Content.Kind != anthropic.ContentText || got.Content.Text != tc.want {
			t.Errorf("%s: content %+v, want %q", tc.name, got.Content, tc.want)
		}
		if !cmp.Equal(got.IsError, tc.isError) {
			t.Errorf("%s: is_error %v, want %v", tc.name, fmtPtr(got.IsError), fmtPtr(tc.isError))
		}
	}
	items := r.Render(ToolRead, &request.Output{Item: &protocol.FunctionCallOutput{}, Items: []protocol.FunctionCallOutputContentItem{{Type: "input_text", Text: "a"}}})
	if items.Content.Kind != anthropic.ContentBlocks || len(items.Content.Blocks) != 1 {
		t.Errorf("item output: %+v", items.Content)
	}
}

func ptr[T any](v T) *T { return &v }

func fmtPtr(b *bool) string {
	if b == nil {
		return "absent"
	}
	if *b {
		return "true"
	}
	return "false"
}

func itoa(n int) string { return string(rune('0' + n)) }

// skillsBlock has the shape of Codex 0.171's skills block (our text).
const skillsBlock = `<skills_instructions>
## Skills
Local skills live in SKILL.md files.
### Skill roots
- ` + "`r0`" + ` = ` + "`/home/u/.codex/skills`" + `
### Available skills
- pdf-tools: Split and merge PDF files. (file: r0/pdf-tools/SKILL.md)
- notes: Keep meeting notes: short, dated. (file: /abs/notes/SKILL.md)
### How to use skills
- Discovery: The list above is what there is.
- Trigger rules: use a skill when asked (file: not/a/skill).
</skills_instructions>`

func TestSkills(t *testing.T) {
	want := []string{"pdf-tools: Split and merge PDF files.", "notes: Keep meeting notes: short, dated."}
	if d := cmp.Diff(want, Skills(skillsBlock)); d != "" {
		t.Errorf("Skills (-want +got):\n%s", d)
	}
	if got := Skills("- a: b (file: x)\n- c: no file\n"); !cmp.Equal(got, []string{"a: b"}) {
		t.Errorf("without a heading: %q", got)
	}
}

func TestDateReminder(t *testing.T) {
	msgs := []anthropic.Message{
		{Role: anthropic.RoleUser, Content: anthropic.Blocks(anthropic.Block{Type: anthropic.BlockToolResult, ToolUseID: "x"})},
		{Role: anthropic.RoleUser, Content: anthropic.Text("hello")},
	}
	if FirstPrompt(msgs) != 1 {
		t.Fatalf("FirstPrompt = %d", FirstPrompt(msgs))
	}
	if !AddDateReminder(msgs, "<r>\n# currentDate\nToday's date is 2026-01-02.</r>", "# currentDate", "Today's date is ") {
		t.Fatal("not added")
	}
	if c := msgs[1].Content; len(c.Blocks) != 2 || !strings.HasPrefix(c.Blocks[0].Text, "<r>") || c.Blocks[1].Text != "hello" {
		t.Errorf("content %+v", c)
	}
	if AddDateReminder(msgs, "again", "# currentDate", "Today's date is ") {
		t.Error("added a second reminder")
	}
	if AddDateReminder(nil, "x", "a", "b") {
		t.Error("added to no messages")
	}
}

func TestDropUnreversible(t *testing.T) {
	table := Table(ToolWrite)
	patch, _ := bridge.AddFilePatch("a", "x\n")
	req := &protocol.ResponsesRequest{Input: protocol.Items{
		&protocol.CustomToolCall{CallID: "keep", Name: "apply_patch", Input: patch},
		&protocol.CustomToolCallOutput{CallID: "keep"},
		&protocol.CustomToolCall{CallID: "drop", Name: "exec", Input: "js"},
		&protocol.CustomToolCallOutput{CallID: "drop"},
		protocol.UserMessage("hi"),
	}}
	got := DropUnreversible(req, table)
	if len(got.Input) != 3 || len(req.Input) != 5 {
		t.Errorf("input %d items (request %d)", len(got.Input), len(req.Input))
	}
	clean := &protocol.ResponsesRequest{Input: protocol.Items{protocol.UserMessage("hi")}}
	if DropUnreversible(clean, table) != clean {
		t.Error("a request with nothing to drop is copied")
	}
}

func TestStepsSince(t *testing.T) {
	use := func(names ...string) anthropic.Message {
		var bs []anthropic.Block
		for _, n := range names {
			bs = append(bs, anthropic.Block{Type: anthropic.BlockToolUse, Name: n})
		}
		return anthropic.Message{Role: anthropic.RoleAssistant, Content: anthropic.Blocks(bs...)}
	}
	text := anthropic.Message{Role: anthropic.RoleAssistant, Content: anthropic.Text("t")}
	msgs := []anthropic.Message{use("Bash"), use("TodoWrite", "Bash"), use("Read"), text, use("Bash", "Grep")}
	if n := StepsSince(msgs, "TodoWrite"); n != 2 {
		t.Errorf("StepsSince = %d, want 2", n)
	}
	if n := StepsSince(msgs, "Nothing"); n != 4 {
		t.Errorf("StepsSince(none) = %d, want 4", n)
	}
}

func TestLoadTools(t *testing.T) {
	for name, data := range map[string]string{
		"ok":        `{"tools":[{"name":"A","description":"d","input_schema":{"type":"object"}}]}`,
		"no name":   `{"tools":[{"description":"d","input_schema":{"type":"object"}}]}`,
		"twice":     `{"tools":[{"name":"A","description":"d","input_schema":{"type":"object"}},{"name":"A","description":"d","input_schema":{"type":"object"}}]}`,
		"no desc":   `{"tools":[{"name":"A","input_schema":{"type":"object"}}]}`,
		"bad type":  `{"tools":[{"name":"A","description":"d","input_schema":{"type":"string"}}]}`,
		"unknown":   `{"tools":[{"name":"A","description":"d","input_schema":{"type":"object"},"x":1}]}`,
		"not tools": `[]`,
	} {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "h"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "h", "tools.json"), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := prompts.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		defs, err := LoadTools(p, "h")
		if (err == nil) != (name == "ok") {
			t.Errorf("%s: %v", name, err)
		}
		if name == "ok" && (len(defs) != 1 || defs[0].Name != "A") {
			t.Errorf("defs %+v", defs)
		}
	}
}

// The embedded packs' tool files load.
func TestEmbeddedTools(t *testing.T) {
	for h, n := range map[string]int{"claude-code": 29, "zcode": 14} {
		defs, err := LoadTools(prompts.Default(), h)
		if err != nil || len(defs) != n {
			t.Errorf("%s: %d tools, %v; want %d", h, len(defs), err, n)
		}
	}
}

// FuzzSkills: any block text gives skill lines that are pieces of one of its
// lines (the "- " and the last file reference taken off), never a panic.
func FuzzSkills(f *testing.F) {
	f.Add(skillsBlock)
	f.Add("### Available skills\n- a: b (file: c)\n###")
	f.Fuzz(func(t *testing.T, text string) {
		for _, s := range Skills(text) {
			if strings.Contains(s, "\n") || !strings.Contains(text, s) {
				t.Fatalf("skill line %q", s)
			}
		}
	})
}
