package textcall

import (
	"slices"
	"strings"
	"testing"
)

// qwenTools is the chat tools array the Qwen tables type values by.
const qwenTools = `[
 {"type":"function","function":{"name":"shell","parameters":{"type":"object","properties":{
   "command":{"type":"array","items":{"type":"string"}},"workdir":{"type":"string"},
   "timeout_ms":{"type":"integer"},"with_escalated_permissions":{"type":["boolean","null"]}}}}},
 {"type":"function","function":{"name":"apply_patch","parameters":{"type":"object","properties":{"input":{"type":"string"}}}}},
 {"type":"function","function":{"name":"update_plan","parameters":{"type":"object","properties":{
   "plan":{"type":"array"},"explanation":{"type":"string"},"meta":{"type":"object"},"ratio":{"type":"number"}}}}}
]`

func TestHermesReplies(t *testing.T) { runReplyCases(t, "hermes", hermesCases()) }

func hermesCases() []replyCase {
	return []replyCase{
		{
			name:  "one call after text",
			input: "Let me list the files.\n<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"ls\", \"-la\"]}}\n</tool_call>",
			want:  Reply{Content: "Let me list the files.\n", Calls: []Call{fmtCall("shell", `{"command":["ls","-la"]}`)}},
		},
		{
			name: "two calls, key order varies, white space between calls is markup",
			input: "<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"pwd\"]}}\n</tool_call>\n\n" +
				"<tool_call>\n{\"arguments\": {\"command\": [\"ls\"], \"timeout_ms\": 5000}, \"name\": \"shell\"}\n</tool_call>\n",
			want: Reply{Calls: []Call{
				fmtCall("shell", `{"command":["pwd"]}`),
				fmtCall("shell", `{"command":["ls"],"timeout_ms":5000}`),
			}},
		},
		{
			name:  "text after the call",
			input: "<tool_call>{\"name\": \"shell\", \"arguments\": {\"command\": [\"ls\"]}}</tool_call>\nI ran ls.",
			want:  Reply{Content: "\nI ran ls.", Calls: []Call{fmtCall("shell", `{"command":["ls"]}`)}},
		},
		{
			name:  "arguments as a JSON string",
			input: "<tool_call>\n{\"name\": \"shell\", \"arguments\": \"{\\\"command\\\": [\\\"ls\\\"]}\"}\n</tool_call>",
			want:  Reply{Calls: []Call{fmtCall("shell", `{"command":["ls"]}`)}},
		},
		{
			name:  "arguments as a Python dict in a string",
			input: "<tool_call>\n{\"name\": \"update_plan\", \"arguments\": \"{'plan': [{'step': 'a', 'status': 'pending'}], 'done': False}\"}\n</tool_call>",
			want:  Reply{Calls: []Call{fmtCall("update_plan", `{"plan":[{"step":"a","status":"pending"}],"done":false}`)}},
		},
		{
			name:  "parameters instead of arguments; null and missing arguments",
			input: "<tool_call>{\"name\": \"a\", \"parameters\": {\"x\": 1}}</tool_call><tool_call>{\"name\": \"b\", \"arguments\": null}</tool_call><tool_call>{\"name\": \"c\"}</tool_call>",
			want:  Reply{Calls: []Call{fmtCall("a", `{"x":1}`), fmtCall("b", `{}`), fmtCall("c", `{}`)}},
		},
		{
			name:  "the Chat Completions shape inside <tool_call>",
			input: "<tool_call>\n{\"type\": \"function\", \"function\": {\"name\": \"shell\", \"arguments\": \"{\\\"command\\\": [\\\"ls\\\"]}\"}}\n</tool_call>",
			want:  Reply{Calls: []Call{fmtCall("shell", `{"command":["ls"]}`)}},
		},
		{
			name:  "missing </tool_call> at the end of the output",
			input: "Checking.\n<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"git\", \"status\"]}}\n",
			want:  Reply{Content: "Checking.\n", Calls: []Call{fmtCall("shell", `{"command":["git","status"]}`)}},
		},
		{
			name:  "two JSON calls in one block",
			input: "<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n{\"name\": \"b\", \"arguments\": {\"k\": 1}}\n</tool_call>",
			want:  Reply{Calls: []Call{fmtCall("a", `{}`), fmtCall("b", `{"k":1}`)}},
		},
		{
			name:  "missing </tool_call> between calls",
			input: "<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n<tool_call>\n{\"name\": \"b\", \"arguments\": {\"k\": \"v\"}}\n</tool_call>",
			want:  Reply{Calls: []Call{fmtCall("a", `{}`), fmtCall("b", `{"k":"v"}`)}},
		},
		{
			name:  "markup inside a string value is the value",
			input: "<tool_call>\n{\"name\": \"apply_patch\", \"arguments\": {\"input\": \"*** Begin Patch\\n+</tool_call> <tool_call> {\\\"x\\\": 1}\\n*** End Patch\"}}\n</tool_call>",
			want:  Reply{Calls: []Call{fmtCall("apply_patch", `{"input":"*** Begin Patch\n+</tool_call> <tool_call> {\"x\": 1}\n*** End Patch"}`)}},
		},
		{
			name:  "unicode, escapes and numbers",
			input: "<tool_call>{\"name\":\"w\",\"arguments\":{\"s\":\"h\u00e9llo \\u00e9 \\\"q\\\"\",\"n\":-1.5e-3,\"z\":0,\"b\":[true,false,null]}}</tool_call>",
			want:  Reply{Calls: []Call{fmtCall("w", `{"s":"héllo é \"q\"","n":-1.5e-3,"z":0,"b":[true,false,null]}`)}},
		},
		{
			name:  "Qwen3-Coder XML read by hermes",
			input: "<tool_call>\n<function=shell>\n<parameter=command>\n[\"ls\"]\n</parameter>\n</function>\n</tool_call>",
			tools: qwenTools,
			want:  Reply{Calls: []Call{fmtCall("shell", `{"command":["ls"]}`)}},
		},
		{
			name:  "a call written as a Python dict",
			input: "<tool_call>\n{'name': 'update_plan', 'arguments': {'plan': [{'step': 'a', 'status': 'pending'}], 'done': False, 'note': None}}\n</tool_call>",
			want:  Reply{Calls: []Call{fmtCall("update_plan", `{"plan":[{"step":"a","status":"pending"}],"done":false,"note":null}`)}},
		},
		{
			name:  "two Python-dict calls in one block, then a JSON one",
			input: "<tool_call>\n{'name': 'a', 'parameters': {}}\n{ 'name': 'b', 'arguments': {'k': (1, 2)}}\n</tool_call><tool_call>{\"name\": \"c\", \"arguments\": {}}</tool_call>",
			want:  Reply{Calls: []Call{fmtCall("a", `{}`), fmtCall("b", `{"k":[1,2]}`), fmtCall("c", `{}`)}},
		},
		{
			name:  "a Python dict that does not close is given back",
			input: "<tool_call>{'name': 'a', 'arguments': {'x': 1}",
			want:  Reply{Content: "<tool_call>{'name': 'a', 'arguments': {'x': 1}", Malformed: []string{"hermes: the call's Python dict is not complete"}},
		},
		{
			name:  "a Python dict with no name is given back",
			input: "<tool_call>{'arguments': {}}</tool_call>",
			want:  Reply{Content: "<tool_call>{'arguments': {}}</tool_call>", Malformed: []string{`hermes: the call has no "name"`}},
		},
		{
			name:  "<function=N>{json}</function> inside <tool_call>",
			input: "<tool_call>\n<function=shell>{\"command\": [\"ls\"], \"workdir\": \"/a\"}</function>\n</tool_call><tool_call><function=noargs></function></tool_call>",
			want:  Reply{Calls: []Call{fmtCall("shell", `{"command":["ls"],"workdir":"/a"}`), fmtCall("noargs", `{}`)}},
		},
		{
			name:  "<function=N>{json} cut at the end, and invalid",
			input: "<tool_call><function=a>{\"x\": 1}\n<tool_call><function=b>{x}</function></tool_call>",
			want: Reply{Content: "<tool_call><function=b>{x}</function></tool_call>", Calls: []Call{fmtCall("a", `{"x":1}`)},
				Malformed: []string{"hermes: the function's JSON arguments are not valid"}},
		},
		{
			name:  "unterminated JSON is given back",
			input: "Running.\n<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"ls\"",
			want: Reply{Content: "Running.\n<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"ls\"",
				Malformed: []string{"hermes: the call's JSON is not complete"}},
		},
		{
			name:  "invalid JSON is given back, the next call is recovered",
			input: "<tool_call>\n{\"name\": \"shell\", \"arguments\": {command: 1}}\n</tool_call>\n<tool_call>{\"name\": \"ok\", \"arguments\": {}}</tool_call>",
			want: Reply{Content: "<tool_call>\n{\"name\": \"shell\", \"arguments\": {c" + "ommand: 1}}\n</tool_call>\n",
				Calls: []Call{fmtCall("ok", `{}`)}, Malformed: []string{"hermes: the call is not valid JSON"}},
		},
		{
			name:  "no name",
			input: "<tool_call>{\"arguments\": {\"a\": 1}}</tool_call>",
			want:  Reply{Content: "<tool_call>{\"arguments\": {\"a\": 1}}</tool_call>", Malformed: []string{`hermes: the call has no "name"`}},
		},
		{
			name:  "arguments that are not an object",
			input: "<tool_call>{\"name\": \"a\", \"arguments\": [1]}</tool_call>",
			want:  Reply{Content: "<tool_call>{\"name\": \"a\", \"arguments\": [1]}</tool_call>", Malformed: []string{"hermes: the arguments are not an object"}},
		},
		{
			name:  "a tag in prose followed by words",
			input: "Wrap each call in a <tool_call> tag.",
			want:  Reply{Content: "Wrap each call in a <tool_call> tag.", Malformed: []string{"hermes: <tool_call> is followed by neither a JSON object nor <function="}},
		},
		// The variants of the family (llama.cpp's Hermes and Functionary
		// forms).
		{
			name:  "<function=N>{json}</function> without <tool_call>",
			input: "<function=read_file>{\"path\": \"docs/a.md\"}</function>",
			want:  Reply{Calls: []Call{fmtCall("read_file", `{"path":"docs/a.md"}`)}},
		},
		{
			name:  "two <function=N>{json} calls on their own lines, after text",
			input: "Reading both.\n<function=read_file>{\"path\": \"a\"}</function>\n<function=read_file>{\"path\": \"b\"}</function>\n",
			want:  Reply{Content: "Reading both.\n", Calls: []Call{fmtCall("read_file", `{"path":"a"}`), fmtCall("read_file", `{"path":"b"}`)}},
		},
		{
			name:  `<function name="N"> with the object on its own line`,
			input: "<function name=\"shell\">\n{\"command\": [\"make\", \"test\"]}\n</function>",
			want:  Reply{Calls: []Call{fmtCall("shell", `{"command":["make","test"]}`)}},
		},
		{
			name:  `<function name="N"> without arguments, then a second call`,
			input: "<function name=\"noop\"></function>\n<function name=\"shell\">{\"command\": [\"id\"]}</function>",
			want:  Reply{Calls: []Call{fmtCall("noop", `{}`), fmtCall("shell", `{"command":["id"]}`)}},
		},
		{
			name:  `prose with <function name= that is no call`,
			input: "Write <function name=\"f\" class=\"x\"> or <function=f> in the docs.",
			want:  Reply{Content: "Write <function name=\"f\" class=\"x\"> or <function=f> in the docs."},
		},
		{
			name:  "<response> around a JSON call",
			input: "<response>\n  {\"name\": \"shell\", \"arguments\": {\"command\": [\"ls\"]}}\n</response>",
			tools: qwenTools,
			want:  Reply{Calls: []Call{fmtCall("shell", `{"command":["ls"]}`)}},
		},
		{
			name:  "<tools>, <tool>, <function_call>, <json>, <JSON> and <xml> around a JSON call",
			input: "<function_call>{\"name\": \"shell\", \"arguments\": {\"command\": [\"a\"]}}</function_call>",
			tools: qwenTools,
			want:  Reply{Calls: []Call{fmtCall("shell", `{"command":["a"]}`)}},
		},
		{
			name:  "<xml> around an object over several lines, text after",
			input: "<xml>\n  {\n    \"name\": \"shell\", \"arguments\": {\"command\": [\"b\"]}\n  }\n</xml>\nDone.",
			tools: qwenTools,
			want:  Reply{Content: "\nDone.", Calls: []Call{fmtCall("shell", `{"command":["b"]}`)}},
		},
		{
			name:  "a ```json fence around the bare object",
			input: "```json\n  {\"name\": \"shell\", \"arguments\": {\"command\": [\"c\"]}}\n```",
			tools: qwenTools,
			want:  Reply{Calls: []Call{fmtCall("shell", `{"command":["c"]}`)}},
		},
		{
			name:  "a ```xml fence around <response>",
			input: "```xml\n<response>\n    {\"name\": \"shell\", \"arguments\": {\"command\": [\"d\"]}}\n</response>\n```",
			tools: qwenTools,
			want:  Reply{Calls: []Call{fmtCall("shell", `{"command":["d"]}`)}},
		},
		{
			name:  "a bare ``` fence, a wrapper indented inside, spaces after",
			input: "```\n\n      <function_call> {\"name\": \"shell\", \"arguments\": {\"command\": [\"e\"]}} \n      </function_call> \n``` ",
			tools: qwenTools,
			want:  Reply{Calls: []Call{fmtCall("shell", `{"command":["e"]}`)}},
		},
		{
			name:  "a ``` fence around <tool_call>",
			input: "```xml\n<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"f\"]}}\n</tool_call>\n```\nRan it.",
			tools: qwenTools,
			want:  Reply{Content: "\nRan it.", Calls: []Call{fmtCall("shell", `{"command":["f"]}`)}},
		},
		{
			name:  "a fenced call after text is an example, not a call",
			input: "For example:\n```json\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"ls\"]}}\n```",
			tools: qwenTools,
			want:  Reply{Content: "For example:\n```json\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"ls\"]}}\n```"},
		},
		{
			name:  "a fenced object naming no tool is an answer",
			input: "```json\n{\"name\": \"Ada\", \"arguments\": {\"born\": 1815}}\n```",
			tools: qwenTools,
			want:  Reply{Content: "```json\n{\"name\": \"Ada\", \"arguments\": {\"born\": 1815}}\n```"},
		},
		{
			name:  "a tool listing echoed in <tools> is no call",
			input: "<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"shell\"}}\n</tools>",
			tools: qwenTools,
			want:  Reply{Content: "<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"shell\"}}\n</tools>"},
		},
		{
			name:  "a fence of another language is text",
			input: "```go\nfunc main() {}\n```",
			want:  Reply{Content: "```go\nfunc main() {}\n```"},
		},
		{
			name:  "prose with a partial tag and braces",
			input: "if a <tool and b {x} then <tool_cal",
			want:  Reply{Content: "if a <tool and b {x} then <tool_cal"},
		},
	}
}

// TestHermesThink runs hermes and qwen3_coder through a Reader: a call
// after a reasoning block, and a call written before </think> (inside the
// reasoning).
func TestHermesThink(t *testing.T) {
	hermes := "<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"ls\"]}}\n</tool_call>"
	xml := "<tool_call>\n<function=shell>\n<parameter=command>\n[\"ls\"]\n</parameter>\n</function>\n</tool_call>"
	schemas := schemasFor(t, []byte(qwenTools))
	for _, c := range []struct {
		name, format string
		open         bool
		input        string
		want         Reply
	}{
		{"think before the call", "hermes", false, "<think>\nI should list.\n</think>\n\n" + hermes,
			Reply{Reasoning: "\nI should list.\n", Calls: []Call{fmtCall("shell", `{"command":["ls"]}`)}}},
		{"call before </think>", "hermes", true, "I should list.\n" + hermes + "\n</think>\n\nListed.",
			Reply{Reasoning: "I should list.\n", Content: "Listed.", Calls: []Call{fmtCall("shell", `{"command":["ls"]}`)}}},
		{"qwen3_coder: think before the call", "qwen3_coder", false, "<think>\nI should list.\n</think>\n\n" + xml,
			Reply{Reasoning: "\nI should list.\n", Calls: []Call{fmtCall("shell", `{"command":["ls"]}`)}}},
		{"qwen3_coder: call before </think>, auto", "auto", true, "I should list.\n" + xml + "\n</think>\n\nListed.",
			Reply{Reasoning: "I should list.\n", Content: "Listed.", Calls: []Call{fmtCall("shell", `{"command":["ls"]}`)}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, cut := range []int{0, 1, 3} {
				var sizes []int
				for n := cut; cut > 0 && n < len(c.input); n += cut {
					sizes = append(sizes, cut)
				}
				got, _ := readReply(t, ReaderOptions{Format: c.format, Config: Config{Schemas: schemas}, ThinkingOpen: c.open}, c.input, sizes)
				if d := diffReply(t, c.want, got); d != "" {
					t.Errorf("cut %d: reply (-want +got):\n%s", cut, d)
				}
			}
		})
	}
}

// TestHermesStreamsArguments shows that a call's arguments are passed on
// as they arrive, before </tool_call> (and before the object closes).
func TestHermesStreamsArguments(t *testing.T) {
	for _, format := range []string{"hermes", "auto"} {
		t.Run(format, func(t *testing.T) {
			p := parserFor(t, format, Config{})()
			ev := p.Feed(nil, "Sure.\n<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"l")
			ev = p.Feed(ev, "s\", \"-la\"], \"workdir\": \"/tm")
			if !slices.ContainsFunc(ev, func(e Event) bool { return e.Kind == CallBegin && e.Name == "shell" }) {
				t.Fatalf("no CallBegin before the end marker: %+v", ev)
			}
			var args string
			for _, e := range ev {
				if e.Kind == CallArgs {
					args += e.Text
				}
			}
			if want := `{"command": ["ls", "-la"], "workdir": "/tm`; args != want {
				t.Fatalf("arguments passed on so far = %q, want %q", args, want)
			}
			ev = p.Close(p.Feed(ev, "p\"}}\n</tool_call>"))
			rep, err := Collect(ev)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Calls) != 1 || string(rep.Calls[0].Arguments) != `{"command": ["ls", "-la"], "workdir": "/tmp"}` {
				t.Fatalf("calls = %+v", rep.Calls)
			}
		})
	}
}

// TestHermesQuiet checks that Quiet says yes only for text Feed would give
// back unchanged.
func TestHermesQuiet(t *testing.T) {
	p := parserFor(t, "hermes", Config{})()
	if !p.Quiet("plain text, {braces} and 1 > 0") {
		t.Error("plain text is not quiet")
	}
	if p.Quiet("a <b>") {
		t.Error("text with '<' is quiet")
	}
	p.Feed(nil, "x <tool_")
	if p.Quiet("plain") {
		t.Error("quiet while a partial tag is held")
	}
}

func TestHermesGoldens(t *testing.T) { runGoldens(t, "hermes", "hermes") }

func FuzzHermes(f *testing.F) {
	fuzzFormat(f, "hermes", true,
		"<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": [1, \"y\"]}}\n</tool_call>",
		"text <tool_call>{\"arguments\": \"{}\", \"name\": \"b\"}",
		"<tool_call>\n<function=f>\n<parameter=p>\nv\n</parameter>\n</function>\n</tool_call>",
		"<tool_call>{\"name\": \"a\", \"arguments\": {\"x\": 1e5, \"y\": -0.5, \"z\": \"\\u00e9\"}} trailing",
		"a <tool_call> b",
		"<function=a>{\"x\": 1}</function>\n<function name=\"b\">{}</function>",
		"```json\n<response>{\"name\": \"a\", \"arguments\": {}}</response>\n```",
		"<tools>\n{\"name\": \"a\", \"arguments\": {\"x\": [1]}}\n</tools> tail",
		"```\n{\"name\": \"a\"",
		"<tool_call>{'name': 'a', 'arguments': {'x': [1, 'y'], 'z': None}}</tool_call>",
		"<tool_call>{ 'name': 'a'",
	)
}

// TestAutoHermesVariants: auto reads the variants of the family as the
// hermes format does.
func TestAutoHermesVariants(t *testing.T) {
	var cases []replyCase
	for _, c := range hermesCases() {
		if len(c.want.Malformed) == 0 && (strings.Contains(c.input, "<function") || strings.Contains(c.input, "```") ||
			strings.Contains(c.input, "<response>") || strings.Contains(c.input, "<tools>") || strings.Contains(c.input, "<xml>") ||
			strings.Contains(c.input, "<function_call>")) {
			cases = append(cases, c)
		}
	}
	if len(cases) < 12 {
		t.Fatalf("only %d variant cases", len(cases))
	}
	runReplyCases(t, Auto, cases)
}
