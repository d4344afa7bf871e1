package native

import (
	"context"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRegistered(t *testing.T) {
	for _, name := range []string{"", harness.NativeName} {
		h, ok := harness.Lookup(name)
		if !ok || h.Name != "native" {
			t.Fatalf("Lookup(%q) = %+v, %v", name, h, ok)
		}
		if !slices.Equal(h.Wires, []harness.Wire{harness.WireResponses, harness.WireChat}) || h.Request == nil || h.Post != nil {
			t.Errorf("harness %+v", h)
		}
	}
}

func TestRequestGraphs(t *testing.T) {
	req := &protocol.ResponsesRequest{Model: "m", Instructions: "sys", Input: protocol.Items{protocol.UserMessage("hi")}, Stream: true}
	for wire, path := range map[harness.Wire]string{harness.WireChat: "/chat/completions", harness.WireResponses: "/responses"} {
		turn, err := harness.Plan(context.Background(), harness.Config{Wire: wire}, harness.NativeName, req, nil)
		if err != nil || turn.Shaped.Path != path {
			t.Fatalf("%s: %+v %v", wire, turn, err)
		}
		// The registered harness asks streaming chat bodies for usage.
		if wire == harness.WireChat && !strings.Contains(string(turn.Shaped.Body), `"stream_options":{"include_usage":true}`) {
			t.Errorf("chat body without include_usage: %s", turn.Shaped.Body)
		}
	}
	// Provider quirks come from the configured base URL on every chat route.
	turn, err := harness.Plan(context.Background(), harness.Config{BaseURL: "https://openrouter.ai/api/v1"}, "", req, nil)
	if err != nil || !strings.Contains(string(turn.Shaped.Body), `"max_tokens":1024`) {
		t.Errorf("quirks not applied: %+v %v", turn, err)
	}
	_, err = RequestGraph(harness.WireMessages, request.Options{})
	if err == nil || !strings.HasPrefix(err.Error(), `wire_api = "messages" requires a harness-native transport;`) {
		t.Errorf("messages: %v", err)
	}
	g, err := RequestGraph(harness.WireChat, request.Options{BaseURL: "https://openrouter.ai/api/v1"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := request.Shape(context.Background(), g, req)
	if err != nil || !strings.Contains(string(out.Body), `"max_tokens":1024`) {
		t.Errorf("options not applied: %s %v", out.Body, err)
	}
}

// TestBaseInstructions: on the chat route the base developer message of a
// Codex 0.171 request is the system message; the variant fork keeps it a
// user message; the responses route passes the input as it is.
func TestBaseInstructions(t *testing.T) {
	req := &protocol.ResponsesRequest{Model: "m", Stream: true, Input: protocol.Items{
		&protocol.Message{Role: protocol.RoleDeveloper, Content: []protocol.ContentItem{{Type: protocol.ContentInputText, Text: "base prompt"}}},
		protocol.UserMessage("hi"),
	}}
	for _, tc := range []struct {
		variant, want string
	}{
		{"", `"messages":[{"role":"system","content":"base prompt"},{"role":"user","content":"hi"}]`},
		{VariantFork, `"messages":[{"role":"user","content":"base prompt"},{"role":"user","content":"hi"}]`},
	} {
		cfg := harness.Config{Wire: harness.WireChat, Variants: map[string]string{harness.NativeName: tc.variant}}
		turn, err := harness.Plan(context.Background(), cfg, harness.NativeName, req, nil)
		if err != nil {
			t.Fatalf("variant %q: %v", tc.variant, err)
		}
		if !strings.Contains(string(turn.Shaped.Body), tc.want) {
			t.Errorf("variant %q: body %s\nwant it to contain %s", tc.variant, turn.Shaped.Body, tc.want)
		}
	}
	if len(req.Input) != 2 {
		t.Errorf("the client's request changed: %d input items", len(req.Input))
	}
	turn, err := harness.Plan(context.Background(), harness.Config{Wire: harness.WireResponses}, harness.NativeName, req, nil)
	if err != nil || !strings.Contains(string(turn.Shaped.Body), `"role":"developer"`) {
		t.Errorf("responses route: %s %v", turn.Shaped.Body, err)
	}
}
