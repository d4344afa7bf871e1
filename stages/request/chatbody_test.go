package request

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
)

func TestChatBodyNode(t *testing.T) {
	tests := []struct {
		name string
		body ChatBody
		want string
		err  string
	}{
		{"model only", ChatBody{}, `{"model":"m","messages":[]}`, ""},
		{"stream with usage", ChatBody{Stream: true}, `{"model":"m","messages":[],"stream":true,"stream_options":{"include_usage":true}}`, ""},
		{"max tokens and tool choice", ChatBody{MaxTokens: 32000, ToolChoice: `"auto"`}, `{"model":"m","messages":[],"max_tokens":32000,"tool_choice":"auto"}`, ""},
		{"extra fields", ChatBody{Extra: map[string]string{"temperature": "1.0", "top_p": "0.95"}}, `{"model":"m","messages":[],"temperature":1.0,"top_p":0.95}`, ""},
		{"edit runs last", ChatBody{Stream: true, Edit: func(s *Shaping) error { s.Body.StreamOptions = nil; return nil }}, `{"model":"m","messages":[],"stream":true}`, ""},
		{"edit error", ChatBody{Edit: func(*Shaping) error { return errors.New("no such variant") }}, "", "no such variant"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := ChatBodyNode(tt.body, "test")
			if n.Name() != NodeOptions {
				t.Fatalf("node %q, want %q", n.Name(), NodeOptions)
			}
			g, err := pipeline.New("request.test", n, EncodeNode())
			if err != nil {
				t.Fatal(err)
			}
			shaped, err := Shape(context.Background(), g, &protocol.ResponsesRequest{Model: "m"})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(shaped.Body) != tt.want {
				t.Errorf("body\n got %s\nwant %s", shaped.Body, tt.want)
			}
		})
	}
}
