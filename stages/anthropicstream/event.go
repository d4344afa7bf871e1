package anthropicstream

// EventType is the type of an Anthropic Messages stream event (the SSE event
// name, equal to the JSON "type").
type EventType string

// Event types of the Messages stream. TypeEndOfStream is not an upstream
// type: it marks the Event that anthropic.decode emits when sse.decode
// reports that the stream ended in the middle of an event.
const (
	TypeMessageStart      EventType = "message_start"
	TypeContentBlockStart EventType = "content_block_start"
	TypeContentBlockDelta EventType = "content_block_delta"
	TypeContentBlockStop  EventType = "content_block_stop"
	TypeMessageDelta      EventType = "message_delta"
	TypeMessageStop       EventType = "message_stop"
	TypePing              EventType = "ping"
	TypeError             EventType = "error"
	TypeEndOfStream       EventType = ""
)

// DeltaType is the type of a content_block_delta's delta.
type DeltaType string

// Delta types. Others are passed on as they are and ignored by
// anthropic.accumulate.
const (
	DeltaText      DeltaType = "text_delta"
	DeltaThinking  DeltaType = "thinking_delta"
	DeltaSignature DeltaType = "signature_delta"
	DeltaInputJSON DeltaType = "input_json_delta"
	DeltaCitations DeltaType = "citations_delta"
)

// Content block types.
const (
	BlockText             = "text"
	BlockThinking         = "thinking"
	BlockRedactedThinking = "redacted_thinking"
	BlockToolUse          = "tool_use"
	BlockServerToolUse    = "server_tool_use"
)

// Event is one decoded Anthropic stream event, the output of anthropic.decode.
// Which fields are set depends on Type:
//
//	message_start         Message, Usage (the message's usage, if any)
//	content_block_start   Index, Block
//	content_block_delta   Index, Delta, Text
//	content_block_stop    Index
//	message_delta         StopReason, StopSequence, Usage
//	error                 Error
//	end of stream         Truncated (Type is TypeEndOfStream)
//
// Text is borrowed: it may alias the SSE event's data or the decoder's
// scratch buffer and is valid only while emit runs. Own returns a copy that
// may be kept. All other fields are owned and immutable.
type Event struct {
	Type EventType
	// Offset is the byte offset of the SSE event in the stream.
	Offset int64
	// Index is the content block index (content_block_*).
	Index int
	// Delta is the delta type (content_block_delta).
	Delta DeltaType
	// Text is the delta's payload, unescaped: text for text_delta, thinking
	// for thinking_delta, partial_json for input_json_delta, signature for
	// signature_delta; nil for other deltas. Borrowed.
	Text []byte
	// Message describes the message (message_start).
	Message *MessageInfo
	// Block is the started content block (content_block_start).
	Block *Block
	// StopReason and StopSequence come from message_delta's delta; empty when
	// absent or null.
	StopReason   string
	StopSequence string
	// Usage holds the token counts of message_start (the message's usage) or
	// message_delta; nil when the event has none.
	Usage *Usage
	// Error is the upstream error (error).
	Error *APIError
	// Truncated is set on the end-of-stream marker: the stream ended in the
	// middle of an SSE event.
	Truncated bool
}

// Own returns a copy of e whose Text does not alias memory owned by the
// decoder or the SSE layer, so it may be retained or sent to another
// goroutine.
func (e Event) Own() Event {
	if e.Text != nil {
		e.Text = append(make([]byte, 0, len(e.Text)), e.Text...)
	}
	return e
}

// MessageInfo is the message header of message_start.
type MessageInfo struct {
	ID    string
	Model string
	Role  string
}

// Block is the content block of content_block_start. Only the fields of its
// Type are set.
type Block struct {
	Type string
	// ID and Name: tool_use, server_tool_use.
	ID   string
	Name string
	// Input is the start input (raw JSON, usually the placeholder {}):
	// tool_use, server_tool_use. Owned.
	Input []byte
	// Text: text. Thinking and Signature: thinking.
	Text      string
	Thinking  string
	Signature string
	// Data is the opaque payload of redacted_thinking.
	Data string
	// ToolUseID: *_tool_result blocks.
	ToolUseID string
}

// UsageField is a bit set naming the fields a Usage carries.
type UsageField uint8

// Usage fields.
const (
	UsageInput UsageField = 1 << iota
	UsageCacheCreation
	UsageCacheRead
	UsageOutput
	UsageReasoning
)

// Usage is the token accounting of message_start or message_delta. Anthropic
// sends cumulative values, so a later event's fields overwrite earlier ones;
// Present tells which fields this event carried (not absent, not null).
type Usage struct {
	InputTokens              int64
	CacheCreationInputTokens int64
	CacheReadInputTokens     int64
	OutputTokens             int64
	// ReasoningTokens is output_tokens_details.reasoning_tokens, when sent.
	ReasoningTokens int64
	Present         UsageField
}

// Merge overwrites the fields of u that v carries.
func (u *Usage) Merge(v *Usage) {
	if v == nil {
		return
	}
	if v.Present&UsageInput != 0 {
		u.InputTokens = v.InputTokens
	}
	if v.Present&UsageCacheCreation != 0 {
		u.CacheCreationInputTokens = v.CacheCreationInputTokens
	}
	if v.Present&UsageCacheRead != 0 {
		u.CacheReadInputTokens = v.CacheReadInputTokens
	}
	if v.Present&UsageOutput != 0 {
		u.OutputTokens = v.OutputTokens
	}
	if v.Present&UsageReasoning != 0 {
		u.ReasoningTokens = v.ReasoningTokens
	}
	u.Present |= v.Present
}

// APIError is the payload of an error event.
type APIError struct {
	// Type is error.type, e.g. overloaded_error.
	Type    string
	Message string
	// RequestID is the event's request_id, when sent.
	RequestID string
}
