// Package decode builds the protocol layer of the response direction: the
// graph that turns one upstream answer of a wire (an SSE stream, or a
// unary chat body) into engine events, with no harness after it. The
// harness layer appends its harness.post and harness.bridge nodes to this
// graph; `translate` and `bench` use it on its own.
package decode

import (
	"fmt"
	"log/slog"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/anthropicstream"
	"github.com/harnessflow/harnessflow/stages/chatstream"
	"github.com/harnessflow/harnessflow/stages/responsesstream"
	"github.com/harnessflow/harnessflow/stages/sse"
	"github.com/harnessflow/harnessflow/stages/textcall"
	"github.com/harnessflow/harnessflow/wire"
)

// Options configure the protocol layer of one response-direction run.
type Options struct {
	// ToolKinds maps chat tool names back to engine tool kinds (from the
	// request the stream answers).
	ToolKinds protocol.ToolKinds
	// Unary says the upstream body is one non-streaming JSON response
	// (chat wire only).
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
	// starts inside it; it turns chat.textcalls on even with no format.
	ThinkingOpen bool
	// TextCalls, when set, is told of every text tool-call outcome.
	TextCalls func(format, outcome string)
	// Logger receives the debug records of markup given back as text; nil
	// logs nothing.
	Logger *slog.Logger
}

// Graph builds the protocol layer for w: upstream bytes → engine events.
// Unary on a wire other than chat, an unknown wire or an unknown tool
// format is an error.
func Graph(w wire.Wire, opts Options) (*pipeline.Graph, error) {
	if opts.Unary && w != wire.Chat {
		return nil, fmt.Errorf("decode: --unary is supported on the chat wire only, not %q", w)
	}
	sseOpts := sse.Options{MaxEventBytes: opts.MaxEventBytes}
	switch w {
	case wire.Chat:
		co := chatstream.Options{ToolKinds: opts.ToolKinds, MaxEventBytes: opts.MaxEventBytes}
		var g *pipeline.Graph
		var err error
		if opts.Unary {
			g, err = chatstream.UnaryGraph(co)
		} else {
			g, err = chatstream.Graph(co)
		}
		if err != nil || ((opts.ToolFormat == "" || opts.ToolFormat == textcall.Off) && !opts.ThinkingOpen) {
			return g, err
		}
		n, err := textcall.Node(textcall.Options{
			Format:       opts.ToolFormat,
			ThinkingOpen: opts.ThinkingOpen,
			Config:       textcall.Config{Model: opts.Model},
			LoadSchemas:  opts.ToolSchemas,
			Observe:      opts.TextCalls,
			Logger:       opts.Logger,
		})
		if err != nil {
			return nil, fmt.Errorf("decode: --tool-format: %w", err)
		}
		return g.InsertBefore(chatstream.AccumulateName, n)
	case wire.Messages:
		return anthropicstream.Graph(anthropicstream.Options{SSE: sseOpts})
	case wire.Responses:
		return responsesstream.Graph(responsesstream.Options{SSE: sseOpts})
	}
	return nil, fmt.Errorf("decode: response graph: unknown wire %q", w)
}
