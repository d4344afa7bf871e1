package chatstream

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/wire/errcode"
)

// AccumulateName is the name of the chat.accumulate node.
const AccumulateName = "chat.accumulate"

// Fixed identifiers of the items a chat stream produces (docs/streams.md#chunks).
const (
	// MessageItemID is the id of the assistant message item.
	MessageItemID = "chat-message-1"
	// ReasoningItemID is the id of the reasoning item.
	ReasoningItemID = "chat-reasoning-1"
	// DefaultResponseID is the response id used when no chunk carried one.
	DefaultResponseID = "chatcmpl-compat"
)

// StepKind tells what a [Step] carries.
type StepKind uint8

const (
	// StepEvent carries a finished ResponseEvent to pass on unchanged.
	StepEvent StepKind = iota
	// StepToolCall carries one tool-call fragment for chat.finalize's slots.
	StepToolCall
	// StepEnd ends the stream; End says how.
	StepEnd
)

// Step is the chat.accumulate output and the chat.finalize input: either a
// ready event (server_model, created, item added/done for reasoning and the
// assistant message, text and reasoning deltas), a tool-call fragment, or
// the end of the stream.
//
// ToolCall is borrowed like the Chunk it came from; Own copies it.
type Step struct {
	// Kind says which of the fields below is set.
	Kind StepKind
	// Event is the event of a StepEvent.
	Event protocol.ResponseEvent
	// ToolCall is the fragment of a StepToolCall (borrowed, with what it
	// points to).
	ToolCall *ToolCall
	// Chunk is the 1-based ordinal of the data chunk a StepToolCall came
	// from; chat.finalize finalizes a call early only when a later call
	// starts in a later chunk.
	Chunk int
	// End describes the end of the stream, for a StepEnd.
	End *End
}

// Own returns a copy of s that may be kept after the emit call.
func (s Step) Own() Step {
	if s.ToolCall != nil {
		t := s.ToolCall.Own()
		s.ToolCall = &t
	}
	return s
}

// End describes how a stream ended. Err is nil for a completed stream.
type End struct {
	// ResponseID is the first non-empty chunk id, else DefaultResponseID.
	ResponseID string
	// Usage is built from the last usage object that carried a token count;
	// nil when none was seen.
	Usage *protocol.TokenUsage
	// FinishReason is the upstream's finish_reason as sent: the first
	// non-empty one, except that a later "tool_calls" replaces an earlier
	// other reason (never the reverse). "" when none was sent ([DONE] only).
	FinishReason string
	// Err is the failure of a failed stream: upstream_error for an in-band
	// error, upstream_truncated for a stream that ended without [DONE] and
	// without any finish_reason.
	Err *protocol.StreamError
}

// accumulator is chat.accumulate: Chunk → Step.
type accumulator struct {
	created  bool
	ended    bool
	model    string
	respID   string
	usage    Usage
	hasUsage bool
	finish   string
	text     textLog
	msgOpen  bool
	rsn      textLog
	rsnOpen  bool
	chunks   int
	truncAt  int64 // offset of the unfinished event, -1 if none
}

// NewAccumulateStage returns a fresh chat.accumulate stage. Per chunk it
// emits, in this order: ServerModel when the model changes, Created once,
// then per choice the reasoning delta (item added first), the text deltas
// (item added first) and the tool-call fragments; finish_reason and usage
// are recorded. A refusal is shown as text (it is what the model said).
// Empty text and reasoning fragments add nothing (an empty
// content string does not open the message). At the end — ChunkDone,
// ChunkError, ChunkTruncated or ChunkEOF — it emits the done items of the
// reasoning and the message (completed streams only) and one StepEnd; input
// that ends without one of these fails Finish with ErrNoEndMarker.
//
// Every text and reasoning delta carries SoFar (protocol.ResponseEvent):
// the item's text so far, a view over the same append-only buffer the
// delta and the done item's text are views of, so a consumer that checks
// it can keep the text without a copy of its own.
func NewAccumulateStage() pipeline.Stage[Chunk, Step] { return &accumulator{truncAt: -1} }

func event(ev protocol.ResponseEvent) Step { return Step{Kind: StepEvent, Event: ev} }

// Push handles one chunk.
func (a *accumulator) Push(_ context.Context, c Chunk, emit func(Step)) error {
	if a.ended {
		return nil
	}
	switch c.Kind {
	case ChunkData:
		a.data(&c, emit)
	case ChunkDone:
		a.complete(emit)
	case ChunkError:
		var e ErrorObject
		if c.Error != nil {
			e = *c.Error
		}
		a.fail(upstreamError(e), emit)
	case ChunkTruncated:
		a.truncAt = c.Offset
		a.endOfInput(emit)
	case ChunkEOF:
		a.endOfInput(emit)
	}
	return nil
}

func (a *accumulator) data(c *Chunk, emit func(Step)) {
	a.chunks++
	if a.respID == "" && len(c.ID) > 0 {
		a.respID = string(c.ID)
	}
	if len(c.Model) > 0 && string(c.Model) != a.model {
		a.model = string(c.Model)
		emit(event(protocol.ServerModel(a.model)))
	}
	a.ensureCreated(emit)
	if c.Usage != nil && c.Usage.Known {
		a.usage, a.hasUsage = *c.Usage, true
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if len(ch.Reasoning) > 0 {
			if !a.rsnOpen {
				a.rsnOpen = true
				emit(event(protocol.Added(&protocol.Reasoning{
					ID:      ReasoningItemID,
					Summary: []protocol.SummaryText{},
					Content: []protocol.ReasoningContent{{Type: protocol.ReasoningTypeText, Text: ""}},
				})))
			}
			d, soFar := a.rsn.add(ch.Reasoning)
			ev := protocol.ReasoningDelta(d, 0)
			ev.SoFar = soFar
			emit(event(ev))
		}
		for _, p := range ch.Content {
			a.textDelta(p, emit)
		}
		a.textDelta(ch.Refusal, emit)
		for j := range ch.ToolCalls {
			emit(Step{Kind: StepToolCall, ToolCall: &ch.ToolCalls[j], Chunk: a.chunks})
		}
		if fr := ch.FinishReason; len(fr) > 0 && string(fr) != a.finish {
			switch {
			case a.finish == "":
				a.finish = string(fr)
			case isToolCallsFinish(fr) && !isToolCallsFinish([]byte(a.finish)):
				a.finish = string(fr)
			}
		}
	}
}

// textDelta emits a non-empty text fragment, opening the message first.
func (a *accumulator) textDelta(p []byte, emit func(Step)) {
	if len(p) == 0 {
		return
	}
	if !a.msgOpen {
		a.msgOpen = true
		emit(event(protocol.Added(&protocol.Message{
			ID:      MessageItemID,
			Role:    protocol.RoleAssistant,
			Content: []protocol.ContentItem{protocol.OutputText("")},
		})))
	}
	d, soFar := a.text.add(p)
	ev := protocol.TextDelta(d)
	ev.SoFar = soFar
	emit(event(ev))
}

func isToolCallsFinish(fr []byte) bool {
	return string(fr) == "tool_calls" || string(fr) == "function_call"
}

func (a *accumulator) ensureCreated(emit func(Step)) {
	if !a.created {
		a.created = true
		emit(event(protocol.Created()))
	}
}

// complete ends a successful stream.
func (a *accumulator) complete(emit func(Step)) {
	a.ended = true
	a.ensureCreated(emit)
	if a.rsnOpen {
		emit(event(protocol.Done(&protocol.Reasoning{
			ID:      ReasoningItemID,
			Summary: []protocol.SummaryText{},
			Content: []protocol.ReasoningContent{{Type: protocol.ReasoningTypeText, Text: a.rsn.all()}},
		})))
	}
	if a.msgOpen {
		emit(event(protocol.Done(&protocol.Message{
			ID:      MessageItemID,
			Role:    protocol.RoleAssistant,
			Content: []protocol.ContentItem{protocol.OutputText(a.text.all())},
		})))
	}
	end := &End{ResponseID: a.respID, FinishReason: a.finish}
	if end.ResponseID == "" {
		end.ResponseID = DefaultResponseID
	}
	if a.hasUsage {
		u := a.usage
		end.Usage = &protocol.TokenUsage{
			InputTokens:           u.PromptTokens,
			CachedInputTokens:     u.CachedTokens,
			OutputTokens:          u.CompletionTokens,
			ReasoningOutputTokens: u.ReasoningTokens,
			TotalTokens:           u.TotalTokens,
		}
		if !u.HasTotal {
			end.Usage.TotalTokens = u.PromptTokens + u.CompletionTokens
		}
	}
	emit(Step{Kind: StepEnd, End: end})
}

// fail ends a failed stream. Items that were opened get no done event: the
// deltas already sent stay as diagnostics, but nothing is presented as
// finished output.
func (a *accumulator) fail(err *protocol.StreamError, emit func(Step)) {
	a.ended = true
	a.ensureCreated(emit)
	end := &End{ResponseID: a.respID, FinishReason: a.finish, Err: err}
	if end.ResponseID == "" {
		end.ResponseID = DefaultResponseID
	}
	emit(Step{Kind: StepEnd, End: end})
}

// endOfInput ends the stream when the input ended without [DONE] or an
// error: completed when a finish_reason was seen, otherwise failed as
// truncated.
func (a *accumulator) endOfInput(emit func(Step)) {
	if a.finish != "" {
		a.complete(emit)
		return
	}
	msg := "upstream stream ended without [DONE] and without a finish_reason"
	switch {
	case a.chunks == 0 && a.truncAt < 0:
		msg = "upstream stream ended before any chunk: no [DONE] and no finish_reason"
	case a.truncAt >= 0:
		msg += "; it was cut in the middle of the event at byte " + strconv.FormatInt(a.truncAt, 10)
	}
	a.fail(&protocol.StreamError{Kind: protocol.ErrKindTruncated, Message: msg, Retryable: true}, emit)
}

// ErrNoEndMarker is returned (wrapped) by the Finish of chat.accumulate and
// chat.finalize when their input ended without saying how the stream ended
// (no ChunkDone, ChunkError, ChunkTruncated or ChunkEOF; no StepEnd). The
// engine never finishes a node downstream of a failure, so this happens
// only when a recomposed graph feeds chunks from a source that does not end
// them. Emitting nothing then keeps the rule that a failed run has no
// terminal event.
var ErrNoEndMarker = errors.New("input ended without an end-of-stream marker")

// Finish checks that the stream was ended in-band; it never emits.
func (a *accumulator) Finish(ctx context.Context, _ func(Step)) error {
	if a.ended {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return fmt.Errorf("%s: %w (want ChunkDone, ChunkError, ChunkTruncated or ChunkEOF last)", AccumulateName, ErrNoEndMarker)
}

// textLog is an append-only byte log that hands out what is appended as
// strings without copying them: one growing buffer instead of one
// allocation per delta, and the whole text so far (a delta's SoFar, the
// done item's text) as a string over the same bytes.
//
// Those strings are views (unsafe.String) over the log's array, and they
// are only sound because a byte, once appended, is never modified: append
// writes past the end of every view handed out, and when it moves the log
// to a bigger array the old array keeps its contents and stays alive for
// as long as a view refers to it. Consumers rely on that beyond the usual
// string rules: the Responses writer keeps a SoFar instead of its own copy
// and accepts a later one that starts at the same address without
// comparing the bytes again. So a log is never truncated, reset or
// reused: each item's text has a log of its own (the accumulator, fresh
// per stream, has one for the message and one for the reasoning), and
// code that wanted to start over would have to replace the log with a new
// zero textLog — never reslice b to b[:0], which would write new text over
// bytes that views still show.
type textLog struct{ b []byte }

// add appends p (non-empty) and returns it as a string (delta) and
// everything appended so far, p included (soFar), both views over the log.
func (l *textLog) add(p []byte) (delta, soFar string) {
	start := len(l.b)
	l.b = append(l.b, p...)
	return unsafe.String(&l.b[start], len(p)), unsafe.String(&l.b[0], len(l.b))
}

// all returns everything appended so far.
func (l *textLog) all() string {
	if len(l.b) == 0 {
		return ""
	}
	return unsafe.String(&l.b[0], len(l.b))
}

// upstreamError turns an in-band error object into a StreamError.
func upstreamError(e ErrorObject) *protocol.StreamError {
	se := &protocol.StreamError{
		Kind:    protocol.ErrKindUpstream,
		Type:    string(e.Type),
		Code:    string(e.Code),
		Message: string(e.Message),
	}
	if se.Message == "" {
		se.Message = "upstream sent an error without a message"
	}
	se.HTTPStatus = httpStatus(se.Type, se.Code)
	se.Retryable = retryable(se.Type, se.Code, se.HTTPStatus)
	se.RetryAfterMS = retryAfterMS(se.Message)
	// The errors the engine treats specially get its code (docs/errors.md).
	if c := errcode.Classify(se.HTTPStatus, se.Type, se.Code, se.Message); c != "" {
		se.Code = c
	}
	return se
}

// httpStatus returns the HTTP status an error corresponds to: a numeric
// code in the HTTP range, else the status of a well-known error type.
func httpStatus(typ, code string) int {
	if n, err := strconv.Atoi(code); err == nil && n >= 400 && n <= 599 {
		return n
	}
	for _, s := range [2]string{typ, code} {
		switch strings.ToLower(s) {
		case "rate_limit_error", "rate_limit_exceeded", "rate_limited", "too_many_requests":
			return 429
		case "overloaded_error", "overloaded":
			return 529
		case "server_error", "api_error", "internal_error", "internal_server_error":
			return 500
		case "service_unavailable", "service_unavailable_error":
			return 503
		case "timeout", "timeout_error", "gateway_timeout":
			return 504
		}
	}
	return 0
}

// retryable classifies an upstream error: rate limits, overload, timeouts
// and server-side failures are worth retrying; quota, authentication and
// request errors are not.
func retryable(typ, code string, status int) bool {
	t, c := strings.ToLower(typ), strings.ToLower(code)
	for _, s := range [2]string{t, c} {
		if strings.Contains(s, "quota") || strings.Contains(s, "billing") || strings.Contains(s, "context_length") ||
			strings.Contains(s, "invalid_request") || strings.Contains(s, "authentication") || strings.Contains(s, "permission") {
			return false
		}
	}
	switch {
	case status == 408 || status == 409 || status == 425 || status == 429 || status >= 500:
		return true
	}
	for _, s := range [2]string{t, c} {
		for _, w := range [...]string{"rate_limit", "overloaded", "server_error", "api_error", "unavailable", "timeout", "internal", "capacity", "temporar"} {
			if strings.Contains(s, w) {
				return true
			}
		}
	}
	return false
}

// retryAfterMS extracts a "try again in 1.5s" / "in 250ms" hint from an
// error message (OpenAI rate-limit wording); 0 when there is none.
func retryAfterMS(msg string) int64 {
	i := strings.Index(strings.ToLower(msg), "try again in ")
	if i < 0 {
		return 0
	}
	rest := msg[i+len("try again in "):]
	j := 0
	for j < len(rest) && (rest[j] >= '0' && rest[j] <= '9' || rest[j] == '.') {
		j++
	}
	v, err := strconv.ParseFloat(rest[:j], 64)
	if err != nil || v < 0 || v > 1e9 {
		return 0
	}
	unit := rest[j:]
	switch {
	case strings.HasPrefix(unit, "ms"):
		return int64(v + 0.5)
	case strings.HasPrefix(unit, "s"):
		return int64(v*1000 + 0.5)
	case strings.HasPrefix(unit, "m"):
		return int64(v*60000 + 0.5)
	}
	return 0
}
