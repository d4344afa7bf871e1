package textcall

import (
	"encoding/json"
	"testing"
)

func TestMistralReplies(t *testing.T) {
	runReplyCases(t, "mistral", []replyCase{
		{
			name:  "v11 call",
			input: `[TOOL_CALLS]get_weather[ARGS]{"city": "Paris", "unit": "celsius"}`,
			want:  Reply{Calls: []Call{{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris","unit":"celsius"}`)}}},
		},
		{
			name:  "v11 calls one after another, text before",
			input: `Let me add.[TOOL_CALLS]add[ARGS]{"a": 3.5, "b": 4}[TOOL_CALLS]multiply[ARGS]{"a": 3, "b": 6}`,
			want: Reply{Content: "Let me add.", Calls: []Call{
				{Name: "add", Arguments: json.RawMessage(`{"a":3.5,"b":4}`)},
				{Name: "multiply", Arguments: json.RawMessage(`{"a":3,"b":6}`)},
			}},
		},
		{
			name:  "v11 call with an id",
			input: `[TOOL_CALLS]shell[CALL_ID]a1B2c3D4e[ARGS]{"command": ["ls"]}`,
			want:  Reply{Calls: []Call{{Name: "shell", ID: "a1B2c3D4e", Arguments: json.RawMessage(`{"command":["ls"]}`)}}},
		},
		{
			name:  "special tokens stripped: name then object",
			input: `hi{hi[TOOL_CALLS]bash{"command": "print(\"hello\")\nre.compile(r'{}')"}`,
			want:  Reply{Content: "hi{hi", Calls: []Call{{Name: "bash", Arguments: json.RawMessage(`{"command":"print(\"hello\")\nre.compile(r'{}')"}`)}}},
		},
		{
			name:  "text after a v11 call",
			input: `[TOOL_CALLS]ls[ARGS]{"d": "."} and then some text`,
			want:  Reply{Content: " and then some text", Calls: []Call{{Name: "ls", Arguments: json.RawMessage(`{"d":"."}`)}}},
		},
		{
			name:  "old array shape, two calls",
			input: `[TOOL_CALLS] [{"name": "add", "arguments": {"a": 3.5, "b": 4}}, {"name": "get_current_weather", "arguments":{"city": "San Francisco"}}]`,
			want: Reply{Calls: []Call{
				{Name: "add", Arguments: json.RawMessage(`{"a":3.5,"b":4}`)},
				{Name: "get_current_weather", Arguments: json.RawMessage(`{"city":"San Francisco"}`)},
			}},
		},
		{
			name:  "old shape: arguments before name, id after",
			input: `[TOOL_CALLS][{"arguments": {"name": "John Doe"}, "name": "get_age", "id": "abc123def"}]`,
			want:  Reply{Calls: []Call{{Name: "get_age", ID: "abc123def", Arguments: json.RawMessage(`{"name":"John Doe"}`)}}},
		},
		{
			name:  "old shape: arguments as a JSON string",
			input: `[TOOL_CALLS] [{"name": "ls", "arguments": "{\"d\": \"/\"}"}]`,
			want:  Reply{Calls: []Call{{Name: "ls", Arguments: json.RawMessage(`{"d":"/"}`)}}},
		},
		{
			name:  "old shape: trailing text after the array",
			input: "[TOOL_CALLS] [{\"name\": \"w\", \"arguments\":{\"city\": \"Dallas\"}}]\nextra trailing data",
			want:  Reply{Content: "\nextra trailing data", Calls: []Call{{Name: "w", Arguments: json.RawMessage(`{"city":"Dallas"}`)}}},
		},
		{
			name:  "old shape: missing closing bracket at the end",
			input: `[TOOL_CALLS] [{"name": "ls", "arguments": {}}`,
			want:  Reply{Calls: []Call{{Name: "ls", Arguments: json.RawMessage(`{}`)}}},
		},
		{
			name:  "old shape: a lone object",
			input: `[TOOL_CALLS] {"name": "ls", "arguments": {"d": 1}}`,
			want:  Reply{Calls: []Call{{Name: "ls", Arguments: json.RawMessage(`{"d":1}`)}}},
		},
		{
			name:  "old shape: object without a name is given back",
			input: `[TOOL_CALLS] [{"arguments": {"d": 1}}]`,
			want: Reply{
				Content:   `[TOOL_CALLS] [{"arguments": {"d": 1}}]`,
				Malformed: []string{"mistral: tool call object without a name or with arguments that are not an object"},
			},
		},
		{
			name:  "truncated v11 arguments are given back",
			input: `Sure [TOOL_CALLS]ls[ARGS]{"d": "/us`,
			want: Reply{
				Content:   `Sure [TOOL_CALLS]ls[ARGS]{"d": "/us`,
				Malformed: []string{"mistral: unterminated tool-call arguments"},
			},
		},
		{
			name:  "v11 arguments that are not an object are given back",
			input: `[TOOL_CALLS]ls[ARGS]["a"]`,
			want: Reply{
				Content:   `[TOOL_CALLS]ls[ARGS]["a"]`,
				Malformed: []string{"mistral: tool-call arguments are not a JSON object"},
			},
		},
		{
			name:  "prose mentioning the token is text",
			input: "Mistral writes [TOOL_CALLS] before its calls, then [ARGS].",
			want:  Reply{Content: "Mistral writes [TOOL_CALLS] before its calls, then [ARGS]."},
		},
		{
			name:  "square brackets in plain text",
			input: "a [link](x) and [TOOL_ a partial [TOOL_CALL",
			want:  Reply{Content: "a [link](x) and [TOOL_ a partial [TOOL_CALL"},
		},
	})
}

func TestMistralGoldens(t *testing.T) { runGoldens(t, "mistral", "mistral") }

// TestMistralStreams shows the v11 arguments pass on before the object is
// complete.
func TestMistralStreams(t *testing.T) {
	p, _ := NewParser("mistral", Config{})
	assertStreamed(t, p.Feed(nil, `[TOOL_CALLS]shell[CALL_ID]a1B2c3D4e[ARGS]{"command": "ec`), "shell", "a1B2c3D4e", `{"command": "ec`)
	out := p.Close(p.Feed(nil, `ho hi"}`))
	if len(out) != 2 || out[0].Kind != CallArgs || out[0].Text != `ho hi"}` || out[1].Kind != CallEnd {
		t.Fatalf("rest of the call: %+v", out)
	}
}

// TestMistralThink runs whole replies through a Reader: [THINK] blocks
// become reasoning, and a call written inside one is recovered too.
func TestMistralThink(t *testing.T) {
	for _, c := range []struct {
		name, format, input string
		want                Reply
	}{
		{
			name:   "reasoning, text, then a call",
			format: "mistral",
			input:  "[THINK]The user wants the files.[/THINK]Listing them.[TOOL_CALLS]ls[ARGS]{\"d\": \".\"}",
			want: Reply{Reasoning: "The user wants the files.", Content: "Listing them.", Calls: []Call{
				{Name: "ls", Arguments: json.RawMessage(`{"d":"."}`)},
			}},
		},
		{
			name:   "a call before [/THINK]",
			format: "mistral",
			input:  "[THINK]I should list.[TOOL_CALLS]ls[ARGS]{\"d\": \".\"}[/THINK]",
			want: Reply{Reasoning: "I should list.", Calls: []Call{
				{Name: "ls", Arguments: json.RawMessage(`{"d":"."}`)},
			}},
		},
		{
			name:   "auto picks mistral after reasoning",
			format: "auto",
			input:  "  [THINK]plan[/THINK]\n[TOOL_CALLS] [{\"name\": \"ls\", \"arguments\": {}}]",
			want:   Reply{Content: "  ", Reasoning: "plan", Calls: []Call{{Name: "ls", Arguments: json.RawMessage(`{}`)}}},
		},
		{
			name:   "unterminated reasoning stays reasoning",
			format: "mistral",
			input:  "[THINK]still thinking",
			want:   Reply{Reasoning: "still thinking"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, sizes := range [][]int{nil, ones(len(c.input)), {3, 5, 7, 11, 13}} {
				got, _ := readReply(t, ReaderOptions{Format: c.format}, c.input, sizes)
				if d := diffReply(t, c.want, got); d != "" {
					t.Fatalf("sizes %v: reply (-want +got):\n%s", sizes, d)
				}
			}
		})
	}
}

func TestMistralAuto(t *testing.T) {
	for _, c := range []struct{ name, input, want string }{
		{"v11", `Ok.[TOOL_CALLS]ls[ARGS]{}`, "mistral"},
		{"old", `[TOOL_CALLS] [{"name": "ls", "arguments": {}}]`, "mistral"},
		{"prose", "The [TOOL_CALLS] token starts calls.", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, rep := autoReply(t, "", c.input)
			if got != c.want {
				t.Fatalf("auto chose %q, want %q", got, c.want)
			}
			if (c.want == "") != (len(rep.Calls) == 0) || (c.want == "" && rep.Content != c.input) {
				t.Fatalf("reply: %+v", rep)
			}
		})
	}
}

func FuzzMistral(f *testing.F) {
	fuzzFormat(f, "mistral", true,
		`Let me add.[TOOL_CALLS]add[ARGS]{"a": 3.5, "b": 4}[TOOL_CALLS]multiply[ARGS]{"a": 3}`,
		`[TOOL_CALLS] [{"name": "add", "arguments": {"a": 1}}, {"name": "x", "arguments": "{}", "id": "abc"}]`,
		`[TOOL_CALLS]shell[CALL_ID]a1B2c3D4e[ARGS]{"command": "ec`,
		"prose [TOOL_CALLS] here [",
	)
}
