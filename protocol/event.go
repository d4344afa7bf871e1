package protocol

// EventType is the "type" of a [ResponseEvent].
type EventType string

// Event types (docs/architecture.md#event-json).
const (
	EventCreated                   EventType = "created"
	EventServerModel               EventType = "server_model"
	EventOutputItemAdded           EventType = "output_item.added"
	EventOutputItemDone            EventType = "output_item.done"
	EventOutputTextDelta           EventType = "output_text.delta"
	EventReasoningContentDelta     EventType = "reasoning_content.delta"
	EventReasoningSummaryDelta     EventType = "reasoning_summary.delta"
	EventReasoningSummaryPartAdded EventType = "reasoning_summary_part.added"
	EventToolCallInputDelta        EventType = "tool_call_input.delta"
	EventCompleted                 EventType = "completed"
	EventFailed                    EventType = "failed"
)

// ResponseEvent is one event of the engine's output stream. Only the fields that belong to
// Type are meaningful and serialized, with "type" first:
//
//	created                       -
//	server_model                  model
//	output_item.added / .done     item
//	output_text.delta             delta
//	reasoning_content.delta       delta, content_index
//	reasoning_summary.delta       delta, summary_index
//	reasoning_summary_part.added  summary_index
//	tool_call_input.delta         item_id, call_id?, delta
//	completed                     response_id, token_usage?, end_turn?, finish_reason?
//	failed                        error, response_id?
//
// An event of an unknown type serializes as {"type":...} only.
type ResponseEvent struct {
	Type         EventType
	Model        string
	Item         ResponseItem
	Delta        string
	ContentIndex int
	SummaryIndex int
	ItemID       string
	CallID       string
	ResponseID   string
	TokenUsage   *TokenUsage
	EndTurn      *bool
	// FinishReason says why the model stopped, in the Chat Completions
	// vocabulary (FinishStop, FinishLength, FinishToolCalls,
	// FinishContentFilter); other upstream values pass through as sent.
	// Serialized on completed when non-empty.
	FinishReason string
	Error        *StreamError
	// SoFar is an optional hint on a delta event (output_text,
	// reasoning_content, reasoning_summary, tool_call_input), never
	// serialized: the producer's whole text of the delta's item or part so
	// far, this Delta included, so that a consumer that must keep the text
	// can keep this string instead of a copy of its own. It is a claim, not
	// a fact: a stage between the producer and the consumer may rewrite,
	// hold back or drop deltas and leave SoFar as it was, so a consumer
	// must use it only after checking that it equals the deltas it received
	// (the Responses writer does). Whoever sets SoFar must never modify the
	// bytes of a SoFar it handed out (it is typically a view over an
	// append-only buffer, one per item or part), because a consumer may
	// keep it and compare later ones against it by their address. A stage
	// that rewrites Delta should clear SoFar (or set it to its own text so
	// far, under the same rule); leaving it costs the consumer a check.
	SoFar string
}

// Finish reasons, normalized to the Chat Completions vocabulary.
const (
	FinishStop          = "stop"
	FinishLength        = "length"
	FinishToolCalls     = "tool_calls"
	FinishContentFilter = "content_filter"
	// FinishPauseTurn is an Anthropic pause_turn: the server paused a
	// long turn (a server tool still running) and the caller must send the
	// response back to continue it; the completed event also says
	// end_turn:false.
	FinishPauseTurn = "pause_turn"
)

// TokenUsage is the token accounting of a completed response. CacheWriteInputTokens is
// serialized only when non-zero.
type TokenUsage struct {
	InputTokens           int64
	CachedInputTokens     int64
	CacheWriteInputTokens int64
	OutputTokens          int64
	ReasoningOutputTokens int64
	TotalTokens           int64
}

// StreamError kinds.
const (
	ErrKindUpstream  = "upstream_error"
	ErrKindTruncated = "upstream_truncated"
	ErrKindProtocol  = "protocol"
)

// StreamError describes why a stream failed (the "error" of a failed event). Type, Code,
// HTTPStatus, RetryAfterMS and RequestID are omitted when zero.
type StreamError struct {
	Kind         string // ErrKindUpstream | ErrKindTruncated | ErrKindProtocol
	Type         string
	Code         string
	Message      string
	Retryable    bool
	HTTPStatus   int
	RetryAfterMS int64
	RequestID    string
}

// Error implements error.
func (e *StreamError) Error() string {
	s := "protocol: stream " + e.Kind
	if e.Code != "" {
		s += " (" + e.Code + ")"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Created returns a created event.
func Created() ResponseEvent { return ResponseEvent{Type: EventCreated} }

// ServerModel returns a server_model event.
func ServerModel(model string) ResponseEvent {
	return ResponseEvent{Type: EventServerModel, Model: model}
}

// Added returns an output_item.added event.
func Added(item ResponseItem) ResponseEvent {
	return ResponseEvent{Type: EventOutputItemAdded, Item: item}
}

// Done returns an output_item.done event.
func Done(item ResponseItem) ResponseEvent {
	return ResponseEvent{Type: EventOutputItemDone, Item: item}
}

// TextDelta returns an output_text.delta event.
func TextDelta(delta string) ResponseEvent {
	return ResponseEvent{Type: EventOutputTextDelta, Delta: delta}
}

// ReasoningDelta returns a reasoning_content.delta event.
func ReasoningDelta(delta string, contentIndex int) ResponseEvent {
	return ResponseEvent{Type: EventReasoningContentDelta, Delta: delta, ContentIndex: contentIndex}
}

// SummaryDelta returns a reasoning_summary.delta event.
func SummaryDelta(delta string, summaryIndex int) ResponseEvent {
	return ResponseEvent{Type: EventReasoningSummaryDelta, Delta: delta, SummaryIndex: summaryIndex}
}

// SummaryPartAdded returns a reasoning_summary_part.added event.
func SummaryPartAdded(summaryIndex int) ResponseEvent {
	return ResponseEvent{Type: EventReasoningSummaryPartAdded, SummaryIndex: summaryIndex}
}

// ToolInputDelta returns a tool_call_input.delta event.
func ToolInputDelta(itemID, callID, delta string) ResponseEvent {
	return ResponseEvent{Type: EventToolCallInputDelta, ItemID: itemID, CallID: callID, Delta: delta}
}

// Completed returns a completed event; usage may be nil.
func Completed(responseID string, usage *TokenUsage) ResponseEvent {
	return ResponseEvent{Type: EventCompleted, ResponseID: responseID, TokenUsage: usage}
}

// Failed returns a failed event.
func Failed(err *StreamError) ResponseEvent { return ResponseEvent{Type: EventFailed, Error: err} }

// IsTerminal reports whether the event ends a stream (completed or failed).
func (e ResponseEvent) IsTerminal() bool {
	return e.Type == EventCompleted || e.Type == EventFailed
}
