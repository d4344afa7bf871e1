package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// UnmarshalJSON implements json.Unmarshaler. Fields the type does not model
// go to Extra, so that re-encoding loses nothing.
func (r *Request) UnmarshalJSON(data []byte) error {
	d, err := newFields(data)
	if err != nil {
		return fmt.Errorf("chat: request: %w", err)
	}
	v := Request{
		Model:               d.str("model"),
		Stream:              d.boolPtr("stream"),
		StreamOptions:       d.raw("stream_options"),
		MaxTokens:           d.intPtr("max_tokens"),
		MaxCompletionTokens: d.intPtr("max_completion_tokens"),
		ToolChoice:          d.raw("tool_choice"),
		ParallelToolCalls:   d.boolPtr("parallel_tool_calls"),
		ServiceTier:         d.str("service_tier"),
		Store:               d.boolPtr("store"),
		ReasoningEffort:     d.str("reasoning_effort"),
		Thinking:            d.raw("thinking"),
		Verbosity:           d.str("verbosity"),
		PromptCacheKey:      d.str("prompt_cache_key"),
	}
	d.list("messages", func(raw json.RawMessage) error {
		var m Message
		err := m.UnmarshalJSON(raw)
		v.Messages = append(v.Messages, m)
		return err
	})
	d.list("tools", func(raw json.RawMessage) error {
		var t Tool
		err := t.UnmarshalJSON(raw)
		v.Tools = append(v.Tools, t)
		return err
	})
	d.object("response_format", func(raw json.RawMessage) error {
		v.ResponseFormat = new(ResponseFormat)
		return v.ResponseFormat.UnmarshalJSON(raw)
	})
	v.Extra = d.extra()
	if d.err != nil {
		return fmt.Errorf("chat: request: %w", d.err)
	}
	*r = v
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (m *Message) UnmarshalJSON(data []byte) error {
	d, err := newFields(data)
	if err != nil {
		return fmt.Errorf("chat: message: %w", err)
	}
	v := Message{
		Role:             d.str("role"),
		ReasoningContent: d.str("reasoning_content"),
		ToolCallID:       d.str("tool_call_id"),
		Name:             d.str("name"),
	}
	if raw, ok := d.take("content"); ok {
		if err := v.Content.UnmarshalJSON(raw); err != nil {
			d.fail("content", err)
		}
	}
	d.list("tool_calls", func(raw json.RawMessage) error {
		var c ToolCall
		err := c.UnmarshalJSON(raw)
		v.ToolCalls = append(v.ToolCalls, c)
		return err
	})
	v.Extra = d.extra()
	if d.err != nil {
		return fmt.Errorf("chat: message: %w", d.err)
	}
	*m = v
	return nil
}

// UnmarshalJSON implements json.Unmarshaler: a string, an array of parts, or
// null (absent).
func (c *Content) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	switch {
	case len(data) == 0:
		return errors.New("chat: content: empty value")
	case data[0] == '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return fmt.Errorf("chat: content: %w", err)
		}
		*c = Text(s)
	case data[0] == '[':
		var elems []json.RawMessage
		if err := json.Unmarshal(data, &elems); err != nil {
			return fmt.Errorf("chat: content: %w", err)
		}
		parts := make([]Part, len(elems))
		for i, e := range elems {
			if err := parts[i].UnmarshalJSON(e); err != nil {
				return fmt.Errorf("chat: content[%d]: %w", i, err)
			}
		}
		*c = Parts(parts...)
	case string(data) == "null":
		*c = Content{}
	default:
		return fmt.Errorf("chat: content: expected a string, an array or null, got %.40s", data)
	}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (p *Part) UnmarshalJSON(data []byte) error {
	d, err := newFields(data)
	if err != nil {
		return fmt.Errorf("chat: content part: %w", err)
	}
	v := Part{Type: d.str("type"), Text: d.str("text"), AudioURL: d.str("audio_url")}
	d.object("image_url", func(raw json.RawMessage) error {
		f, err := newFields(raw)
		if err != nil {
			return err
		}
		v.ImageURL = &ImageURL{URL: f.str("url"), Detail: f.str("detail")}
		v.ImageURL.Extra = f.extra()
		return f.err
	})
	d.object("input_audio", func(raw json.RawMessage) error {
		f, err := newFields(raw)
		if err != nil {
			return err
		}
		v.InputAudio = &InputAudio{Data: f.str("data"), Format: f.str("format")}
		v.InputAudio.Extra = f.extra()
		return f.err
	})
	v.Extra = d.extra()
	if d.err != nil {
		return fmt.Errorf("chat: content part: %w", d.err)
	}
	*p = v
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (c *ToolCall) UnmarshalJSON(data []byte) error {
	d, err := newFields(data)
	if err != nil {
		return fmt.Errorf("chat: tool call: %w", err)
	}
	v := ToolCall{ID: d.str("id"), Type: d.str("type")}
	d.object("function", func(raw json.RawMessage) error {
		f, err := newFields(raw)
		if err != nil {
			return err
		}
		v.Function = FunctionCall{Name: f.str("name"), Arguments: f.str("arguments")}
		v.Function.Extra = f.extra()
		return f.err
	})
	v.Extra = d.extra()
	if d.err != nil {
		return fmt.Errorf("chat: tool call: %w", d.err)
	}
	*c = v
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *Tool) UnmarshalJSON(data []byte) error {
	d, err := newFields(data)
	if err != nil {
		return fmt.Errorf("chat: tool: %w", err)
	}
	v := Tool{Type: d.str("type")}
	d.object("function", func(raw json.RawMessage) error {
		f, err := newFields(raw)
		if err != nil {
			return err
		}
		v.Function = FunctionDef{
			Name:        f.str("name"),
			Description: f.str("description"),
			Parameters:  f.raw("parameters"),
			Strict:      f.boolPtr("strict"),
		}
		v.Function.Extra = f.extra()
		return f.err
	})
	v.Extra = d.extra()
	if d.err != nil {
		return fmt.Errorf("chat: tool: %w", d.err)
	}
	*t = v
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (r *ResponseFormat) UnmarshalJSON(data []byte) error {
	d, err := newFields(data)
	if err != nil {
		return fmt.Errorf("chat: response_format: %w", err)
	}
	v := ResponseFormat{Type: d.str("type")}
	d.object("json_schema", func(raw json.RawMessage) error {
		f, err := newFields(raw)
		if err != nil {
			return err
		}
		v.JSONSchema = &JSONSchema{
			Name:        f.str("name"),
			Description: f.str("description"),
			Schema:      f.raw("schema"),
			Strict:      f.boolPtr("strict"),
		}
		v.JSONSchema.Extra = f.extra()
		return f.err
	})
	v.Extra = d.extra()
	if d.err != nil {
		return fmt.Errorf("chat: response_format: %w", d.err)
	}
	*r = v
	return nil
}

// fields reads the members of one JSON object. Each accessor removes the key
// it reads, so what is left at the end is Extra. The first error sticks.
type fields struct {
	m   map[string]json.RawMessage
	err error
}

var errNotObject = errors.New("expected a JSON object")

func newFields(data []byte) (*fields, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		if !json.Valid(data) {
			var v any
			return nil, json.Unmarshal(data, &v)
		}
		return nil, errNotObject
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	return &fields{m: m}, nil
}

func (d *fields) fail(k string, err error) {
	if d.err == nil {
		d.err = fmt.Errorf("field %s: %w", k, err)
	}
}

// take removes key and returns its value; ok is false when it is missing or null.
func (d *fields) take(k string) (json.RawMessage, bool) {
	raw, ok := d.m[k]
	if !ok {
		return nil, false
	}
	delete(d.m, k)
	if string(raw) == "null" {
		return nil, false
	}
	return raw, true
}

func (d *fields) decode(k string, v any) bool {
	raw, ok := d.take(k)
	if !ok {
		return false
	}
	if err := json.Unmarshal(raw, v); err != nil {
		d.fail(k, err)
		return false
	}
	return true
}

func (d *fields) str(k string) string {
	var s string
	d.decode(k, &s)
	return s
}

func (d *fields) boolPtr(k string) *bool {
	var b bool
	if d.decode(k, &b) {
		return &b
	}
	return nil
}

func (d *fields) intPtr(k string) *int64 {
	var n int64
	if d.decode(k, &n) {
		return &n
	}
	return nil
}

// raw returns a compacted copy of any value, or nil when missing or null.
func (d *fields) raw(k string) json.RawMessage {
	raw, ok := d.take(k)
	if !ok {
		return nil
	}
	return compact(raw)
}

func (d *fields) list(k string, f func(json.RawMessage) error) {
	raw, ok := d.take(k)
	if !ok {
		return
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		d.fail(k, err)
		return
	}
	for i, e := range elems {
		if err := f(e); err != nil {
			d.fail(fmt.Sprintf("%s[%d]", k, i), err)
			return
		}
	}
}

func (d *fields) object(k string, f func(json.RawMessage) error) {
	raw, ok := d.take(k)
	if !ok {
		return
	}
	if err := f(raw); err != nil {
		d.fail(k, err)
	}
}

// extra returns the members not read so far, compacted.
func (d *fields) extra() Extra {
	if len(d.m) == 0 {
		return nil
	}
	e := make(Extra, len(d.m))
	for k, v := range d.m {
		e[k] = compact(v)
	}
	return e
}

func compact(raw json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	buf.Grow(len(raw))
	if err := json.Compact(&buf, raw); err != nil {
		// Values come from a successful json.Unmarshal and are valid.
		return append(json.RawMessage(nil), raw...)
	}
	return buf.Bytes()
}
