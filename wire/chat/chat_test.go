package chat

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/internal/jsonx/jsonxtest"
)

func value(t testing.TB, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	return v
}

// A forwarded body keeps every field, known or not, at every level.
const fullBody = `{
  "model": "m",
  "messages": [
    {"role": "system", "content": "s", "x_msg": 1},
    {"role": "user", "name": "bob", "content": [
      {"type": "text", "text": "<a> & \"b\"\u2028", "cache_control": {"type": "ephemeral"}},
      {"type": "image_url", "image_url": {"url": "u", "detail": "low", "x": true}},
      {"type": "input_audio", "input_audio": {"data": "d", "format": "wav", "y": 2}},
      {"type": "input_audio", "audio_url": "https://a"},
      {"type": "file", "file": {"file_id": "f"}}
    ]},
    {"role": "assistant", "content": null, "reasoning_content": "r", "tool_calls": [
      {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}", "z": 3}, "index": 0,
       "extra_content": {"google": {"thought_signature": "sig"}}}
    ], "refusal": null},
    {"role": "tool", "content": "out", "tool_call_id": "c1"},
    {"role": "assistant", "content": ""}
  ],
  "stream": true, "stream_options": {"include_usage": true},
  "max_tokens": 10, "max_completion_tokens": 20,
  "tools": [{"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}, "strict": true, "w": 1}, "v": 2}],
  "tool_choice": {"type": "function", "function": {"name": "f"}},
  "parallel_tool_calls": false,
  "response_format": {"type": "json_schema", "json_schema": {"name": "n", "description": "dd", "schema": {"type": "object"}, "strict": true, "q": 1}, "r": 2},
  "service_tier": "auto", "store": false, "reasoning_effort": "low", "thinking": {"type": "enabled"},
  "verbosity": "low", "prompt_cache_key": "k",
  "temperature": 0.5, "seed": 7, "metadata": {"a": "b"}
}`

func TestRoundTrip(t *testing.T) {
	var r Request
	if err := json.Unmarshal([]byte(fullBody), &r); err != nil {
		t.Fatal(err)
	}
	out, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := value(t, []byte(fullBody))
	// null is the same as absent.
	msgs := want.(map[string]any)["messages"].([]any)
	delete(msgs[2].(map[string]any), "content")
	if d := cmp.Diff(want, value(t, out)); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	// Encoding is deterministic.
	again, _ := r.AppendJSON(nil)
	if !bytes.Equal(out, again) {
		t.Errorf("two encodings differ")
	}
	if r.Messages[2].Content.Kind != ContentNone || r.Messages[4].Content.Kind != ContentText {
		t.Errorf("content kinds: %v %v", r.Messages[2].Content.Kind, r.Messages[4].Content.Kind)
	}
}

// Strings are escaped exactly as encoding/json does with SetEscapeHTML(false).
func TestStringEscaping(t *testing.T) {
	s := "<tag> & \"q\" \\ \n\t\x01 \u2028 \xff ünï"
	m := Message{Role: "user", Content: Text(s)}
	got, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"role":"user","content":` + jsonxtest.Encode(t, s) + "}"
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestEncodeDefaults(t *testing.T) {
	r := Request{Model: "m", Tools: []Tool{{Function: FunctionDef{Name: "f"}}},
		Messages: []Message{{Role: "assistant", ToolCalls: []ToolCall{{ID: "c", Function: FunctionCall{Name: "f"}}}}}}
	got, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":""}}]}],` +
		`"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{}}}}]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	empty, _ := Request{}.MarshalJSON()
	if string(empty) != `{"model":"","messages":[]}` {
		t.Errorf("empty request: %s", empty)
	}
}

func TestEncodeInvalidRaw(t *testing.T) {
	for name, r := range map[string]Request{
		"tool parameters": {Tools: []Tool{{Function: FunctionDef{Name: "f", Parameters: json.RawMessage(`{`)}}}},
		"tool_choice":     {ToolChoice: json.RawMessage(`nope`)},
		"extra":           {Messages: []Message{{Role: "user", Extra: Extra{"x": json.RawMessage(`[`)}}}},
		"schema":          {ResponseFormat: &ResponseFormat{Type: "json_schema", JSONSchema: &JSONSchema{Schema: json.RawMessage(`{"a"}`)}}},
	} {
		if _, err := r.MarshalJSON(); err == nil {
			t.Errorf("%s: no error", name)
		} else if !strings.Contains(err.Error(), "invalid JSON") {
			t.Errorf("%s: %v", name, err)
		}
	}
	_, err := Request{Tools: []Tool{{Function: FunctionDef{Name: "f", Parameters: json.RawMessage(`{`)}}}}.MarshalJSON()
	if err == nil || !strings.Contains(err.Error(), "tools[0]: field parameters") {
		t.Errorf("error does not say where: %v", err)
	}
}

// Extra never overrides a known field.
func TestExtraCollision(t *testing.T) {
	r := Request{Model: "m", Extra: Extra{"model": json.RawMessage(`"other"`), "seed": json.RawMessage(`1`)}}
	got, _ := r.MarshalJSON()
	if string(got) != `{"model":"m","messages":[],"seed":1}` {
		t.Errorf("got %s", got)
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, in := range []string{
		`[]`, `{"model":1}`, `{"messages":{}}`, `{"messages":[{"content":5}]}`, `{"messages":[{"content":[1]}]}`,
		`{"tools":[{"function":[]}]}`, `{"max_tokens":"x"}`, `{"messages":[{"tool_calls":[{"function":1}]}]}`, `{`,
	} {
		var r Request
		if err := json.Unmarshal([]byte(in), &r); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
}

func TestContentIsEmpty(t *testing.T) {
	for c, want := range map[*Content]bool{
		{}: true, {Kind: ContentText}: true, {Kind: ContentParts}: true,
		{Kind: ContentText, Text: "x"}: false, {Kind: ContentParts, Parts: []Part{TextPart("")}}: false,
	} {
		if c.IsEmpty() != want {
			t.Errorf("%+v.IsEmpty() = %v", *c, !want)
		}
	}
}

// FuzzRoundTrip: whatever decodes re-encodes to valid JSON that decodes to
// the same value.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte(fullBody))
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":[]}]}`))
	f.Add([]byte(`{"messages":[{"role":"tool","content":"","tool_call_id":""}],"tools":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var r Request
		if json.Unmarshal(data, &r) != nil {
			return
		}
		out, err := r.MarshalJSON()
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		var r2 Request
		if err := json.Unmarshal(out, &r2); err != nil {
			t.Fatalf("re-decode: %v\n%s", err, out)
		}
		out2, err := r2.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, out2) {
			t.Fatalf("not stable:\n%s\n%s", out, out2)
		}
	})
}
