package harness

import (
	"log/slog"

	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/textcall"
)

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
	// ToolFormat recovers tool calls and reasoning written in the text of
	// a chat answer (docs/text-tool-calls.md): "auto", a format's name, or
	// "" / "off" for nothing. Chat wire only.
	ToolFormat string
	// Model is the model name the answer is for (auto prefers its family's
	// format).
	Model string
	// ToolSchemas gives the tool schemas that type recovered arguments; it
	// is called at most once, and only when markup shows up.
	ToolSchemas func() textcall.Schemas
	// ThinkingOpen says the prompt opened a reasoning block, so the reply
	// starts inside it (the model's caps entry sets it; see
	// ModelCaps.ThinkingOpen).
	ThinkingOpen bool
	// TextCalls, when set, is told of every text tool-call outcome (for
	// metrics: harnessflow_text_tool_calls_total).
	TextCalls func(format, outcome string)
	// Logger receives the debug records of markup given back as text; nil
	// logs nothing.
	Logger *slog.Logger
}
