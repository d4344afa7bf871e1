package chatin

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/harnessflow/harnessflow/internal/inboundjson"
	"github.com/harnessflow/harnessflow/protocol"
	"golang.org/x/tools/txtar"
)

func TestDecodeTable(t *testing.T) {
	tests := []struct {
		name, body string
		check      func(t *testing.T, r *Request)
		errPath    string
	}{
		{name: "minimal", body: `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, check: func(t *testing.T, r *Request) {
			m := r.Responses.Input[0].(*protocol.Message)
			if m.Role != "user" || m.Content[0].Text != "hi" || r.Stream || r.IncludeUsage || r.Responses.Stores() {
				t.Fatalf("%+v", r)
			}
		}},
		{name: "assistant null content", body: `{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{}"}}]}]}`, check: func(t *testing.T, r *Request) {
			if len(r.Responses.Input) != 1 || r.Responses.Input[0].ItemType() != protocol.TypeFunctionCall {
				t.Fatalf("%d items", len(r.Responses.Input))
			}
		}},
		{name: "tool without content", body: `{"messages":[{"role":"tool","tool_call_id":"a"}]}`, check: func(t *testing.T, r *Request) {
			if s, ok := r.Responses.Input[0].(*protocol.FunctionCallOutput).Output.TextContent(); !ok || s != "" {
				t.Fatal(s)
			}
		}},
		{name: "tool_choice required", body: `{"messages":[],"tool_choice":"required"}`, check: func(t *testing.T, r *Request) {
			if string(r.Responses.ToolChoice) != `"required"` {
				t.Fatal(string(r.Responses.ToolChoice))
			}
		}},
		{name: "n one", body: `{"messages":[],"n":1}`, check: func(t *testing.T, r *Request) {}},
		{name: "no messages", body: `{"model":"m"}`, errPath: "messages"},
		{name: "stream string", body: `{"messages":[],"stream":"yes"}`, errPath: "stream"},
		{name: "include_usage number", body: `{"messages":[],"stream_options":{"include_usage":1}}`, errPath: "stream_options.include_usage"},
		{name: "max_tokens negative", body: `{"messages":[],"max_tokens":-1}`, errPath: "max_tokens"},
		{name: "message not object", body: `{"messages":[7]}`, errPath: "messages[0]"},
		{name: "no role", body: `{"messages":[{"content":"x"}]}`, errPath: "messages[0].role"},
		{name: "user without content", body: `{"messages":[{"role":"user"}]}`, errPath: "messages[0].content"},
		{name: "image without url", body: `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{}}]}]}`, errPath: "messages[0].content[0].image_url.url"},
		{name: "audio without format", body: `{"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"x"}}]}]}`, errPath: "messages[0].content[0].input_audio.format"},
		{name: "file empty", body: `{"messages":[{"role":"user","content":[{"type":"file","file":{}}]}]}`, errPath: "messages[0].content[0].file"},
		{name: "assistant image part", body: `{"messages":[{"role":"assistant","content":[{"type":"image_url"}]}]}`, errPath: "messages[0].content[0].type"},
		{name: "tool call arguments object", body: `{"messages":[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f","arguments":{}}}]}]}`, errPath: "messages[0].tool_calls[0].function.arguments"},
		{name: "tool no call id", body: `{"messages":[{"role":"tool","content":"x"}]}`, errPath: "messages[0].tool_call_id"},
		{name: "tool type custom", body: `{"messages":[],"tools":[{"type":"custom","custom":{}}]}`, errPath: "tools[0].type"},
		{name: "tool parameters array", body: `{"messages":[],"tools":[{"type":"function","function":{"name":"a","parameters":[]}}]}`, errPath: "tools[0].function.parameters"},
		{name: "tool_choice unknown", body: `{"messages":[],"tool_choice":"always"}`, errPath: "tool_choice"},
		{name: "response_format unknown", body: `{"messages":[],"response_format":{"type":"yaml"}}`, errPath: "response_format.type"},
		{name: "not JSON", body: `{`, errPath: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Decode([]byte(tt.body))
			if tt.check != nil {
				if err != nil {
					t.Fatal(err)
				}
				tt.check(t, r)
				return
			}
			var e *inboundjson.Error
			if !errors.As(err, &e) {
				t.Fatalf("want an *inboundjson.Error, got %v", err)
			}
			if e.Path != tt.errPath || e.Msg == "" {
				t.Fatalf("error at %q (%s), want at %q", e.Path, e.Msg, tt.errPath)
			}
		})
	}
}

// FuzzDecode: no input panics; what decodes is a neutral request that
// encodes and reads back as a Responses request.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob("testdata/decode/*.txtar")
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, s := range ar.Files {
			if s.Name == "request.json" {
				f.Add(s.Data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := Decode(body)
		if err != nil {
			if !errors.As(err, new(*inboundjson.Error)) {
				t.Fatalf("not an *inboundjson.Error: %v", err)
			}
			return
		}
		b, err := json.Marshal(r.Responses)
		if err != nil {
			t.Fatalf("the neutral request does not encode: %v", err)
		}
		if _, err := protocol.DecodeRequest(b); err != nil {
			t.Fatalf("the neutral request does not read back: %v\n%s", err, b)
		}
	})
}
