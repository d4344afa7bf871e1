package anthropic

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
		return fmt.Errorf("anthropic: request: %w", err)
	}
	v := Request{
		Model:      d.DecodeStr("model"),
		ToolChoice: d.RawOpt("tool_choice"),
		MaxTokens:  d.Int64("max_tokens"),
		Stream:     d.BoolPtr("stream"),
	}
	if raw, ok := d.Take("temperature"); ok {
		var f float64
		if err := json.Unmarshal(raw, &f); err != nil {
			d.Fail("temperature", err)
		}
		v.Temperature = &f
	}
	d.Array("messages", func(_ int, raw json.RawMessage) error {
		var m Message
		err := m.UnmarshalJSON(raw)
		v.Messages = append(v.Messages, m)
		return err
	})
	if raw, ok := d.Take("system"); ok {
		if err := v.System.UnmarshalJSON(raw); err != nil {
			d.Fail("system", err)
		}
	}
	d.Array("tools", func(_ int, raw json.RawMessage) error {
		var t Tool
		err := t.UnmarshalJSON(raw)
		v.Tools = append(v.Tools, t)
		return err
	})
	d.Object("thinking", func(f *jsonx.Fields) error {
		v.Thinking = &Thinking{Type: f.DecodeStr("type"), BudgetTokens: f.Int64Ptr("budget_tokens"), Display: f.DecodeStr("display")}
		v.Thinking.Extra = f.Extra()
		return f.Err
	})
	d.Object("context_management", func(f *jsonx.Fields) error {
		v.ContextManagement = &ContextManagement{}
		f.Array("edits", func(_ int, raw json.RawMessage) error {
			e, err := jsonx.NewFields(raw)
			if err != nil {
				return err
			}
			edit := ContextEdit{Type: e.DecodeStr("type"), Keep: e.RawOpt("keep")}
			edit.Extra = e.Extra()
			v.ContextManagement.Edits = append(v.ContextManagement.Edits, edit)
			return e.Err
		})
		v.ContextManagement.Extra = f.Extra()
		return f.Err
	})
	d.Object("output_config", func(f *jsonx.Fields) error {
		v.OutputConfig = &OutputConfig{Effort: f.DecodeStr("effort"), Format: f.RawOpt("format")}
		v.OutputConfig.Extra = f.Extra()
		return f.Err
	})
	d.Object("metadata", func(f *jsonx.Fields) error {
		v.Metadata = &Metadata{UserID: f.DecodeStr("user_id")}
		v.Metadata.Extra = f.Extra()
		return f.Err
	})
	v.Extra = d.Extra()
	if d.Err != nil {
		return fmt.Errorf("anthropic: request: %w", d.Err)
	}
	*r = v
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (m *Message) UnmarshalJSON(data []byte) error {
	d, err := jsonx.NewFields(data)
	if err != nil {
		return fmt.Errorf("anthropic: message: %w", err)
	}
	v := Message{Role: d.DecodeStr("role")}
	if raw, ok := d.Take("content"); ok {
		if err := v.Content.UnmarshalJSON(raw); err != nil {
			d.Fail("content", err)
		}
	}
	v.Extra = d.Extra()
	if d.Err != nil {
		return fmt.Errorf("anthropic: message: %w", d.Err)
	}
	*m = v
	return nil
}

// UnmarshalJSON implements json.Unmarshaler: a string, an array of blocks, or
// null (absent).
func (c *Content) UnmarshalJSON(data []byte) error {
	text, blocks, shape, err := jsonx.StringOrArray[Block](data, "anthropic: content")
	if err != nil {
		return err
	}
	switch shape {
	case jsonx.ShapeString:
		*c = Text(text)
	case jsonx.ShapeArray:
		*c = Blocks(blocks...)
	default:
		*c = Content{}
	}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (b *Block) UnmarshalJSON(data []byte) error {
	d, err := jsonx.NewFields(data)
	if err != nil {
		return fmt.Errorf("anthropic: block: %w", err)
	}
	v := Block{
		Type:      d.DecodeStr("type"),
		Text:      d.DecodeStr("text"),
		Thinking:  d.DecodeStr("thinking"),
		Signature: d.DecodeStr("signature"),
		Data:      d.DecodeStr("data"),
		ID:        d.DecodeStr("id"),
		Name:      d.DecodeStr("name"),
		Input:     d.RawOpt("input"),
		ToolUseID: d.DecodeStr("tool_use_id"),
		IsError:   d.BoolPtr("is_error"),
		Source:    d.RawOpt("source"),
	}
	if raw, ok := d.Take("content"); ok {
		v.Content = new(Content)
		if err := v.Content.UnmarshalJSON(raw); err != nil {
			d.Fail("content", err)
		}
	}
	d.Object("cache_control", func(f *jsonx.Fields) error {
		v.CacheControl = decodeCache(f)
		return f.Err
	})
	v.Extra = d.Extra()
	if d.Err != nil {
		return fmt.Errorf("anthropic: %s block: %w", v.Type, d.Err)
	}
	*b = v
	return nil
}

func decodeCache(f *jsonx.Fields) *CacheControl {
	c := &CacheControl{Type: f.DecodeStr("type"), TTL: f.DecodeStr("ttl")}
	c.Extra = f.Extra()
	return c
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *Tool) UnmarshalJSON(data []byte) error {
	d, err := jsonx.NewFields(data)
	if err != nil {
		return fmt.Errorf("anthropic: tool: %w", err)
	}
	v := Tool{
		Type:         d.DecodeStr("type"),
		Name:         d.DecodeStr("name"),
		Description:  d.DecodeStr("description"),
		InputSchema:  d.RawOpt("input_schema"),
		Strict:       d.BoolPtr("strict"),
		DeferLoading: d.BoolPtr("defer_loading"),
	}
	d.Object("cache_control", func(f *jsonx.Fields) error {
		v.CacheControl = decodeCache(f)
		return f.Err
	})
	v.Extra = d.Extra()
	if d.Err != nil {
		return fmt.Errorf("anthropic: tool: %w", d.Err)
	}
	*t = v
	return nil
}
