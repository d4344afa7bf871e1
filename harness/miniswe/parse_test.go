package miniswe

import (
	"slices"
	"strings"
	"testing"
)

// textCases are text-mode replies and the actions mini-swe-agent's regex
// finds in them.
var textCases = []struct {
	name  string
	reply string
	want  []string
}{
	{"one block", "THOUGHT: look.\n\n```bash\nls -la\n```", []string{"ls -la"}},
	{"no block", "I think the bug is in parse.go.", nil},
	{"empty reply", "", nil},
	{"two blocks", "```bash\nls\n```\nthen\n```bash\npwd\n```", []string{"ls", "pwd"}},
	{"a fence without a label", "```\nls\n```", nil},
	{"sh does not count", "```sh\nls\n```", nil},
	{"BASH does not count", "```BASH\nls\n```", nil},
	{"another label", "```python\nprint(1)\n```", nil},
	{"a longer label", "```bashx\nls\n```", nil},
	{"CRLF", "THOUGHT: x\r\n\r\n```bash\r\nls -l\r\n```\r\n", []string{"ls -l"}},
	{"blanks after the label", "```bash   \nls\n```", []string{"ls"}},
	{"CRLF and blanks inside", "```bash \r\n echo hi \r\n```", []string{"echo hi"}},
	{"unicode", "THOUGHT: écrire.\n```bash\necho 'héllo wörld' 🎉 > ünï.txt\n```", []string{"echo 'héllo wörld' 🎉 > ünï.txt"}},
	{"unicode spaces are stripped", "```bash\n\u00a0ls\u2003\n```", []string{"ls"}},
	{"Python strips \\x1c", "```bash\n\x1cls\x1f\n```", []string{"ls"}},
	{"a block in prose", "Run this ```bash\nls\n``` now, please.", []string{"ls"}},
	{"inline, no newline", "Run ```bash ls``` now.", nil},
	{"closing fence not on its own line", "```bash\nls```", nil},
	{"a block with no body line", "```bash\n```", nil},
	{"an empty action", "```bash\n\n```", []string{""}},
	{"a heredoc with a fence is cut short", "```bash\ncat <<'EOF' > a.md\n```\nEOF\n```", []string{"cat <<'EOF' > a.md"}},
	{"a bash block inside a markdown block", "````markdown\n```bash\nmake\n```\n````", []string{"make"}},
	{"multi-line command", "```bash\ncd src &&\n  go test ./...\n```", []string{"cd src &&\n  go test ./..."}},
	{"the submit command", "Done.\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```", []string{"echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}},
	{"very long reply", strings.Repeat("Thinking hard. ", 5000) + "\n```bash\ngit diff\n```", []string{"git diff"}},
	{"four backticks still contain three", "````bash\nls\n````", []string{"ls"}},
	{"three blocks", "```bash\na\n```\n```bash\nb\n```\n```bash\nc\n```", []string{"a", "b", "c"}},
}

func TestActions(t *testing.T) {
	if len(textCases) < 25 {
		t.Fatalf("only %d text cases", len(textCases))
	}
	for _, c := range textCases {
		t.Run(c.name, func(t *testing.T) {
			got := Actions(c.reply)
			if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
				t.Errorf("Actions = %q, want %q", got, c.want)
			}
			out, err := Parse(c.reply, VariantText)
			if err != nil {
				t.Fatal(err)
			}
			r := out.(Result)
			if len(c.want) == 1 {
				if r.Action != "shell" || r.Command != c.want[0] || r.Commands != nil {
					t.Errorf("Parse = %+v", r)
				}
			} else if r.Action != "format_error" || r.Reason != FormatErrorReason(len(c.want)) {
				t.Errorf("Parse = %+v, want the format error for %d actions", r, len(c.want))
			}
		})
	}
}

func TestParseToolMode(t *testing.T) {
	for _, c := range []struct {
		name, reply string
		want        Result
	}{
		{"plain text has no call", "I would run ls.", Result{Action: "format_error", Reason: NoToolCallReason}},
		{"no calls", `{"content":"hi","tool_calls":[]}`, Result{Action: "format_error", Reason: NoToolCallReason}},
		{"one call", `{"content":"x","tool_calls":[{"id":"c1","name":"bash","arguments":"{\"command\":\"ls\"}"}]}`, Result{Action: "shell", Command: "ls"}},
		{"chat form, two calls", `{"tool_calls":[{"function":{"name":"bash","arguments":{"command":"ls"}}},{"function":{"name":"bash","arguments":"{\"command\":\"pwd\"}"}}]}`,
			Result{Action: "shell", Command: "ls", Commands: []string{"ls", "pwd"}}},
		{"unknown tool", `{"tool_calls":[{"name":"python","arguments":"{}"}]}`, Result{Action: "format_error", Reason: "Unknown tool 'python'."}},
		{"missing command", `{"tool_calls":[{"name":"bash","arguments":"{\"cmd\":\"ls\"}"}]}`, Result{Action: "format_error", Reason: missingCommand}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, v := range []string{"", VariantTool} {
				out, err := Parse(c.reply, v)
				if err != nil {
					t.Fatal(err)
				}
				if r := out.(Result); r.Action != c.want.Action || r.Command != c.want.Command || r.Reason != c.want.Reason || !slices.Equal(r.Commands, c.want.Commands) {
					t.Errorf("variant %q: %+v, want %+v", v, r, c.want)
				}
			}
		})
	}
	out, err := Parse(`{"tool_calls":[{"name":"bash","arguments":"{bad"}]}`, "")
	if err != nil || !strings.HasPrefix(out.(Result).Reason, "Error parsing tool call arguments: ") {
		t.Errorf("bad arguments: %+v, %v", out, err)
	}
	if _, err := Parse("x", "xml"); err == nil {
		t.Error("unknown variant accepted")
	}
}

// FuzzActions: no panic; text mode yields exactly one of an action and a
// format error whose count matches Actions; actions are stripped.
func FuzzActions(f *testing.F) {
	for _, c := range textCases {
		if len(c.reply) < 2000 {
			f.Add(c.reply)
		}
	}
	f.Fuzz(func(t *testing.T, reply string) {
		acts := Actions(reply)
		for _, a := range acts {
			if a != pyStrip(a) {
				t.Fatalf("action %q is not stripped", a)
			}
		}
		out, err := Parse(reply, VariantText)
		if err != nil {
			t.Fatal(err)
		}
		r := out.(Result)
		switch {
		case len(acts) == 1 && (r.Action != "shell" || r.Command != acts[0] || r.Reason != ""):
			t.Fatalf("one action %q gave %+v", acts[0], r)
		case len(acts) != 1 && (r.Action != "format_error" || r.Reason != FormatErrorReason(len(acts)) || r.Command != ""):
			t.Fatalf("%d actions gave %+v", len(acts), r)
		}
		if _, err := Parse(reply, VariantTool); err != nil {
			t.Fatal(err)
		}
	})
}
