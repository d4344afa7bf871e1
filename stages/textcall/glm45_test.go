package textcall

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const glmTools = `[
 {"type":"function","function":{"name":"shell","parameters":{"type":"object","properties":{
   "command":{"type":"array"},"workdir":{"type":"string"},"timeout_ms":{"type":"integer"},"login":{"type":"boolean"}}}}},
 {"type":"function","function":{"name":"apply_patch","parameters":{"type":"object","properties":{"input":{"type":"string"}}}}},
 {"type":"function","function":{"name":"update_plan","parameters":{"type":"object","properties":{
   "plan":{"type":"array"},"meta":{"type":"object"},"ratio":{"type":"number"}}}}}
]`

func glmCases() []replyCase {
	return []replyCase{
		{
			name:  "one call, GLM-4.5 spacing, text before",
			input: "Let me look.\n<tool_call>shell\n<arg_key>command</arg_key>\n<arg_value>[\"ls\", \"-la\"]</arg_value>\n<arg_key>workdir</arg_key>\n<arg_value>/tmp</arg_value>\n</tool_call>",
			tools: glmTools,
			want: Reply{Content: "Let me look.\n", Calls: []Call{
				fmtCall("shell", `{"command":["ls","-la"],"workdir":"/tmp"}`),
			}},
		},
		{
			name:  "GLM-4.7 spacing, two calls, text after",
			input: `<tool_call>shell<arg_key>command</arg_key><arg_value>["pwd"]</arg_value></tool_call><tool_call>shell<arg_key>command</arg_key><arg_value>["ls"]</arg_value><arg_key>timeout_ms</arg_key><arg_value>5000</arg_value></tool_call>Done.`,
			tools: glmTools,
			want: Reply{Content: "Done.", Calls: []Call{
				fmtCall("shell", `{"command":["pwd"]}`),
				fmtCall("shell", `{"command":["ls"],"timeout_ms":5000}`),
			}},
		},
		{
			name:  "white space between calls is markup",
			input: "<tool_call>shell\n<arg_key>command</arg_key>\n<arg_value>[\"a\"]</arg_value>\n</tool_call>\n\n<tool_call>shell\n<arg_key>command</arg_key>\n<arg_value>[\"b\"]</arg_value>\n</tool_call>\n",
			tools: glmTools,
			want:  Reply{Calls: []Call{fmtCall("shell", `{"command":["a"]}`), fmtCall("shell", `{"command":["b"]}`)}},
		},
		{
			name:  "zero-argument call",
			input: "<tool_call>list_mcp_resources</tool_call>",
			want:  Reply{Calls: []Call{fmtCall("list_mcp_resources", `{}`)}},
		},
		{
			name:  "zero-argument call with newline",
			input: "<tool_call>list_mcp_resources\n</tool_call>",
			want:  Reply{Calls: []Call{fmtCall("list_mcp_resources", `{}`)}},
		},
		{
			name:  "string value is raw: newlines, quotes and tags kept",
			input: "<tool_call>apply_patch<arg_key>input</arg_key><arg_value>\n*** Begin Patch\n*** Add File: a.html\n+<p class=\"x\">héllo</p>\n*** End Patch\n</arg_value></tool_call>",
			tools: glmTools,
			want: Reply{Calls: []Call{fmtCall("apply_patch",
				`{"input":"\n*** Begin Patch\n*** Add File: a.html\n+<p class=\"x\">héllo</p>\n*** End Patch\n"}`)}},
		},
		{
			name:  "Python literals typed by schema",
			input: "<tool_call>update_plan\n<arg_key>plan</arg_key>\n<arg_value>[{'step': 'read', 'status': 'completed'}, {'step': 'fix', 'status': None}]</arg_value>\n<arg_key>meta</arg_key>\n<arg_value>{'done': True}</arg_value>\n<arg_key>ratio</arg_key>\n<arg_value>0.5</arg_value>\n</tool_call>",
			tools: glmTools,
			want: Reply{Calls: []Call{fmtCall("update_plan",
				`{"plan":[{"step":"read","status":"completed"},{"step":"fix","status":null}],"meta":{"done":true},"ratio":0.5}`)}},
		},
		{
			name:  "schema typing: boolean, integer; unknown parameter and bad integer stay strings",
			input: "<tool_call>shell<arg_key>login</arg_key><arg_value>True</arg_value><arg_key>timeout_ms</arg_key><arg_value>soon</arg_value><arg_key>extra</arg_key><arg_value>42</arg_value></tool_call>",
			tools: glmTools,
			want:  Reply{Calls: []Call{fmtCall("shell", `{"login":true,"timeout_ms":"soon","extra":"42"}`)}},
		},
		{
			name:  "no schemas: every value a string",
			input: "<tool_call>shell<arg_key>timeout_ms</arg_key><arg_value>5000</arg_value></tool_call>",
			want:  Reply{Calls: []Call{fmtCall("shell", `{"timeout_ms":"5000"}`)}},
		},
		{
			name:  "literal \\n between tags (GLM-4.7)",
			input: `<tool_call>shell<arg_key>workdir</arg_key>\n<arg_value>/srv</arg_value>\n</tool_call>`,
			tools: glmTools,
			want:  Reply{Calls: []Call{fmtCall("shell", `{"workdir":"/srv"}`)}},
		},
		{
			name:  "missing </tool_call> at the end: recovered",
			input: "Checking.<tool_call>shell\n<arg_key>command</arg_key>\n<arg_value>[\"ls\"]</arg_value>\n",
			tools: glmTools,
			want:  Reply{Content: "Checking.", Calls: []Call{fmtCall("shell", `{"command":["ls"]}`)}},
		},
		{
			name:  "partial </tool_call> at the end: recovered",
			input: "<tool_call>shell<arg_key>command</arg_key><arg_value>[\"ls\"]</arg_value></tool_c",
			tools: glmTools,
			want:  Reply{Calls: []Call{fmtCall("shell", `{"command":["ls"]}`)}},
		},
		{
			name:  "cut inside a value: malformed, text given back",
			input: "Now:<tool_call>shell<arg_key>command</arg_key><arg_value>[\"rm\", \"-",
			tools: glmTools,
			want: Reply{Content: "Now:<tool_call>shell<arg_key>command</arg_key><arg_value>[\"rm\", \"-",
				Malformed: []string{"GLM tool call cut inside an argument"}},
		},
		{
			name:  "junk between tags: malformed, the rest read on",
			input: "<tool_call>shell<arg_key>a</arg_key>oops<arg_value>1</arg_value></tool_call> then <tool_call>shell</tool_call>",
			want: Reply{Content: "<tool_call>shell<arg_key>a</arg_key>oops<arg_value>1</arg_value></tool_call> then ",
				Calls:     []Call{fmtCall("shell", `{}`)},
				Malformed: []string{"unexpected text between GLM argument tags"}},
		},
		{
			name:  "an </arg_value> that text follows belongs to the value",
			input: "<tool_call>shell<arg_key>a</arg_key><arg_value>1</arg_value>x</arg_value>\n</tool_call>",
			want:  Reply{Calls: []Call{fmtCall("shell", `{"a":"1</arg_value>x"}`)}},
		},
		{
			name:  "cut in the next tag at the end: malformed",
			input: "<tool_call>shell<arg_key>a</arg_key><arg_value>1</arg_value>\n<arg_",
			want:  Reply{Content: "<tool_call>shell<arg_key>a</arg_key><arg_value>1</arg_value>\n<arg_", Malformed: []string{"unterminated GLM tool call"}},
		},
		{
			name:  "an </arg_value> at the very end ends the value",
			input: "<tool_call>shell<arg_key>a</arg_key><arg_value>1</arg_value>",
			want:  Reply{Calls: []Call{fmtCall("shell", `{"a":"1"}`)}},
		},
		{
			name:  "prose mentioning the tag is not a call",
			input: "GLM wraps calls in a <tool_call> tag, and <tool_call>{json}</tool_call> is hermes.",
			want:  Reply{Content: "GLM wraps calls in a <tool_call> tag, and <tool_call>{json}</tool_call> is hermes."},
		},
		{
			name:  "unterminated header at the end",
			input: "text <tool_call>shell",
			want:  Reply{Content: "text <tool_call>shell", Malformed: []string{"unterminated GLM tool call"}},
		},
		{
			name:  "code with closing-looking tags inside a value",
			input: "<tool_call>apply_patch<arg_key>input</arg_key><arg_value>x = \"</arg_key></tool_call>\"</arg_value></tool_call>",
			tools: glmTools,
			want:  Reply{Calls: []Call{fmtCall("apply_patch", `{"input":"x = \"</arg_key></tool_call>\""}`)}},
		},
	}
}

func TestGLM45Replies(t *testing.T) { runReplyCases(t, "glm45", glmCases()) }
func TestGLM47Replies(t *testing.T) { runReplyCases(t, "glm47", glmCases()) }

func TestGLMGoldens(t *testing.T) {
	runGoldens(t, "glm45", "glm45")
	runGoldens(t, "glm47", "glm47")
}

func TestGLMAuto(t *testing.T) {
	cases := []struct {
		name, model, input, format string
		calls                      int
	}{
		{"4.5 spacing", "", "<tool_call>shell\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>", "glm45", 1},
		{"4.7 spacing", "", "Hi <tool_call>shell<arg_key>a</arg_key><arg_value>1</arg_value></tool_call>", "glm47", 1},
		{"zero args 4.7", "", "<tool_call>shell</tool_call>", "glm47", 1},
		{"model prefers glm47 for 4.7", "zai-org/GLM-4.7", "<tool_call>shell<arg_key>a</arg_key><arg_value>1</arg_value></tool_call>", "glm47", 1},
		{"prose mention", "", "Put the name after a <tool_call> tag like so.", "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			chosen, got := autoReply(t, c.model, c.input)
			if chosen != c.format || len(got.Calls) != c.calls {
				t.Errorf("auto chose %q with %d calls, want %q with %d; reply %+v", chosen, len(got.Calls), c.format, c.calls, got)
			}
			if c.calls == 0 && got.Content != c.input {
				t.Errorf("content %q, want the input", got.Content)
			}
		})
	}
}

// TestGLMStreamsArgs shows a string value's text reaching CallArgs before
// </arg_value> and </tool_call> arrive.
func TestGLMStreamsArgs(t *testing.T) {
	cfg := Config{Schemas: schemasFor(t, []byte(glmTools))}
	p, _ := NewParser("glm47", cfg)
	out := p.Feed(nil, "<tool_call>apply_patch<arg_key>input</arg_key><arg_value>*** Begin Patch\n*** Add")
	var args string
	for _, e := range out {
		if e.Kind == CallArgs {
			args += e.Text
		}
	}
	if want := `{"input":"*** Begin Patch\n*** Add`; args != want {
		t.Fatalf("args before the end %q, want %q", args, want)
	}
	if out[0].Kind != CallBegin || out[0].Name != "apply_patch" {
		t.Fatalf("first event %+v, want the call's begin", out[0])
	}
	// A value cut inside a multi-byte character holds the character back.
	out = p.Feed(nil, " é"[:2])
	if len(out) != 1 || out[0].Text != " " {
		t.Fatalf("events %+v, want only the space", out)
	}
}

func TestGLMQuiet(t *testing.T) {
	p, _ := NewParser("glm45", Config{})
	if !p.Quiet("plain text") || p.Quiet("a <b") {
		t.Fatal("Quiet misjudges text")
	}
	p.Feed(nil, "x <tool_")
	if p.Quiet("plain") {
		t.Fatal("Quiet with a held tail")
	}
}

func FuzzGLM45(f *testing.F) {
	seeds := []string{}
	for _, c := range glmCases() {
		seeds = append(seeds, c.input)
	}
	fuzzFormat(f, "glm45", true, seeds...)
}

func FuzzGLM47(f *testing.F) {
	fuzzFormat(f, "glm47", true, "<tool_call>a<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>",
		strings.Repeat("<tool_call>", 3), "<tool_call>x\\n<arg_key>")
}

// TestGLMThroughReader: reasoning blocks, and a call written before
// </think>, which the reader's reasoning parser recovers.
func TestGLMThroughReader(t *testing.T) {
	cases := []struct {
		name, input string
		want        Reply
	}{
		{"think then call", "<think>Need the listing.</think>\n<tool_call>shell<arg_key>command</arg_key><arg_value>[\"ls\"]</arg_value></tool_call>",
			Reply{Reasoning: "Need the listing.", Calls: []Call{fmtCall("shell", `{"command":["ls"]}`)}}},
		{"call before </think>", "<think>Checking first.<tool_call>shell<arg_key>command</arg_key><arg_value>[\"pwd\"]</arg_value></tool_call></think>Done.",
			Reply{Reasoning: "Checking first.", Content: "Done.", Calls: []Call{fmtCall("shell", `{"command":["pwd"]}`)}}},
	}
	for _, c := range cases {
		for _, format := range []string{"glm47", Auto} {
			t.Run(c.name+"/"+format, func(t *testing.T) {
				got, err := ParseReply(ReaderOptions{Format: format, Config: Config{Schemas: schemasFor(t, []byte(glmTools))}}, c.input)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(normalize(t, c.want), normalize(t, got)); d != "" {
					t.Errorf("reply (-want +got):\n%s", d)
				}
			})
		}
	}
}
