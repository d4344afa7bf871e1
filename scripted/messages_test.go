package scripted_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/scripted"
	"github.com/harnessflow/harnessflow/sinks"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/anthropicstream"
)

// bashTool is claude-code's Bash as a Messages tool.
const bashTool = `{"name":"Bash","description":"run","input_schema":{"type":"object","properties":{"command":{"type":"string"},` +
	`"description":{"type":"string"},"timeout":{"type":"number"}},"required":["command"]}}`

func messagesRequest(stream bool, tools []string, messages ...string) string {
	b, _ := json.Marshal(stream)
	t := ""
	if len(tools) > 0 {
		t = `,"tools":[` + strings.Join(tools, ",") + `]`
	}
	return `{"model":"claude-x","max_tokens":100,"stream":` + string(b) + `,"system":[{"type":"text","text":"s"}],"messages":[` +
		strings.Join(messages, ",") + `]` + t + `}`
}

const (
	prompt   = `{"role":"user","content":[{"type":"text","text":"<system-reminder>date</system-reminder>"},{"type":"text","text":"make the file"}]}`
	toolUse  = `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]}`
	result   = `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"a.go\nb.go"}]}`
	reminder = `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"out.txt"}]},{"type":"text","text":"<system-reminder>tasks</system-reminder>"}]}`
	sysNote  = `{"role":"system","content":"note"}`
)

// messagesEvents runs a streamed Messages answer through the real parser.
func messagesEvents(t *testing.T, body []byte) []protocol.ResponseEvent {
	t.Helper()
	g, err := anthropicstream.Graph(anthropicstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sink := sinks.Collect[protocol.ResponseEvent]()
	if err := pipeline.Run(context.Background(), g, sources.Slice([][]byte{body}), sink); err != nil {
		t.Fatalf("messages parser: %v\n%s", err, body)
	}
	return sink.Items()
}

func TestMessagesDefaultScript(t *testing.T) {
	h := scripted.New(nil)
	w := serve(t, h, http.MethodPost, "/v1/messages", messagesRequest(true, []string{bashTool}, prompt))
	if w.Code != 200 || w.Header().Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %v %s", w.Code, w.Header(), w.Body)
	}
	evs := messagesEvents(t, w.Body.Bytes())
	items := doneItems(evs)
	if len(items) != 3 {
		t.Fatalf("done items %+v", items)
	}
	r, ok := items[0].(*protocol.Reasoning)
	if !ok || r.EncryptedContent == nil || !strings.HasPrefix(*r.EncryptedContent, "scripted-signature-") {
		t.Errorf("reasoning %+v", items[0])
	}
	if m, ok := items[1].(*protocol.Message); !ok || m.Content[0].Text != "Let me run a quick command." {
		t.Errorf("text %+v", items[1])
	}
	call, ok := items[2].(*protocol.FunctionCall)
	if !ok || call.Name != "Bash" || !strings.HasPrefix(call.CallID, "toolu_") {
		t.Fatalf("call %+v", items[2])
	}
	if d := cmp.Diff(`{"command":"echo hello from harnessflow"}`, call.Arguments); d != "" {
		t.Errorf("arguments shaped to the schema (-want +got):\n%s", d)
	}
	last := evs[len(evs)-1]
	if last.Type != protocol.EventCompleted || last.FinishReason != "tool_calls" || last.TokenUsage == nil {
		t.Errorf("last event %+v", last)
	}
	// Deterministic.
	again := serve(t, h, http.MethodPost, "/messages", messagesRequest(true, []string{bashTool}, prompt))
	if again.Body.String() != w.Body.String() {
		t.Error("two answers to one request differ")
	}
}

func TestMessagesToolResult(t *testing.T) {
	h := scripted.New(nil)
	for name, msgs := range map[string][]string{
		"result":                   {prompt, toolUse, result},
		"result with a reminder":   {prompt, toolUse, reminder},
		"a system message between": {prompt, sysNote, toolUse, result},
	} {
		w := serve(t, h, http.MethodPost, "/v1/messages", messagesRequest(false, []string{bashTool}, msgs...))
		if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %s", name, w.Code, w.Body)
		}
		var m struct {
			Type       string `json:"type"`
			Role       string `json:"role"`
			StopReason string `json:"stop_reason"`
			Content    []struct {
				Type, Text string
			} `json:"content"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if m.Type != "message" || m.StopReason != "end_turn" || len(m.Content) != 1 || !strings.Contains(m.Content[0].Text, "It printed:") {
			t.Errorf("%s: %+v", name, m)
		}
		want := "a.go\nb.go"
		if name == "result with a reminder" {
			want = "out.txt"
		}
		if !strings.Contains(m.Content[0].Text, want) {
			t.Errorf("%s: %q does not quote %q", name, m.Content[0].Text, want)
		}
	}
}

func TestMessagesTurnsAndErrors(t *testing.T) {
	yes, one := true, 1
	s := &scripted.Script{Turns: []scripted.Turn{
		{When: &scripted.Match{UserContains: "fail"}, Status: 529, Error: "busy"},
		{When: &scripted.Match{AssistantTurns: &one}, Text: "second"},
		{When: &scripted.Match{Tools: &yes}, ToolCalls: []scripted.ToolCall{{Name: "Write", Arguments: json.RawMessage(`{"file_path":"a","content":"b\n"}`)}}},
		{Text: "You said: {{user}}"},
	}}
	h := scripted.New(s)
	w := serve(t, h, http.MethodPost, "/v1/messages", messagesRequest(false, nil, `{"role":"user","content":"please fail"}`))
	if w.Code != 529 || !strings.Contains(w.Body.String(), `"type":"overloaded_error"`) || !strings.Contains(w.Body.String(), `"type":"error"`) {
		t.Errorf("error answer %d %s", w.Code, w.Body)
	}
	w = serve(t, h, http.MethodPost, "/v1/messages", messagesRequest(true, []string{bashTool}, prompt))
	items := doneItems(messagesEvents(t, w.Body.Bytes()))
	if len(items) != 1 || items[0].(*protocol.FunctionCall).Name != "Write" || items[0].(*protocol.FunctionCall).Arguments != `{"content":"b\n","file_path":"a"}` {
		t.Errorf("named call %+v", items)
	}
	w = serve(t, h, http.MethodPost, "/v1/messages", messagesRequest(true, nil, prompt, `{"role":"assistant","content":"one"}`))
	if items := doneItems(messagesEvents(t, w.Body.Bytes())); len(items) != 1 || items[0].(*protocol.Message).Content[0].Text != "second" {
		t.Errorf("assistant turns %+v", items)
	}
	w = serve(t, h, http.MethodPost, "/v1/messages", messagesRequest(true, nil, prompt))
	if items := doneItems(messagesEvents(t, w.Body.Bytes())); len(items) != 1 || items[0].(*protocol.Message).Content[0].Text != "You said: make the file" {
		t.Errorf("user text %+v", items)
	}
	for _, tc := range []struct {
		method, body string
		code         int
	}{
		{http.MethodGet, "", http.StatusMethodNotAllowed},
		{http.MethodPost, `{"messages":5}`, http.StatusBadRequest},
		{http.MethodPost, `[`, http.StatusBadRequest},
	} {
		w := serve(t, h, tc.method, "/v1/messages", tc.body)
		if w.Code != tc.code || !strings.Contains(w.Body.String(), `"type":"error"`) {
			t.Errorf("%s %s: %d %s", tc.method, tc.body, w.Code, w.Body)
		}
	}
}

// FuzzMessagesRequest: any body is answered (an answer or an error body),
// never a panic; a streamed answer parses.
func FuzzMessagesRequest(f *testing.F) {
	f.Add(messagesRequest(true, []string{bashTool}, prompt))
	f.Add(messagesRequest(false, []string{bashTool}, prompt, toolUse, reminder, sysNote))
	f.Add(`{"messages":[{"role":"user","content":[{"type":"tool_result","content":null}]}],"stream":true}`)
	h := scripted.New(nil)
	f.Fuzz(func(t *testing.T, body string) {
		w := serve(t, h, http.MethodPost, "/v1/messages", body)
		if w.Code == 200 && w.Header().Get("Content-Type") == "text/event-stream" {
			evs := messagesEvents(t, w.Body.Bytes())
			if len(evs) == 0 || evs[len(evs)-1].Type != protocol.EventCompleted {
				t.Fatalf("stream does not complete: %+v", evs)
			}
		}
	})
}
