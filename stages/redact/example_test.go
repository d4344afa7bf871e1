package redact_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/all"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sinks"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/redact"
	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/stages/textcall"
)

// chatSSE is a chat completions stream whose text carries an API key split
// across two chunks.
func chatSSE(deltas ...string) string {
	var b strings.Builder
	for _, d := range deltas {
		fmt.Fprintf(&b, "data: {\"id\":\"r1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", d)
	}
	b.WriteString("data: {\"id\":\"r1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	return b.String()
}

// Redaction inserted by name into the response graph serve runs for a
// chat upstream — planned through harness.Open and built by
// Exchange.Graph, so it holds the text tool-call node (chat.textcalls) of
// serve's default "auto" — right after chat.finalize: the key split over
// two deltas never appears, the text around it leaves at once.
func Example() {
	r, err := redact.New(redact.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	req := &protocol.ResponsesRequest{Model: "m", Stream: true, Input: []protocol.ResponseItem{
		&protocol.Message{Role: protocol.RoleUser, Content: []protocol.ContentItem{{Type: protocol.ContentInputText, Text: "Which key do I use?"}}},
	}}
	cfg := harness.Config{Registry: all.Registry(), Wire: harness.WireChat, ToolFormat: textcall.Auto}
	ex, err := harness.Open(context.Background(), cfg, harness.Opening{Request: req}) // no harness: the native route
	ex.Answered("text/event-stream")                                                  // the upstream streams
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := ex.Graph(func(g *pipeline.Graph) (*pipeline.Graph, error) {
		return g.InsertAfter("chat.finalize", redact.Node(r))
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Join(g.Names(), " → "))

	body := chatSSE("Use the key sk-proj-Ab3dE", "f6hIj9kLm2nOp5qRs8tUv1wXy4z to call it.")
	sink := sinks.JSONLines(os.Stdout, false)
	if err := pipeline.Run(context.Background(), g, sources.Reader(strings.NewReader(body)), sink); err != nil {
		fmt.Println(err)
	}
	// Output:
	// sse.decode → chat.decode → chat.textcalls → chat.accumulate → chat.finalize → redact.response
	// {"type":"server_model","model":"m"}
	// {"type":"created"}
	// {"type":"output_item.added","item":{"type":"message","id":"chat-message-1","role":"assistant","content":[{"type":"output_text","text":""}]}}
	// {"type":"output_text.delta","delta":"Use the key "}
	// {"type":"output_text.delta","delta":"[REDACTED:api_key] to call it."}
	// {"type":"output_item.done","item":{"type":"message","id":"chat-message-1","role":"assistant","content":[{"type":"output_text","text":"Use the key [REDACTED:api_key] to call it."}]}}
	// {"type":"completed","response_id":"r1","finish_reason":"stop"}
}

// A Stream holds back only the tail that could still begin a secret.
func ExampleStream() {
	st := redact.Default().Stream()
	for _, delta := range []string{"token: gh", "p_a1B2c3D4e5F6g7H8i9J0", "k1L2m3N4o5P6q7R8, and Bear", "er of news."} {
		fmt.Printf("push %-32q → release %-28q hold %q\n", delta, st.Push(delta), st.Pending())
	}
	fmt.Printf("flush → %q\n", st.Flush())
	// Output:
	// push "token: gh"                      → release "token: "                    hold "gh"
	// push "p_a1B2c3D4e5F6g7H8i9J0"         → release ""                           hold "ghp_a1B2c3D4e5F6g7H8i9J0"
	// push "k1L2m3N4o5P6q7R8, and Bear"     → release "[REDACTED:github_token], and " hold "Bear"
	// push "er of news."                    → release "Bearer of news."            hold ""
	// flush → ""
}

// User patterns add kinds of their own; MaxLen bounds what they hold back.
func ExampleNew() {
	r, err := redact.New(redact.Config{Patterns: []redact.Pattern{
		{Kind: "ticket", Regexp: `\bTCK-[0-9]{6}\b`},
		{Kind: "password", Regexp: `(?i)password=\S+`, MaxLen: 64},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Kinds(), r.MaxHold())
	fmt.Println(r.String("TCK-123456 PASSWORD=hunter2 AKIAIOSFODNN7EXAMPLE TCK-1"))
	// Output:
	// [api_key aws_access_key github_token bearer_token private_key ticket password] 73
	// [REDACTED:ticket] [REDACTED:password] [REDACTED:aws_access_key] TCK-1
}

// Request-direction redaction inserted by name after request.encode: the
// secrets a user pasted, or a tool printed, never reach the model.
func ExampleRequestNode() {
	var req protocol.ResponsesRequest
	err := json.Unmarshal([]byte(`{
	  "model": "my-model",
	  "input": [
	    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Why does AKIAIOSFODNN7EXAMPLE fail?"}]},
	    {"type": "function_call", "name": "exec_command", "arguments": "{\"cmd\":\"cat .env\"}", "call_id": "call_1"},
	    {"type": "function_call_output", "call_id": "call_1", "output": "GITHUB_TOKEN=ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8\n"}
	  ],
	  "stream": true
	}`), &req)
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := request.NewChatGraph(request.Options{})
	if err == nil {
		g, err = g.InsertAfter(request.NodeEncode, redact.RequestNode(redact.Default()))
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := request.Shape(context.Background(), g, &req)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Join(g.Names(), " → "))
	fmt.Println(string(out.Body))
	// Output:
	// request.system → request.tools → request.history → request.options → request.provider → request.encode → redact.request
	// {"model":"my-model","messages":[{"role":"user","content":"Why does [REDACTED:aws_access_key] fail?"},{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"exec_command","arguments":"{\"cmd\":\"cat .env\"}"}}]},{"role":"tool","content":"GITHUB_TOKEN=[REDACTED:github_token]\n","tool_call_id":"call_1"}],"stream":true}
}
