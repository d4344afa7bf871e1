package textcall

import (
	"encoding/json"
	"testing"
)

// The DeepSeek markers, spelled out so a test shows the exact text a model
// writes.
const (
	tCallsBegin = "<｜tool▁calls▁begin｜>"
	tCallsEnd   = "<｜tool▁calls▁end｜>"
	tCallBegin  = "<｜tool▁call▁begin｜>"
	tCallEnd    = "<｜tool▁call▁end｜>"
	tSep        = "<｜tool▁sep｜>"
)

func TestDeepSeekV3Replies(t *testing.T) {
	v3call := func(name, args string) string {
		return tCallBegin + "function" + tSep + name + "\n```json\n" + args + "\n```" + tCallEnd
	}
	runReplyCases(t, "deepseek_v3", []replyCase{
		{
			name:  "one call with text before",
			input: "Checking." + tCallsBegin + v3call("get_weather", `{"location": "Tokyo"}`) + tCallsEnd,
			want:  Reply{Content: "Checking.", Calls: []Call{{Name: "get_weather", Arguments: json.RawMessage(`{"location":"Tokyo"}`)}}},
		},
		{
			name:  "two calls separated by a new line, text after",
			input: tCallsBegin + v3call("read", `{"path": "a"}`) + "\n" + v3call("read", `{"path": "b"}`) + tCallsEnd + " done",
			want: Reply{Content: " done", Calls: []Call{
				{Name: "read", Arguments: json.RawMessage(`{"path":"a"}`)},
				{Name: "read", Arguments: json.RawMessage(`{"path":"b"}`)},
			}},
		},
		{
			name:  "fence without language word",
			input: tCallsBegin + tCallBegin + "function" + tSep + "ls\n```\n{\"d\": 1}\n```" + tCallEnd + tCallsEnd,
			want:  Reply{Calls: []Call{{Name: "ls", Arguments: json.RawMessage(`{"d":1}`)}}},
		},
		{
			name:  "no fence at all",
			input: tCallsBegin + tCallBegin + "function" + tSep + "ls\n{\"d\": 1}" + tCallEnd + tCallsEnd,
			want:  Reply{Calls: []Call{{Name: "ls", Arguments: json.RawMessage(`{"d":1}`)}}},
		},
		{
			name:  "a V3.1 call read by the V3 parser",
			input: tCallsBegin + tCallBegin + "ls" + tSep + `{"d": 2}` + tCallEnd + tCallsEnd,
			want:  Reply{Calls: []Call{{Name: "ls", Arguments: json.RawMessage(`{"d":2}`)}}},
		},
		{
			name:  "missing closing fence and end markers at the end of output",
			input: tCallsBegin + tCallBegin + "function" + tSep + "ls\n```json\n{\"d\": 3}",
			want:  Reply{Calls: []Call{{Name: "ls", Arguments: json.RawMessage(`{"d":3}`)}}},
		},
		{
			name:  "code fence and markers inside a string",
			input: tCallsBegin + v3call("write", `{"text": "`+"```"+`go\n}`+tCallEnd+`"}`) + tCallsEnd,
			want:  Reply{Calls: []Call{{Name: "write", Arguments: json.RawMessage(`{"text":"` + "```" + `go\n}` + tCallEnd + `"}`)}}},
		},
		{
			name:  "truncated arguments are given back",
			input: "x" + tCallsBegin + tCallBegin + "function" + tSep + "ls\n```json\n{\"d\": ",
			want: Reply{
				Content:   "x" + tCallsBegin + tCallBegin + "function" + tSep + "ls\n```json\n{\"d\": ",
				Malformed: []string{"deepseek_v3: unterminated tool-call arguments"},
			},
		},
		{
			name:  "truncated before the separator is given back",
			input: tCallsBegin + tCallBegin + "function",
			want: Reply{
				Content:   tCallsBegin + tCallBegin + "function",
				Malformed: []string{"deepseek_v3: unterminated tool call"},
			},
		},
		{
			name:  "arguments that are not an object are given back",
			input: tCallsBegin + v3call("ls", `["a"]`) + tCallsEnd,
			want: Reply{
				Content:   tCallsBegin + v3call("ls", `["a"]`) + tCallsEnd,
				Malformed: []string{"deepseek_v3: tool-call arguments are not a JSON object"},
			},
		},
		{
			name:  "prose mentioning the section marker is text",
			input: "DeepSeek starts calls with " + tCallsBegin + " in its output.",
			want:  Reply{Content: "DeepSeek starts calls with " + tCallsBegin + " in its output."},
		},
		{
			name:  "a marker cut at the end is text",
			input: "almost <｜tool▁ca",
			want:  Reply{Content: "almost <｜tool▁ca"},
		},
		{
			name:  "wide characters around",
			input: "天气 ✅" + tCallsBegin + v3call("search", `{"q": "北京天气"}`) + tCallsEnd + "完成",
			want:  Reply{Content: "天气 ✅完成", Calls: []Call{{Name: "search", Arguments: json.RawMessage(`{"q":"北京天气"}`)}}},
		},
	})
}

func TestDeepSeekV31Replies(t *testing.T) {
	call := func(name, args string) string { return tCallBegin + name + tSep + args + tCallEnd }
	runReplyCases(t, "deepseek_v31", []replyCase{
		{
			name:  "one call with text before",
			input: "I'll check." + tCallsBegin + call("get_weather", `{"location":"Paris"}`) + tCallsEnd,
			want:  Reply{Content: "I'll check.", Calls: []Call{{Name: "get_weather", Arguments: json.RawMessage(`{"location":"Paris"}`)}}},
		},
		{
			name:  "two calls",
			input: tCallsBegin + call("a", `{"x":1}`) + call("b", `{"y":[1,2]}`) + tCallsEnd,
			want: Reply{Calls: []Call{
				{Name: "a", Arguments: json.RawMessage(`{"x":1}`)},
				{Name: "b", Arguments: json.RawMessage(`{"y":[1,2]}`)},
			}},
		},
		{
			name:  "empty arguments object",
			input: tCallsBegin + call("ping", `{}`) + tCallsEnd,
			want:  Reply{Calls: []Call{{Name: "ping", Arguments: json.RawMessage(`{}`)}}},
		},
		{
			name:  "no arguments",
			input: tCallsBegin + tCallBegin + "ping" + tSep + tCallEnd + tCallsEnd,
			want:  Reply{Calls: []Call{{Name: "ping", Arguments: json.RawMessage(`{}`)}}},
		},
		{
			name:  "call without its section",
			input: call("ls", `{"d":"."}`),
			want:  Reply{Calls: []Call{{Name: "ls", Arguments: json.RawMessage(`{"d":"."}`)}}},
		},
		{
			name:  "missing end markers at the end of output",
			input: tCallsBegin + tCallBegin + "ls" + tSep + `{"d":"."}`,
			want:  Reply{Calls: []Call{{Name: "ls", Arguments: json.RawMessage(`{"d":"."}`)}}},
		},
		{
			name:  "a V3 call read by the V3.1 parser",
			input: tCallsBegin + tCallBegin + "function" + tSep + "ls\n```json\n{\"d\":1}\n```" + tCallEnd + tCallsEnd,
			want:  Reply{Calls: []Call{{Name: "ls", Arguments: json.RawMessage(`{"d":1}`)}}},
		},
		{
			name:  "arguments written as a Python literal, a brace inside a string",
			input: tCallsBegin + call("write", `{'path': 'a.go', 'text': "x := map[string]int{}\n"}`) + tCallsEnd,
			want:  Reply{Calls: []Call{{Name: "write", Arguments: json.RawMessage(`{"path":"a.go","text":"x := map[string]int{}\n"}`)}}},
		},
		{
			name:  "a broken call after a good one",
			input: tCallsBegin + call("a", `{}`) + call("b", `{"x":`),
			want: Reply{
				Content:   tCallBegin + "b" + tSep + `{"x":` + tCallEnd,
				Calls:     []Call{{Name: "a", Arguments: json.RawMessage(`{}`)}},
				Malformed: []string{"deepseek_v31: unterminated tool-call arguments"},
			},
		},
	})
}

func TestDeepSeekV3Goldens(t *testing.T)  { runGoldens(t, "deepseek_v3", "deepseek_v3") }
func TestDeepSeekV31Goldens(t *testing.T) { runGoldens(t, "deepseek_v31", "deepseek_v31") }

// TestDeepSeekStreams shows the arguments pass on before the call's end
// marker arrives, for both shapes.
func TestDeepSeekStreams(t *testing.T) {
	for _, c := range []struct{ format, head, rest string }{
		{"deepseek_v3", tCallsBegin + tCallBegin + "function" + tSep + "shell\n```json\n{\"cmd\": \"ec", "ho\"}\n```" + tCallEnd + tCallsEnd},
		{"deepseek_v31", tCallsBegin + tCallBegin + "shell" + tSep + "{\"cmd\": \"ec", "ho\"}" + tCallEnd + tCallsEnd},
	} {
		t.Run(c.format, func(t *testing.T) {
			p, _ := NewParser(c.format, Config{})
			assertStreamed(t, p.Feed(nil, c.head), "shell", "", `{"cmd": "ec`)
			rest := p.Close(p.Feed(nil, c.rest))
			if len(rest) != 2 || rest[0].Kind != CallArgs || rest[0].Text != `ho"}` || rest[1].Kind != CallEnd {
				t.Fatalf("rest of the call: %+v", rest)
			}
		})
	}
}

func TestDeepSeekAuto(t *testing.T) {
	for _, c := range []struct{ name, input, want string }{
		{"v3", "ok" + tCallsBegin + tCallBegin + "function" + tSep + "ls\n```json\n{}\n```" + tCallEnd + tCallsEnd, "deepseek_v3"},
		{"v31", "ok" + tCallsBegin + tCallBegin + "ls" + tSep + "{}" + tCallEnd + tCallsEnd, "deepseek_v31"},
		{"v31 without section", tCallBegin + "ls" + tSep + " {}" + tCallEnd, "deepseek_v31"},
		{"prose", "The marker " + tCallsBegin + " starts a section.", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, rep := autoReply(t, "", c.input)
			if got != c.want {
				t.Fatalf("auto chose %q, want %q", got, c.want)
			}
			if (c.want == "") != (len(rep.Calls) == 0) {
				t.Fatalf("calls: %+v", rep)
			}
		})
	}
}

func FuzzDeepSeekV3(f *testing.F) {
	fuzzFormat(f, "deepseek_v3", true,
		"Checking."+tCallsBegin+tCallBegin+"function"+tSep+"get\n```json\n{\"a\": 1}\n```"+tCallEnd+tCallsEnd,
		tCallsBegin+tCallBegin+"function"+tSep+"ls\n```json\n{\"d\": ",
		"天气 "+tCallsBegin+" prose",
	)
}

func FuzzDeepSeekV31(f *testing.F) {
	fuzzFormat(f, "deepseek_v31", true,
		"I'll check."+tCallsBegin+tCallBegin+"get"+tSep+`{"a":1}`+tCallEnd+tCallsEnd,
		tCallBegin+"ls"+tSep+`{"d":`,
		"x "+tCallsBegin+tCallBegin+" y",
	)
}
