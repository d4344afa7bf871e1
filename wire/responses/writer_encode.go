package responses

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/harnessflow/harnessflow/protocol"
)

// The Writer's encoding: each event's framing and the response object, sized before it is written.

// begin starts an event: the SSE event line and the payload's type and
// sequence number.
func (s *Writer) begin(typ string) []byte {
	b := append(s.buf[:0], "event: "...)
	b = append(b, typ...)
	b = append(b, "\ndata: {\"type\":"...)
	b = protocol.AppendString(b, typ)
	b = append(b, `,"sequence_number":`...)
	return strconv.AppendInt(b, s.seq, 10)
}

// end closes the payload, writes the event and flushes it.
func (s *Writer) end(typ string, b []byte) error {
	b = append(b, "}\n\n"...)
	s.buf = b
	s.seq++
	if s.w == nil {
		s.events++
		return nil
	}
	if _, err := s.w.Write(b); err != nil {
		s.err = fmt.Errorf("responses: write event %d (%s): %w", s.seq-1, typ, err)
		return s.err
	}
	s.events++
	if s.flush != nil {
		if err := s.flush(); err != nil {
			s.err = fmt.Errorf("responses: flush event %d (%s): %w", s.seq-1, typ, err)
			return s.err
		}
	}
	return nil
}

// reserveMin is the event size from which reserve allocates the event
// buffer up front; smaller events grow it as they are built.
const reserveMin = 64 << 10

// keepJSONMax is the size up to which a done item's JSON is kept for the
// response objects (copying it is cheaper than encoding it again, and it
// is small); a longer item is encoded again.
const keepJSONMax = 16 << 10

// reserve makes the event buffer hold, without growing, an event that
// carries items of about items bytes of JSON (itemSize) in a response
// object. Appending a long text to a short buffer grows it in steps, each
// a copy of the whole that is garbage until the next collection, and the
// closing events of a long item and the terminal one are each a little
// longer than the one before; so the buffer is allocated once, for the
// largest, before the first — exactly that size when it is much bigger
// than the buffer was (a long text), else twice the old size, so that
// many items adding up little by little do not each cost a new buffer.
// It is called between events only (the buffer's contents are dropped).
func (s *Writer) reserve(items int) {
	need := s.responseSizeFor(items)
	if need >= reserveMin && cap(s.buf) < need {
		s.buf = make([]byte, 0, max(need, 2*cap(s.buf)))
	}
}

// responseSize estimates the bytes of the response object with the done
// items.
func (s *Writer) responseSize() int { return s.responseSizeFor(s.outSize) }

// responseSizeFor estimates the bytes of an event carrying a response
// object with items of about items bytes: the items, the echoed request
// parameters and room for the rest (ids, model, usage, the event's own
// fields).
func (s *Writer) responseSizeFor(items int) int {
	return items + s.echoSize + len(s.id) + len(s.model) + 2048
}

// itemSize estimates the bytes of an item's JSON: its texts (what can be
// long) as JSON strings and room for its other fields.
func itemSize(item protocol.ResponseItem) int {
	n := 512
	switch v := item.(type) {
	case *protocol.Message:
		for _, c := range v.Content {
			n += 256 + quotedSize(c.Text)
		}
	case *protocol.Reasoning:
		for _, p := range v.Summary {
			n += 64 + quotedSize(p.Text)
		}
		for _, p := range v.Content {
			n += 64 + quotedSize(p.Text)
		}
		if v.EncryptedContent != nil {
			n += quotedSize(*v.EncryptedContent)
		}
	case *protocol.FunctionCall:
		n += quotedSize(v.Arguments) + quotedSize(v.EncryptedFunctionArgs)
	case *protocol.CustomToolCall:
		n += quotedSize(v.Input)
	}
	return n
}

// quotedSize estimates the bytes of s as a JSON string: its bytes, the
// quotes, and for a long one a byte more for each of the escapes texts are
// full of (newline, tab, carriage return, quote, backslash), counted.
// Rarer escapes are longer; a text made of them makes the buffer grow once
// more. A short one (too short to make an event reserve a buffer alone) is
// not counted: an eighth more is room enough.
func quotedSize(s string) int {
	n := len(s) + 2
	if len(s) < reserveMin/2 {
		return n + len(s)/8
	}
	const escaped = "\n\t\r\"\\"
	for i := range len(escaped) {
		n += strings.Count(s, escaped[i:i+1])
	}
	return n + len(s)/1024
}

func (s *Writer) encodeErr(typ string, err error) error {
	s.err = fmt.Errorf("responses: encode %s: %w", typ, err)
	return s.err
}

// appendIndex appends item_id (when withID) and output_index.
func (s *Writer) appendIndex(b []byte, it *item, withID bool) []byte {
	if withID {
		b = appendStrField(b, "item_id", it.id)
	}
	return appendIntField(b, "output_index", it.index)
}

// appendResponse appends the Response object in status: the output (the
// done items; [] while in progress), the terminal state and the echoed
// request parameters, in the order the API writes them. An item that does
// not encode (it did when it was done, so only one modified since) is left
// out and reported.
func (s *Writer) appendResponse(b []byte, status string) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = protocol.AppendString(b, s.id)
	b = append(b, `,"object":"response","created_at":`...)
	b = strconv.AppendInt(b, s.createdAt, 10)
	b = appendStrField(b, "status", status)
	b = append(b, `,"background":false,"error":`...)
	if f := s.failure; f != nil && status == StatusFailed {
		b = append(b, `{"code":`...)
		b = protocol.AppendString(b, f.Code)
		b = appendStrField(b, "message", f.Message)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"incomplete_details":`...)
	if s.reason != "" && status == StatusIncomplete {
		b = append(b, `{"reason":`...)
		b = protocol.AppendString(b, s.reason)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, s.echo.beforeModel...)
	b = appendStrField(b, "model", s.model)
	b = append(b, `,"output":[`...)
	n := 0
	var err error
	if status != StatusInProgress {
		for _, it := range s.items {
			if it.final == nil {
				continue
			}
			mark := len(b)
			if n > 0 {
				b = append(b, ',')
			}
			if it.doneJSON != nil {
				b = append(b, it.doneJSON...)
				n++
				continue
			}
			// A long item encoded once (finish) and is not modified, so it
			// encodes again, to the same bytes; should it not, it is left
			// out and the object stays valid JSON.
			var e error
			if b, e = protocol.AppendItem(b, it.final); e != nil {
				b = b[:mark]
				if err == nil {
					err = fmt.Errorf("output item %d: %w", it.index, e)
				}
				continue
			}
			n++
		}
	}
	b = append(b, ']')
	b = append(b, s.echo.beforeStore...)
	b = append(b, `,"store":`...)
	b = strconv.AppendBool(b, s.store)
	b = append(b, s.echo.beforeUsage...)
	b = append(b, `,"usage":`...)
	if status == StatusCompleted || status == StatusIncomplete {
		b = appendUsage(b, s.usage)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, s.echo.afterUsage...)
	if s.endTurn != nil && status != StatusInProgress {
		b = append(b, `,"end_turn":`...)
		b = strconv.AppendBool(b, *s.endTurn)
	}
	return append(b, '}'), err
}

func appendStrField(b []byte, k, v string) []byte {
	b = append(b, ',', '"')
	b = append(b, k...)
	b = append(b, '"', ':')
	return protocol.AppendString(b, v)
}

func appendIntField(b []byte, k string, v int) []byte {
	b = append(b, ',', '"')
	b = append(b, k...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, int64(v), 10)
}
