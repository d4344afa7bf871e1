package request_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

// TestMessagesGraphOptions: the plain Messages conversion's top-level
// fields follow the engine request — max_tokens, tool_choice (with
// disable_parallel_tool_use), thinking from the effort (max_tokens raised
// over the budget, temperature left out), temperature without thinking.
func TestMessagesGraphOptions(t *testing.T) {
	g, err := request.NewMessagesGraph(request.Options{})
	if err != nil {
		t.Fatal(err)
	}
	no := false
	tools := []protocol.ToolSpec{{Type: protocol.ToolTypeFunction, Name: "bash", Parameters: json.RawMessage(`{"type":"object"}`)}}
	for _, c := range []struct {
		name string
		req  protocol.ResponsesRequest
		want string // the fields compared, as JSON
	}{
		{"defaults", protocol.ResponsesRequest{},
			`{"max_tokens":32000,"stream":true,"tool_choice":null,"thinking":null,"temperature":null}`},
		{"required one call", protocol.ResponsesRequest{Tools: tools, ToolChoice: json.RawMessage(`"required"`), ParallelToolCalls: &no,
			Extra: protocol.Extra{"max_output_tokens": json.RawMessage(`500`), "temperature": json.RawMessage(`0.2`)}},
			`{"max_tokens":500,"stream":true,"tool_choice":{"disable_parallel_tool_use":true,"type":"any"},"thinking":null,"temperature":0.2}`},
		{"named tool", protocol.ResponsesRequest{Tools: tools, ToolChoice: json.RawMessage(`{"type":"function","name":"bash"}`)},
			`{"max_tokens":32000,"stream":true,"tool_choice":{"name":"bash","type":"tool"},"thinking":null,"temperature":null}`},
		{"thinking", protocol.ResponsesRequest{Reasoning: &protocol.ReasoningConfig{Effort: "high"},
			Extra: protocol.Extra{"max_output_tokens": json.RawMessage(`1000`), "temperature": json.RawMessage(`0.2`)}},
			`{"max_tokens":20384,"stream":true,"tool_choice":null,"thinking":{"budget_tokens":16384,"type":"enabled"},"temperature":null}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := c.req
			req.Model = "m"
			req.Input = protocol.Items{&protocol.Message{Role: protocol.RoleUser, Content: []protocol.ContentItem{{Type: protocol.ContentInputText, Text: "hi"}}}}
			shaped, err := request.Shape(context.Background(), g, &req)
			if err != nil {
				t.Fatal(err)
			}
			var body struct {
				MaxTokens   int             `json:"max_tokens"`
				Stream      bool            `json:"stream"`
				ToolChoice  json.RawMessage `json:"tool_choice"`
				Thinking    json.RawMessage `json:"thinking"`
				Temperature *float64        `json:"temperature"`
			}
			if err := json.Unmarshal(shaped.Body, &body); err != nil {
				t.Fatal(err)
			}
			type norm struct {
				MaxTokens   int            `json:"max_tokens"`
				Stream      bool           `json:"stream"`
				ToolChoice  map[string]any `json:"tool_choice"`
				Thinking    map[string]any `json:"thinking"`
				Temperature *float64       `json:"temperature"`
			}
			n := norm{MaxTokens: body.MaxTokens, Stream: body.Stream, Temperature: body.Temperature}
			_ = json.Unmarshal(body.ToolChoice, &n.ToolChoice)
			_ = json.Unmarshal(body.Thinking, &n.Thinking)
			got, _ := json.Marshal(n)
			if string(got) != c.want || shaped.Path != "/messages" {
				t.Errorf("path %s, fields %s\nwant %s\nbody %s", shaped.Path, got, c.want, shaped.Body)
			}
		})
	}
}
