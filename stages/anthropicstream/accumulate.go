package anthropicstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/harnessflow/harnessflow/internal/jsonx"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/wire/anthropic"
	"github.com/harnessflow/harnessflow/wire/errcode"
)

// Item id prefixes of the items anthropic.accumulate creates; the content
// block index follows, e.g. "anthropic-message-1".
const (
	MessageIDPrefix          = "anthropic-message-"
	ThinkingIDPrefix         = "anthropic-thinking-"
	RedactedThinkingIDPrefix = anthropic.RedactedThinkingIDPrefix
	// DefaultToolIDPrefix names a tool_use block that arrived without an id.
	DefaultToolIDPrefix = "toolu_"
)

// Markers (exact; docs/streams.md#anthropic-messages-streams) that classify an upstream error as a context
// window overflow.
var contextMarkers = [...]string{"prompt is too long", "context window", "context length"}

// CodeContextLengthExceeded is the StreamError.Code of an upstream error
// whose message says the prompt does not fit the context window.
const CodeContextLengthExceeded = "context_length_exceeded"

// Accumulator is the anthropic.accumulate stage: it turns Events into the
// engine's ResponseEvents (docs/streams.md#anthropic-messages-streams). It implements
// pipeline.Stage[Event, protocol.ResponseEvent] and
// pipeline.Finisher[protocol.ResponseEvent]; it holds per-stream state.
//
// Every stream ends with exactly one terminal event (completed or failed),
// and nothing follows it: input after a terminal event is ignored. A
// violation of the event protocol that leaves the stream uninterpretable (a
// delta for a block that never started or already stopped, a delta that
// does not fit its block, a block started twice or out of order) is a
// fatal error, and no terminal event is emitted.
type Accumulator struct {
	opts Options

	created    bool // created emitted
	gotStart   bool // message_start seen
	done       bool // terminal emitted
	responseID string
	usage      Usage
	stopReason string
	toolCalls  bool // a client tool call (function_call) was emitted

	open        []*block // started blocks whose done item is not emitted yet, by index
	lastStarted int
}

type blockKind uint8

const (
	kindIgnored blockKind = iota // server tools, tool results, unknown blocks
	kindText
	kindThinking
	kindRedacted
	kindTool
)

type block struct {
	index   int
	kind    blockKind
	stopped bool
	id      string // item id, or the tool call id
	name    string
	text    textBuf // text, thinking, or tool input
	input   []byte  // tool_use start input
	sig     []byte
	data    string // redacted_thinking payload
}

// NewAccumulator returns an anthropic.accumulate stage configured by opts.
func NewAccumulator(opts Options) *Accumulator {
	return &Accumulator{opts: opts, lastStarted: -1}
}

var (
	_ pipeline.Stage[Event, protocol.ResponseEvent] = (*Accumulator)(nil)
	_ pipeline.Finisher[protocol.ResponseEvent]     = (*Accumulator)(nil)
)

// Push handles one Event.
func (a *Accumulator) Push(_ context.Context, e Event, emit func(protocol.ResponseEvent)) error {
	if a.done {
		return nil
	}
	switch e.Type {
	case TypeContentBlockDelta:
		return a.delta(e, emit)
	case TypeMessageStart:
		if a.gotStart {
			return nil
		}
		a.gotStart = true
		if e.Message != nil {
			a.responseID = e.Message.ID
			if !a.created && e.Message.Model != "" {
				emit(protocol.ServerModel(e.Message.Model))
			}
		}
		a.usage.Merge(e.Usage)
		a.ensureCreated(emit)
	case TypeContentBlockStart:
		return a.start(e, emit)
	case TypeContentBlockStop:
		if b := a.find(e.Index); b != nil && !b.stopped {
			b.stopped = true
			a.flush(emit)
		}
	case TypeMessageDelta:
		if e.StopReason != "" {
			a.stopReason = e.StopReason
		}
		a.usage.Merge(e.Usage)
	case TypeMessageStop:
		a.ensureCreated(emit)
		for _, b := range a.open {
			b.stopped = true
		}
		a.flush(emit)
		ev := protocol.Completed(a.responseID, a.tokenUsage())
		if a.stopReason == "pause_turn" {
			f := false
			ev.EndTurn = &f
		}
		ev.FinishReason = finishReason(a.stopReason, a.toolCalls)
		a.terminal(ev, emit)
	case TypeError:
		a.ensureCreated(emit)
		a.failed(upstreamError(e.Error), emit)
	case TypeEndOfStream:
		a.truncated(fmt.Sprintf(" (cut inside the event at byte %d)", e.Offset), emit)
	}
	return nil
}

// StopReason returns the message's stop_reason (end_turn, tool_use,
// max_tokens, stop_sequence, pause_turn, refusal,
// model_context_window_exceeded, ...) as the last message_delta gave it, or
// "" if none did. Completed carries it normalized (see finishReason) as
// finish_reason, and its pause_turn consequence as end_turn:false.
func (a *Accumulator) StopReason() string { return a.stopReason }

// finishReason normalizes a stop_reason to the Chat Completions vocabulary
// of ResponseEvent.FinishReason: end_turn and stop_sequence are "stop",
// max_tokens and model_context_window_exceeded (the output hit the context
// window) "length", tool_use "tool_calls", refusal "content_filter".
// pause_turn stays "pause_turn" (protocol.FinishPauseTurn), so that a
// client reading only the finish reason does not take the paused turn for
// a finished one; end_turn:false says the same. Without a stop_reason, a
// message that produced client tool calls finished with "tool_calls";
// other values pass through as sent.
func finishReason(stop string, toolCalls bool) string {
	switch stop {
	case "end_turn", "stop_sequence":
		return protocol.FinishStop
	case "pause_turn":
		return protocol.FinishPauseTurn
	case "max_tokens", "model_context_window_exceeded":
		return protocol.FinishLength
	case "tool_use":
		return protocol.FinishToolCalls
	case "refusal":
		return protocol.FinishContentFilter
	case "":
		if toolCalls {
			return protocol.FinishToolCalls
		}
	}
	return stop
}

// Finish ends the stream: without a terminal event so far, it emits a
// retryable upstream_truncated failure.
func (a *Accumulator) Finish(_ context.Context, emit func(protocol.ResponseEvent)) error {
	if !a.done {
		a.truncated("", emit)
	}
	return nil
}

// truncated ends a stream that stopped before message_stop. The tool calls
// that were not emitted yet are named in the message: they are dropped.
func (a *Accumulator) truncated(where string, emit func(protocol.ResponseEvent)) {
	msg := "stream closed before message_stop" + where
	var calls []string
	for _, b := range a.open {
		if b.kind == kindTool {
			calls = append(calls, b.id+" ("+b.name+")")
		}
	}
	if len(calls) > 0 {
		msg += "; unfinished tool calls dropped: " + strings.Join(calls, ", ")
	}
	a.ensureCreated(emit)
	a.failed(&protocol.StreamError{Kind: protocol.ErrKindTruncated, Message: msg, Retryable: true}, emit)
}

// failed ends the stream with a Failed event that carries the message id,
// when message_start gave one.
func (a *Accumulator) failed(se *protocol.StreamError, emit func(protocol.ResponseEvent)) {
	ev := protocol.Failed(se)
	ev.ResponseID = a.responseID
	a.terminal(ev, emit)
}

func (a *Accumulator) terminal(ev protocol.ResponseEvent, emit func(protocol.ResponseEvent)) {
	a.done = true
	a.open = nil
	emit(ev)
}

func (a *Accumulator) ensureCreated(emit func(protocol.ResponseEvent)) {
	if !a.created {
		a.created = true
		emit(protocol.Created())
	}
}

// ProtocolError is the fatal error of anthropic.accumulate: the events
// break the Messages stream protocol in a way that leaves the stream
// uninterpretable.
type ProtocolError struct {
	// Event is the offending event's type.
	Event EventType
	// Offset is the byte offset of its SSE event in the stream.
	Offset int64
	// Problem says what is wrong.
	Problem string
}

// Error returns e.g. "content_block_delta event at byte 612: text_delta for
// content block 3, which is not open (never started, or already stopped)".
func (e *ProtocolError) Error() string {
	return fmt.Sprintf("%s event at byte %d: %s", e.Event, e.Offset, e.Problem)
}

func (a *Accumulator) protocolError(e Event, format string, args ...any) error {
	return &ProtocolError{Event: e.Type, Offset: e.Offset, Problem: fmt.Sprintf(format, args...)}
}

func (a *Accumulator) start(e Event, emit func(protocol.ResponseEvent)) error {
	if e.Index < 0 || e.Index <= a.lastStarted {
		return a.protocolError(e, "content block %d started after block %d (indices must increase)", e.Index, a.lastStarted)
	}
	a.ensureCreated(emit)
	a.lastStarted = e.Index
	bl := e.Block
	if bl == nil {
		bl = &Block{}
	}
	b := &block{index: e.Index}
	idx := strconv.Itoa(e.Index)
	switch bl.Type {
	case BlockText:
		b.kind, b.id = kindText, MessageIDPrefix+idx
		emit(protocol.Added(&protocol.Message{
			ID: b.id, Role: protocol.RoleAssistant,
			Content: []protocol.ContentItem{protocol.OutputText("")},
		}))
		if bl.Text != "" {
			emit(b.text.withSoFar(protocol.TextDelta(b.text.add([]byte(bl.Text)))))
		}
	case BlockThinking:
		b.kind, b.id = kindThinking, ThinkingIDPrefix+idx
		emit(protocol.Added(&protocol.Reasoning{
			ID:      b.id,
			Content: []protocol.ReasoningContent{{Type: protocol.ReasoningTypeText, Text: ""}},
		}))
		if bl.Signature != "" {
			b.sig = []byte(bl.Signature)
		}
		if bl.Thinking != "" {
			emit(b.text.withSoFar(protocol.ReasoningDelta(b.text.add([]byte(bl.Thinking)), 0)))
		}
	case BlockRedactedThinking:
		b.kind, b.id, b.data = kindRedacted, RedactedThinkingIDPrefix+idx, bl.Data
		data := b.data
		emit(protocol.Added(&protocol.Reasoning{ID: b.id, EncryptedContent: &data}))
	case BlockToolUse:
		b.kind, b.id, b.name, b.input = kindTool, bl.ID, bl.Name, bl.Input
		if b.id == "" {
			b.id = DefaultToolIDPrefix + idx
		}
	default:
		// server_tool_use, *_tool_result, container_upload and unknown
		// blocks: executed or produced by the server, never client calls.
		b.kind = kindIgnored
	}
	a.open = append(a.open, b)
	return nil
}

func (a *Accumulator) delta(e Event, emit func(protocol.ResponseEvent)) error {
	b := a.find(e.Index)
	if b == nil || b.stopped {
		what := string(e.Delta)
		if what == "" {
			what = "delta without a type"
		}
		if b == nil {
			return a.protocolError(e, "%s for content block %d, which is not open (never started, or already stopped)", what, e.Index)
		}
		return a.protocolError(e, "%s for content block %d after its content_block_stop", what, e.Index)
	}
	if b.kind == kindIgnored {
		return nil
	}
	switch e.Delta {
	case DeltaText:
		if b.kind != kindText {
			break
		}
		if len(e.Text) > 0 {
			emit(b.text.withSoFar(protocol.TextDelta(b.text.add(e.Text))))
		}
		return nil
	case DeltaThinking:
		if b.kind != kindThinking {
			break
		}
		if len(e.Text) > 0 {
			emit(b.text.withSoFar(protocol.ReasoningDelta(b.text.add(e.Text), 0)))
		}
		return nil
	case DeltaInputJSON:
		if b.kind != kindTool {
			break
		}
		b.text.buf = append(b.text.buf, e.Text...)
		return nil
	case DeltaSignature:
		if b.kind != kindThinking {
			break
		}
		b.sig = append(b.sig, e.Text...)
		return nil
	default:
		// citations_delta and delta types newer than this package.
		return nil
	}
	return a.protocolError(e, "%s does not fit content block %d", e.Delta, e.Index)
}

// find returns the open block with the given index, or nil.
func (a *Accumulator) find(index int) *block {
	n := len(a.open)
	if n == 0 {
		return nil
	}
	if b := a.open[n-1]; b.index == index {
		return b
	}
	i, ok := slices.BinarySearchFunc(a.open, index, func(b *block, idx int) int { return b.index - idx })
	if !ok {
		return nil
	}
	return a.open[i]
}

// flush emits the done items of the stopped blocks that no open block
// precedes, keeping done items in index order.
func (a *Accumulator) flush(emit func(protocol.ResponseEvent)) {
	k := 0
	for k < len(a.open) && a.open[k].stopped {
		a.emitDone(a.open[k], emit)
		k++
	}
	if k > 0 {
		n := copy(a.open, a.open[k:])
		clear(a.open[n:])
		a.open = a.open[:n]
	}
}

func (a *Accumulator) emitDone(b *block, emit func(protocol.ResponseEvent)) {
	switch b.kind {
	case kindText:
		emit(protocol.Done(&protocol.Message{
			ID: b.id, Role: protocol.RoleAssistant,
			Content: []protocol.ContentItem{protocol.OutputText(b.text.String())},
		}))
	case kindThinking:
		r := &protocol.Reasoning{ID: b.id}
		if t := b.text.String(); t != "" {
			r.Content = []protocol.ReasoningContent{{Type: protocol.ReasoningTypeText, Text: t}}
		}
		if len(b.sig) > 0 {
			sig := string(b.sig)
			r.EncryptedContent = &sig
		}
		emit(protocol.Done(r))
	case kindRedacted:
		data := b.data
		emit(protocol.Done(&protocol.Reasoning{ID: b.id, EncryptedContent: &data}))
	case kindTool:
		a.toolCalls = true
		emit(protocol.Done(&protocol.FunctionCall{Name: b.name, Arguments: a.arguments(b), CallID: b.id}))
	}
}

// arguments returns a tool call's arguments: the streamed input_json_delta
// text as sent (compacted with Options.CompactArguments), which replaces
// the start block's placeholder input; when nothing but whitespace was
// streamed, the start input compacted, or "{}".
func (a *Accumulator) arguments(b *block) string {
	in := b.text.buf
	if len(jsonx.TrimSpace(in)) == 0 {
		in = bytes.TrimSpace(b.input)
		if len(in) == 0 || string(in) == "null" || string(in) == "{}" {
			return "{}"
		}
		var out bytes.Buffer
		if json.Compact(&out, in) == nil {
			return out.String()
		}
		return string(in)
	}
	if a.opts.CompactArguments {
		var out bytes.Buffer
		if json.Compact(&out, in) == nil {
			return out.String()
		}
	}
	return string(in)
}

func (a *Accumulator) tokenUsage() *protocol.TokenUsage {
	u := a.usage
	if u.Present == 0 {
		return nil
	}
	in := u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
	return &protocol.TokenUsage{
		InputTokens:           in,
		CachedInputTokens:     u.CacheReadInputTokens,
		CacheWriteInputTokens: u.CacheCreationInputTokens,
		OutputTokens:          u.OutputTokens,
		ReasoningOutputTokens: u.ReasoningTokens,
		TotalTokens:           in + u.OutputTokens,
	}
}

// upstreamError classifies an Anthropic error event.
func upstreamError(e *APIError) *protocol.StreamError {
	if e == nil {
		e = &APIError{}
	}
	se := &protocol.StreamError{
		Kind:      protocol.ErrKindUpstream,
		Type:      e.Type,
		Message:   e.Message,
		RequestID: e.RequestID,
	}
	switch e.Type {
	case "invalid_request_error":
		se.HTTPStatus = 400
	case "authentication_error":
		se.HTTPStatus = 401
	case "billing_error":
		se.HTTPStatus = 402
	case "permission_error":
		se.HTTPStatus = 403
	case "not_found_error":
		se.HTTPStatus = 404
	case "request_too_large":
		se.HTTPStatus = 413
	case "rate_limit_error":
		se.HTTPStatus, se.Retryable = 429, true
	case "api_error":
		se.HTTPStatus, se.Retryable = 500, true
	case "timeout_error":
		se.HTTPStatus, se.Retryable = 504, true
	case "overloaded_error":
		se.HTTPStatus, se.Retryable = 529, true
	}
	for _, m := range contextMarkers {
		if strings.Contains(e.Message, m) {
			se.Code, se.Retryable = CodeContextLengthExceeded, false
			break
		}
	}
	// The other errors the engine treats specially (docs/errors.md).
	if c := errcode.Classify(se.HTTPStatus, se.Type, se.Code, se.Message); se.Code == "" && c != "" {
		se.Code = c
	}
	return se
}

// textBuf accumulates the text of one content block and hands out each
// appended piece as a string without copying it again: the strings alias
// the buffer, which is append-only (bytes below len are never written
// again, and a grown buffer is a new array), so they stay immutable. The
// block's full text is the whole buffer. This makes a text delta cost no
// allocation beyond the buffer's amortised growth.
type textBuf struct{ buf []byte }

func (t *textBuf) add(p []byte) string {
	if len(p) == 0 {
		return ""
	}
	if cap(t.buf)-len(t.buf) < len(p) {
		nb := make([]byte, len(t.buf), max(2*cap(t.buf), len(t.buf)+len(p), 256))
		copy(nb, t.buf)
		t.buf = nb
	}
	start := len(t.buf)
	t.buf = append(t.buf, p...)
	return unsafe.String(&t.buf[start], len(p))
}

// withSoFar returns ev (a delta of this block) with its SoFar: the block's
// whole text so far, a view over the buffer. Views stay valid and
// unchanged as more is added (the buffer is append-only, and one per
// block), which is what SoFar's consumers rely on.
func (t *textBuf) withSoFar(ev protocol.ResponseEvent) protocol.ResponseEvent {
	ev.SoFar = t.String()
	return ev
}

// String returns the whole text so far, a view over the buffer.
func (t *textBuf) String() string {
	if len(t.buf) == 0 {
		return ""
	}
	return unsafe.String(&t.buf[0], len(t.buf))
}
