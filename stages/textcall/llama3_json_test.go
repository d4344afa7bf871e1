package textcall

import (
	"slices"
	"strings"
	"testing"
)

func TestLlama3JSONReplies(t *testing.T) { runReplyCases(t, "llama3_json", llamaCases()) }

func llamaCases() []replyCase {
	return []replyCase{
		{
			name:  "one call",
			input: `{"name": "shell", "parameters": {"command": ["ls", "-la"]}}`,
			want:  Reply{Calls: []Call{fmtCall("shell", `{"command":["ls","-la"]}`)}},
		},
		{
			name:  "<|python_tag|>, arguments instead of parameters, a type key",
			input: "<|python_tag|>{\"type\": \"function\", \"name\": \"shell\", \"arguments\": {\"command\": [\"pwd\"]}}",
			want:  Reply{Calls: []Call{fmtCall("shell", `{"command":["pwd"]}`)}},
		},
		{
			name:  "several calls separated by ';' and new lines, key order varies",
			input: "{\"name\": \"a\", \"parameters\": {\"x\": 1}}; {\"parameters\": {\"y\": [true]}, \"name\": \"b\"};\n{\"name\": \"c\", \"parameters\": {}}\n",
			want:  Reply{Calls: []Call{fmtCall("a", `{"x":1}`), fmtCall("b", `{"y":[true]}`), fmtCall("c", `{}`)}},
		},
		{
			name:  "leading white space and text after the call",
			input: "\n {\"name\": \"shell\", \"parameters\": {\"command\": [\"ls\"]}}\nThat lists the files.",
			want:  Reply{Content: "\nThat lists the files.", Calls: []Call{fmtCall("shell", `{"command":["ls"]}`)}},
		},
		{
			name:  "arguments as a string",
			input: `{"name": "shell", "parameters": "{\"command\": [\"ls\"]}"}`,
			want:  Reply{Calls: []Call{fmtCall("shell", `{"command":["ls"]}`)}},
		},
		{
			name:  "a name the request's tools lack: JSON the user asked for",
			input: `{"name": "Alice", "parameters": {"age": 30}}`,
			tools: qwenTools,
			want:  Reply{Content: `{"name": "Alice", "parameters": {"age": 30}}`},
		},
		{
			name:  "the same with a tool the request has",
			input: `{"name": "shell", "parameters": {"command": ["id"]}}`,
			tools: qwenTools,
			want:  Reply{Calls: []Call{fmtCall("shell", `{"command":["id"]}`)}},
		},
		{
			name:  "<|python_tag|> names any tool",
			input: `<|python_tag|>{"name": "brave_search", "parameters": {"query": "go"}}`,
			tools: qwenTools,
			want:  Reply{Calls: []Call{fmtCall("brave_search", `{"query":"go"}`)}},
		},
		{
			name:  "JSON in prose is not a call",
			input: "Send this: {\"name\": \"shell\", \"parameters\": {\"command\": [\"ls\"]}}",
			want:  Reply{Content: "Send this: {\"name\": \"shell\", \"parameters\": {\"command\": [\"ls\"]}}"},
		},
		{
			name:  "an object with other keys is not a call",
			input: "{\"name\": \"Alice\", \"age\": 30}\nShe is 30.",
			want:  Reply{Content: "{\"name\": \"Alice\", \"age\": 30}\nShe is 30."},
		},
		{
			name:  "a key after the arguments makes it no call",
			input: `{"name": "shell", "parameters": {"command": ["ls"]}, "note": "x"}`,
			want: Reply{Content: `{"name": "shell", "parameters": {"command": ["ls"]}, "note": "x"}`,
				Malformed: []string{"llama3_json: the object has a key a call does not have"}},
		},
		{
			name:  "an object without parameters is not a call",
			input: `{"name": "shell"}`,
			want:  Reply{Content: `{"name": "shell"}`},
		},
		{
			name:  "a JSON array of calls",
			input: "[{\"name\": \"shell\", \"parameters\": {}},\n {\"name\": \"b\", \"arguments\": {\"k\": 1}}]\nDone.",
			want:  Reply{Content: "\nDone.", Calls: []Call{fmtCall("shell", `{}`), fmtCall("b", `{"k":1}`)}},
		},
		{
			name:  "a JSON array of other things is text",
			input: "[1, 2] and [{\"title\": \"x\"}]",
			want:  Reply{Content: "[1, 2] and [{\"title\": \"x\"}]"},
		},
		{
			name:  "an array whose first element is no call is text",
			input: `[{"title": "x"}, {"name": "shell", "parameters": {}}]`,
			want:  Reply{Content: `[{"title": "x"}, {"name": "shell", "parameters": {}}]`},
		},
		{
			name:  "unterminated call is given back",
			input: "{\"name\": \"shell\", \"parameters\": {\"command\": [\"ls\"",
			want: Reply{Content: "{\"name\": \"shell\", \"parameters\": {\"command\": [\"ls\"",
				Malformed: []string{"llama3_json: the call's JSON is not complete"}},
		},
		{
			name:  "the second call is cut: the first stands",
			input: "{\"name\": \"a\", \"parameters\": {}}; {\"name\": \"b\", \"param",
			want:  Reply{Content: "; {\"name\": \"b\", \"param", Calls: []Call{fmtCall("a", `{}`)}},
		},
		{
			name:  "<|python_tag|> before code is given back",
			input: "<|python_tag|>brave_search.call(query=\"go\")",
			want: Reply{Content: "<|python_tag|>brave_search.call(query=\"go\")",
				Malformed: []string{"llama3_json: <|python_tag|> is not followed by a JSON call"}},
		},
		{
			name:  "<|python_tag|> after text",
			input: "Searching.<|python_tag|>{\"name\": \"search\", \"parameters\": {\"q\": \"x\"}}",
			want:  Reply{Content: "Searching.", Calls: []Call{fmtCall("search", `{"q":"x"}`)}},
		},
	}
}

// TestLlama3JSONStreamsArguments shows the parameters passed on before the
// object closes.
func TestLlama3JSONStreamsArguments(t *testing.T) {
	p := parserFor(t, "llama3_json", Config{})()
	ev := p.Feed(nil, `{"name": "shell", "parameters": {"command": ["git", "st`)
	var args string
	for _, e := range ev {
		if e.Kind == CallArgs {
			args += e.Text
		}
	}
	if !slices.ContainsFunc(ev, func(e Event) bool { return e.Kind == CallBegin && e.Name == "shell" }) || args != `{"command": ["git", "st` {
		t.Fatalf("before the object closes: events %+v", ev)
	}
	rep, err := Collect(p.Close(p.Feed(ev, `atus"]}}`)))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Calls) != 1 || string(rep.Calls[0].Arguments) != `{"command": ["git", "status"]}` {
		t.Fatalf("calls = %+v", rep.Calls)
	}
}

func TestLlama3JSONGoldens(t *testing.T) { runGoldens(t, "llama3_json", "llama3_json") }

func FuzzLlama3JSON(f *testing.F) {
	fuzzFormat(f, "llama3_json", true,
		`{"name": "a", "parameters": {"x": [1, {"y": null}]}}; {"name": "b", "parameters": {}}`,
		`<|python_tag|>{"name": "a", "arguments": "{}"}`,
		` {"name": "x", "age": 3} text`,
		`[{"name": "a", "parameters": {}}, {"name": "b", "arguments": {"y": 2}}] tail`,
		`[ 1, {"name": "a"}]`,
		`text {"name": "a", "parameters": {}} <|python_`,
	)
}

// TestAutoPicksFmtA checks that auto locks on hermes, qwen3_coder and
// llama3_json on their markers, and not on prose that only mentions them.
func TestAutoPicksFmtA(t *testing.T) {
	for _, c := range []struct {
		name, input, model, want string
		calls                    int
	}{
		{"hermes", "Ok.\n<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>", "", "hermes", 1},
		{"qwen3_coder", "<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>", "", "qwen3_coder", 1},
		{"qwen3_coder without <tool_call>", "Ok.\n<function=a>\n<parameter=x>\n1\n</parameter>\n</function>", "", "qwen3_coder", 1},
		{"llama3_json", " {\"name\": \"a\", \"parameters\": {}}", "Llama-3.3-70B-Instruct", "llama3_json", 1},
		{"bare JSON from a model that is no Llama", "{\"name\": \"a\", \"parameters\": {}}", "qwen2.5-7b", "", 0},
		{"llama3_json with its tag", "<|python_tag|>{\"name\": \"a\", \"parameters\": {}}", "", "llama3_json", 1},
		{"hermes for a Llama model", "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>", "llama-3.3-70b", "hermes", 1},
		{"prose naming <tool_call>", "Put the JSON in a <tool_call> tag, then a <function=name> tag.", "", "", 0},
		{"prose with JSON after text", "The call is {\"name\": \"a\", \"parameters\": {}}.", "llama-3.1-8b", "", 0},
		{"a reply that is other JSON", "{\"title\": \"x\", \"tags\": [\"a\"]}", "llama3.1", "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, rep := autoReply(t, c.model, c.input)
			if got != c.want {
				t.Errorf("auto chose %q, want %q", got, c.want)
			}
			if len(rep.Calls) != c.calls {
				t.Errorf("%d calls, want %d: %+v", len(rep.Calls), c.calls, rep)
			}
			if c.calls == 0 && (rep.Content != c.input || len(rep.Malformed) > 0) {
				t.Errorf("prose changed: %+v", rep)
			}
		})
	}
}

// TestFmtAQuiet checks, on every table case of hermes, qwen3_coder and
// llama3_json cut byte by byte and in chunks, that whenever Quiet says yes
// Feed gives the piece back as one Text event.
func TestFmtAQuiet(t *testing.T) {
	for _, set := range []struct {
		format string
		cases  []replyCase
	}{{"hermes", hermesCases()}, {"qwen3_coder", qwen3CoderCases()}, {"llama3_json", llamaCases()}, {Auto, autoBareCases()}, {Auto, hermesCases()}} {
		for _, c := range set.cases {
			for _, sizes := range [][]int{ones(len(c.input)), {3, 5, 7, 11, 13, 17, 19, 23}} {
				var tools []byte
				if c.tools != "" {
					tools = []byte(c.tools)
				}
				p, _ := NewParser(set.format, Config{Schemas: schemasFor(t, tools), Model: c.model})
				all, in := checkQuiet(t, p, c.input, sizes)
				all = p.Close(p.Feed(all, in))
				if _, err := Collect(all); err != nil {
					t.Fatalf("%s %q: %v", set.format, c.name, err)
				}
			}
		}
	}
}

// BenchmarkFmtAPlainText measures the hermes, qwen3_coder and llama3_json
// parsers on a reply with no markup (prose and code with '<' and '{'), fed
// in deltas of about 16 bytes as a server streams them.
func BenchmarkFmtAPlainText(b *testing.B) {
	text := strings.Repeat("The loop runs while i < n; it calls f(x) and returns {a: 1} when done.\n", 40)
	var deltas []string
	for s := text; s != ""; {
		n := min(16, len(s))
		deltas = append(deltas, s[:n])
		s = s[n:]
	}
	for _, format := range []string{"hermes", "qwen3_coder", "llama3_json"} {
		b.Run(format, func(b *testing.B) {
			var out []Event
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				p, _ := NewParser(format, Config{})
				for _, d := range deltas {
					if p.Quiet(d) {
						continue
					}
					out = p.Feed(out[:0], d)
				}
				out = p.Close(out[:0])
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(deltas)), "ns/delta")
		})
	}
}

// autoBareCases are bare JSON replies read by auto with the request's
// tools known: a call only when the object names one of them.
func autoBareCases() []replyCase {
	return []replyCase{
		{name: "a call naming a tool, a model that is no Llama", model: "qwen2.5-7b", tools: variantTools,
			input: `{"name": "shell", "parameters": {"cmd": "ls dir0"}}`, want: Reply{Calls: wantCalls(1)}},
		{name: "arguments instead of parameters, the name last", tools: variantTools,
			input: "\n  {\"arguments\": {\"cmd\": \"ls dir0\"}, \"name\": \"shell\"}", want: Reply{Content: "\n  ", Calls: wantCalls(1)}},
		{name: "three calls separated by ';'", tools: variantTools, input: renderCalls("llama3_json", 3), want: Reply{Calls: wantCalls(3)}},
		{name: "text after the call", tools: variantTools,
			input: "{\"name\": \"read_file\", \"parameters\": {\"path\": \"a.md\"}}\nReading it now.",
			want:  Reply{Content: "\nReading it now.", Calls: []Call{fmtCall("read_file", `{"path":"a.md"}`)}}},
		{name: "a JSON answer naming no tool is left as it is", tools: variantTools,
			input: `{"name": "Alice", "parameters": {"age": 30}}`, want: Reply{Content: `{"name": "Alice", "parameters": {"age": 30}}`}},
		{name: "a JSON answer with other keys", tools: variantTools, model: "llama-3.1-8b",
			input: "{\"answer\": 42, \"name\": \"shell\"}", want: Reply{Content: "{\"answer\": 42, \"name\": \"shell\"}"}},
		{name: "a name that is no string", tools: variantTools,
			input: `{"name": 7, "parameters": {}}`, want: Reply{Content: `{"name": 7, "parameters": {}}`}},
		{name: "an array of calls", tools: variantTools,
			input: `[{"name": "shell", "parameters": {"cmd": "ls dir0"}}, {"name": "read_file", "arguments": {"path": "notes/1.md"}}]`,
			want:  Reply{Calls: wantCalls(2)}},
		{name: "an array naming no tool", tools: variantTools,
			input: `[{"name": "Ada", "parameters": {}}]`, want: Reply{Content: `[{"name": "Ada", "parameters": {}}]`}},
		{name: "an array of numbers", tools: variantTools, input: "[1, 2, 3]", want: Reply{Content: "[1, 2, 3]"}},
		{name: "plain prose", tools: variantTools, input: "Sure: use {braces} and <tags>.", want: Reply{Content: "Sure: use {braces} and <tags>."}},
		{name: "a call after prose is prose", tools: variantTools,
			input: `Run {"name": "shell", "parameters": {"cmd": "ls"}}`, want: Reply{Content: `Run {"name": "shell", "parameters": {"cmd": "ls"}}`}},
		{name: "a call cut before its name is text", tools: variantTools,
			input: `{"parameters": {"cmd": "ls"}, "na`, want: Reply{Content: `{"parameters": {"cmd": "ls"}, "na`}},
		{name: "no tools known, a model that is no Llama", model: "mistral-small",
			input: `{"name": "shell", "parameters": {}}`, want: Reply{Content: `{"name": "shell", "parameters": {}}`}},
	}
}

func TestAutoBareJSON(t *testing.T) { runReplyCases(t, Auto, autoBareCases()) }

// TestAutoBareJSONStreaming: a reply that may still become a call is held,
// and given back the moment it cannot; a call streams once its name came.
func TestAutoBareJSONStreaming(t *testing.T) {
	cfg := Config{Schemas: schemasFor(t, []byte(variantTools))}
	p := parserFor(t, Auto, cfg)()
	if ev := p.Feed(nil, `{"na`); len(ev) != 0 {
		t.Fatalf("a reply that may become a call gave %+v", ev)
	}
	ev := p.Feed(nil, `me": "Alice", `)
	if len(ev) != 1 || ev[0].Kind != Text || ev[0].Text != `{"name": "Alice", ` {
		t.Fatalf("a name that is no tool: want the text back at once, got %+v", ev)
	}
	p = parserFor(t, Auto, cfg)()
	ev = p.Feed(nil, `{"name": "shell", "parameters": {"cmd": "ls d`)
	assertStreamed(t, ev, "shell", "", `{"cmd": "ls d`)
}

func TestAutoGoldens(t *testing.T) { runGoldens(t, "auto", Auto) }

func FuzzAuto(f *testing.F) {
	fuzzFormat(f, Auto, true,
		`{"name": "a", "parameters": {"x": 1}}; {"name": "b", "arguments": {}}`,
		` {"parameters": {}, "name": "a"} tail`,
		`{"name": "a"`,
		"<function=a>{\"x\": 1}</function>",
		"```json\n{\"name\": \"a\", \"arguments\": {}}\n```",
		"<tools>\n{\"name\": \"a\", \"arguments\": {}}\n</tools>",
		"<function name=\"a\">{}</function>",
	)
}
