package responsesstream

import (
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/sse"
)

// Node and graph names. The node name is a public insertion point: graphs
// are edited by it (docs/architecture.md#node-names).
const (
	DecodeName = "responses.decode"
	GraphName  = "responses-response"
)

// Options configures the Responses-stream graph.
type Options struct {
	// SSE configures the sse.decode node.
	SSE sse.Options
	// SkipToolInputDeltas drops response.function_call_arguments.delta and
	// response.custom_tool_call_input.delta instead of emitting them as
	// tool_call_input.delta events. The engine takes tool calls from
	// output_item.done either way.
	SkipToolInputDeltas bool
}

// DecodeNode returns the responses.decode node
// (sse.Event → protocol.ResponseEvent) configured by opts.
func DecodeNode(opts Options) pipeline.Node {
	return pipeline.NewNode(DecodeName,
		func() pipeline.Stage[sse.Event, protocol.ResponseEvent] { return NewDecoder(opts) },
		pipeline.Describe("OpenAI Responses SSE events → engine response events"))
}

// Graph returns the response graph of the Responses wire:
// sse.decode → responses.decode, taking the raw bytes of a
// text/event-stream body and emitting protocol.ResponseEvents.
func Graph(opts Options) (*pipeline.Graph, error) {
	return pipeline.New(GraphName,
		sse.Node(opts.SSE),
		DecodeNode(opts),
	)
}
