package textcall

import (
	"encoding/json"
	"testing"
)

// dsml wraps invokes in a DSML section as DeepSeek V3.2 writes it.
func dsml(invokes ...string) string {
	s := "<｜DSML｜function_calls>\n"
	for _, i := range invokes {
		s += i + "\n"
	}
	return s + "</｜DSML｜function_calls>"
}

// invoke writes one DSML invoke with its parameters (already written).
func invoke(name string, params ...string) string {
	s := `<｜DSML｜invoke name="` + name + `">` + "\n"
	for _, p := range params {
		s += p + "\n"
	}
	return s + "</｜DSML｜invoke>"
}

// param writes one DSML parameter.
func param(name, isString, value string) string {
	return `<｜DSML｜parameter name="` + name + `" string="` + isString + `">` + value + "</｜DSML｜parameter>"
}

const v32Tools = `[
 {"type":"function","function":{"name":"shell","parameters":{"type":"object","properties":{
   "command":{"type":"string"},"timeout":{"type":"integer"},"env":{"type":"object"},"login":{"type":"boolean"}}}}},
 {"type":"function","function":{"name":"read","parameters":{"type":"object","properties":{"path":{"type":"string"},"lines":{"type":["array","null"]}}}}}
]`

func TestDeepSeekV32Replies(t *testing.T) {
	runReplyCases(t, "deepseek_v32", []replyCase{
		{
			name:  "one call, string and JSON parameters, no schema",
			input: "Let me look.\n\n" + dsml(invoke("get_weather", param("location", "true", "Hangzhou"), param("days", "false", "3"))),
			want: Reply{Content: "Let me look.\n\n", Calls: []Call{
				{Name: "get_weather", Arguments: json.RawMessage(`{"location":"Hangzhou","days":3}`)},
			}},
		},
		{
			name:  "two invokes, text after",
			input: dsml(invoke("read", param("path", "true", "a.go")), invoke("read", param("path", "true", "b.go"))) + "\nDone.",
			want: Reply{Content: "\nDone.", Calls: []Call{
				{Name: "read", Arguments: json.RawMessage(`{"path":"a.go"}`)},
				{Name: "read", Arguments: json.RawMessage(`{"path":"b.go"}`)},
			}},
		},
		{
			name:  "schema types win over the string attribute",
			tools: v32Tools,
			input: dsml(invoke("shell",
				param("command", "false", "123"),
				param("timeout", "true", "30"),
				param("env", "false", "{'A': 'b'}"),
				param("login", "true", "True"))),
			want: Reply{Calls: []Call{
				{Name: "shell", Arguments: json.RawMessage(`{"command":"123","timeout":30,"env":{"A":"b"},"login":true}`)},
			}},
		},
		{
			name:  "unknown parameter follows its string attribute; string values stay raw",
			tools: v32Tools,
			input: dsml(invoke("read", param("path", "true", " spaced \n"), param("extra", "false", "[1, 2]"), param("note", "true", "[1, 2]"))),
			want: Reply{Calls: []Call{
				{Name: "read", Arguments: json.RawMessage(`{"path":" spaced \n","extra":[1,2],"note":"[1, 2]"}`)},
			}},
		},
		{
			name:  "code with angle brackets inside a value",
			input: dsml(invoke("write", param("text", "true", "if a < b {\n\tfmt.Println(\"<tag>\")\n}</div>"))),
			want: Reply{Calls: []Call{
				{Name: "write", Arguments: json.RawMessage(`{"text":"if a < b {\n\tfmt.Println(\"<tag>\")\n}</div>"}`)},
			}},
		},
		{
			name:  "a value that is not JSON though marked so stays a string",
			input: dsml(invoke("x", param("v", "false", "not json"))),
			want:  Reply{Calls: []Call{{Name: "x", Arguments: json.RawMessage(`{"v":"not json"}`)}}},
		},
		{
			name:  "no parameters",
			input: dsml(invoke("now")),
			want:  Reply{Calls: []Call{{Name: "now", Arguments: json.RawMessage(`{}`)}}},
		},
		{
			name:  "a JSON object as the invoke's body",
			input: dsml(`<｜DSML｜invoke name="ls">` + "\n{\"dir\": \"/tmp\", \"all\": true}\n</｜DSML｜invoke>"),
			want:  Reply{Calls: []Call{{Name: "ls", Arguments: json.RawMessage(`{"dir":"/tmp","all":true}`)}}},
		},
		{
			name:  "tool_calls section name",
			input: "<｜DSML｜tool_calls>" + invoke("ls", param("d", "true", ".")) + "</｜DSML｜tool_calls>",
			want:  Reply{Calls: []Call{{Name: "ls", Arguments: json.RawMessage(`{"d":"."}`)}}},
		},
		{
			name:  "missing parameter closer: the next tag ends the value",
			input: dsml(`<｜DSML｜invoke name="f">` + `<｜DSML｜parameter name="a" string="true">one<｜DSML｜parameter name="b" string="false">2</｜DSML｜invoke>`),
			want:  Reply{Calls: []Call{{Name: "f", Arguments: json.RawMessage(`{"a":"one","b":2}`)}}},
		},
		{
			name:  "missing invoke and section closers at the end of output",
			input: "<｜DSML｜function_calls>\n" + `<｜DSML｜invoke name="f">` + "\n" + param("a", "true", "x") + "\n",
			want:  Reply{Calls: []Call{{Name: "f", Arguments: json.RawMessage(`{"a":"x"}`)}}},
		},
		{
			name:  "single quotes around attributes",
			input: dsml(`<｜DSML｜invoke name='f'>` + `<｜DSML｜parameter name='a' string='true'>x</｜DSML｜parameter></｜DSML｜invoke>`),
			want:  Reply{Calls: []Call{{Name: "f", Arguments: json.RawMessage(`{"a":"x"}`)}}},
		},
		{
			name:  "truncated value is given back",
			input: "Go:" + "<｜DSML｜function_calls>" + `<｜DSML｜invoke name="f">` + `<｜DSML｜parameter name="a" string="true">partial te`,
			want: Reply{
				Content:   "Go:" + "<｜DSML｜function_calls>" + `<｜DSML｜invoke name="f">` + `<｜DSML｜parameter name="a" string="true">partial te`,
				Malformed: []string{"deepseek_v32: unterminated parameter value"},
			},
		},
		{
			name:  "truncated invoke tag is given back",
			input: "<｜DSML｜function_calls>" + `<｜DSML｜invoke name="f`,
			want: Reply{
				Content:   "<｜DSML｜function_calls>" + `<｜DSML｜invoke name="f`,
				Malformed: []string{"deepseek_v32: unterminated invoke tag"},
			},
		},
		{
			name:  "stray text inside an invoke is given back",
			input: dsml(invoke("f", "oops", param("a", "true", "x"))),
			want: Reply{
				Content:   "<｜DSML｜function_calls>\n" + `<｜DSML｜invoke name="f">` + "\noops\n" + param("a", "true", "x") + "\n</｜DSML｜invoke>\n</｜DSML｜function_calls>",
				Malformed: []string{"deepseek_v32: unexpected text in an invoke"},
			},
		},
		{
			name:  "the DSML token stripped by the server",
			input: "Sure.\n\n<function_calls>\n<invoke name=\"ls\">\n<parameter name=\"d\" string=\"true\">/tmp</parameter>\n<parameter name=\"all\" string=\"false\">true</parameter>\n</invoke>\n</function_calls>",
			want:  Reply{Content: "Sure.\n\n", Calls: []Call{{Name: "ls", Arguments: json.RawMessage(`{"d":"/tmp","all":true}`)}}},
		},
		{
			name:  "a stripped-token section does not end at a DSML-looking tag in a value",
			input: "<function_calls><invoke name=\"w\"><parameter name=\"t\" string=\"true\">a </｜DSML｜parameter> b</parameter></invoke></function_calls>",
			want:  Reply{Calls: []Call{{Name: "w", Arguments: json.RawMessage(`{"t":"a </｜DSML｜parameter> b"}`)}}},
		},
		{
			name:  "prose mentioning the tags is text",
			input: "Write <｜DSML｜function_calls> then <｜DSML｜invoke> tags.",
			want:  Reply{Content: "Write <｜DSML｜function_calls> then <｜DSML｜invoke> tags."},
		},
	})
}

func TestDeepSeekV32Goldens(t *testing.T) { runGoldens(t, "deepseek_v32", "deepseek_v32") }

// TestDeepSeekV32Streams shows each parameter passes on as soon as it is
// complete, before the invoke's end.
func TestDeepSeekV32Streams(t *testing.T) {
	p, _ := NewParser("deepseek_v32", Config{})
	out := p.Feed(nil, "<｜DSML｜function_calls>\n"+`<｜DSML｜invoke name="shell">`+"\n"+param("command", "true", "ls -la")+"\n")
	assertStreamed(t, out, "shell", "", `{"command":"ls -la"`)
	out = p.Feed(nil, param("timeout", "false", "5"))
	if len(out) != 1 || out[0].Kind != CallArgs || out[0].Text != `,"timeout":5` {
		t.Fatalf("second parameter: %+v", out)
	}
	out = p.Close(p.Feed(nil, "</｜DSML｜invoke></｜DSML｜function_calls>"))
	if len(out) != 2 || out[0].Text != "}" || out[1].Kind != CallEnd {
		t.Fatalf("end: %+v", out)
	}
}

func TestDeepSeekV32Auto(t *testing.T) {
	for _, c := range []struct{ name, input, want string }{
		{"section", "Sure.\n\n" + dsml(invoke("ls", param("d", "true", "."))), "deepseek_v32"},
		{"invoke without section", invoke("ls", param("d", "true", ".")), "deepseek_v32"},
		{"prose", "The tag <｜DSML｜function_calls> opens calls; <｜DSML｜invoke> one call.", ""},
		{"stripped token, model named", "ok <function_calls><invoke name=\"ls\"></invoke></function_calls>", "deepseek_v32"},
		{"stripped token, other model", "ok <function_calls><invoke name=\"ls\"></invoke></function_calls>", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			model := "gpt-4o"
			if c.name != "stripped token, other model" {
				model = "deepseek-ai/DeepSeek-V3.2-Exp"
			}
			got, rep := autoReply(t, model, c.input)
			if got != c.want {
				t.Fatalf("auto chose %q, want %q", got, c.want)
			}
			if (c.want == "") != (len(rep.Calls) == 0) || (c.want == "" && rep.Content != c.input) {
				t.Fatalf("reply: %+v", rep)
			}
		})
	}
}

func FuzzDeepSeekV32(f *testing.F) {
	fuzzFormat(f, "deepseek_v32", true,
		"Let me look.\n\n"+dsml(invoke("get_weather", param("location", "true", "Hangzhou"), param("days", "false", "3"))),
		dsml(`<｜DSML｜invoke name="ls">{"d": 1}</｜DSML｜invoke>`),
		"<｜DSML｜function_calls>"+`<｜DSML｜invoke name="f">`+`<｜DSML｜parameter name="a" string="true">partial`,
		"prose <｜DSML｜invoke> here",
		"<function_calls><invoke name=\"f\"><parameter name=\"a\" string=\"false\">[1]</parameter></invoke></function_calls>",
	)
}
