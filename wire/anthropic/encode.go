package anthropic

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

// MarshalJSON implements json.Marshaler.
func (m Message) MarshalJSON() ([]byte, error) {
	w := encoder{}
	w.message(&m)
	if w.Err != nil {
		return nil, fmt.Errorf("anthropic: message: %w", w.Err)
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

// MarshalJSON implements json.Marshaler.
func (b Block) MarshalJSON() ([]byte, error) {
	w := encoder{}
	w.block(&b)
	if w.Err != nil {
		return nil, fmt.Errorf("anthropic: %s block: %w", b.Type, w.Err)
	}
	return w.B, nil
}

// MarshalJSON implements json.Marshaler.
func (t Tool) MarshalJSON() ([]byte, error) {
	w := encoder{}
	w.tool(&t)
	if w.Err != nil {
		return nil, fmt.Errorf("anthropic: tool %q: %w", t.Name, w.Err)
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

// encoder writes the Messages types; the known keys of each type keep Extra
// from overriding a known field, even one left out.
type encoder struct{ jsonx.Encoder }

var (
	requestKeys = []string{"model", "messages", "system", "tools", "tool_choice", "thinking", "context_management",
		"output_config", "metadata", "temperature", "max_tokens", "stream"}
	messageKeys      = []string{"role", "content"}
	blockKeys        = []string{"type", "text", "thinking", "signature", "data", "id", "name", "input", "tool_use_id", "content", "is_error", "source", "cache_control"}
	cacheKeys        = []string{"type", "ttl"}
	toolKeys         = []string{"type", "name", "description", "input_schema", "strict", "defer_loading", "cache_control"}
	thinkingKeys     = []string{"type", "budget_tokens", "display"}
	contextKeys      = []string{"edits"}
	editKeys         = []string{"type", "keep"}
	outputConfigKeys = []string{"effort", "format"}
	metadataKeys     = []string{"user_id"}
)

// Defaults of raw values left empty.
const (
	defaultInput  = `{}`
	defaultSchema = `{"type":"object","properties":{}}`
)

func (w *encoder) request(r *Request) {
	f := w.Open()
	w.Str("model", r.Model)
	w.Key("messages")
	w.B = append(w.B, '[')
	for i := range r.Messages {
		w.Elem(i)
		w.message(&r.Messages[i])
		if w.Err != nil {
			w.Err = fmt.Errorf("messages[%d]: %w", i, w.Err)
			return
		}
	}
	w.B = append(w.B, ']')
	if r.System.Kind != ContentNone {
		w.Key("system")
		w.content(&r.System)
		if w.Err != nil {
			w.Err = fmt.Errorf("system: %w", w.Err)
			return
		}
	}
	if len(r.Tools) > 0 {
		w.Key("tools")
		w.B = append(w.B, '[')
		for i := range r.Tools {
			w.Elem(i)
			w.tool(&r.Tools[i])
			if w.Err != nil {
				w.Err = fmt.Errorf("tools[%d]: %w", i, w.Err)
				return
			}
		}
		w.B = append(w.B, ']')
	}
	w.RawOpt("tool_choice", r.ToolChoice)
	if t := r.Thinking; t != nil {
		w.Key("thinking")
		g := w.Open()
		w.Str("type", t.Type)
		w.IntOpt("budget_tokens", t.BudgetTokens)
		w.StrOpt("display", t.Display)
		w.Extra(t.Extra, thinkingKeys...)
		w.Close(g)
	}
	if c := r.ContextManagement; c != nil {
		w.Key("context_management")
		g := w.Open()
		w.Key("edits")
		w.B = append(w.B, '[')
		for i := range c.Edits {
			e := &c.Edits[i]
			w.Elem(i)
			h := w.Open()
			w.Str("type", e.Type)
			w.RawOpt("keep", e.Keep)
			w.Extra(e.Extra, editKeys...)
			w.Close(h)
		}
		w.B = append(w.B, ']')
		w.Extra(c.Extra, contextKeys...)
		w.Close(g)
	}
	if o := r.OutputConfig; o != nil {
		w.Key("output_config")
		g := w.Open()
		w.StrOpt("effort", o.Effort)
		w.RawOpt("format", o.Format)
		w.Extra(o.Extra, outputConfigKeys...)
		w.Close(g)
	}
	if m := r.Metadata; m != nil {
		w.Key("metadata")
		g := w.Open()
		w.StrOpt("user_id", m.UserID)
		w.Extra(m.Extra, metadataKeys...)
		w.Close(g)
	}
	if r.Temperature != nil {
		w.Key("temperature")
		w.B = appendFloat(w.B, *r.Temperature)
		if math.IsNaN(*r.Temperature) || math.IsInf(*r.Temperature, 0) {
			w.Fail(fmt.Errorf("field temperature: %v is not a JSON number", *r.Temperature))
		}
	}
	w.Int("max_tokens", r.MaxTokens)
	w.BoolOpt("stream", r.Stream)
	w.Extra(r.Extra, requestKeys...)
	w.Close(f)
}

func (w *encoder) message(m *Message) {
	f := w.Open()
	w.Str("role", m.Role)
	w.Key("content")
	w.content(&m.Content)
	w.Extra(m.Extra, messageKeys...)
	w.Close(f)
}

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
		w.cache(b.CacheControl)
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

func (w *encoder) cache(c *CacheControl) {
	g := w.Open()
	typ := c.Type
	if typ == "" {
		typ = CacheEphemeral
	}
	w.Str("type", typ)
	w.StrOpt("ttl", c.TTL)
	w.Extra(c.Extra, cacheKeys...)
	w.Close(g)
}

func (w *encoder) tool(t *Tool) {
	f := w.Open()
	w.StrOpt("type", t.Type)
	w.Str("name", t.Name)
	w.StrOpt("description", t.Description)
	if t.IsClient() {
		w.Raw("input_schema", t.InputSchema, defaultSchema)
	} else {
		w.RawOpt("input_schema", t.InputSchema)
	}
	w.BoolOpt("strict", t.Strict)
	w.BoolOpt("defer_loading", t.DeferLoading)
	if t.CacheControl != nil {
		w.Key("cache_control")
		w.cache(t.CacheControl)
	}
	w.Extra(t.Extra, toolKeys...)
	w.Close(f)
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
