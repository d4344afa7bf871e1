package chat

//go:generate go run ../../internal/codecgen -pkg chat -out codec_gen.go

import (
	"fmt"

	"github.com/harnessflow/harnessflow/internal/jsonx"
)

// MarshalJSON implements json.Marshaler.
func (r Request) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil) }

// AppendJSON appends the JSON of the request to dst. The buffer grows once,
// to an estimate of the body's size.
func (r *Request) AppendJSON(dst []byte) ([]byte, error) {
	if dst == nil {
		dst = make([]byte, 0, r.sizeHint())
	}
	w := encoder{jsonx.Encoder{B: dst}}
	w.request(r)
	if w.Err != nil {
		return nil, fmt.Errorf("chat: request: %w", w.Err)
	}
	return w.B, nil
}

// MarshalJSON implements json.Marshaler: a string, an array of parts, or
// null when absent.
func (c Content) MarshalJSON() ([]byte, error) {
	w := encoder{}
	w.content(&c)
	if w.Err != nil {
		return nil, fmt.Errorf("chat: content: %w", w.Err)
	}
	return w.B, nil
}

// sizeHint estimates the encoded size of the request.
func (r *Request) sizeHint() int {
	n := 256 + len(r.Model)
	for i := range r.Messages {
		m := &r.Messages[i]
		n += 48 + len(m.Content.Text) + len(m.ReasoningContent) + len(m.ToolCallID)
		for j := range m.Content.Parts {
			p := &m.Content.Parts[j]
			n += 40 + len(p.Text) + len(p.AudioURL)
			if p.ImageURL != nil {
				n += len(p.ImageURL.URL)
			}
			if p.InputAudio != nil {
				n += len(p.InputAudio.Data)
			}
		}
		for j := range m.ToolCalls {
			c := &m.ToolCalls[j]
			n += 64 + len(c.ID) + len(c.Function.Name) + len(c.Function.Arguments)
		}
	}
	for i := range r.Tools {
		t := &r.Tools[i]
		n += 64 + len(t.Function.Name) + len(t.Function.Description) + len(t.Function.Parameters)
	}
	// Escapes make strings longer; leave some room.
	return n + n/16
}

// encoder writes the chat types: codec_gen.go has its methods for the
// struct types (generated from the table of internal/codecgen), this file
// the request's entry point and the content union.
type encoder struct{ jsonx.Encoder }

// defaultParameters is written for a function tool without parameters.
const defaultParameters = `{"type":"object","properties":{}}`

func (w *encoder) content(c *Content) {
	switch c.Kind {
	case ContentText:
		w.B = AppendString(w.B, c.Text)
	case ContentParts:
		w.B = append(w.B, '[')
		for i := range c.Parts {
			w.Elem(i)
			w.part(&c.Parts[i])
		}
		w.B = append(w.B, ']')
	default:
		w.B = append(w.B, "null"...)
	}
}
