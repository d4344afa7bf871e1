package responsesstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/harnessflow/harnessflow/internal/jsonx"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/sse"
)

// Responses stream event types this package interprets.
const (
	TypeCreated                  = "response.created"
	TypeOutputItemAdded          = "response.output_item.added"
	TypeOutputItemDone           = "response.output_item.done"
	TypeOutputTextDelta          = "response.output_text.delta"
	TypeReasoningSummaryDelta    = "response.reasoning_summary_text.delta"
	TypeReasoningTextDelta       = "response.reasoning_text.delta"
	TypeReasoningSummaryPartAdd  = "response.reasoning_summary_part.added"
	TypeFunctionCallArgsDelta    = "response.function_call_arguments.delta"
	TypeCustomToolCallInputDelta = "response.custom_tool_call_input.delta"
	TypeCompleted                = "response.completed"
	TypeIncomplete               = "response.incomplete"
	TypeFailed                   = "response.failed"
	TypeError                    = "error"
)

// Decoder is the responses.decode stage: it turns the SSE events of an
// OpenAI Responses stream into the engine's ResponseEvents. It implements
// pipeline.Stage[sse.Event, protocol.ResponseEvent] and
// pipeline.Finisher[protocol.ResponseEvent]; it holds per-stream state.
//
// Every stream ends with exactly one terminal event (completed or failed),
// and nothing follows it: input after a terminal event (a trailing
// "[DONE]", say) is ignored. Malformed JSON in an event this package
// interprets, or an output item that does not decode, is a fatal error
// naming the event's byte offset (data that is not JSON at all, such as an
// HTML page, is also quoted by how it starts); no terminal event is emitted
// then.
type Decoder struct {
	opts Options
	sc   jsonx.Scanner
	raw  rawEvent

	created    bool
	done       bool
	toolCalls  bool // a function_call or custom_tool_call done item was emitted
	responseID string
	callIDs    map[string]string // item id → call id, for tool input deltas
	arena      []byte
}

// NewDecoder returns a responses.decode stage configured by opts.
func NewDecoder(opts Options) *Decoder { return &Decoder{opts: opts} }

var (
	_ pipeline.Stage[sse.Event, protocol.ResponseEvent] = (*Decoder)(nil)
	_ pipeline.Finisher[protocol.ResponseEvent]         = (*Decoder)(nil)
)

// Push interprets one SSE event.
func (d *Decoder) Push(_ context.Context, ev sse.Event, emit func(protocol.ResponseEvent)) error {
	if d.done {
		return nil
	}
	if ev.Truncated {
		d.failed(&protocol.StreamError{
			Kind:      protocol.ErrKindTruncated,
			Message:   fmt.Sprintf("stream closed before response.completed (cut inside the event at byte %d)", ev.Offset),
			Retryable: true,
		}, d.responseID, emit)
		return nil
	}
	typ := handled(ev.Type)
	if typ == "" && ev.Type != "message" {
		return nil
	}
	// Surrounding whitespace is not part of the document: offsets inside
	// the data count from its first non-blank byte, as in chat.decode.
	data := jsonx.TrimSpace(ev.Data)
	if jsonx.NoData(data) {
		return nil
	}
	if !d.parse(data) {
		if typ == TypeError {
			// An error event whose payload is not JSON (a proxy's
			// plain-text error) is still an error: its data is the message.
			d.failed(newUpstreamError("", "", string(bytes.TrimSpace(data))), d.responseID, emit)
			return nil
		}
		return jsonx.NewDecodeError(ev.Type, ev.Offset, jsonx.NotJSONLine(data, d.sc.Check(false)))
	}
	r, sc := &d.raw, &d.sc
	if t := handledBytes(sc.Bytes(r.typ)); t != "" {
		typ = t
	} else if typ == "" {
		return nil
	}
	switch typ {
	case TypeOutputTextDelta:
		d.ensureCreated(emit)
		if r.delta.Len() > 0 {
			emit(protocol.TextDelta(d.str(r.delta)))
		}
	case TypeReasoningSummaryDelta:
		d.ensureCreated(emit)
		if r.delta.Len() > 0 {
			emit(protocol.SummaryDelta(d.str(r.delta), int(r.summaryIndex)))
		}
	case TypeReasoningTextDelta:
		d.ensureCreated(emit)
		if r.delta.Len() > 0 {
			emit(protocol.ReasoningDelta(d.str(r.delta), int(r.contentIndex)))
		}
	case TypeFunctionCallArgsDelta, TypeCustomToolCallInputDelta:
		d.ensureCreated(emit)
		if !d.opts.SkipToolInputDeltas && r.delta.Len() > 0 {
			emit(protocol.ToolInputDelta(d.str(r.itemID), d.callIDs[string(sc.Bytes(r.itemID))], d.str(r.delta)))
		}
	case TypeReasoningSummaryPartAdd:
		d.ensureCreated(emit)
		emit(protocol.SummaryPartAdded(int(r.summaryIndex)))
	case TypeOutputItemAdded, TypeOutputItemDone:
		if !r.item.OK() {
			return &DecodeError{Event: typ, Offset: ev.Offset, DataOffset: -1, Err: errNoItem}
		}
		item, err := protocol.UnmarshalItem(sc.Bytes(r.item))
		if err != nil {
			return &DecodeError{Event: typ, Offset: ev.Offset, DataOffset: r.itemAt, Err: err}
		}
		d.ensureCreated(emit)
		if typ == TypeOutputItemAdded {
			d.rememberCall(item)
			emit(protocol.Added(item))
		} else {
			switch item.(type) {
			case *protocol.FunctionCall, *protocol.CustomToolCall:
				d.toolCalls = true
			}
			emit(protocol.Done(item))
		}
	case TypeCreated:
		if r.resp.id.OK() && d.responseID == "" {
			d.responseID = string(sc.Bytes(r.resp.id))
		}
		if d.created {
			return nil
		}
		if r.resp.model.Len() > 0 {
			emit(protocol.ServerModel(string(sc.Bytes(r.resp.model))))
		}
		d.ensureCreated(emit)
	case TypeCompleted, TypeIncomplete:
		d.ensureCreated(emit)
		var usage *protocol.TokenUsage
		if r.resp.hasUsage {
			usage = r.resp.usage.tokenUsage()
		}
		done := protocol.Completed(d.eventResponseID(), usage)
		done.FinishReason = d.finishReason(typ)
		d.terminal(done, emit)
	case TypeFailed:
		se := d.upstreamError(r.resp.err)
		if !r.resp.err.present {
			se.Message = "response.failed without error details"
		}
		d.failed(se, d.eventResponseID(), emit)
	case TypeError:
		e := r.topErr
		if r.nested.present {
			// {"type":"error","error":{...}}: fill what the top level lacks.
			if !e.code.OK() {
				e.code = r.nested.code
			}
			if !e.message.OK() {
				e.message = r.nested.message
			}
			if !e.typ.OK() {
				e.typ = r.nested.typ
			}
		}
		se := d.upstreamError(e)
		if !e.message.OK() && !e.code.OK() {
			se.Message = string(data)
		}
		d.failed(se, d.responseID, emit)
	}
	return nil
}

// eventResponseID returns the id of the current event's response object,
// or else the one response.created gave.
func (d *Decoder) eventResponseID() string {
	if id := d.raw.resp.id; id.OK() {
		return string(d.sc.Bytes(id))
	}
	return d.responseID
}

// finishReason returns the finish reason of a response.completed or
// response.incomplete event in the Chat Completions vocabulary (see the
// package documentation).
func (d *Decoder) finishReason(typ string) string {
	if typ == TypeCompleted {
		if d.toolCalls {
			return protocol.FinishToolCalls
		}
		return protocol.FinishStop
	}
	switch reason := d.sc.Bytes(d.raw.resp.incompleteReason); string(reason) {
	case "max_output_tokens":
		return protocol.FinishLength
	case "content_filter":
		return protocol.FinishContentFilter
	default:
		return string(reason)
	}
}

// Finish ends the stream: without a terminal event so far, it emits a
// retryable upstream_truncated failure.
func (d *Decoder) Finish(_ context.Context, emit func(protocol.ResponseEvent)) error {
	if !d.done {
		d.failed(&protocol.StreamError{
			Kind:      protocol.ErrKindTruncated,
			Message:   "stream closed before response.completed",
			Retryable: true,
		}, d.responseID, emit)
	}
	return nil
}

// failed ends the stream with a Failed event carrying responseID (empty
// when the response id is not known).
func (d *Decoder) failed(se *protocol.StreamError, responseID string, emit func(protocol.ResponseEvent)) {
	ev := protocol.Failed(se)
	ev.ResponseID = responseID
	d.terminal(ev, emit)
}

func (d *Decoder) terminal(ev protocol.ResponseEvent, emit func(protocol.ResponseEvent)) {
	d.ensureCreated(emit)
	d.done = true
	d.callIDs = nil
	emit(ev)
}

func (d *Decoder) ensureCreated(emit func(protocol.ResponseEvent)) {
	if !d.created {
		d.created = true
		emit(protocol.Created())
	}
}

func (d *Decoder) rememberCall(item protocol.ResponseItem) {
	if d.opts.SkipToolInputDeltas {
		return
	}
	var id, callID string
	switch it := item.(type) {
	case *protocol.FunctionCall:
		id, callID = it.ID, it.CallID
	case *protocol.CustomToolCall:
		id, callID = it.ID, it.CallID
	default:
		return
	}
	if id == "" || callID == "" {
		return
	}
	if d.callIDs == nil {
		d.callIDs = make(map[string]string)
	}
	d.callIDs[id] = callID
}

// str returns b as a string that aliases the decoder's arena: append-only
// memory that is never written again once handed out, so the strings are
// immutable. A full arena is replaced by a fresh one (the strings keep the
// old one alive), which makes a delta cost no allocation amortised.
func (d *Decoder) str(sp jsonx.Span) string {
	b := d.sc.Bytes(sp)
	if len(b) == 0 {
		return ""
	}
	if cap(d.arena)-len(d.arena) < len(b) {
		d.arena = make([]byte, 0, max(4096, len(b)))
	}
	start := len(d.arena)
	d.arena = append(d.arena, b...)
	return unsafe.String(&d.arena[start], len(b))
}

// DecodeError is the fatal error of responses.decode: an event this package
// interprets is not well-formed JSON of the expected shape (Err is a
// *SyntaxError naming the offset inside the data, also in DataOffset), or
// its output item does not decode (Err is the item's error, DataOffset where
// the item starts). It is the one decode error of the stream packages
// (chatstream.DecodeError and anthropicstream.DecodeError are the same type).
type DecodeError = jsonx.DecodeError

// SyntaxError is a malformed JSON document: Offset is the byte offset inside
// the event's data where reading stopped. Its Error returns "invalid JSON at
// data byte N: MSG".
type SyntaxError = jsonx.SyntaxError

// NotJSONError is the cause of a DecodeError whose data is not JSON at all:
// its first byte cannot start a JSON value (an HTML error page, a log
// line). It quotes the data's first bytes and wraps the *SyntaxError at
// data byte 0; its Error returns e.g. `data line is not JSON: starts with
// "<html><head><tit"…`.
type NotJSONError = jsonx.NotJSONError

var errNoItem = errors.New("no item")

// Retryable failure codes (OpenAI error codes that a retry may fix).
var retryableCodes = map[string]bool{
	"server_error":         true,
	"rate_limit_exceeded":  true,
	"server_is_overloaded": true,
	"slow_down":            true,
}

func (d *Decoder) upstreamError(e rawError) *protocol.StreamError {
	sc := &d.sc
	return newUpstreamError(string(sc.Bytes(e.typ)), string(sc.Bytes(e.code)), string(sc.Bytes(e.message)))
}

func newUpstreamError(typ, code, message string) *protocol.StreamError {
	return &protocol.StreamError{
		Kind:         protocol.ErrKindUpstream,
		Type:         typ,
		Code:         code,
		Message:      message,
		Retryable:    retryableCodes[code],
		RetryAfterMS: retryAfterMS(message),
	}
}

// retryAfterMS extracts the delay of "try again in 125ms" / "try again in
// 2.5s" / "try again in 3 seconds" (case-insensitive), rounded up to whole
// milliseconds; 0 when there is none.
func retryAfterMS(msg string) int64 {
	const marker = "try again in"
	i := indexFold(msg, marker)
	if i < 0 {
		return 0
	}
	s := strings.TrimLeft(msg[i+len(marker):], " ")
	var whole, frac, scale int64 = 0, 0, 1
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' && whole < 1e12 {
		whole = whole*10 + int64(s[n]-'0')
		n++
	}
	if n == 0 {
		return 0
	}
	if n < len(s) && s[n] == '.' {
		n++
		for n < len(s) && s[n] >= '0' && s[n] <= '9' {
			if scale < 1e6 {
				frac = frac*10 + int64(s[n]-'0')
				scale *= 10
			}
			n++
		}
	}
	unit := strings.ToLower(strings.TrimLeft(s[n:], " "))
	switch {
	case strings.HasPrefix(unit, "ms"), strings.HasPrefix(unit, "millisecond"):
		return whole + ceilDiv(frac, scale)
	case strings.HasPrefix(unit, "s"):
		return whole*1000 + ceilDiv(frac*1000, scale)
	}
	return 0
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

func handled(name string) string {
	switch name {
	case TypeCreated, TypeOutputItemAdded, TypeOutputItemDone, TypeOutputTextDelta,
		TypeReasoningSummaryDelta, TypeReasoningTextDelta, TypeReasoningSummaryPartAdd,
		TypeFunctionCallArgsDelta, TypeCustomToolCallInputDelta,
		TypeCompleted, TypeIncomplete, TypeFailed, TypeError:
		return name
	}
	return ""
}

func handledBytes(b []byte) string {
	switch string(b) {
	case TypeOutputTextDelta:
		return TypeOutputTextDelta
	case TypeReasoningSummaryDelta:
		return TypeReasoningSummaryDelta
	case TypeReasoningTextDelta:
		return TypeReasoningTextDelta
	case TypeFunctionCallArgsDelta:
		return TypeFunctionCallArgsDelta
	case TypeCustomToolCallInputDelta:
		return TypeCustomToolCallInputDelta
	case TypeReasoningSummaryPartAdd:
		return TypeReasoningSummaryPartAdd
	case TypeOutputItemAdded:
		return TypeOutputItemAdded
	case TypeOutputItemDone:
		return TypeOutputItemDone
	case TypeCreated:
		return TypeCreated
	case TypeCompleted:
		return TypeCompleted
	case TypeIncomplete:
		return TypeIncomplete
	case TypeFailed:
		return TypeFailed
	case TypeError:
		return TypeError
	}
	return ""
}

// rawEvent is what parsing one event's data found. Its spans locate values
// in the data or the scanner's scratch buffer; it holds no pointers, so
// clearing it per event is a plain memory clear. A repeated key replaces the
// whole earlier value, as with encoding/json and a map.
type rawEvent struct {
	typ, delta, itemID                      jsonx.Span
	outputIndex, contentIndex, summaryIndex int64
	item                                    jsonx.Span // raw JSON
	itemAt                                  int        // where item starts in the data
	resp                                    rawResponse
	topErr                                  rawError // code/message/type of an error event
	nested                                  rawError // its nested "error" object, if any
}

type rawResponse struct {
	id, model        jsonx.Span
	incompleteReason jsonx.Span // incomplete_details.reason
	err              rawError
	usage            rawUsage
	hasUsage         bool
}

type rawError struct {
	code, message, typ jsonx.Span
	present            bool
}

type rawUsage struct {
	input, cached, output, reasoning, total int64
	hasTotal                                bool
}

func (u *rawUsage) tokenUsage() *protocol.TokenUsage {
	t := &protocol.TokenUsage{
		InputTokens:           u.input,
		CachedInputTokens:     u.cached,
		OutputTokens:          u.output,
		ReasoningOutputTokens: u.reasoning,
		TotalTokens:           u.total,
	}
	if !u.hasTotal {
		t.TotalTokens = u.input + u.output
	}
	return t
}

func (d *Decoder) parse(data []byte) bool {
	d.raw = rawEvent{}
	return d.sc.ParseObject(data, d.topMember)
}

func (d *Decoder) topMember(key []byte) bool {
	s, r := &d.sc, &d.raw
	var ok bool
	switch string(key) {
	case "type":
		r.typ, ok = s.StrOrNull()
	case "delta":
		r.delta, ok = s.StrOrNull()
	case "item_id":
		r.itemID, ok = s.StrOrNull()
	case "output_index":
		r.outputIndex, _, ok = s.Int()
	case "content_index":
		r.contentIndex, _, ok = s.Int()
	case "summary_index":
		r.summaryIndex, _, ok = s.Int()
	case "item":
		r.item = jsonx.Span{}
		if isNull, ok := s.Null(); isNull || !ok {
			return ok
		}
		r.itemAt = s.Pos()
		r.item, ok = s.RawSpan()
	case "response":
		r.resp = rawResponse{}
		_, ok = s.ObjectOrNull(d.responseMember)
	case "code":
		r.topErr.code, ok = strOrNumber(s)
	case "message":
		r.topErr.message, ok = s.StrOrNull()
	case "error":
		r.nested, ok = readError(s)
	default:
		ok = s.Skip()
	}
	return ok
}

func (d *Decoder) responseMember(key []byte) bool {
	s, r := &d.sc, &d.raw.resp
	var ok bool
	switch string(key) {
	case "id":
		r.id, ok = s.StrOrNull()
	case "model":
		r.model, ok = s.StrOrNull()
	case "error":
		r.err, ok = readError(s)
	case "usage":
		r.hasUsage, ok = readUsage(s, &r.usage)
	case "incomplete_details":
		r.incompleteReason = jsonx.Span{}
		_, ok = s.ObjectOrNull(d.incompleteMember)
	default:
		ok = s.Skip()
	}
	return ok
}

func (d *Decoder) incompleteMember(key []byte) bool {
	if string(key) != "reason" {
		return d.sc.Skip()
	}
	var ok bool
	d.raw.resp.incompleteReason, ok = d.sc.StrOrNull()
	return ok
}

// readError reads an error object {code, message, type} or null. A plain
// string is taken as the message.
func readError(s *jsonx.Scanner) (rawError, bool) {
	var e rawError
	switch s.Kind() {
	case jsonx.KindNull:
		_, ok := s.Null()
		return e, ok
	case jsonx.KindString:
		e.present = true
		m, ok := s.StrSpan()
		e.message = m
		return e, ok
	}
	e.present = true
	ok := s.Object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "code":
			e.code, ok = strOrNumber(s)
		case "message":
			e.message, ok = s.StrOrNull()
		case "type":
			e.typ, ok = s.StrOrNull()
		default:
			ok = s.Skip()
		}
		return ok
	})
	return e, ok
}

// strOrNumber reads a string, a number (its text) or null (the absent Span).
func strOrNumber(s *jsonx.Scanner) (jsonx.Span, bool) {
	if s.Kind() == jsonx.KindNumber {
		return s.Number()
	}
	return s.StrOrNull()
}

// readUsage reads a usage object into u and reports true, or null (u is
// cleared).
func readUsage(s *jsonx.Scanner, u *rawUsage) (present, ok bool) {
	*u = rawUsage{}
	details := func(field string, dst *int64) bool {
		*dst = 0
		_, ok := s.ObjectOrNull(func(key []byte) bool {
			if string(key) != field {
				return s.Skip()
			}
			v, _, ok := s.Int()
			*dst = v
			return ok
		})
		return ok
	}
	return s.ObjectOrNull(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "input_tokens":
			u.input, _, ok = s.Int()
		case "output_tokens":
			u.output, _, ok = s.Int()
		case "total_tokens":
			u.total, u.hasTotal, ok = s.Int()
		case "input_tokens_details":
			ok = details("cached_tokens", &u.cached)
		case "output_tokens_details":
			ok = details("reasoning_tokens", &u.reasoning)
		default:
			ok = s.Skip()
		}
		return ok
	})
}
