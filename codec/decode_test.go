package codec

import (
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/wire"
)

func TestGraph(t *testing.T) {
	tests := []struct {
		wire  wire.Wire
		opts  Options
		nodes string // the graph's node names, or "ERR " and part of the error
	}{
		{wire.Chat, Options{}, "sse.decode chat.decode chat.accumulate chat.finalize"},
		{wire.Chat, Options{Unary: true}, "chat.unary chat.accumulate chat.finalize"},
		{wire.Chat, Options{ToolFormat: "off"}, "sse.decode chat.decode chat.accumulate chat.finalize"},
		{wire.Chat, Options{ToolFormat: "hermes"}, "sse.decode chat.decode chat.textcalls chat.accumulate chat.finalize"},
		{wire.Chat, Options{ToolFormat: "off", ThinkingOpen: true}, "sse.decode chat.decode chat.textcalls chat.accumulate chat.finalize"},
		{wire.Chat, Options{ThinkingOpen: true}, "sse.decode chat.decode chat.textcalls chat.accumulate chat.finalize"},
		{wire.Chat, Options{ToolFormat: "hermez"}, `ERR codec: --tool-format: unknown tool format "hermez"`},
		{wire.Messages, Options{}, "sse.decode anthropic.decode anthropic.accumulate"},
		{wire.Responses, Options{}, "sse.decode responses.decode"},
		{wire.Messages, Options{Unary: true}, `ERR --unary is supported on the chat wire only, not "messages"`},
		{wire.Wire("grpc"), Options{}, `ERR unknown wire "grpc"`},
	}
	for _, tt := range tests {
		g, err := Graph(tt.wire, tt.opts)
		if want, isErr := strings.CutPrefix(tt.nodes, "ERR "); isErr {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s %+v: %v, want an error with %q", tt.wire, tt.opts, err, want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %+v: %v", tt.wire, tt.opts, err)
			continue
		}
		if got := strings.Join(g.Names(), " "); got != tt.nodes {
			t.Errorf("%s %+v: nodes %s, want %s", tt.wire, tt.opts, got, tt.nodes)
		}
	}
}
