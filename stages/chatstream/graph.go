package chatstream

import (
	"maps"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/sse"
)

// Graph names.
const (
	// GraphName is the name of the graph built by Graph.
	GraphName = "chat-response"
	// UnaryGraphName is the name of the graph built by UnaryGraph.
	UnaryGraphName = "chat-response-unary"
)

// Options configures the chat response graphs. The zero value is ready to use.
type Options struct {
	// ToolKinds maps a chat tool name to the item its calls become
	// (function_call, namespaced function_call or custom_tool_call). Names
	// it does not list become plain function_call items.
	ToolKinds protocol.ToolKinds
	// CumulativeArguments enables the opt-in quirk of providers that re-send
	// the whole argument text so far in every fragment (fixture c17): once
	// a fragment strictly extends what a call has accumulated, that call's
	// later fragments replace its arguments instead of being appended.
	CumulativeArguments bool
	// MaxEventBytes caps one SSE event (and a unary body); zero or negative
	// means sse.DefaultMaxEventBytes (32 MiB).
	MaxEventBytes int
}

// DecodeNode returns the chat.decode node (sse.Event → Chunk).
func DecodeNode() pipeline.Node {
	return pipeline.NewNode(DecodeName, NewDecodeStage,
		pipeline.Describe("parse chat.completion.chunk JSON, [DONE], in-band errors"))
}

// AccumulateNode returns the chat.accumulate node (Chunk → Step).
func AccumulateNode() pipeline.Node {
	return pipeline.NewNode(AccumulateName, NewAccumulateStage,
		pipeline.Describe("text, reasoning, usage, response id, model; end of stream"))
}

// FinalizeNode returns the chat.finalize node (Step → protocol.ResponseEvent)
// configured by opts.
func FinalizeNode(opts Options) pipeline.Node {
	opts.ToolKinds = maps.Clone(opts.ToolKinds) // runs share it read-only
	return pipeline.NewNode(FinalizeName, func() pipeline.Stage[Step, protocol.ResponseEvent] {
		return NewFinalizeStage(opts)
	}, pipeline.Describe("tool-call slots by index → function/custom calls; completed or failed"))
}

// UnaryNode returns the chat.unary node ([]byte body → Chunk) configured by opts.
func UnaryNode(opts Options) pipeline.Node {
	return pipeline.NewNode(UnaryName, func() pipeline.Stage[[]byte, Chunk] {
		return NewUnaryStage(opts)
	}, pipeline.Describe("buffer a non-streaming chat completion and turn it into chunks"))
}

// SSENode returns the sse.decode node configured with opts.MaxEventBytes.
func SSENode(opts Options) pipeline.Node {
	return sse.Node(sse.Options{MaxEventBytes: opts.MaxEventBytes})
}

// Graph returns the streaming chat response graph:
// sse.decode → chat.decode → chat.accumulate → chat.finalize, turning the
// bytes of a chat completions SSE body into ResponseEvents.
func Graph(opts Options) (*pipeline.Graph, error) {
	return pipeline.New(GraphName, SSENode(opts), DecodeNode(), AccumulateNode(), FinalizeNode(opts))
}

// UnaryGraph returns the non-streaming chat response graph:
// chat.unary → chat.accumulate → chat.finalize, turning a chat completion
// body into the same ResponseEvents as its streamed equivalent.
func UnaryGraph(opts Options) (*pipeline.Graph, error) {
	return pipeline.New(UnaryGraphName, UnaryNode(opts), AccumulateNode(), FinalizeNode(opts))
}
