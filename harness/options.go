package harness

import "github.com/harnessflow/harnessflow/protocol"

// ResponseOptions configure one response-direction run.
type ResponseOptions struct {
	// ToolKinds maps chat tool names back to engine tool kinds (from the
	// request the stream answers).
	ToolKinds protocol.ToolKinds
	// Request is the engine request the stream answers, when known
	// (swe-agent submit review and terminus-2 request kinds need it).
	Request *protocol.ResponsesRequest
	// Unary says the upstream body is one non-streaming JSON response.
	Unary bool
	// MaxEventBytes caps one SSE line or event (0: the decoder's default).
	MaxEventBytes int
}
