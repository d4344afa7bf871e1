package anthropicstream

import (
	"bytes"
	"context"
	"math"

	"github.com/harnessflow/harnessflow/internal/jsonx"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/stages/sse"
)

// Decoder is the anthropic.decode stage: it turns SSE events into Events.
// It implements pipeline.Stage[sse.Event, Event] and holds per-stream
// scratch memory, so it is not safe for concurrent use.
//
// The event kind comes from the JSON "type" when it names a known event,
// else from the SSE event name. Events whose SSE name is neither a Messages
// event nor the default "message" are ignored unread, as are events with a
// JSON type this package does not know, events whose data is empty or
// whitespace, and a "[DONE]" sentinel some proxies append. The data of every
// other event must be one JSON object: anything else is a fatal
// *DecodeError naming the event's byte offset in the stream (and, for data
// that is not JSON at all, such as an HTML page, quoting how it starts) —
// except for an event named "error", whose unparsable data becomes the
// error message.
// Nothing after message_stop or an error event is read.
//
// Content block deltas (the bulk of a stream) are decoded without
// reflection and without allocating; Event.Text then borrows from the SSE
// data or from the decoder's scratch buffer.
type Decoder struct {
	sc   jsonx.Scanner
	raw  rawEvent
	done bool // message_stop or error passed on: the rest is ignored
}

// NewDecoder returns an anthropic.decode stage.
func NewDecoder() *Decoder { return &Decoder{} }

var _ pipeline.Stage[sse.Event, Event] = (*Decoder)(nil)

// Push decodes one SSE event and emits at most one Event.
func (d *Decoder) Push(_ context.Context, ev sse.Event, emit func(Event)) error {
	if d.done {
		return nil
	}
	if ev.Truncated {
		emit(Event{Type: TypeEndOfStream, Offset: ev.Offset, Truncated: true})
		return nil
	}
	nameType, ok := knownEvent(ev.Type)
	if !ok && ev.Type != "message" {
		return nil
	}
	// Surrounding whitespace is not part of the document: offsets inside
	// the data count from its first non-blank byte, as in chat.decode.
	data := jsonx.TrimSpace(ev.Data)
	if jsonx.NoData(data) {
		return nil
	}
	if !d.parseDelta(data) {
		if !d.parse(data) {
			if nameType == TypeError {
				// An error event whose payload is not JSON (a proxy's
				// plain-text error) is still an error: its data is the
				// message.
				d.done = true
				emit(Event{Type: TypeError, Offset: ev.Offset, Error: &APIError{Message: string(bytes.TrimSpace(data))}})
				return nil
			}
			return jsonx.NewDecodeError(ev.Type, ev.Offset, jsonx.NotJSONLine(data, d.sc.Check(false)))
		}
	}
	r, sc := &d.raw, &d.sc
	str := func(sp jsonx.Span) string { return string(sc.Bytes(sp)) }
	typ, ok := knownEventBytes(sc.Bytes(r.typ))
	if !ok {
		if nameType == "" {
			// An unnamed event whose JSON type is unknown (a newer event)
			// or absent: nothing to interpret.
			return nil
		}
		typ = nameType
	}
	out := Event{Type: typ, Offset: ev.Offset}
	switch typ {
	case TypeContentBlockDelta:
		out.Index = clampIndex(r.index)
		out.Delta = deltaType(sc.Bytes(r.delta.typ))
		switch out.Delta {
		case DeltaText:
			out.Text = d.text(r.delta.text)
		case DeltaThinking:
			out.Text = d.text(r.delta.thinking)
		case DeltaInputJSON:
			out.Text = d.text(r.delta.partialJSON)
		case DeltaSignature:
			out.Text = d.text(r.delta.signature)
		}
	case TypeMessageStart:
		out.Message = &MessageInfo{ID: str(r.msg.id), Model: str(r.msg.model), Role: str(r.msg.role)}
		if r.msg.hasUsage {
			u := r.msg.usage
			out.Usage = &u
		}
	case TypeContentBlockStart:
		out.Index = clampIndex(r.index)
		b := &Block{
			Type:      str(r.block.typ),
			ID:        str(r.block.id),
			Name:      str(r.block.name),
			Text:      str(r.block.text),
			Thinking:  str(r.block.thinking),
			Signature: str(r.block.signature),
			Data:      str(r.block.data),
			ToolUseID: str(r.block.toolUseID),
		}
		if r.block.input.OK() {
			b.Input = append([]byte(nil), sc.Bytes(r.block.input)...)
		}
		out.Block = b
	case TypeContentBlockStop:
		out.Index = clampIndex(r.index)
	case TypeMessageDelta:
		out.StopReason = stopReason(sc.Bytes(r.delta.stopReason))
		out.StopSequence = str(r.delta.stopSequence)
		if r.hasUsage {
			u := r.usage
			out.Usage = &u
		}
	case TypeError:
		e := &APIError{Type: str(r.err.typ), Message: str(r.err.message), RequestID: str(r.reqID)}
		if !r.err.present {
			e.Message = string(data)
		}
		out.Error = e
	}
	if typ == TypeMessageStop || typ == TypeError {
		// The stream is over: whatever follows cannot change the result,
		// so it is not read (and cannot fail the run after its end).
		d.done = true
	}
	emit(out)
	return nil
}

// DecodeError is the fatal error of anthropic.decode: an event's data is not
// a well-formed JSON object of the expected shape. Err is a *SyntaxError
// naming the offset inside the data (also in DataOffset). It is the one
// decode error of the stream packages (chatstream.DecodeError and
// responsesstream.DecodeError are the same type).
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

// empty is the non-nil empty Text of a delta whose payload is empty or absent.
var empty = []byte{}

// text returns a delta's payload, non-nil.
func (d *Decoder) text(sp jsonx.Span) []byte {
	if !sp.OK() {
		return empty
	}
	return d.sc.Bytes(sp)
}

func clampIndex(v int64) int {
	if v < math.MinInt || v > math.MaxInt {
		return -1
	}
	return int(v)
}

func knownEvent(name string) (EventType, bool) {
	switch EventType(name) {
	case TypeMessageStart, TypeContentBlockStart, TypeContentBlockDelta, TypeContentBlockStop,
		TypeMessageDelta, TypeMessageStop, TypePing, TypeError:
		return EventType(name), true
	}
	return "", false
}

func knownEventBytes(b []byte) (EventType, bool) {
	switch string(b) {
	case "content_block_delta":
		return TypeContentBlockDelta, true
	case "message_start":
		return TypeMessageStart, true
	case "content_block_start":
		return TypeContentBlockStart, true
	case "content_block_stop":
		return TypeContentBlockStop, true
	case "message_delta":
		return TypeMessageDelta, true
	case "message_stop":
		return TypeMessageStop, true
	case "ping":
		return TypePing, true
	case "error":
		return TypeError, true
	}
	return "", false
}

func deltaType(b []byte) DeltaType {
	switch string(b) {
	case "text_delta":
		return DeltaText
	case "thinking_delta":
		return DeltaThinking
	case "input_json_delta":
		return DeltaInputJSON
	case "signature_delta":
		return DeltaSignature
	case "citations_delta":
		return DeltaCitations
	}
	return DeltaType(b)
}

func stopReason(b []byte) string {
	switch string(b) {
	case "":
		return ""
	case "end_turn":
		return "end_turn"
	case "tool_use":
		return "tool_use"
	case "max_tokens":
		return "max_tokens"
	case "stop_sequence":
		return "stop_sequence"
	case "pause_turn":
		return "pause_turn"
	case "refusal":
		return "refusal"
	}
	return string(b)
}

// rawEvent is what parsing one event's data found. Its spans locate values
// in the data or the scanner's scratch buffer; it holds no pointers, so
// clearing it per event is a plain memory clear. A repeated key replaces the
// whole earlier value, as with encoding/json and a map.
type rawEvent struct {
	typ      jsonx.Span
	index    int64
	delta    rawDelta // content_block_delta and message_delta
	usage    Usage    // message_delta
	hasUsage bool
	msg      rawMessage // message_start
	block    rawBlock   // content_block_start
	err      rawError
	reqID    jsonx.Span
}

type rawDelta struct {
	typ, text, thinking, partialJSON, signature, stopReason, stopSequence jsonx.Span
}

type rawMessage struct {
	id, model, role jsonx.Span
	usage           Usage
	hasUsage        bool
}

type rawBlock struct {
	typ, id, name, input, text, thinking, signature, data, toolUseID jsonx.Span
}

type rawError struct {
	typ, message jsonx.Span
	present      bool
}

// Canonical layout of a content block delta, as Anthropic sends it.
const (
	deltaPrefix = `{"type":"content_block_delta","index":`
	deltaMid    = `,"delta":{"type":"`
)

// deltaLayouts are the canonical middles of the hot deltas: the delta type,
// then the key of its payload, up to the payload's opening quote.
var deltaLayouts = [...]struct{ typ, key string }{
	{"text_delta", `","text":`},
	{"thinking_delta", `","thinking":`},
	{"input_json_delta", `","partial_json":`},
	{"signature_delta", `","signature":`},
}

// parseDelta is the fast path for the bulk of a stream: a content block
// delta in exactly the canonical layout
// {"type":"content_block_delta","index":N,"delta":{"type":"T","K":"..."}}.
// It fills d.raw as parse would and reports true, or reports false as soon
// as the data deviates in any way (whitespace, key order, extra keys, a
// malformed string), leaving the data to parse.
func (d *Decoder) parseDelta(data []byte) bool {
	if len(data) < len(deltaPrefix) || string(data[:len(deltaPrefix)]) != deltaPrefix {
		return false
	}
	i := len(deltaPrefix)
	start := i
	var index int64
	for i < len(data) && i-start < 9 && data[i] >= '0' && data[i] <= '9' {
		index = index*10 + int64(data[i]-'0')
		i++
	}
	if i == start || (data[start] == '0' && i-start > 1) {
		return false
	}
	if len(data)-i < len(deltaMid) || string(data[i:i+len(deltaMid)]) != deltaMid {
		return false
	}
	i += len(deltaMid)
	if i+1 >= len(data) {
		return false
	}
	var k int
	switch data[i] {
	case 't':
		if data[i+1] == 'h' {
			k = 1
		}
	case 'i':
		k = 2
	case 's':
		k = 3
	default:
		return false
	}
	{
		l := deltaLayouts[k]
		end := i + len(l.typ) + len(l.key)
		if end > len(data) || string(data[i:i+len(l.typ)]) != l.typ || string(data[i+len(l.typ):end]) != l.key {
			return false
		}
		s := &d.sc
		s.Reset(data)
		s.Seek(end)
		payload, ok := s.StrSpan()
		if p := s.Pos(); !ok || len(data)-p != 2 || data[p] != '}' || data[p+1] != '}' {
			return false
		}
		d.raw = rawEvent{
			typ:   jsonx.DataSpan(9, len("content_block_delta")),
			index: index,
		}
		d.raw.delta.typ = jsonx.DataSpan(i, len(l.typ))
		switch k {
		case 0:
			d.raw.delta.text = payload
		case 1:
			d.raw.delta.thinking = payload
		case 2:
			d.raw.delta.partialJSON = payload
		case 3:
			d.raw.delta.signature = payload
		}
		return true
	}
}

// parse reads one event's data into d.raw.
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
	case "index":
		r.index, _, ok = s.Int()
	case "delta":
		r.delta = rawDelta{}
		_, ok = s.ObjectOrNull(d.deltaMember)
	case "usage":
		r.hasUsage, ok = readUsage(s, &r.usage)
	case "message":
		r.msg = rawMessage{}
		_, ok = s.ObjectOrNull(d.messageMember)
	case "content_block":
		r.block = rawBlock{}
		_, ok = s.ObjectOrNull(d.blockMember)
	case "error":
		r.err = rawError{}
		switch s.Kind() {
		case jsonx.KindNull:
			_, ok = s.Null()
		case jsonx.KindString:
			r.err.present = true
			r.err.message, ok = s.StrSpan()
		default:
			r.err.present = true
			ok = s.Object(d.errorMember)
		}
	case "request_id":
		r.reqID, ok = s.StrOrNull()
	default:
		ok = s.Skip()
	}
	return ok
}

func (d *Decoder) deltaMember(key []byte) bool {
	s, r := &d.sc, &d.raw.delta
	var dst *jsonx.Span
	switch string(key) {
	case "type":
		dst = &r.typ
	case "text":
		dst = &r.text
	case "thinking":
		dst = &r.thinking
	case "partial_json":
		dst = &r.partialJSON
	case "signature":
		dst = &r.signature
	case "stop_reason":
		dst = &r.stopReason
	case "stop_sequence":
		dst = &r.stopSequence
	default:
		return s.Skip()
	}
	var ok bool
	*dst, ok = s.StrOrNull()
	return ok
}

func (d *Decoder) messageMember(key []byte) bool {
	s, r := &d.sc, &d.raw.msg
	var ok bool
	switch string(key) {
	case "id":
		r.id, ok = s.StrOrNull()
	case "model":
		r.model, ok = s.StrOrNull()
	case "role":
		r.role, ok = s.StrOrNull()
	case "usage":
		r.hasUsage, ok = readUsage(s, &r.usage)
	default:
		ok = s.Skip()
	}
	return ok
}

func (d *Decoder) blockMember(key []byte) bool {
	s, r := &d.sc, &d.raw.block
	var dst *jsonx.Span
	switch string(key) {
	case "input":
		var ok bool
		r.input, ok = s.RawSpan()
		return ok
	case "type":
		dst = &r.typ
	case "id":
		dst = &r.id
	case "name":
		dst = &r.name
	case "text":
		dst = &r.text
	case "thinking":
		dst = &r.thinking
	case "signature":
		dst = &r.signature
	case "data":
		dst = &r.data
	case "tool_use_id":
		dst = &r.toolUseID
	default:
		return s.Skip()
	}
	var ok bool
	*dst, ok = s.StrOrNull()
	return ok
}

func (d *Decoder) errorMember(key []byte) bool {
	s, r := &d.sc, &d.raw.err
	var ok bool
	switch string(key) {
	case "type":
		r.typ, ok = s.StrOrNull()
	case "message":
		r.message, ok = s.StrOrNull()
	default:
		ok = s.Skip()
	}
	return ok
}

// readUsage reads a usage object into u and reports true, or null (u is
// cleared). Null fields are absent. A repeated key replaces the earlier
// value.
func readUsage(s *jsonx.Scanner, u *Usage) (present, ok bool) {
	*u = Usage{}
	return s.ObjectOrNull(func(key []byte) bool {
		var (
			bit UsageField
			dst *int64
		)
		switch string(key) {
		case "input_tokens":
			bit, dst = UsageInput, &u.InputTokens
		case "cache_creation_input_tokens":
			bit, dst = UsageCacheCreation, &u.CacheCreationInputTokens
		case "cache_read_input_tokens":
			bit, dst = UsageCacheRead, &u.CacheReadInputTokens
		case "output_tokens":
			bit, dst = UsageOutput, &u.OutputTokens
		case "output_tokens_details":
			u.ReasoningTokens, u.Present = 0, u.Present&^UsageReasoning
			_, ok := s.ObjectOrNull(func(key []byte) bool {
				if string(key) != "reasoning_tokens" {
					return s.Skip()
				}
				v, present, ok := s.Int()
				u.ReasoningTokens, u.Present = v, u.Present&^UsageReasoning
				if present {
					u.Present |= UsageReasoning
				}
				return ok
			})
			return ok
		default:
			return s.Skip()
		}
		v, present, ok := s.Int()
		*dst, u.Present = v, u.Present&^bit
		if present {
			u.Present |= bit
		}
		return ok
	})
}
