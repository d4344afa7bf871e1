package sse

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/harnessflow/harnessflow/pipeline"
)

// Name is the stage name of the SSE decoder in response graphs. It is a
// public insertion point: graphs are edited by this name.
const Name = "sse.decode"

// DefaultMaxEventBytes is the limit used when Options.MaxEventBytes is not
// positive: 32 MiB, the same cap as openai-go and anthropic-sdk-go.
const DefaultMaxEventBytes = 32 << 20

// retainBytes is the largest buffer capacity the decoder keeps for reuse after
// an event or line; larger buffers are released so that one huge event does
// not pin memory for the rest of a long-lived stream.
const retainBytes = 64 << 10

// maxInterned bounds the per-decoder cache of event type strings, so that a
// stream with ever-changing types cannot grow it without bound.
const maxInterned = 64

var bom = [3]byte{0xEF, 0xBB, 0xBF}

// noData is the non-nil empty Data of an event whose data is empty.
var noData = []byte{}

// ErrTooLarge is matched (with errors.Is) by the error returned when a line
// or an event's data exceeds Options.MaxEventBytes.
var ErrTooLarge = errors.New("sse: event too large")

// ErrPushAfterFinish is returned by Push when it is called after Finish
// without an intervening Reset.
var ErrPushAfterFinish = errors.New("sse: Push called after Finish; call Reset to reuse the Decoder")

// TooLargeError reports a line or an event's data longer than the configured
// limit. It is fatal: the stream cannot be resynchronised safely.
type TooLargeError struct {
	// Offset is the byte offset in the stream (counting a leading BOM) where
	// the offending event started, or where the offending line started if it
	// is not part of an event (a comment).
	Offset int64
	// Limit is the configured Options.MaxEventBytes.
	Limit int
}

// Error returns "sse: event starting at byte N exceeds LIMIT bytes".
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("sse: event starting at byte %d exceeds %d bytes", e.Offset, e.Limit)
}

// Is reports whether target is ErrTooLarge.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// Options configures a Decoder. The zero value is ready to use.
type Options struct {
	// MaxEventBytes caps the length of any single line (without its line
	// ending) and of the joined data of one event. Zero or negative means
	// DefaultMaxEventBytes.
	MaxEventBytes int
}

// Event is one dispatched Server-Sent Event, or the end-of-stream truncation
// marker (Truncated set).
//
// Data and ID are borrowed: they may alias the chunk passed to Push or the
// decoder's internal buffers, are valid only during the emit call, and must
// not be modified. Use Own for a copy that may be retained.
type Event struct {
	// Type is the value of the last non-empty event field, or "message".
	// It is empty only on the truncation marker. Always safe to retain.
	Type string
	// Data is the event's data lines joined with "\n" (no trailing newline).
	// It is non-nil (possibly empty) for every dispatched event and nil on the
	// truncation marker. Borrowed.
	Data []byte
	// ID is the last event ID in effect at dispatch (it persists across
	// events until changed); nil when none is set. Borrowed.
	ID []byte
	// Retry is the reconnection time from the latest valid retry field seen
	// so far in the stream; meaningful only if RetrySet.
	Retry time.Duration
	// RetrySet reports whether the stream has set a reconnection time.
	RetrySet bool
	// Offset is the byte offset in the stream (a leading BOM counts) of the
	// first non-comment line of the event; for the truncation marker, of the
	// unfinished event, or else of the unterminated last line.
	Offset int64
	// Truncated marks the final marker emitted by Finish when the stream ended
	// in the middle of an event or line. Such an event carries no data.
	Truncated bool
}

// Own returns a deep copy of e whose Data and ID do not alias any memory
// owned by the decoder or the caller, so it may be retained and sent to other
// goroutines. It makes at most one allocation.
func (e Event) Own() Event {
	n := len(e.Data) + len(e.ID)
	if n == 0 {
		// Keep nil-ness (nil Data marks the truncation marker) without allocating.
		if e.Data != nil {
			e.Data = []byte{}
		}
		e.ID = nil
		return e
	}
	buf := make([]byte, n)
	nd := copy(buf, e.Data)
	copy(buf[nd:], e.ID)
	if e.Data != nil {
		e.Data = buf[:nd:nd]
	}
	if len(e.ID) > 0 {
		e.ID = buf[nd:n:n]
	} else {
		e.ID = nil
	}
	return e
}

// Decoder is the sse.decode stage: it implements pipeline.Stage[[]byte, Event]
// and pipeline.Finisher[Event]. It holds per-stream state, is not safe for
// concurrent use, and can be reused for another stream after Reset.
type Decoder struct {
	max int
	err error // sticky fatal error

	off      int64 // stream offset of the first byte of the next chunk
	bomN     int   // BOM bytes matched so far at stream start
	bomDone  bool  // BOM check finished
	skipLF   bool  // the previous line ended with CR: drop one LF that follows
	finished bool

	// line holds an unterminated line carried over between chunks; pending
	// iff non-empty. lineStart is its stream offset.
	line      []byte
	lineStart int64

	// The event under construction.
	evStart   int64 // offset of its first non-comment line; -1 if none yet
	typ       string
	dataMode  uint8  // dataNone, dataAlias or dataOwned
	alias     []byte // dataAlias: the single data value, inside the current chunk
	data      []byte // dataOwned: data is data[dataStart:]
	dataStart int

	id       []byte
	retry    time.Duration
	retrySet bool

	types     []string // interned event types
	lastType  int
	truncated bool
}

const (
	dataNone  uint8 = iota // no data line yet
	dataAlias              // one data line, aliasing the current chunk
	dataOwned              // data copied into d.data
)

// New returns a Decoder configured by opts.
func New(opts Options) *Decoder {
	d := &Decoder{max: opts.MaxEventBytes}
	if d.max <= 0 {
		d.max = DefaultMaxEventBytes
	}
	d.evStart = -1
	return d
}

// NewStage returns a fresh Decoder with default options as a pipeline stage;
// it also implements pipeline.Finisher[Event]. It fits graph factories.
func NewStage() pipeline.Stage[[]byte, Event] { return New(Options{}) }

// StageFactory returns a factory that creates a fresh Decoder configured by
// opts on every call, for graphs that need non-default options.
func StageFactory(opts Options) func() pipeline.Stage[[]byte, Event] {
	return func() pipeline.Stage[[]byte, Event] { return New(opts) }
}

// Node returns the decoder as the graph node Name. The decoder copies what
// it keeps of a chunk (an unterminated line), so the node is marked
// pipeline.KeepsNoInput: a fused run's source may reuse its read buffer.
func Node(opts Options) pipeline.Node {
	return pipeline.NewNode(Name, StageFactory(opts),
		pipeline.Describe("bytes → Server-Sent Events"), pipeline.KeepsNoInput())
}

// Interface guards.
var (
	_ pipeline.Stage[[]byte, Event] = (*Decoder)(nil)
	_ pipeline.Finisher[Event]      = (*Decoder)(nil)
)

// Reset clears all stream state so d can decode a new stream, keeping its
// options and reusable buffers.
func (d *Decoder) Reset() {
	*d = Decoder{
		max:     d.max,
		evStart: -1,
		line:    d.line[:0],
		data:    d.data[:0],
		id:      d.id[:0],
		types:   d.types,
	}
}

// Truncated reports whether the stream ended in the middle of an event or a
// line, so that an event was not dispatched. It is valid after Finish; before
// Finish it returns false.
func (d *Decoder) Truncated() bool { return d.truncated }

// Push decodes the next chunk of the stream and emits every event completed by
// it. chunk may be of any size, including empty, and may be reused by the
// caller after Push returns. Emitted events borrow memory (see Event). Push
// does not block and ignores ctx. After an error every later call returns it.
func (d *Decoder) Push(_ context.Context, chunk []byte, emit func(Event)) error {
	if d.err != nil {
		return d.err
	}
	if d.finished {
		return ErrPushAfterFinish
	}
	base := d.off
	d.off += int64(len(chunk))
	n := len(chunk)
	pos := 0
	if !d.bomDone {
		pos = d.consumeBOM(chunk)
	}
	if d.skipLF && pos < n {
		if chunk[pos] == '\n' {
			pos++
		}
		d.skipLF = false
	}
	// nl and cr cache the next LF and CR at or after pos (n: none), so every
	// byte is scanned at most once for each, even in lone-CR streams.
	nl, cr := -1, -1
	for pos < n {
		if nl < pos {
			if j := bytes.IndexByte(chunk[pos:], '\n'); j >= 0 {
				nl = pos + j
			} else {
				nl = n
			}
		}
		if cr < pos {
			if j := bytes.IndexByte(chunk[pos:], '\r'); j >= 0 {
				cr = pos + j
			} else {
				cr = n
			}
		}
		end := min(nl, cr)
		if end == n {
			// Unterminated line: keep it for the next chunk.
			if len(d.line) == 0 {
				d.lineStart = base + int64(pos)
			}
			if len(d.line)+n-pos > d.max {
				return d.fail(d.lineStart)
			}
			d.line = append(d.line, chunk[pos:]...)
			break
		}
		next := end + 1
		if end == cr {
			if next < n {
				if chunk[next] == '\n' {
					next++
				}
			} else {
				d.skipLF = true
			}
		}
		var err error
		if len(d.line) > 0 {
			if len(d.line)+end-pos > d.max {
				return d.fail(d.lineStart)
			}
			d.line = append(d.line, chunk[pos:end]...)
			err = d.line1(d.line, d.lineStart, false, emit)
			d.line = d.line[:0]
			if cap(d.line) > retainBytes {
				d.line = nil
			}
		} else {
			if end-pos > d.max {
				return d.fail(base + int64(pos))
			}
			err = d.line1(chunk[pos:end], base+int64(pos), true, emit)
		}
		if err != nil {
			d.err = err
			return err
		}
		pos = next
	}
	if d.dataMode == dataAlias {
		// The chunk may be reused after Push returns: take a copy.
		d.data = append(d.data[:0], d.alias...)
		d.dataStart = 0
		d.alias = nil
		d.dataMode = dataOwned
	}
	return nil
}

// consumeBOM matches the leading BOM, possibly across chunks, and returns the
// number of bytes of chunk it consumed. On a mismatch the bytes matched so far
// are ordinary line content.
func (d *Decoder) consumeBOM(chunk []byte) int {
	i := 0
	for i < len(chunk) && !d.bomDone {
		if chunk[i] == bom[d.bomN] {
			d.bomN++
			i++
			d.bomDone = d.bomN == len(bom)
			continue
		}
		d.bomDone = true
		if d.bomN > 0 {
			d.line = append(d.line, bom[:d.bomN]...)
			d.lineStart = 0
		}
	}
	return i
}

// fail records and returns a TooLargeError for the current event, or for the
// line starting at lineStart if no event has started.
func (d *Decoder) fail(lineStart int64) error {
	off := d.evStart
	if off < 0 {
		off = lineStart
	}
	d.err = &TooLargeError{Offset: off, Limit: d.max}
	return d.err
}

// line1 interprets one complete line (without its ending) that started at
// stream offset start. inChunk reports whether line aliases the current chunk;
// otherwise it is d.line.
func (d *Decoder) line1(line []byte, start int64, inChunk bool, emit func(Event)) error {
	if len(line) == 0 {
		d.dispatch(emit)
		return nil
	}
	if line[0] == ':' {
		return nil
	}
	if d.evStart < 0 {
		d.evStart = start
	}
	if len(line) >= 5 && line[4] == ':' && string(line[:4]) == "data" {
		// Fast path for the line that carries nearly every byte of LLM streams.
		value := line[5:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		return d.appendData(value, inChunk)
	}
	var field, value []byte
	if c := bytes.IndexByte(line, ':'); c >= 0 {
		field, value = line[:c], line[c+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	} else {
		field, value = line, line[len(line):]
	}
	switch string(field) {
	case "data":
		return d.appendData(value, inChunk)
	case "event":
		d.typ = d.intern(value)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			d.id = append(d.id[:0], value...)
		}
	case "retry":
		if ms, ok := parseDigits(value); ok {
			d.retry = time.Duration(ms) * time.Millisecond
			d.retrySet = true
		}
	}
	return nil
}

// appendData adds one data value to the event under construction. value is a
// suffix of the line, which aliases the chunk (inChunk) or is d.line.
func (d *Decoder) appendData(value []byte, inChunk bool) error {
	switch d.dataMode {
	case dataNone:
		if inChunk {
			d.alias = value
			d.dataMode = dataAlias
			return nil
		}
		// value is the tail of d.line: adopt that buffer instead of copying.
		d.data, d.line = d.line, d.data[:0]
		d.dataStart = len(d.data) - len(value)
		d.dataMode = dataOwned
		return nil
	case dataAlias:
		if len(d.alias)+1+len(value) > d.max {
			return d.fail(d.evStart)
		}
		d.data = append(d.data[:0], d.alias...)
		d.dataStart = 0
		d.alias = nil
		d.dataMode = dataOwned
	default:
		if len(d.data)-d.dataStart+1+len(value) > d.max {
			return d.fail(d.evStart)
		}
	}
	d.data = append(d.data, '\n')
	d.data = append(d.data, value...)
	return nil
}

// dispatch handles a blank line: it emits the event under construction if it
// has data, then resets the per-event state (the ID persists).
func (d *Decoder) dispatch(emit func(Event)) {
	if d.dataMode != dataNone {
		ev := Event{
			Type:     d.typ,
			Retry:    d.retry,
			RetrySet: d.retrySet,
			Offset:   d.evStart,
		}
		if ev.Type == "" {
			ev.Type = "message"
		}
		if d.dataMode == dataAlias {
			ev.Data = d.alias
		} else {
			ev.Data = d.data[d.dataStart:]
		}
		if ev.Data == nil {
			ev.Data = noData // dispatched events always have non-nil Data
		}
		if len(d.id) > 0 {
			ev.ID = d.id
		}
		emit(ev)
		d.alias = nil
		d.data = d.data[:0]
		if cap(d.data) > retainBytes {
			d.data = nil
		}
		d.dataMode = dataNone
	}
	d.typ = ""
	d.evStart = -1
}

// Finish ends the stream. A pending event or unterminated line is not
// dispatched; instead Finish emits one marker Event with Truncated set and
// Truncated reports true. Calling Finish again has no effect.
func (d *Decoder) Finish(_ context.Context, emit func(Event)) error {
	if d.err != nil {
		return d.err
	}
	if d.finished {
		return nil
	}
	d.finished = true
	if !d.bomDone && d.bomN > d.max {
		// The stream ended inside what could have been a BOM: those bytes
		// are an unterminated line, held to the same limit as any other.
		return d.fail(0)
	}
	partial := len(d.line) > 0 || (!d.bomDone && d.bomN > 0)
	if !partial && d.evStart < 0 {
		return nil
	}
	d.truncated = true
	ev := Event{
		Retry:     d.retry,
		RetrySet:  d.retrySet,
		Offset:    d.evStart,
		Truncated: true,
	}
	if ev.Offset < 0 {
		ev.Offset = d.lineStart // 0 for a partial BOM
	}
	if len(d.id) > 0 {
		ev.ID = d.id
	}
	emit(ev)
	return nil
}

// parseDigits parses a non-empty all-ASCII-digit value as milliseconds,
// saturating at the largest value a time.Duration can hold.
func parseDigits(v []byte) (int64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	const limit = math.MaxInt64 / int64(time.Millisecond)
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		if n <= limit {
			n = n*10 + int64(c-'0')
		}
	}
	return min(n, limit), true
}

// intern returns v as a string without allocating for well-known LLM event
// types and for types this decoder has seen before.
func (d *Decoder) intern(v []byte) string {
	if len(v) == 0 {
		return ""
	}
	if s := knownType(v); s != "" {
		return s
	}
	if d.lastType < len(d.types) && d.types[d.lastType] == string(v) {
		return d.types[d.lastType]
	}
	for i, s := range d.types {
		if s == string(v) {
			d.lastType = i
			return s
		}
	}
	s := string(v)
	if len(d.types) < maxInterned {
		d.lastType = len(d.types)
		d.types = append(d.types, s)
	}
	return s
}

// knownType maps the event types of the Anthropic Messages and OpenAI
// Responses streams to constant strings (the switch does not allocate).
func knownType(v []byte) string {
	switch string(v) {
	case "message":
		return "message"
	case "error":
		return "error"
	case "ping":
		return "ping"
	case "message_start":
		return "message_start"
	case "message_delta":
		return "message_delta"
	case "message_stop":
		return "message_stop"
	case "content_block_start":
		return "content_block_start"
	case "content_block_delta":
		return "content_block_delta"
	case "content_block_stop":
		return "content_block_stop"
	case "response.created":
		return "response.created"
	case "response.in_progress":
		return "response.in_progress"
	case "response.queued":
		return "response.queued"
	case "response.completed":
		return "response.completed"
	case "response.failed":
		return "response.failed"
	case "response.incomplete":
		return "response.incomplete"
	case "response.output_item.added":
		return "response.output_item.added"
	case "response.output_item.done":
		return "response.output_item.done"
	case "response.content_part.added":
		return "response.content_part.added"
	case "response.content_part.done":
		return "response.content_part.done"
	case "response.output_text.delta":
		return "response.output_text.delta"
	case "response.output_text.done":
		return "response.output_text.done"
	case "response.output_text.annotation.added":
		return "response.output_text.annotation.added"
	case "response.refusal.delta":
		return "response.refusal.delta"
	case "response.refusal.done":
		return "response.refusal.done"
	case "response.function_call_arguments.delta":
		return "response.function_call_arguments.delta"
	case "response.function_call_arguments.done":
		return "response.function_call_arguments.done"
	case "response.custom_tool_call_input.delta":
		return "response.custom_tool_call_input.delta"
	case "response.custom_tool_call_input.done":
		return "response.custom_tool_call_input.done"
	case "response.reasoning_summary_part.added":
		return "response.reasoning_summary_part.added"
	case "response.reasoning_summary_part.done":
		return "response.reasoning_summary_part.done"
	case "response.reasoning_summary_text.delta":
		return "response.reasoning_summary_text.delta"
	case "response.reasoning_summary_text.done":
		return "response.reasoning_summary_text.done"
	case "response.reasoning_text.delta":
		return "response.reasoning_text.delta"
	case "response.reasoning_text.done":
		return "response.reasoning_text.done"
	}
	return ""
}
