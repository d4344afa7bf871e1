package textcall

import (
	"encoding/json"
	"reflect"
	"testing"
)

// renderTools is the schema the round-trip calls follow: the XML-like
// formats type their raw values by it.
const renderTools = `[
 {"type":"function","function":{"name":"exec_command","parameters":{"type":"object","properties":{
  "cmd":{"type":"string"},"n":{"type":"integer"},"ratio":{"type":"number"},"ok":{"type":"boolean"},
  "env":{"type":"object"},"list":{"type":"array"},"digits":{"type":"string"}}}}},
 {"type":"function","function":{"name":"apply_patch","parameters":{"type":"object","properties":{"input":{"type":"string"}}}}}
]`

// renderCases are the calls every format must write and read back.
var renderCases = [][]Call{
	{fmtCall("exec_command", `{"cmd":"ls -la"}`)},
	{fmtCall("exec_command", `{"cmd":"echo \"a\"\n\tb <b>&</b> ünï©ødé 日本 🚀","n":-3,"ratio":2.5,"ok":false,"digits":"0042"}`)},
	{fmtCall("exec_command", `{"cmd":"  padded  ","env":{"A":"1","nested":{"deep":[1,{"x":null}],"t":true}},"list":[1,"x",[2.5e3]]}`)},
	{fmtCall("apply_patch", `{"input":"*** Begin Patch\n*** Add File: x.txt\n+y = {\"k\": [1]}\n*** End Patch"}`)},
	{fmtCall("exec_command", `{}`)},
	{fmtCall("exec_command", `{"cmd":"git status"}`), fmtCall("apply_patch", `{"input":"second call"}`)},
}

func TestRenderRoundTrip(t *testing.T) {
	var schemas Schemas
	for _, f := range formats() {
		if f.Render == nil {
			if f.Name == "xtest" {
				continue // the stage tests' format
			}
			t.Errorf("%s: no render half", f.Name)
			continue
		}
		if schemas == nil {
			schemas = schemasFor(t, []byte(renderTools))
		}
		for i, calls := range renderCases {
			text := f.Render(calls)
			events := replay(t, parserFor(t, f.Name, Config{Schemas: schemas}), text)
			rep, err := Collect(events)
			if err != nil {
				t.Fatalf("%s case %d: %v\ntext: %q", f.Name, i, err, text)
			}
			if rep.Content != "" || len(rep.Malformed) > 0 || len(rep.Calls) != len(calls) {
				t.Fatalf("%s case %d: %q read back as %+v", f.Name, i, text, rep)
			}
			for j, c := range calls {
				got := rep.Calls[j]
				if got.Name != c.Name || !sameJSON(t, c.Arguments, got.Arguments) {
					t.Errorf("%s case %d call %d: %s %s read back as %s %s\ntext: %q", f.Name, i, j, c.Name, c.Arguments, got.Name, got.Arguments, text)
				}
			}
		}
	}
}

// TestRenderIDs: the formats whose markup carries a call id write the
// call's id, and read it back.
func TestRenderIDs(t *testing.T) {
	calls := []Call{{Name: "exec_command", Arguments: json.RawMessage(`{"cmd":"pwd"}`), ID: "k2Jd9aQ1x"}}
	for _, name := range []string{"mistral", "kimi_k2"} {
		f, _ := Lookup(name)
		rep, err := Collect(replay(t, parserFor(t, name, Config{}), f.Render(calls)))
		if err != nil || len(rep.Calls) != 1 || rep.Calls[0].ID != "k2Jd9aQ1x" {
			t.Errorf("%s: %q read back as %+v (%v)", name, f.Render(calls), rep, err)
		}
	}
}

// TestRenderText pins the text of the formats whose text other packages
// put into prompts and mock replies.
func TestRenderText(t *testing.T) {
	calls := []Call{fmtCall("f", `{"a":"x\ny","b":[1]}`), fmtCall("g", `{}`)}
	for name, want := range map[string]string{
		"hermes":      "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\":\"x\\ny\",\"b\":[1]}}\n</tool_call>\n<tool_call>\n{\"name\": \"g\", \"arguments\": {}}\n</tool_call>",
		"qwen3_coder": "<tool_call>\n<function=f>\n<parameter=a>\nx\ny\n</parameter>\n<parameter=b>\n[1]\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=g>\n</function>\n</tool_call>",
		"llama3_json": `{"name": "f", "parameters": {"a":"x\ny","b":[1]}}; {"name": "g", "parameters": {}}`,
	} {
		if got, err := RenderCalls(name, calls); err != nil || got != want {
			t.Errorf("%s: got %q (%v), want %q", name, got, err, want)
		}
	}
	if _, err := RenderCalls("nope", calls); err == nil {
		t.Error("RenderCalls of an unknown format: no error")
	}
	// Arguments that are not JSON: a JSON string (JSON formats), one
	// parameter "input" (per-parameter formats).
	bad := []Call{{Name: "f", Arguments: json.RawMessage(`not {json`)}}
	if got, _ := RenderCalls("hermes", bad); got != "<tool_call>\n{\"name\": \"f\", \"arguments\": \"not {json\"}\n</tool_call>" {
		t.Errorf("hermes, bad arguments: %q", got)
	}
	if got, _ := RenderCalls("qwen3_coder", bad); got != "<tool_call>\n<function=f>\n<parameter=input>\nnot {json\n</parameter>\n</function>\n</tool_call>" {
		t.Errorf("qwen3_coder, bad arguments: %q", got)
	}
}

func sameJSON(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
