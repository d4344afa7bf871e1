package protocol

import "encoding/json"

// Prompt is what the engine hands to a harness (docs/protocol.md#prompt).
type Prompt struct {
	Input              []ResponseItem // the full history
	Tools              []ToolSpec
	ParallelToolCalls  bool
	Cwd                string
	BaseInstructions   string
	OutputSchema       json.RawMessage // nil when absent
	OutputSchemaStrict bool
}

// ResponsesRequest is the Responses-API request body (docs/protocol.md#responses-request). Fields are written in this
// order; unknown fields are kept in Extra and written last.
type ResponsesRequest struct {
	Model             string
	Instructions      string           // omitted when empty
	Input             Items            // always written (nil as [])
	Tools             []ToolSpec       // omitted when nil; a non-nil empty slice is written as []
	ToolChoice        json.RawMessage  // always written (nil as "auto")
	ParallelToolCalls *bool            // omitted when nil (the client sent none; the API's default is true)
	Reasoning         *ReasoningConfig // always written (nil as null)
	Store             *bool            // omitted when nil (the client sent none; the API's default is true)
	Stream            bool             // always written
	StreamOptions     json.RawMessage  // optional
	Include           []string         // always written (nil as [])
	ServiceTier       string           // optional
	PromptCacheKey    string           // optional
	Text              *TextConfig      // optional
	ClientMetadata    json.RawMessage  // optional
	Extra             Extra
}

// ReasoningConfig is the "reasoning" object of a [ResponsesRequest]: {effort?, summary?,
// context?}.
type ReasoningConfig struct {
	Effort  string          // optional: minimal | low | medium | high | ...
	Summary string          // optional: auto | concise | detailed | none
	Context json.RawMessage // optional
	Extra   Extra
}

// TextConfig is the "text" object of a [ResponsesRequest]: {verbosity?, format?}.
type TextConfig struct {
	Verbosity string      // optional: low | medium | high
	Format    *TextFormat // optional
	Extra     Extra
}

// TextFormat is the structured-output format: {"type":"json_schema","strict","schema","name"}.
type TextFormat struct {
	Type   string
	Strict bool
	Schema json.RawMessage
	Name   string
	Extra  Extra
}

// ParallelCalls reports whether the model may call several tools at once:
// parallel_tool_calls as sent, true (the Responses API's default) when the
// client sent none.
func (r *ResponsesRequest) ParallelCalls() bool {
	return r.ParallelToolCalls == nil || *r.ParallelToolCalls
}

// Stores reports whether the client asks for the response to be kept for
// later reference (previous_response_id, item_reference): store as sent,
// true (the Responses API's default) when the client sent none.
func (r *ResponsesRequest) Stores() bool {
	return r.Store == nil || *r.Store
}
