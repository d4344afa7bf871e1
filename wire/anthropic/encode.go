package anthropic

//go:generate go run ../../internal/codecgen -pkg anthropic -out codec_gen.go

import (
	"fmt"
	"math"
	"strconv"

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
		return nil, fmt.Errorf("anthropic: request: %w", w.Err)
	}
	return w.B, nil
}

// MarshalJSON implements json.Marshaler: a string, an array of blocks, or
// null when absent.
func (c Content) MarshalJSON() ([]byte, error) {
	w := encoder{}
	w.content(&c)
	if w.Err != nil {
		return nil, fmt.Errorf("anthropic: content: %w", w.Err)
	}
	return w.B, nil
}

// sizeHint estimates the encoded size of the request.
func (r *Request) sizeHint() int {
	n := 256 + len(r.Model) + contentSize(&r.System)
	for i := range r.Messages {
		n += 32 + contentSize(&r.Messages[i].Content)
	}
	for i := range r.Tools {
		t := &r.Tools[i]
		n += 64 + len(t.Name) + len(t.Description) + len(t.InputSchema)
	}
	// Escapes make strings longer; leave some room.
	return n + n/16
}

func contentSize(c *Content) int {
	n := len(c.Text)
	for i := range c.Blocks {
		b := &c.Blocks[i]
		n += 48 + len(b.Text) + len(b.Thinking) + len(b.Signature) + len(b.Data) + len(b.ID) + len(b.Name) +
			len(b.Input) + len(b.ToolUseID) + len(b.Source)
		if b.Content != nil {
			n += contentSize(b.Content)
		}
	}
	return n
}

// encoder writes the Messages types: codec_gen.go has its methods for the
// struct types (generated from the table of internal/codecgen), this file
// the request's entry point, the content union and the block, whose fields
// depend on its type.
type encoder struct{ jsonx.Encoder }

// Defaults of raw values left empty.
const (
	defaultInput  = `{}`
	defaultSchema = `{"type":"object","properties":{}}`
)

func (w *encoder) content(c *Content) {
	switch c.Kind {
	case ContentText:
		w.B = jsonx.AppendString(w.B, c.Text)
	case ContentBlocks:
		w.B = append(w.B, '[')
		for i := range c.Blocks {
			w.Elem(i)
			w.block(&c.Blocks[i])
			if w.Err != nil {
				w.Err = fmt.Errorf("[%d]: %w", i, w.Err)
				return
			}
		}
		w.B = append(w.B, ']')
	default:
		w.B = append(w.B, "null"...)
	}
}

func (w *encoder) block(b *Block) {
	f := w.Open()
	w.Str("type", b.Type)
	switch b.Type {
	case BlockText:
		w.Str("text", b.Text)
	case BlockThinking:
		w.Str("thinking", b.Thinking)
		w.Str("signature", b.Signature)
	case BlockRedactedThinking:
		w.Str("data", b.Data)
	case BlockToolUse:
		w.Str("id", b.ID)
		w.Str("name", b.Name)
		w.Raw("input", b.Input, defaultInput)
	case BlockToolResult:
		w.Str("tool_use_id", b.ToolUseID)
		w.resultContent(b.Content)
		w.BoolOpt("is_error", b.IsError)
	case BlockImage:
		w.Raw("source", b.Source, "null")
	default:
		w.StrOpt("text", b.Text)
		w.StrOpt("thinking", b.Thinking)
		w.StrOpt("signature", b.Signature)
		w.StrOpt("data", b.Data)
		w.StrOpt("id", b.ID)
		w.StrOpt("name", b.Name)
		w.RawOpt("input", b.Input)
		w.StrOpt("tool_use_id", b.ToolUseID)
		w.resultContent(b.Content)
		w.BoolOpt("is_error", b.IsError)
		w.RawOpt("source", b.Source)
	}
	if b.CacheControl != nil {
		w.Key("cache_control")
		w.cacheControl(b.CacheControl)
	}
	w.Extra(b.Extra, blockKeys...)
	w.Close(f)
}

func (w *encoder) resultContent(c *Content) {
	if c == nil || c.Kind == ContentNone {
		return
	}
	w.Key("content")
	w.content(c)
	if w.Err != nil {
		w.Err = fmt.Errorf("content%w", w.Err)
	}
}

// appendFloat writes a float64 the way encoding/json does.
func appendFloat(dst []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}
