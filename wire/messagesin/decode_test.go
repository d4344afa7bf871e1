package messagesin

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/internal/inboundjson"
	"github.com/harnessflow/harnessflow/protocol"
	"golang.org/x/tools/txtar"
)

func TestDecodeTable(t *testing.T) {
	tests := []struct {
		name, body string
		check      func(t *testing.T, r *Request)
		errPath    string // want an *inboundjson.Error at this path
	}{
		{name: "string content", body: `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, check: func(t *testing.T, r *Request) {
			m := r.Responses.Input[0].(*protocol.Message)
			if m.Role != "user" || m.Content[0].Text != "hi" || r.Stream || r.Responses.Reasoning != nil {
				t.Fatalf("%+v", m)
			}
		}},
		{name: "tool_choice any", body: `{"messages":[],"tool_choice":{"type":"any"}}`, check: func(t *testing.T, r *Request) {
			if string(r.Responses.ToolChoice) != `"required"` || r.Responses.ParallelToolCalls != nil {
				t.Fatalf("%s", r.Responses.ToolChoice)
			}
		}},
		{name: "tool_choice none", body: `{"messages":[],"tool_choice":{"type":"none"}}`, check: func(t *testing.T, r *Request) {
			if string(r.Responses.ToolChoice) != `"none"` {
				t.Fatalf("%s", r.Responses.ToolChoice)
			}
		}},
		{name: "thinking disabled", body: `{"messages":[],"thinking":{"type":"disabled"}}`, check: func(t *testing.T, r *Request) {
			if r.Thinking || r.Responses.Reasoning != nil {
				t.Fatal("thinking on")
			}
		}},
		{name: "thinking budget high", body: `{"messages":[],"thinking":{"type":"enabled","budget_tokens":20000}}`, check: func(t *testing.T, r *Request) {
			if !r.Thinking || r.Responses.Reasoning.Effort != "high" {
				t.Fatalf("%+v", r.Responses.Reasoning)
			}
		}},
		{name: "effort max without thinking", body: `{"messages":[],"output_config":{"effort":"max"}}`, check: func(t *testing.T, r *Request) {
			if r.Thinking || r.Responses.Reasoning.Effort != "xhigh" || r.Responses.Reasoning.Summary != "" {
				t.Fatalf("%+v", r.Responses.Reasoning)
			}
		}},
		{name: "empty assistant text dropped", body: `{"messages":[{"role":"assistant","content":""}]}`, check: func(t *testing.T, r *Request) {
			if len(r.Responses.Input) != 0 {
				t.Fatalf("%d items", len(r.Responses.Input))
			}
		}},
		{name: "tool result without content", body: `{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t"}]}]}`, check: func(t *testing.T, r *Request) {
			o := r.Responses.Input[0].(*protocol.FunctionCallOutput)
			if s, ok := o.Output.TextContent(); !ok || s != "" || o.CallID != "t" {
				t.Fatalf("%+v", o)
			}
		}},
		{name: "stream true", body: `{"messages":[],"stream":true}`, check: func(t *testing.T, r *Request) {
			if !r.Stream || !r.Responses.Stream || r.Responses.Stores() {
				t.Fatal("stream or store wrong")
			}
		}},
		{name: "max_tokens zero", body: `{"messages":[],"max_tokens":0}`, errPath: "max_tokens"},
		{name: "max_tokens string", body: `{"messages":[],"max_tokens":"9"}`, errPath: "max_tokens"},
		{name: "temperature string", body: `{"messages":[],"temperature":"hot"}`, errPath: "temperature"},
		{name: "no role", body: `{"messages":[{"content":"x"}]}`, errPath: "messages[0].role"},
		{name: "no content", body: `{"messages":[{"role":"user"}]}`, errPath: "messages[0].content"},
		{name: "content number", body: `{"messages":[{"role":"user","content":3}]}`, errPath: "messages[0].content"},
		{name: "block not object", body: `{"messages":[{"role":"user","content":["x"]}]}`, errPath: "messages[0].content[0]"},
		{name: "block without type", body: `{"messages":[{"role":"user","content":[{"text":"x"}]}]}`, errPath: "messages[0].content[0].type"},
		{name: "tool_use in user turn", body: `{"messages":[{"role":"user","content":[{"type":"tool_use","id":"a","name":"b","input":{}}]}]}`, errPath: "messages[0].content[0].type"},
		{name: "tool_use input array", body: `{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"b","input":[]}]}]}`, errPath: "messages[0].content[0].input"},
		{name: "tool_use without id", body: `{"messages":[{"role":"assistant","content":[{"type":"tool_use","name":"b"}]}]}`, errPath: "messages[0].content[0].id"},
		{name: "tool_result bad block", body: `{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"tool_use"}]}]}]}`, errPath: "messages[0].content[0].content[0].type"},
		{name: "system image", body: `{"messages":[],"system":[{"type":"image","source":{}}]}`, errPath: "system[0].type"},
		{name: "tool without schema", body: `{"messages":[],"tools":[{"name":"x"}]}`, errPath: "tools[0].input_schema"},
		{name: "tool_choice unknown", body: `{"messages":[],"tool_choice":{"type":"some"}}`, errPath: "tool_choice.type"},
		{name: "thinking unknown", body: `{"messages":[],"thinking":{"type":"on"}}`, errPath: "thinking.type"},
		{name: "cache_control not object", body: `{"messages":[{"role":"user","content":[{"type":"text","text":"x","cache_control":"e"}]}]}`, errPath: "messages[0].content[0].cache_control"},
		{name: "not JSON", body: `{"messages":[`, errPath: ""},
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
	f.Add([]byte(`{"messages":[{"role":"user","content":[{"type":"document","source":{"type":"content","content":[{"type":"text","text":"a"}]}}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := Decode(body)
		if err != nil {
			if !strings.Contains(err.Error(), ":") && !errors.As(err, new(*inboundjson.Error)) {
				t.Fatalf("error without a place: %v", err)
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
