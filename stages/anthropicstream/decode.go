package anthropicstream

import (
	"bytes"
	"context"
	"fmt"
	"math"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/stages/internal/jsonscan"
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
// *DecodeError naming the event's byte offset in the stream — except for an
// event named "error", whose unparsable data becomes the error message.
// Nothing after message_stop or an error event is read.
//
// Content block deltas (the bulk of a stream) are decoded without
// reflection and without allocating; Event.Text then borrows from the SSE
// data or from the decoder's scratch buffer.
type Decoder struct {
	sc   jsonscan.Scanner
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
	data := ev.Data
	if t := jsonscan.TrimSpace(data); len(t) == 0 || string(t) == "[DONE]" {
		// Blank data, or the sentinel some proxies append.
		return nil
	}
	if !d.parseDelta(data) {
		if err := d.parse(data); err != nil {
			if nameType == TypeError {
				// An error event whose payload is not JSON (a proxy's
				// plain-text error) is still an error: its data is the
				// message.
				d.done = true
				emit(Event{Type: TypeError, Offset: ev.Offset, Error: &APIError{Message: string(bytes.TrimSpace(data))}})
				return nil
			}
			return &DecodeError{Event: ev.Type, Offset: ev.Offset, Err: err}
		}
	}
	r, sc := &d.raw, &d.sc
	str := func(sp jsonscan.Span) string { return string(sc.Bytes(sp)) }
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
// a well-formed JSON object of the expected shape.
type DecodeError struct {
	// Event is the SSE event name.
	Event string
	// Offset is the byte offset of the SSE event in the stream.
	Offset int64
	// Err is the cause, a *SyntaxError naming the offset inside the data.
	Err error
}

// Error returns e.g. "content_block_delta event at byte 423: invalid JSON
// at data byte 80: unexpected end of data in string literal".
func (e *DecodeError) Error() string {
	return fmt.Sprintf("%s event at byte %d: %v", e.Event, e.Offset, e.Err)
}

// Unwrap returns the cause.
func (e *DecodeError) Unwrap() error { return e.Err }

// SyntaxError is a malformed JSON document: Offset is the byte offset inside
// the event's data where reading stopped. Its Error returns "invalid JSON at
// data byte N: MSG".
type SyntaxError = jsonscan.SyntaxError

// empty is the non-nil empty Text of a delta whose payload is empty or absent.
var empty = []byte{}

// text returns a delta's payload, non-nil.
func (d *Decoder) text(sp jsonscan.Span) []byte {
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
	typ      jsonscan.Span
	index    int64
	delta    rawDelta // content_block_delta and message_delta
	usage    Usage    // message_delta
	hasUsage bool
	msg      rawMessage // message_start
	block    rawBlock   // content_block_start
	err      rawError
	reqID    jsonscan.Span
}

type rawDelta struct {
	typ, text, thinking, partialJSON, signature, stopReason, stopSequence jsonscan.Span
}

type rawMessage struct {
	id, model, role jsonscan.Span
	usage           Usage
	hasUsage        bool
}

type rawBlock struct {
	typ, id, name, input, text, thinking, signature, data, toolUseID jsonscan.Span
}

type rawError struct {
	typ, message jsonscan.Span
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
		payload, err := s.Str()
		if p := s.Pos(); err != nil || len(data)-p != 2 || data[p] != '}' || data[p+1] != '}' {
			return false
		}
		d.raw = rawEvent{
			typ:   jsonscan.DataSpan(9, len("content_block_delta")),
			index: index,
		}
		d.raw.delta.typ = jsonscan.DataSpan(i, len(l.typ))
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
func (d *Decoder) parse(data []byte) error {
	d.raw = rawEvent{}
	return d.sc.ParseObject(data, d.topMember)
}

func (d *Decoder) topMember(key []byte) error {
	s, r := &d.sc, &d.raw
	var err error
	switch string(key) {
	case "type":
		r.typ, err = s.StrOrNull()
	case "index":
		r.index, _, err = s.Int()
	case "delta":
		r.delta = rawDelta{}
		_, err = s.ObjectOrNull(d.deltaMember)
	case "usage":
		r.hasUsage, err = readUsage(s, &r.usage)
	case "message":
		r.msg = rawMessage{}
		_, err = s.ObjectOrNull(d.messageMember)
	case "content_block":
		r.block = rawBlock{}
		_, err = s.ObjectOrNull(d.blockMember)
	case "error":
		r.err = rawError{}
		switch s.Peek() {
		case 'n':
			_, err = s.Null()
		case '"':
			r.err.present = true
			r.err.message, err = s.Str()
		default:
			r.err.present = true
			err = s.Object(d.errorMember)
		}
	case "request_id":
		r.reqID, err = s.StrOrNull()
	default:
		err = s.Skip()
	}
	return err
}

func (d *Decoder) deltaMember(key []byte) error {
	s, r := &d.sc, &d.raw.delta
	var err error
	switch string(key) {
	case "type":
		r.typ, err = s.StrOrNull()
	case "text":
		r.text, err = s.StrOrNull()
	case "thinking":
		r.thinking, err = s.StrOrNull()
	case "partial_json":
		r.partialJSON, err = s.StrOrNull()
	case "signature":
		r.signature, err = s.StrOrNull()
	case "stop_reason":
		r.stopReason, err = s.StrOrNull()
	case "stop_sequence":
		r.stopSequence, err = s.StrOrNull()
	default:
		err = s.Skip()
	}
	return err
}

func (d *Decoder) messageMember(key []byte) error {
	s, r := &d.sc, &d.raw.msg
	var err error
	switch string(key) {
	case "id":
		r.id, err = s.StrOrNull()
	case "model":
		r.model, err = s.StrOrNull()
	case "role":
		r.role, err = s.StrOrNull()
	case "usage":
		r.hasUsage, err = readUsage(s, &r.usage)
	default:
		err = s.Skip()
	}
	return err
}

func (d *Decoder) blockMember(key []byte) error {
	s, r := &d.sc, &d.raw.block
	var err error
	switch string(key) {
	case "type":
		r.typ, err = s.StrOrNull()
	case "id":
		r.id, err = s.StrOrNull()
	case "name":
		r.name, err = s.StrOrNull()
	case "input":
		r.input, err = s.Raw()
	case "text":
		r.text, err = s.StrOrNull()
	case "thinking":
		r.thinking, err = s.StrOrNull()
	case "signature":
		r.signature, err = s.StrOrNull()
	case "data":
		r.data, err = s.StrOrNull()
	case "tool_use_id":
		r.toolUseID, err = s.StrOrNull()
	default:
		err = s.Skip()
	}
	return err
}

func (d *Decoder) errorMember(key []byte) error {
	s, r := &d.sc, &d.raw.err
	var err error
	switch string(key) {
	case "type":
		r.typ, err = s.StrOrNull()
	case "message":
		r.message, err = s.StrOrNull()
	default:
		err = s.Skip()
	}
	return err
}

// readUsage reads a usage object into u and reports true, or null (u is
// cleared). Null fields are absent. A repeated key replaces the earlier
// value.
func readUsage(s *jsonscan.Scanner, u *Usage) (bool, error) {
	*u = Usage{}
	return s.ObjectOrNull(func(key []byte) error {
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
			_, err := s.ObjectOrNull(func(key []byte) error {
				if string(key) != "reasoning_tokens" {
					return s.Skip()
				}
				v, ok, err := s.Int()
				u.ReasoningTokens, u.Present = v, u.Present&^UsageReasoning
				if ok {
					u.Present |= UsageReasoning
				}
				return err
			})
			return err
		default:
			return s.Skip()
		}
		v, ok, err := s.Int()
		*dst, u.Present = v, u.Present&^bit
		if ok {
			u.Present |= bit
		}
		return err
	})
}
