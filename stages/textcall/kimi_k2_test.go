package textcall

import (
	"encoding/json"
	"testing"
)

func TestKimiK2Replies(t *testing.T) {
	runReplyCases(t, "kimi_k2", []replyCase{
		{
			name:  "one call with text before",
			input: "Let me look.<|tool_calls_section_begin|><|tool_call_begin|>functions.shell:0<|tool_call_argument_begin|>{\"command\": [\"ls\", \"-la\"]}<|tool_call_end|><|tool_calls_section_end|>",
			want: Reply{Content: "Let me look.", Calls: []Call{
				{Name: "shell", ID: "functions.shell:0", Arguments: json.RawMessage(`{"command":["ls","-la"]}`)},
			}},
		},
		{
			name: "two calls with new lines between, text after",
			input: "<|tool_calls_section_begin|>\n<|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{\"path\": \"a.go\"}<|tool_call_end|>\n" +
				"<|tool_call_begin|>functions.read:1<|tool_call_argument_begin|>{\"path\": \"b.go\"}<|tool_call_end|>\n<|tool_calls_section_end|>\nDone.",
			want: Reply{Content: "\nDone.", Calls: []Call{
				{Name: "read", ID: "functions.read:0", Arguments: json.RawMessage(`{"path":"a.go"}`)},
				{Name: "read", ID: "functions.read:1", Arguments: json.RawMessage(`{"path":"b.go"}`)},
			}},
		},
		{
			name:  "singular section marker",
			input: "<|tool_call_section_begin|><|tool_call_begin|>functions.ls:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_call_section_end|>",
			want:  Reply{Calls: []Call{{Name: "ls", ID: "functions.ls:0", Arguments: json.RawMessage(`{}`)}}},
		},
		{
			name:  "id without the functions prefix, spaces around it",
			input: "<|tool_calls_section_begin|><|tool_call_begin|> search:3 <|tool_call_argument_begin|> {\"q\": \"go\"} <|tool_call_end|><|tool_calls_section_end|>",
			want:  Reply{Calls: []Call{{Name: "search", ID: "search:3", Arguments: json.RawMessage(`{"q":"go"}`)}}},
		},
		{
			name:  "namespaced tool keeps its dots",
			input: "<|tool_calls_section_begin|><|tool_call_begin|>functions.mcp.fs.read:0<|tool_call_argument_begin|>{\"p\":1}<|tool_call_end|><|tool_calls_section_end|>",
			want:  Reply{Calls: []Call{{Name: "mcp.fs.read", ID: "functions.mcp.fs.read:0", Arguments: json.RawMessage(`{"p":1}`)}}},
		},
		{
			name:  "other id shape",
			input: "<|tool_calls_section_begin|><|tool_call_begin|>call_abc123<|tool_call_argument_begin|>{\"x\":true}<|tool_call_end|><|tool_calls_section_end|>",
			want:  Reply{Calls: []Call{{Name: "call_abc123", ID: "call_abc123", Arguments: json.RawMessage(`{"x":true}`)}}},
		},
		{
			name:  "underscore id shapes read by the request's tools",
			tools: `[{"type":"function","function":{"name":"read_file","parameters":{}}},{"type":"function","function":{"name":"ls_2","parameters":{}}}]`,
			input: "<|tool_calls_section_begin|><|tool_call_begin|>functions_read_file_0<|tool_call_argument_begin|>{}<|tool_call_end|>" +
				"<|tool_call_begin|>read_file_1<|tool_call_argument_begin|>{}<|tool_call_end|>" +
				"<|tool_call_begin|>ls_2<|tool_call_argument_begin|>{}<|tool_call_end|>" +
				"<|tool_call_begin|>other_3<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>",
			want: Reply{Calls: []Call{
				{Name: "read_file", ID: "functions_read_file_0", Arguments: json.RawMessage(`{}`)},
				{Name: "read_file", ID: "read_file_1", Arguments: json.RawMessage(`{}`)},
				{Name: "ls_2", ID: "ls_2", Arguments: json.RawMessage(`{}`)},
				{Name: "other_3", ID: "other_3", Arguments: json.RawMessage(`{}`)},
			}},
		},
		{
			name:  "call without its section",
			input: "ok <|tool_call_begin|>functions.ls:0<|tool_call_argument_begin|>{\"d\":\".\"}<|tool_call_end|> after",
			want:  Reply{Content: "ok  after", Calls: []Call{{Name: "ls", ID: "functions.ls:0", Arguments: json.RawMessage(`{"d":"."}`)}}},
		},
		{
			name:  "braces and markers inside strings",
			input: "<|tool_calls_section_begin|><|tool_call_begin|>functions.write:0<|tool_call_argument_begin|>{\"text\": \"}{ \\\" <|tool_call_end|> ]\"}<|tool_call_end|><|tool_calls_section_end|>",
			want:  Reply{Calls: []Call{{Name: "write", ID: "functions.write:0", Arguments: json.RawMessage(`{"text":"}{ \" <|tool_call_end|> ]"}`)}}},
		},
		{
			name:  "missing call end and section end at the end of output",
			input: "<|tool_calls_section_begin|><|tool_call_begin|>functions.ls:0<|tool_call_argument_begin|>{\"d\": \"/\"}",
			want:  Reply{Calls: []Call{{Name: "ls", ID: "functions.ls:0", Arguments: json.RawMessage(`{"d":"/"}`)}}},
		},
		{
			name:  "missing call end before the next call",
			input: "<|tool_calls_section_begin|><|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>{}<|tool_call_begin|>functions.b:1<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>",
			want: Reply{Calls: []Call{
				{Name: "a", ID: "functions.a:0", Arguments: json.RawMessage(`{}`)},
				{Name: "b", ID: "functions.b:1", Arguments: json.RawMessage(`{}`)},
			}},
		},
		{
			name:  "no arguments at all",
			input: "<|tool_calls_section_begin|><|tool_call_begin|>functions.now:0<|tool_call_argument_begin|><|tool_call_end|><|tool_calls_section_end|>",
			want:  Reply{Calls: []Call{{Name: "now", ID: "functions.now:0", Arguments: json.RawMessage(`{}`)}}},
		},
		{
			name:  "arguments written as a Python literal",
			input: "<|tool_calls_section_begin|><|tool_call_begin|>functions.plan:0<|tool_call_argument_begin|>{'steps': ['a', 'b'], 'done': False, 'note': None}<|tool_call_end|><|tool_calls_section_end|>",
			want:  Reply{Calls: []Call{{Name: "plan", ID: "functions.plan:0", Arguments: json.RawMessage(`{"steps":["a","b"],"done":false,"note":null}`)}}},
		},
		{
			name:  "truncated arguments are given back",
			input: "Try:<|tool_calls_section_begin|><|tool_call_begin|>functions.ls:0<|tool_call_argument_begin|>{\"d\": \"/u",
			want: Reply{
				Content:   "Try:<|tool_calls_section_begin|><|tool_call_begin|>functions.ls:0<|tool_call_argument_begin|>{\"d\": \"/u",
				Malformed: []string{"kimi_k2: unterminated tool-call arguments"},
			},
		},
		{
			name:  "invalid JSON is given back",
			input: "<|tool_calls_section_begin|><|tool_call_begin|>functions.ls:0<|tool_call_argument_begin|>{\"d\": }<|tool_call_end|><|tool_calls_section_end|>",
			want: Reply{
				Content:   "<|tool_calls_section_begin|><|tool_call_begin|>functions.ls:0<|tool_call_argument_begin|>{\"d\": }<|tool_call_end|><|tool_calls_section_end|>",
				Malformed: []string{"kimi_k2: tool-call arguments are not a JSON object"},
			},
		},
		{
			name:  "a good call, then a broken one",
			input: "<|tool_calls_section_begin|><|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_call_begin|>functions.b:1<|tool_call_argument_begin|>[1]<|tool_call_end|><|tool_calls_section_end|>",
			want: Reply{
				Content:   "<|tool_call_begin|>functions.b:1<|tool_call_argument_begin|>[1]<|tool_call_end|><|tool_calls_section_end|>",
				Calls:     []Call{{Name: "a", ID: "functions.a:0", Arguments: json.RawMessage(`{}`)}},
				Malformed: []string{"kimi_k2: tool-call arguments are not a JSON object"},
			},
		},
		{
			name:  "call marker with no argument marker",
			input: "<|tool_calls_section_begin|><|tool_call_begin|>functions.a:0<|tool_call_end|>",
			want: Reply{
				Content:   "<|tool_calls_section_begin|><|tool_call_begin|>functions.a:0<|tool_call_end|>",
				Malformed: []string{"kimi_k2: tool call without <|tool_call_argument_begin|>"},
			},
		},
		{
			name:  "prose mentioning the section marker is text",
			input: "Kimi opens calls with <|tool_calls_section_begin|> and closes with <|tool_calls_section_end|>.",
			want:  Reply{Content: "Kimi opens calls with <|tool_calls_section_begin|> and closes with <|tool_calls_section_end|>."},
		},
		{
			name:  "prose mentioning the call marker is text",
			input: "Each call starts with <|tool_call_begin|> then an id.",
			want:  Reply{Content: "Each call starts with <|tool_call_begin|> then an id."},
		},
		{
			name:  "partial marker at the end is text",
			input: "almost <|tool_calls_sec",
			want:  Reply{Content: "almost <|tool_calls_sec"},
		},
		{
			name:  "plain text with angle brackets",
			input: "if a < b && c <| d then <tag> stays",
			want:  Reply{Content: "if a < b && c <| d then <tag> stays"},
		},
	})
}

func TestKimiK2Goldens(t *testing.T) { runGoldens(t, "kimi_k2", "kimi_k2") }

// TestKimiK2Streams shows the arguments pass on before the call's end
// marker arrives.
func TestKimiK2Streams(t *testing.T) {
	p, _ := NewParser("kimi_k2", Config{})
	out := p.Feed(nil, "<|tool_calls_section_begin|><|tool_call_begin|>functions.shell:0<|tool_call_argument_begin|>{\"command\": \"ec")
	assertStreamed(t, out, "shell", "functions.shell:0", `{"command": "ec`)
	out = p.Feed(nil, "ho hi\"}")
	if len(out) != 1 || out[0].Kind != CallArgs || out[0].Text != `ho hi"}` {
		t.Fatalf("second piece: %+v", out)
	}
	out = p.Close(p.Feed(nil, "<|tool_call_end|><|tool_calls_section_end|>"))
	if len(out) != 1 || out[0].Kind != CallEnd {
		t.Fatalf("end: %+v", out)
	}
}

func TestKimiK2Auto(t *testing.T) {
	kimi := "Sure.<|tool_calls_section_begin|><|tool_call_begin|>functions.ls:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>"
	for _, c := range []struct {
		name, input, want string
	}{
		{"section", kimi, "kimi_k2"},
		{"call without section", "<|tool_call_begin|>functions.ls:0<|tool_call_argument_begin|>{}<|tool_call_end|>", "kimi_k2"},
		{"prose mentions the marker", "Write <|tool_calls_section_begin|> first.", ""},
		{"prose mentions the call marker", "The <|tool_call_begin|> token opens a call.", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, rep := autoReply(t, "", c.input)
			if got != c.want {
				t.Fatalf("auto chose %q, want %q", got, c.want)
			}
			if c.want == "" && (rep.Content != c.input || len(rep.Calls) != 0) {
				t.Fatalf("prose changed: %+v", rep)
			}
			if c.want != "" && len(rep.Calls) != 1 {
				t.Fatalf("no call recovered: %+v", rep)
			}
		})
	}
}

func FuzzKimiK2(f *testing.F) {
	fuzzFormat(f, "kimi_k2", true,
		"Let me look.<|tool_calls_section_begin|><|tool_call_begin|>functions.shell:0<|tool_call_argument_begin|>{\"command\": [\"ls\"]}<|tool_call_end|><|tool_calls_section_end|>",
		"<|tool_call_begin|>functions.ls:0<|tool_call_argument_begin|>{\"d\": \"/u",
		"text <|tool_calls_section_begin|> more",
		"<|tool_call_section_begin|><|tool_call_begin|> a:1 <|tool_call_argument_begin|><|tool_call_end|>",
	)
}
