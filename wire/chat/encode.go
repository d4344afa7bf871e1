package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// MarshalJSON implements json.Marshaler.
func (r Request) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil) }

// AppendJSON appends the JSON of the request to dst. The buffer grows once,
// to an estimate of the body's size.
func (r *Request) AppendJSON(dst []byte) ([]byte, error) {
	if dst == nil {
		dst = make([]byte, 0, r.sizeHint())
	}
	w := encoder{b: dst}
	w.request(r)
	if w.err != nil {
		return nil, fmt.Errorf("chat: request: %w", w.err)
	}
	return w.b, nil
}

// MarshalJSON implements json.Marshaler.
func (m Message) MarshalJSON() ([]byte, error) {
	w := encoder{}
	w.message(&m)
	if w.err != nil {
		return nil, fmt.Errorf("chat: message: %w", w.err)
	}
	return w.b, nil
}

// MarshalJSON implements json.Marshaler: a string, an array of parts, or
// null when absent.
func (c Content) MarshalJSON() ([]byte, error) {
	w := encoder{}
	w.content(&c)
	if w.err != nil {
		return nil, fmt.Errorf("chat: content: %w", w.err)
	}
	return w.b, nil
}

// MarshalJSON implements json.Marshaler.
func (p Part) MarshalJSON() ([]byte, error) {
	w := encoder{}
	w.part(&p)
	if w.err != nil {
		return nil, fmt.Errorf("chat: content part: %w", w.err)
	}
	return w.b, nil
}

// MarshalJSON implements json.Marshaler.
func (t Tool) MarshalJSON() ([]byte, error) {
	w := encoder{}
	w.tool(&t)
	if w.err != nil {
		return nil, fmt.Errorf("chat: tool %q: %w", t.Function.Name, w.err)
	}
	return w.b, nil
}

// MarshalJSON implements json.Marshaler.
func (c ToolCall) MarshalJSON() ([]byte, error) {
	w := encoder{}
	w.toolCall(&c)
	if w.err != nil {
		return nil, fmt.Errorf("chat: tool call %q: %w", c.ID, w.err)
	}
	return w.b, nil
}

// MarshalJSON implements json.Marshaler.
func (f ResponseFormat) MarshalJSON() ([]byte, error) {
	w := encoder{}
	w.responseFormat(&f)
	if w.err != nil {
		return nil, fmt.Errorf("chat: response_format: %w", w.err)
	}
	return w.b, nil
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

// encoder writes JSON objects with keys in call order. The first error sticks.
type encoder struct {
	b   []byte
	n   int // fields written in the current object
	err error
}

func (w *encoder) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// open starts an object and returns the enclosing object's field count.
func (w *encoder) open() int {
	n := w.n
	w.b = append(w.b, '{')
	w.n = 0
	return n
}

func (w *encoder) close(n int) {
	w.b = append(w.b, '}')
	w.n = n
}

func (w *encoder) key(k string) {
	b := w.b
	if w.n > 0 {
		b = append(b, ',')
	}
	w.n++
	b = append(b, '"')
	b = append(b, k...) // keys are plain ASCII constants
	w.b = append(b, '"', ':')
}

func (w *encoder) str(k, v string) {
	w.key(k)
	w.b = AppendString(w.b, v)
}

func (w *encoder) strOpt(k, v string) {
	if v != "" {
		w.str(k, v)
	}
}

func (w *encoder) boolPtr(k string, v *bool) {
	if v != nil {
		w.key(k)
		w.b = strconv.AppendBool(w.b, *v)
	}
}

func (w *encoder) intPtr(k string, v *int64) {
	if v != nil {
		w.key(k)
		w.b = strconv.AppendInt(w.b, *v, 10)
	}
}

// raw writes a raw JSON value, compacted; ifEmpty is written when v is empty.
func (w *encoder) raw(k string, v json.RawMessage, ifEmpty string) {
	w.key(k)
	w.rawValue(k, v, ifEmpty)
}

func (w *encoder) rawOpt(k string, v json.RawMessage) {
	if len(v) > 0 {
		w.raw(k, v, "")
	}
}

func (w *encoder) rawValue(field string, v json.RawMessage, ifEmpty string) {
	if len(v) == 0 {
		w.b = append(w.b, ifEmpty...)
		return
	}
	buf := bytes.NewBuffer(w.b)
	if err := json.Compact(buf, v); err != nil {
		w.fail(fmt.Errorf("field %s: invalid JSON: %w", field, err))
		return
	}
	w.b = buf.Bytes()
}

// extra writes the Extra fields, sorted, except those named in known.
func (w *encoder) extra(e Extra, known ...string) {
	if len(e) == 0 {
		return
	}
	keys := make([]string, 0, len(e))
	for k := range e {
		if !slices.Contains(known, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if w.n > 0 {
			w.b = append(w.b, ',')
		}
		w.n++
		w.b = AppendString(w.b, k)
		w.b = append(w.b, ':')
		w.rawValue(k, e[k], "null")
	}
}

var (
	requestKeys = []string{"model", "messages", "stream", "stream_options", "max_tokens",
		"max_completion_tokens", "tools", "tool_choice", "parallel_tool_calls", "response_format",
		"service_tier", "store", "reasoning_effort", "thinking", "verbosity", "prompt_cache_key"}
	messageKeys        = []string{"role", "content", "reasoning_content", "tool_calls", "tool_call_id", "name"}
	partKeys           = []string{"type", "text", "image_url", "input_audio", "audio_url"}
	imageKeys          = []string{"url", "detail"}
	audioKeys          = []string{"data", "format"}
	toolCallKeys       = []string{"id", "type", "function"}
	functionCallKeys   = []string{"name", "arguments"}
	toolKeys           = []string{"type", "function"}
	functionDefKeys    = []string{"name", "description", "parameters", "strict"}
	responseFormatKeys = []string{"type", "json_schema"}
	jsonSchemaKeys     = []string{"name", "description", "schema", "strict"}
)

// defaultParameters is written for a function tool without parameters.
const defaultParameters = `{"type":"object","properties":{}}`

func (w *encoder) request(r *Request) {
	f := w.open()
	w.str("model", r.Model)
	w.key("messages")
	w.b = append(w.b, '[')
	for i := range r.Messages {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.message(&r.Messages[i])
		if w.err != nil {
			w.err = fmt.Errorf("messages[%d]: %w", i, w.err)
			return
		}
	}
	w.b = append(w.b, ']')
	w.boolPtr("stream", r.Stream)
	w.rawOpt("stream_options", r.StreamOptions)
	w.intPtr("max_tokens", r.MaxTokens)
	w.intPtr("max_completion_tokens", r.MaxCompletionTokens)
	if len(r.Tools) > 0 {
		w.key("tools")
		w.b = append(w.b, '[')
		for i := range r.Tools {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.tool(&r.Tools[i])
			if w.err != nil {
				w.err = fmt.Errorf("tools[%d]: %w", i, w.err)
				return
			}
		}
		w.b = append(w.b, ']')
	}
	w.rawOpt("tool_choice", r.ToolChoice)
	w.boolPtr("parallel_tool_calls", r.ParallelToolCalls)
	if r.ResponseFormat != nil {
		w.key("response_format")
		w.responseFormat(r.ResponseFormat)
	}
	w.strOpt("service_tier", r.ServiceTier)
	w.boolPtr("store", r.Store)
	w.strOpt("reasoning_effort", r.ReasoningEffort)
	w.rawOpt("thinking", r.Thinking)
	w.strOpt("verbosity", r.Verbosity)
	w.strOpt("prompt_cache_key", r.PromptCacheKey)
	w.extra(r.Extra, requestKeys...)
	w.close(f)
}

func (w *encoder) message(m *Message) {
	f := w.open()
	w.str("role", m.Role)
	if m.Content.Kind != ContentNone {
		w.key("content")
		w.content(&m.Content)
	}
	w.strOpt("reasoning_content", m.ReasoningContent)
	if len(m.ToolCalls) > 0 {
		w.key("tool_calls")
		w.b = append(w.b, '[')
		for i := range m.ToolCalls {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.toolCall(&m.ToolCalls[i])
		}
		w.b = append(w.b, ']')
	}
	w.strOpt("tool_call_id", m.ToolCallID)
	w.strOpt("name", m.Name)
	w.extra(m.Extra, messageKeys...)
	w.close(f)
}

func (w *encoder) content(c *Content) {
	switch c.Kind {
	case ContentText:
		w.b = AppendString(w.b, c.Text)
	case ContentParts:
		w.b = append(w.b, '[')
		for i := range c.Parts {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.part(&c.Parts[i])
		}
		w.b = append(w.b, ']')
	default:
		w.b = append(w.b, "null"...)
	}
}

func (w *encoder) part(p *Part) {
	f := w.open()
	w.str("type", p.Type)
	switch p.Type {
	case PartText:
		w.str("text", p.Text)
	default:
		w.strOpt("text", p.Text)
	}
	if p.ImageURL != nil {
		w.key("image_url")
		g := w.open()
		w.str("url", p.ImageURL.URL)
		w.strOpt("detail", p.ImageURL.Detail)
		w.extra(p.ImageURL.Extra, imageKeys...)
		w.close(g)
	}
	if p.InputAudio != nil {
		w.key("input_audio")
		g := w.open()
		w.str("data", p.InputAudio.Data)
		w.str("format", p.InputAudio.Format)
		w.extra(p.InputAudio.Extra, audioKeys...)
		w.close(g)
	}
	w.strOpt("audio_url", p.AudioURL)
	w.extra(p.Extra, partKeys...)
	w.close(f)
}

func (w *encoder) toolCall(c *ToolCall) {
	f := w.open()
	w.str("id", c.ID)
	typ := c.Type
	if typ == "" {
		typ = ToolTypeFunction
	}
	w.str("type", typ)
	w.key("function")
	g := w.open()
	w.str("name", c.Function.Name)
	w.str("arguments", c.Function.Arguments)
	w.extra(c.Function.Extra, functionCallKeys...)
	w.close(g)
	w.extra(c.Extra, toolCallKeys...)
	w.close(f)
}

func (w *encoder) tool(t *Tool) {
	f := w.open()
	typ := t.Type
	if typ == "" {
		typ = ToolTypeFunction
	}
	w.str("type", typ)
	w.key("function")
	g := w.open()
	d := &t.Function
	w.str("name", d.Name)
	w.strOpt("description", d.Description)
	w.raw("parameters", d.Parameters, defaultParameters)
	w.boolPtr("strict", d.Strict)
	w.extra(d.Extra, functionDefKeys...)
	w.close(g)
	w.extra(t.Extra, toolKeys...)
	w.close(f)
}

func (w *encoder) responseFormat(r *ResponseFormat) {
	f := w.open()
	w.str("type", r.Type)
	if s := r.JSONSchema; s != nil {
		w.key("json_schema")
		g := w.open()
		w.str("name", s.Name)
		w.strOpt("description", s.Description)
		w.raw("schema", s.Schema, "null")
		w.boolPtr("strict", s.Strict)
		w.extra(s.Extra, jsonSchemaKeys...)
		w.close(g)
	}
	w.extra(r.Extra, responseFormatKeys...)
	w.close(f)
}
