package chat

import (
	"encoding/json"
	"fmt"

	"github.com/harnessflow/harnessflow/internal/jsonx"
)

// UnmarshalJSON implements json.Unmarshaler. Fields the type does not model
// go to Extra, so that re-encoding loses nothing.
func (r *Request) UnmarshalJSON(data []byte) error {
	d, err := jsonx.NewFields(data)
	if err != nil {
		return fmt.Errorf("chat: request: %w", err)
	}
	v := Request{
		Model:               d.DecodeStr("model"),
		Stream:              d.BoolPtr("stream"),
		StreamOptions:       d.RawOpt("stream_options"),
		MaxTokens:           d.Int64Ptr("max_tokens"),
		MaxCompletionTokens: d.Int64Ptr("max_completion_tokens"),
		ToolChoice:          d.RawOpt("tool_choice"),
		ParallelToolCalls:   d.BoolPtr("parallel_tool_calls"),
		ServiceTier:         d.DecodeStr("service_tier"),
		Store:               d.BoolPtr("store"),
		ReasoningEffort:     d.DecodeStr("reasoning_effort"),
		Thinking:            d.RawOpt("thinking"),
		Verbosity:           d.DecodeStr("verbosity"),
		PromptCacheKey:      d.DecodeStr("prompt_cache_key"),
	}
	d.Array("messages", func(_ int, raw json.RawMessage) error {
		var m Message
		err := m.UnmarshalJSON(raw)
		v.Messages = append(v.Messages, m)
		return err
	})
	d.Array("tools", func(_ int, raw json.RawMessage) error {
		var t Tool
		err := t.UnmarshalJSON(raw)
		v.Tools = append(v.Tools, t)
		return err
	})
	if raw, ok := d.Take("response_format"); ok {
		v.ResponseFormat = new(ResponseFormat)
		if err := v.ResponseFormat.UnmarshalJSON(raw); err != nil {
			d.Fail("response_format", err)
		}
	}
	v.Extra = d.Extra()
	if d.Err != nil {
		return fmt.Errorf("chat: request: %w", d.Err)
	}
	*r = v
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (m *Message) UnmarshalJSON(data []byte) error {
	d, err := jsonx.NewFields(data)
	if err != nil {
		return fmt.Errorf("chat: message: %w", err)
	}
	v := Message{
		Role:             d.DecodeStr("role"),
		ReasoningContent: d.DecodeStr("reasoning_content"),
		ToolCallID:       d.DecodeStr("tool_call_id"),
		Name:             d.DecodeStr("name"),
	}
	if raw, ok := d.Take("content"); ok {
		if err := v.Content.UnmarshalJSON(raw); err != nil {
			d.Fail("content", err)
		}
	}
	d.Array("tool_calls", func(_ int, raw json.RawMessage) error {
		var c ToolCall
		err := c.UnmarshalJSON(raw)
		v.ToolCalls = append(v.ToolCalls, c)
		return err
	})
	v.Extra = d.Extra()
	if d.Err != nil {
		return fmt.Errorf("chat: message: %w", d.Err)
	}
	*m = v
	return nil
}

// UnmarshalJSON implements json.Unmarshaler: a string, an array of parts, or
// null (absent).
func (c *Content) UnmarshalJSON(data []byte) error {
	text, parts, shape, err := jsonx.StringOrArray[Part](data, "chat: content")
	if err != nil {
		return err
	}
	switch shape {
	case jsonx.ShapeString:
		*c = Text(text)
	case jsonx.ShapeArray:
		*c = Parts(parts...)
	default:
		*c = Content{}
	}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (p *Part) UnmarshalJSON(data []byte) error {
	d, err := jsonx.NewFields(data)
	if err != nil {
		return fmt.Errorf("chat: content part: %w", err)
	}
	v := Part{Type: d.DecodeStr("type"), Text: d.DecodeStr("text"), AudioURL: d.DecodeStr("audio_url")}
	d.Object("image_url", func(f *jsonx.Fields) error {
		v.ImageURL = &ImageURL{URL: f.DecodeStr("url"), Detail: f.DecodeStr("detail")}
		v.ImageURL.Extra = f.Extra()
		return f.Err
	})
	d.Object("input_audio", func(f *jsonx.Fields) error {
		v.InputAudio = &InputAudio{Data: f.DecodeStr("data"), Format: f.DecodeStr("format")}
		v.InputAudio.Extra = f.Extra()
		return f.Err
	})
	v.Extra = d.Extra()
	if d.Err != nil {
		return fmt.Errorf("chat: content part: %w", d.Err)
	}
	*p = v
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (c *ToolCall) UnmarshalJSON(data []byte) error {
	d, err := jsonx.NewFields(data)
	if err != nil {
		return fmt.Errorf("chat: tool call: %w", err)
	}
	v := ToolCall{ID: d.DecodeStr("id"), Type: d.DecodeStr("type")}
	d.Object("function", func(f *jsonx.Fields) error {
		v.Function = FunctionCall{Name: f.DecodeStr("name"), Arguments: f.DecodeStr("arguments")}
		v.Function.Extra = f.Extra()
		return f.Err
	})
	v.Extra = d.Extra()
	if d.Err != nil {
		return fmt.Errorf("chat: tool call: %w", d.Err)
	}
	*c = v
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *Tool) UnmarshalJSON(data []byte) error {
	d, err := jsonx.NewFields(data)
	if err != nil {
		return fmt.Errorf("chat: tool: %w", err)
	}
	v := Tool{Type: d.DecodeStr("type")}
	d.Object("function", func(f *jsonx.Fields) error {
		v.Function = FunctionDef{
			Name:        f.DecodeStr("name"),
			Description: f.DecodeStr("description"),
			Parameters:  f.RawOpt("parameters"),
			Strict:      f.BoolPtr("strict"),
		}
		v.Function.Extra = f.Extra()
		return f.Err
	})
	v.Extra = d.Extra()
	if d.Err != nil {
		return fmt.Errorf("chat: tool: %w", d.Err)
	}
	*t = v
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (r *ResponseFormat) UnmarshalJSON(data []byte) error {
	d, err := jsonx.NewFields(data)
	if err != nil {
		return fmt.Errorf("chat: response_format: %w", err)
	}
	v := ResponseFormat{Type: d.DecodeStr("type")}
	d.Object("json_schema", func(f *jsonx.Fields) error {
		v.JSONSchema = &JSONSchema{
			Name:        f.DecodeStr("name"),
			Description: f.DecodeStr("description"),
			Schema:      f.RawOpt("schema"),
			Strict:      f.BoolPtr("strict"),
		}
		v.JSONSchema.Extra = f.Extra()
		return f.Err
	})
	v.Extra = d.Extra()
	if d.Err != nil {
		return fmt.Errorf("chat: response_format: %w", d.Err)
	}
	*r = v
	return nil
}
