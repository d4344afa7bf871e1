package request

import (
	"encoding/json"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/wire/chat"
)

// ChatBody is the fixed part of a harness's chat body
// (docs/request-shaping.md#body-fields): what its request.options node sets
// besides the model, which always comes from the engine request.
type ChatBody struct {
	// Stream sends "stream":true with stream_options
	// {"include_usage":true}, so the stream ends with a usage chunk; false
	// sends neither (one JSON answer).
	Stream bool
	// MaxTokens is max_tokens; 0 leaves it out.
	MaxTokens int64
	// ToolChoice is tool_choice as JSON (e.g. `"auto"`); "" leaves it out.
	ToolChoice string
	// Extra are fields chat.Request has no name for (temperature, top_p),
	// name → JSON value.
	Extra map[string]string
	// Edit, when set, runs last: the fields that depend on the request or
	// the turn (thinking, headers, a variant's temperature).
	Edit func(s *Shaping) error
}

// ChatBodyNode returns the request.options node of a harness's chat body:
// the model from the engine request, then the fields of b; describe is the
// node's one-line description.
func ChatBodyNode(b ChatBody, describe string) pipeline.Node {
	return pipeline.StageNode(NodeOptions, Update(func(s *Shaping) error {
		body := &s.Body
		body.Model = s.Request.Model
		if b.Stream {
			body.Stream = ptr(true)
			body.StreamOptions = includeUsage
		}
		if b.MaxTokens > 0 {
			body.MaxTokens = ptr(b.MaxTokens)
		}
		if b.ToolChoice != "" {
			body.ToolChoice = json.RawMessage(b.ToolChoice)
		}
		if len(b.Extra) > 0 && body.Extra == nil {
			body.Extra = make(chat.Extra, len(b.Extra))
		}
		for k, v := range b.Extra {
			body.Extra[k] = json.RawMessage(v)
		}
		if b.Edit != nil {
			return b.Edit(s)
		}
		return nil
	}), pipeline.Describe(describe))
}
