package harness

import (
	"fmt"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/stages/anthropicstream"
	"github.com/harnessflow/harnessflow/stages/chatstream"
	"github.com/harnessflow/harnessflow/stages/responsesstream"
	"github.com/harnessflow/harnessflow/stages/sse"
)

// ProtocolGraph builds the protocol layer of the response direction for a
// wire: upstream bytes → ResponseEvents, with no harness postprocessing.
// Harnesses append their harness.post node to it.
func ProtocolGraph(wire Wire, opts ResponseOptions) (*pipeline.Graph, error) {
	if opts.Unary && wire != WireChat {
		return nil, fmt.Errorf("harness: --unary is supported on the chat wire only, not %q", wire)
	}
	sseOpts := sse.Options{MaxEventBytes: opts.MaxEventBytes}
	switch wire {
	case WireChat:
		co := chatstream.Options{ToolKinds: opts.ToolKinds, MaxEventBytes: opts.MaxEventBytes}
		if opts.Unary {
			return chatstream.UnaryGraph(co)
		}
		return chatstream.Graph(co)
	case WireMessages:
		return anthropicstream.Graph(anthropicstream.Options{SSE: sseOpts})
	case WireResponses:
		return responsesstream.Graph(responsesstream.Options{SSE: sseOpts})
	}
	return nil, fmt.Errorf("harness: response graph: unknown wire %q", wire)
}
