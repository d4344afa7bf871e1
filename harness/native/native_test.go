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
		if !slices.Equal(h.Wires, []harness.Wire{harness.WireChat, harness.WireResponses}) || h.RequestGraph == nil || h.ResponseGraph == nil {
			t.Errorf("harness %+v", h)
		}
	}
}

func TestRequestGraphs(t *testing.T) {
	h, _ := harness.Lookup(harness.NativeName)
	req := &protocol.ResponsesRequest{Model: "m", Instructions: "sys", Input: protocol.Items{protocol.UserMessage("hi")}}
	for wire, path := range map[harness.Wire]string{harness.WireChat: "/chat/completions", harness.WireResponses: "/responses"} {
		g, err := h.RequestGraph(wire)
		if err != nil {
			t.Fatalf("%s: %v", wire, err)
		}
		out, err := request.Shape(context.Background(), g, req)
		if err != nil || out.Path != path {
			t.Errorf("%s: %+v %v", wire, out, err)
		}
	}
	_, err := h.RequestGraph(harness.WireMessages)
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
