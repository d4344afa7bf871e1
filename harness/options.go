package harness

import (
	"github.com/harnessflow/harnessflow/codec"
	"github.com/harnessflow/harnessflow/protocol"
)

// ResponseOptions configure one response-direction run: the protocol
// layer's options (the wire codec's) and what the harness layer adds.
type ResponseOptions struct {
	// Options are the protocol layer's: tool kinds, unary, event bound,
	// text tool-call recovery, logger. The turn fills the text tool-call
	// format from the model's caps entry (ModelCaps.ToolFormat,
	// ModelCaps.ThinkingOpen) when they leave it open.
	codec.Options
	// Request is the engine request the stream answers, when known
	// (swe-agent submit review and terminus-2 request kinds need it).
	Request *protocol.ResponsesRequest
}
