package anthropicstream

import (
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/sse"
)

// Node and graph names. The node names are public insertion points: graphs
// are edited by them (docs/architecture.md#node-names).
const (
	DecodeName     = "anthropic.decode"
	AccumulateName = "anthropic.accumulate"
	GraphName      = "anthropic-response"
)

// Options configures the Messages-stream graph.
type Options struct {
	// SSE configures the sse.decode node.
	SSE sse.Options
	// CompactArguments re-encodes streamed tool arguments compactly (as the
	// reference implementation does; docs/streams.md#anthropic-messages-streams). By default they are passed
	// on exactly as the model streamed them, which is what the fixtures
	// pin; arguments that are not valid JSON are passed on verbatim either
	// way.
	CompactArguments bool
}

// DecodeNode returns the anthropic.decode node (sse.Event → Event).
func DecodeNode() pipeline.Node {
	return pipeline.NewNode(DecodeName,
		func() pipeline.Stage[sse.Event, Event] { return NewDecoder() },
		pipeline.Describe("Anthropic Messages SSE events → typed stream events"))
}

// AccumulateNode returns the anthropic.accumulate node
// (Event → protocol.ResponseEvent) configured by opts.
func AccumulateNode(opts Options) pipeline.Node {
	return pipeline.NewNode(AccumulateName,
		func() pipeline.Stage[Event, protocol.ResponseEvent] { return NewAccumulator(opts) },
		pipeline.Describe("content blocks, usage and errors → engine response events"))
}

// Graph returns the response graph of the Messages wire:
// sse.decode → anthropic.decode → anthropic.accumulate, taking the raw
// bytes of a text/event-stream body and emitting protocol.ResponseEvents.
func Graph(opts Options) (*pipeline.Graph, error) {
	return pipeline.New(GraphName,
		sse.Node(opts.SSE),
		DecodeNode(),
		AccumulateNode(opts),
	)
}
