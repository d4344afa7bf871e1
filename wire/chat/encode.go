package chat

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

// MarshalJSON implements json.Marshaler.
func (m Message) MarshalJSON() ([]byte, error) {
	w := encoder{}
	w.message(&m)
	if w.Err != nil {
		return nil, fmt.Errorf("chat: message: %w", w.Err)
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

// MarshalJSON implements json.Marshaler.
func (p Part) MarshalJSON() ([]byte, error) {
	w := encoder{}
	w.part(&p)
	if w.Err != nil {
		return nil, fmt.Errorf("chat: content part: %w", w.Err)
	}
	return w.B, nil
}

// MarshalJSON implements json.Marshaler.
func (t Tool) MarshalJSON() ([]byte, error) {
	w := encoder{}
	w.tool(&t)
	if w.Err != nil {
		return nil, fmt.Errorf("chat: tool %q: %w", t.Function.Name, w.Err)
	}
	return w.B, nil
}

// MarshalJSON implements json.Marshaler.
func (c ToolCall) MarshalJSON() ([]byte, error) {
	w := encoder{}
	w.toolCall(&c)
	if w.Err != nil {
		return nil, fmt.Errorf("chat: tool call %q: %w", c.ID, w.Err)
	}
	return w.B, nil
}

// MarshalJSON implements json.Marshaler.
func (f ResponseFormat) MarshalJSON() ([]byte, error) {
	w := encoder{}
	w.responseFormat(&f)
	if w.Err != nil {
		return nil, fmt.Errorf("chat: response_format: %w", w.Err)
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

// encoder writes the chat types; the known keys of each type keep Extra from
// overriding a known field, even one left out.
type encoder struct{ jsonx.Encoder }

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
	w.BoolOpt("stream", r.Stream)
	w.RawOpt("stream_options", r.StreamOptions)
	w.IntOpt("max_tokens", r.MaxTokens)
	w.IntOpt("max_completion_tokens", r.MaxCompletionTokens)
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
	w.BoolOpt("parallel_tool_calls", r.ParallelToolCalls)
	if r.ResponseFormat != nil {
		w.Key("response_format")
		w.responseFormat(r.ResponseFormat)
	}
	w.StrOpt("service_tier", r.ServiceTier)
	w.BoolOpt("store", r.Store)
	w.StrOpt("reasoning_effort", r.ReasoningEffort)
	w.RawOpt("thinking", r.Thinking)
	w.StrOpt("verbosity", r.Verbosity)
	w.StrOpt("prompt_cache_key", r.PromptCacheKey)
	w.Extra(r.Extra, requestKeys...)
	w.Close(f)
}

func (w *encoder) message(m *Message) {
	f := w.Open()
	w.Str("role", m.Role)
	if m.Content.Kind != ContentNone {
		w.Key("content")
		w.content(&m.Content)
	}
	w.StrOpt("reasoning_content", m.ReasoningContent)
	if len(m.ToolCalls) > 0 {
		w.Key("tool_calls")
		w.B = append(w.B, '[')
		for i := range m.ToolCalls {
			w.Elem(i)
			w.toolCall(&m.ToolCalls[i])
		}
		w.B = append(w.B, ']')
	}
	w.StrOpt("tool_call_id", m.ToolCallID)
	w.StrOpt("name", m.Name)
	w.Extra(m.Extra, messageKeys...)
	w.Close(f)
}

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

func (w *encoder) part(p *Part) {
	f := w.Open()
	w.Str("type", p.Type)
	switch p.Type {
	case PartText:
		w.Str("text", p.Text)
	default:
		w.StrOpt("text", p.Text)
	}
	if p.ImageURL != nil {
		w.Key("image_url")
		g := w.Open()
		w.Str("url", p.ImageURL.URL)
		w.StrOpt("detail", p.ImageURL.Detail)
		w.Extra(p.ImageURL.Extra, imageKeys...)
		w.Close(g)
	}
	if p.InputAudio != nil {
		w.Key("input_audio")
		g := w.Open()
		w.Str("data", p.InputAudio.Data)
		w.Str("format", p.InputAudio.Format)
		w.Extra(p.InputAudio.Extra, audioKeys...)
		w.Close(g)
	}
	w.StrOpt("audio_url", p.AudioURL)
	w.Extra(p.Extra, partKeys...)
	w.Close(f)
}

func (w *encoder) toolCall(c *ToolCall) {
	f := w.Open()
	w.Str("id", c.ID)
	typ := c.Type
	if typ == "" {
		typ = ToolTypeFunction
	}
	w.Str("type", typ)
	w.Key("function")
	g := w.Open()
	w.Str("name", c.Function.Name)
	w.Str("arguments", c.Function.Arguments)
	w.Extra(c.Function.Extra, functionCallKeys...)
	w.Close(g)
	w.Extra(c.Extra, toolCallKeys...)
	w.Close(f)
}

func (w *encoder) tool(t *Tool) {
	f := w.Open()
	typ := t.Type
	if typ == "" {
		typ = ToolTypeFunction
	}
	w.Str("type", typ)
	w.Key("function")
	g := w.Open()
	d := &t.Function
	w.Str("name", d.Name)
	w.StrOpt("description", d.Description)
	w.Raw("parameters", d.Parameters, defaultParameters)
	w.BoolOpt("strict", d.Strict)
	w.Extra(d.Extra, functionDefKeys...)
	w.Close(g)
	w.Extra(t.Extra, toolKeys...)
	w.Close(f)
}

func (w *encoder) responseFormat(r *ResponseFormat) {
	f := w.Open()
	w.Str("type", r.Type)
	if s := r.JSONSchema; s != nil {
		w.Key("json_schema")
		g := w.Open()
		w.Str("name", s.Name)
		w.StrOpt("description", s.Description)
		w.Raw("schema", s.Schema, "null")
		w.BoolOpt("strict", s.Strict)
		w.Extra(s.Extra, jsonSchemaKeys...)
		w.Close(g)
	}
	w.Extra(r.Extra, responseFormatKeys...)
	w.Close(f)
}
