package request

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/wire/anthropic"
	"github.com/harnessflow/harnessflow/wire/chat"
)

// Node names of the request graphs (docs/architecture.md#node-names). Names are API: users insert,
// replace and wrap nodes by these names.
const (
	NodeSystem   = "request.system"
	NodeHistory  = "request.history"
	NodeTools    = "request.tools"
	NodeOptions  = "request.options"
	NodeProvider = "request.provider"
	NodeEncode   = "request.encode"
)

// PathResponses is the upstream path of the Responses API.
const PathResponses = "/responses"

// Shaping is the state of one request flowing through a request graph.
// Stages read Request and build the wire-neutral parts — Transcript (system
// text, flattened history), Tools, ToolKinds — and the top-level fields of
// Body; request.encode renders them for its wire.
type Shaping struct {
	// Request is the engine request being shaped. Stages must not modify it.
	Request *protocol.ResponsesRequest
	// Transcript is the conversation as the upstream model will see it:
	// request.system puts the system text first, request.history appends
	// the flattened history.
	Transcript []Message
	// Tools are the tool definitions sent upstream (request.tools).
	Tools []Tool
	// ToolKinds maps each wire tool name to the engine tool kind it stands
	// for (docs/request-shaping.md#tool-kinds); request.tools fills it.
	ToolKinds protocol.ToolKinds
	// ToolNames gives the wire names of namespaced functions, for the calls
	// of the history (request.tools fills it; request.history reads it).
	ToolNames map[ToolRef]string
	// Body holds the top-level fields of a chat body (model, stream, limits,
	// reasoning switches …). request.encode of the chat wire adds the
	// messages and tools rendered from Transcript and Tools; other wires'
	// encoders read the fields they have.
	Body chat.Request
	// MessagesBody holds the top-level fields of an Anthropic Messages body
	// (max_tokens, thinking, output_config, context_management, metadata,
	// system blocks set ahead of the transcript's …); request.encode of the
	// messages wire adds the system text, messages and tools rendered from
	// Transcript and Tools. The chat wire does not read it.
	MessagesBody anthropic.Request
	// Path is the upstream path relative to the base URL (default
	// "/chat/completions").
	Path string
	// Query holds query parameters of the upstream request.
	Query map[string]string
	// Headers holds headers of the upstream request that the wire or the
	// harness requires (beta flags, versions).
	Headers map[string]string
	// TitleRequest is an optional side request sent before the main one
	// (opencode, claude-code); nil means none.
	TitleRequest json.RawMessage
}

// Tool is one tool definition sent upstream, wire-neutral: a name, a
// description and the JSON Schema of its parameters.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
	// Strict, when set, is sent as the wire's strict-schema flag.
	Strict *bool
}

// NewShaping returns the shaping state for req, with the chat path and an
// empty body.
func NewShaping(req *protocol.ResponsesRequest) *Shaping {
	return &Shaping{Request: req, Path: chat.Path}
}

// Shaped is the result of a request graph: what goes upstream. Its JSON is
// the output of `harnessflow shape` (docs/architecture.md#harnessflow-shape):
// {"path":"/chat/completions","body":{…},"title_request":null,"tool_kinds":{…}}.
type Shaped struct {
	// Path is the upstream path relative to the base URL.
	Path string `json:"path"`
	// Body is the request body, compact JSON.
	Body json.RawMessage `json:"body"`
	// TitleRequest is a side request to send first, or nil (JSON null).
	TitleRequest json.RawMessage `json:"title_request"`
	// ToolKinds maps chat tool names back to engine tool kinds; never nil.
	ToolKinds protocol.ToolKinds `json:"tool_kinds"`
	// Query and Headers are added to the upstream request; omitted when
	// empty.
	Query   map[string]string `json:"query,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// Options configure the stages of a request graph. They come from
// configuration (the provider's base URL, what the model supports), not from
// the request.
type Options struct {
	// BaseURL is the upstream's base URL. The provider body quirks
	// (docs/request-shaping.md#provider-quirks) are chosen from it by substring checks on the lowercased URL.
	BaseURL string
	// Provider overrides the detection from BaseURL when not ProviderAuto.
	Provider Provider
	// ReasoningControl is the model's reasoning capability. With
	// ReasoningThinkingToggle, request.options sends
	// thinking:{"type":"disabled"} when the effort is "none" and
	// {"type":"enabled"} otherwise (docs/request-shaping.md#reasoning-switches). The default sends nothing.
	// The other controls follow the effort (SetReasoning,
	// docs/reasoning-controls.md).
	ReasoningControl ReasoningControl
	// Efforts are the reasoning efforts the model accepts, for the
	// effort-following controls: a request's effort maps to the nearest
	// (NearestEffort). Nil means the control's default set.
	Efforts []string
	// SendEffort makes request.options send reasoning_effort mapped from the
	// request's reasoning.effort (docs/request-shaping.md#reasoning-switches). The native conversion
	// never sends it (docs/request-shaping.md#body-fields): real chat endpoints reject it next to tools.
	SendEffort bool
	// BaseInstructions makes request.system of the native chat graph
	// take the engine's base prompt from the first developer message when
	// the request has no instructions ([BaseSystem],
	// docs/request-shaping.md#system-message). Off, that message is an
	// ordinary developer message (the fork's rule).
	BaseInstructions bool
	// IncludeUsage makes request.options ask a streaming body for the
	// usage chunk (stream_options.include_usage), unless the body already
	// says.
	IncludeUsage bool
	// ClientFields says which of the client's limit, sampling and identity
	// fields reach the upstream (docs/request-shaping.md#client-fields);
	// the zero value sends none (the harness routes).
	ClientFields ClientFields
	// OnHostedTool, when set, is told the type of every hosted tool
	// (HostedToolTypes) request.tools leaves out
	// (docs/request-shaping.md#hosted-tools).
	OnHostedTool func(toolType string)
	// Logger receives debug records about dropped tools; nil means
	// slog.Default().
	Logger *slog.Logger
}

func (o Options) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.Default()
}

// ReasoningControl is how a model's reasoning is switched.
type ReasoningControl string

// Reasoning controls.
const (
	// ReasoningDefault sends no reasoning switch.
	ReasoningDefault ReasoningControl = ""
	// ReasoningThinkingToggle is a model switched by thinking:{"type":…}.
	ReasoningThinkingToggle ReasoningControl = "thinking_toggle"
)

// stage adapts a function of the shaping state to a pipeline stage.
type stage func(ctx context.Context, s *Shaping) error

// Push runs f on the shaping state and passes it on.
func (f stage) Push(ctx context.Context, s *Shaping, emit func(*Shaping)) error {
	if s == nil || s.Request == nil {
		return errors.New("no request to shape")
	}
	if err := f(ctx, s); err != nil {
		return err
	}
	emit(s)
	return nil
}

// NewChatGraph returns the native chat request graph (docs/request-shaping.md#native-chat-conversion):
// request.system → request.tools → request.history → request.options →
// request.provider → request.encode. Its input is *Shaping, its output
// Shaped. request.tools comes before request.history because the calls of
// the history take the wire names the converted tools get.
func NewChatGraph(opts Options) (*pipeline.Graph, error) {
	system := SystemNode()
	if opts.BaseInstructions {
		system = BaseSystemNode()
	}
	g, err := pipeline.New("request.chat",
		system,
		ToolsNode(opts),
		HistoryNode(opts, NativePolicy()),
		OptionsNode(opts),
		ProviderNode(opts),
		EncodeNode(),
	)
	if err != nil {
		return nil, fmt.Errorf("request: chat graph: %w", err)
	}
	return g, nil
}

// NewResponsesGraph returns the request graph of the Responses wire: the
// engine request goes upstream as it is, to "/responses", with empty
// ToolKinds. Its one node is request.encode.
func NewResponsesGraph() (*pipeline.Graph, error) {
	g, err := pipeline.New("request.responses", ResponsesEncodeNode())
	if err != nil {
		return nil, fmt.Errorf("request: responses graph: %w", err)
	}
	return g, nil
}

// Shape runs one request through g and returns what it produced. g must
// produce exactly one Shaped and take either a *Shaping (the chat graphs of
// this package; a fresh NewShaping(req) is fed) or a
// *protocol.ResponsesRequest.
func Shape(ctx context.Context, g *pipeline.Graph, req *protocol.ResponsesRequest, opts ...pipeline.RunOption) (Shaped, error) {
	if g == nil {
		return Shaped{}, errors.New("request: shape: nil graph")
	}
	if req == nil {
		return Shaped{}, errors.New("request: shape: nil request")
	}
	var (
		out  Shaped
		n    int
		sink = pipeline.SinkFunc[Shaped](func(v Shaped) error { out = v; n++; return nil })
		err  error
	)
	switch g.In() {
	case reflect.TypeFor[*Shaping]():
		err = pipeline.Run(ctx, g, one(NewShaping(req)), sink, opts...)
	case reflect.TypeFor[*protocol.ResponsesRequest]():
		err = pipeline.Run(ctx, g, one(req), sink, opts...)
	default:
		return Shaped{}, fmt.Errorf("request: shape: graph %s takes %v, want *request.Shaping or *protocol.ResponsesRequest", g.Name(), g.In())
	}
	if err != nil {
		return Shaped{}, fmt.Errorf("request: shape: %w", err)
	}
	if n != 1 {
		return Shaped{}, fmt.Errorf("request: shape: graph %s produced %d results, want 1", g.Name(), n)
	}
	return out, nil
}

// one is a source of a single value.
func one[T any](v T) pipeline.Source[T] {
	return pipeline.SourceFunc[T](func(_ context.Context, emit func(T) error) error { return emit(v) })
}
