package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// ---------------------------------------------------------------------------------------------
// Public entry points

// MarshalItem encodes one ResponseItem (SPEC §A.1).
func MarshalItem(it ResponseItem) ([]byte, error) { return AppendItem(nil, it) }

// AppendItem appends the JSON of one ResponseItem to dst.
func AppendItem(dst []byte, it ResponseItem) ([]byte, error) {
	w := newEnc(dst)
	writeItem(w, it)
	if w.err != nil {
		return dst, w.err
	}
	return w.b, nil
}

// UnmarshalItem decodes one ResponseItem. Items of a type this package does not model are
// returned as *OtherItem holding the original JSON (compacted).
func UnmarshalItem(data []byte) (ResponseItem, error) {
	it, err := decodeItem(data)
	if err != nil {
		return nil, fmt.Errorf("protocol: response item: %w", err)
	}
	return it, nil
}

// MarshalJSON encodes the items as a JSON array; nil encodes as [].
func (s Items) MarshalJSON() ([]byte, error) {
	w := newEnc(make([]byte, 0, 256*len(s)+2))
	writeItems(w, s)
	if w.err != nil {
		return nil, w.err
	}
	return w.b, nil
}

// UnmarshalJSON decodes a JSON array of items; null gives nil.
func (s *Items) UnmarshalJSON(data []byte) error {
	var elems []json.RawMessage
	if err := json.Unmarshal(data, &elems); err != nil {
		return fmt.Errorf("protocol: items: %w", err)
	}
	if elems == nil {
		*s = nil
		return nil
	}
	out := make(Items, len(elems))
	for i, e := range elems {
		it, err := decodeItem(e)
		if err != nil {
			return fmt.Errorf("protocol: items[%d]: %w", i, err)
		}
		out[i] = it
	}
	*s = out
	return nil
}

func writeItems(w *enc, s []ResponseItem) {
	w.b = append(w.b, '[')
	for i, it := range s {
		w.elem(i)
		if w.err == nil {
			writeItem(w, it)
			if w.err != nil {
				w.err = fmt.Errorf("items[%d]: %w", i, w.err)
			}
		}
	}
	w.b = append(w.b, ']')
}

// Per-type json.Marshaler / json.Unmarshaler implementations, so that json.Marshal works on
// the concrete types and on structs that embed them.

// MarshalJSON implements json.Marshaler.
func (m Message) MarshalJSON() ([]byte, error) { return marshalItemValue(&m) }

// MarshalJSON implements json.Marshaler.
func (r Reasoning) MarshalJSON() ([]byte, error) { return marshalItemValue(&r) }

// MarshalJSON implements json.Marshaler.
func (c LocalShellCall) MarshalJSON() ([]byte, error) { return marshalItemValue(&c) }

// MarshalJSON implements json.Marshaler.
func (c FunctionCall) MarshalJSON() ([]byte, error) { return marshalItemValue(&c) }

// MarshalJSON implements json.Marshaler.
func (o FunctionCallOutput) MarshalJSON() ([]byte, error) { return marshalItemValue(&o) }

// MarshalJSON implements json.Marshaler.
func (c CustomToolCall) MarshalJSON() ([]byte, error) { return marshalItemValue(&c) }

// MarshalJSON implements json.Marshaler.
func (o CustomToolCallOutput) MarshalJSON() ([]byte, error) { return marshalItemValue(&o) }

// MarshalJSON implements json.Marshaler.
func (c ToolSearchCall) MarshalJSON() ([]byte, error) { return marshalItemValue(&c) }

// MarshalJSON implements json.Marshaler.
func (o ToolSearchOutput) MarshalJSON() ([]byte, error) { return marshalItemValue(&o) }

// MarshalJSON implements json.Marshaler.
func (c WebSearchCall) MarshalJSON() ([]byte, error) { return marshalItemValue(&c) }

// MarshalJSON implements json.Marshaler.
func (o OtherItem) MarshalJSON() ([]byte, error) { return marshalItemValue(&o) }

// UnmarshalJSON implements json.Unmarshaler.
func (m *Message) UnmarshalJSON(data []byte) error { return unmarshalItemInto(data, m) }

// UnmarshalJSON implements json.Unmarshaler.
func (r *Reasoning) UnmarshalJSON(data []byte) error { return unmarshalItemInto(data, r) }

// UnmarshalJSON implements json.Unmarshaler.
func (c *LocalShellCall) UnmarshalJSON(data []byte) error { return unmarshalItemInto(data, c) }

// UnmarshalJSON implements json.Unmarshaler.
func (c *FunctionCall) UnmarshalJSON(data []byte) error { return unmarshalItemInto(data, c) }

// UnmarshalJSON implements json.Unmarshaler.
func (o *FunctionCallOutput) UnmarshalJSON(data []byte) error { return unmarshalItemInto(data, o) }

// UnmarshalJSON implements json.Unmarshaler.
func (c *CustomToolCall) UnmarshalJSON(data []byte) error { return unmarshalItemInto(data, c) }

// UnmarshalJSON implements json.Unmarshaler.
func (o *CustomToolCallOutput) UnmarshalJSON(data []byte) error {
	return unmarshalItemInto(data, o)
}

// UnmarshalJSON implements json.Unmarshaler.
func (c *ToolSearchCall) UnmarshalJSON(data []byte) error { return unmarshalItemInto(data, c) }

// UnmarshalJSON implements json.Unmarshaler.
func (o *ToolSearchOutput) UnmarshalJSON(data []byte) error { return unmarshalItemInto(data, o) }

// UnmarshalJSON implements json.Unmarshaler.
func (c *WebSearchCall) UnmarshalJSON(data []byte) error { return unmarshalItemInto(data, c) }

// UnmarshalJSON implements json.Unmarshaler. Any object with a string "type" is accepted.
func (o *OtherItem) UnmarshalJSON(data []byte) error {
	d, err := newDec(data)
	if err != nil {
		return fmt.Errorf("protocol: response item: %w", err)
	}
	typ, err := itemType(d)
	if err != nil {
		return fmt.Errorf("protocol: response item: %w", err)
	}
	*o = OtherItem{Type: typ, Raw: compactRaw(data)}
	return nil
}

func marshalItemValue(it ResponseItem) ([]byte, error) {
	b, err := MarshalItem(it)
	if err != nil {
		return nil, fmt.Errorf("protocol: response item: %w", err)
	}
	return b, nil
}

// unmarshalItemInto decodes data and stores it in dst, which must be of the same type.
func unmarshalItemInto[T any, P interface {
	*T
	ResponseItem
}](data []byte, dst P) error {
	it, err := UnmarshalItem(data)
	if err != nil {
		return err
	}
	v, ok := it.(P)
	if !ok {
		return fmt.Errorf("protocol: response item: type %q, want %q", it.ItemType(), dst.ItemType())
	}
	*dst = *v
	return nil
}

// ---------------------------------------------------------------------------------------------
// Encoding

var errNilItem = errors.New("nil item")

func writeItem(w *enc, it ResponseItem) {
	switch v := it.(type) {
	case *Message:
		if v != nil {
			writeMessage(w, v)
			return
		}
	case *Reasoning:
		if v != nil {
			writeReasoning(w, v)
			return
		}
	case *LocalShellCall:
		if v != nil {
			writeLocalShellCall(w, v)
			return
		}
	case *FunctionCall:
		if v != nil {
			f := w.open()
			w.str("type", TypeFunctionCall)
			w.strOpt("id", v.ID)
			w.str("name", v.Name)
			w.strOpt("namespace", v.Namespace)
			w.str("arguments", v.Arguments)
			w.strOpt("encrypted_function_args", v.EncryptedFunctionArgs)
			w.str("call_id", v.CallID)
			w.extra(v.Extra)
			w.close(f)
			return
		}
	case *FunctionCallOutput:
		if v != nil {
			f := w.open()
			w.str("type", TypeFunctionCallOutput)
			w.strOpt("id", v.ID)
			w.str("call_id", v.CallID)
			w.key("output")
			writePayload(w, &v.Output)
			w.extra(v.Extra)
			w.close(f)
			return
		}
	case *CustomToolCall:
		if v != nil {
			f := w.open()
			w.str("type", TypeCustomToolCall)
			w.strOpt("id", v.ID)
			w.strOpt("status", v.Status)
			w.str("call_id", v.CallID)
			w.str("name", v.Name)
			w.strOpt("namespace", v.Namespace)
			w.str("input", v.Input)
			w.extra(v.Extra)
			w.close(f)
			return
		}
	case *CustomToolCallOutput:
		if v != nil {
			f := w.open()
			w.str("type", TypeCustomToolCallOutput)
			w.strOpt("id", v.ID)
			w.str("call_id", v.CallID)
			w.strOpt("name", v.Name)
			w.key("output")
			writePayload(w, &v.Output)
			w.extra(v.Extra)
			w.close(f)
			return
		}
	case *ToolSearchCall:
		if v != nil {
			f := w.open()
			w.str("type", TypeToolSearchCall)
			w.strOpt("id", v.ID)
			w.strOpt("call_id", v.CallID)
			w.strOpt("status", v.Status)
			w.str("execution", v.Execution)
			w.raw("arguments", v.Arguments, "null")
			w.extra(v.Extra)
			w.close(f)
			return
		}
	case *ToolSearchOutput:
		if v != nil {
			f := w.open()
			w.str("type", TypeToolSearchOutput)
			w.strOpt("id", v.ID)
			w.strOpt("call_id", v.CallID)
			w.str("status", v.Status)
			w.str("execution", v.Execution)
			w.key("tools")
			w.b = append(w.b, '[')
			for i, t := range v.Tools {
				w.elem(i)
				w.rawValue(fmt.Sprintf("tools[%d]", i), t, "null")
			}
			w.b = append(w.b, ']')
			w.extra(v.Extra)
			w.close(f)
			return
		}
	case *WebSearchCall:
		if v != nil {
			f := w.open()
			w.str("type", TypeWebSearchCall)
			w.strOpt("id", v.ID)
			w.strOpt("status", v.Status)
			if a := v.Action; a != nil {
				w.key("action")
				af := w.open()
				w.str("type", a.Type)
				w.strOpt("query", a.Query)
				if a.Queries != nil {
					w.strings("queries", a.Queries)
				}
				w.strOpt("url", a.URL)
				w.strOpt("pattern", a.Pattern)
				w.extra(a.Extra)
				w.close(af)
			}
			w.extra(v.Extra)
			w.close(f)
			return
		}
	case *OtherItem:
		if v != nil {
			if len(v.Raw) == 0 {
				f := w.open()
				w.str("type", v.Type)
				w.close(f)
				return
			}
			w.rawValue("raw", v.Raw, "")
			return
		}
	}
	w.fail(errNilItem)
}

func writeMessage(w *enc, m *Message) {
	f := w.open()
	w.str("type", TypeMessage)
	w.strOpt("id", m.ID)
	w.str("role", m.Role)
	w.key("content")
	w.b = append(w.b, '[')
	for i := range m.Content {
		w.elem(i)
		writeContentItem(w, &m.Content[i])
	}
	w.b = append(w.b, ']')
	w.strOpt("phase", m.Phase)
	w.extra(m.Extra)
	w.close(f)
}

func writeContentItem(w *enc, c *ContentItem) {
	f := w.open()
	w.str("type", c.Type)
	switch c.Type {
	case ContentInputText, ContentOutputText:
		w.str("text", c.Text)
	case ContentInputImage:
		w.str("image_url", c.ImageURL)
		w.strOpt("detail", c.Detail)
	case ContentInputAudio:
		w.str("audio_url", c.AudioURL)
	default:
		w.strOpt("text", c.Text)
		w.strOpt("image_url", c.ImageURL)
		w.strOpt("detail", c.Detail)
		w.strOpt("audio_url", c.AudioURL)
	}
	w.extra(c.Extra)
	w.close(f)
}

func writeReasoning(w *enc, r *Reasoning) {
	f := w.open()
	w.str("type", TypeReasoning)
	w.strOpt("id", r.ID)
	w.key("summary")
	w.b = append(w.b, '[')
	for i, s := range r.Summary {
		w.elem(i)
		sf := w.open()
		w.str("type", s.Type)
		w.str("text", s.Text)
		w.close(sf)
	}
	w.b = append(w.b, ']')
	switch {
	case r.Content == nil:
		w.key("content")
		w.b = append(w.b, "null"...)
	case hasReasoningText(r.Content):
		w.key("content")
		w.b = append(w.b, '[')
		for i, c := range r.Content {
			w.elem(i)
			cf := w.open()
			w.str("type", c.Type)
			w.str("text", c.Text)
			w.close(cf)
		}
		w.b = append(w.b, ']')
	}
	w.strPtr("encrypted_content", r.EncryptedContent)
	if r.Content != nil && !hasReasoningText(r.Content) {
		// "content" is deliberately dropped; keep an Extra "content" from sneaking in.
		w.written = append(w.written, "content")
	}
	w.extra(r.Extra)
	w.close(f)
}

func hasReasoningText(c []ReasoningContent) bool {
	return slices.ContainsFunc(c, func(x ReasoningContent) bool { return x.Type == ReasoningTypeText })
}

func writeLocalShellCall(w *enc, c *LocalShellCall) {
	f := w.open()
	w.str("type", TypeLocalShellCall)
	w.strOpt("id", c.ID)
	w.strPtr("call_id", c.CallID)
	w.str("status", c.Status)
	w.key("action")
	a := &c.Action
	af := w.open()
	typ := a.Type
	if typ == "" {
		typ = "exec"
	}
	w.str("type", typ)
	w.strings("command", a.Command)
	w.key("timeout_ms")
	if a.TimeoutMS == nil {
		w.b = append(w.b, "null"...)
	} else {
		w.b = appendUint(w.b, *a.TimeoutMS)
	}
	w.strPtr("working_directory", a.WorkingDirectory)
	w.key("env")
	if a.Env == nil {
		w.b = append(w.b, "null"...)
	} else {
		keys := make([]string, 0, len(a.Env))
		for k := range a.Env {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		ef := w.open()
		for _, k := range keys {
			w.str(k, a.Env[k])
		}
		w.close(ef)
	}
	w.strPtr("user", a.User)
	w.extra(a.Extra)
	w.close(af)
	w.extra(c.Extra)
	w.close(f)
}

func writePayload(w *enc, p *FunctionCallOutputPayload) {
	switch {
	case p.Text != nil:
		w.b = AppendString(w.b, *p.Text)
	case p.Items != nil:
		w.b = append(w.b, '[')
		for i := range p.Items {
			w.elem(i)
			writeOutputContentItem(w, &p.Items[i])
		}
		w.b = append(w.b, ']')
	default:
		w.b = append(w.b, `""`...)
	}
}

func writeOutputContentItem(w *enc, c *FunctionCallOutputContentItem) {
	f := w.open()
	w.str("type", c.Type)
	switch c.Type {
	case ContentInputText:
		w.str("text", c.Text)
	case ContentInputImage:
		w.str("image_url", c.ImageURL)
		w.strOpt("detail", c.Detail)
	case ContentInputAudio:
		w.str("audio_url", c.AudioURL)
	case ContentInputVideo:
		w.str("video_url", c.VideoURL)
		w.strOpt("id", c.ID)
	case ContentEncryptedContent:
		w.str("encrypted_content", c.EncryptedContent)
	default:
		w.strOpt("text", c.Text)
		w.strOpt("image_url", c.ImageURL)
		w.strOpt("detail", c.Detail)
		w.strOpt("audio_url", c.AudioURL)
		w.strOpt("video_url", c.VideoURL)
		w.strOpt("id", c.ID)
		w.strOpt("encrypted_content", c.EncryptedContent)
	}
	w.extra(c.Extra)
	w.close(f)
}

// ---------------------------------------------------------------------------------------------
// Decoding

func itemType(d *dec) (string, error) {
	raw, ok := d.m["type"]
	if !ok {
		return "", errors.New(`missing "type"`)
	}
	var typ string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &typ) != nil {
		return "", fmt.Errorf(`"type" is not a string: %.40s`, raw)
	}
	return typ, nil
}

func decodeItem(data []byte) (ResponseItem, error) {
	d, err := newDec(data)
	if err != nil {
		return nil, err
	}
	typ, err := itemType(d)
	if err != nil {
		return nil, err
	}
	var it ResponseItem
	switch typ {
	case TypeMessage:
		m := &Message{ID: d.str("id"), Role: d.str("role")}
		m.Content = make([]ContentItem, 0)
		d.array("content", func(_ int, raw json.RawMessage) error {
			c, err := decodeContentItem(raw)
			m.Content = append(m.Content, c)
			return err
		})
		m.Phase = d.str("phase")
		m.Extra = d.extra()
		it = m
	case TypeReasoning:
		r := &Reasoning{ID: d.str("id")}
		r.Summary = make([]SummaryText, 0)
		d.array("summary", func(_ int, raw json.RawMessage) error {
			s, err := decodeTypedText(raw)
			r.Summary = append(r.Summary, SummaryText(s))
			return err
		})
		content := make([]ReasoningContent, 0)
		if d.array("content", func(_ int, raw json.RawMessage) error {
			s, err := decodeTypedText(raw)
			content = append(content, ReasoningContent(s))
			return err
		}) {
			r.Content = content
		}
		r.EncryptedContent = d.strPtr("encrypted_content")
		r.Extra = d.extra()
		it = r
	case TypeLocalShellCall:
		c := &LocalShellCall{ID: d.str("id"), CallID: d.strPtr("call_id"), Status: d.str("status")}
		c.Action = LocalShellAction{Type: "exec", Command: []string{}}
		d.object("action", func(a *dec) error {
			if t := a.str("type"); t != "" {
				c.Action.Type = t
			}
			if cmd := a.strings("command"); cmd != nil {
				c.Action.Command = cmd
			}
			c.Action.TimeoutMS = a.uint64Ptr("timeout_ms")
			c.Action.WorkingDirectory = a.strPtr("working_directory")
			a.unmarshal("env", &c.Action.Env)
			c.Action.User = a.strPtr("user")
			c.Action.Extra = a.extra()
			return a.err
		})
		c.Extra = d.extra()
		it = c
	case TypeFunctionCall:
		it = &FunctionCall{
			ID:                    d.str("id"),
			Name:                  d.str("name"),
			Namespace:             d.str("namespace"),
			Arguments:             d.str("arguments"),
			CallID:                d.str("call_id"),
			EncryptedFunctionArgs: d.str("encrypted_function_args"),
			Extra:                 d.extra(),
		}
	case TypeFunctionCallOutput:
		o := &FunctionCallOutput{ID: d.str("id"), CallID: d.str("call_id")}
		o.Output = decodePayloadField(d)
		o.Extra = d.extra()
		it = o
	case TypeCustomToolCall:
		it = &CustomToolCall{
			ID:        d.str("id"),
			Status:    d.str("status"),
			CallID:    d.str("call_id"),
			Name:      d.str("name"),
			Namespace: d.str("namespace"),
			Input:     d.str("input"),
			Extra:     d.extra(),
		}
	case TypeCustomToolCallOutput:
		o := &CustomToolCallOutput{ID: d.str("id"), CallID: d.str("call_id"), Name: d.str("name")}
		o.Output = decodePayloadField(d)
		o.Extra = d.extra()
		it = o
	case TypeToolSearchCall:
		it = &ToolSearchCall{
			ID:        d.str("id"),
			CallID:    d.str("call_id"),
			Status:    d.str("status"),
			Execution: d.str("execution"),
			Arguments: d.rawOrNull("arguments"),
			Extra:     d.extra(),
		}
	case TypeToolSearchOutput:
		o := &ToolSearchOutput{
			ID:        d.str("id"),
			CallID:    d.str("call_id"),
			Status:    d.str("status"),
			Execution: d.str("execution"),
			Tools:     make([]json.RawMessage, 0),
		}
		d.array("tools", func(_ int, raw json.RawMessage) error {
			o.Tools = append(o.Tools, compactRaw(raw))
			return nil
		})
		o.Extra = d.extra()
		it = o
	case TypeWebSearchCall:
		c := &WebSearchCall{ID: d.str("id"), Status: d.str("status")}
		d.object("action", func(a *dec) error {
			c.Action = &WebSearchAction{
				Type:    a.str("type"),
				Query:   a.str("query"),
				Queries: a.strings("queries"),
				URL:     a.str("url"),
				Pattern: a.str("pattern"),
				Extra:   a.extra(),
			}
			return a.err
		})
		c.Extra = d.extra()
		it = c
	default:
		return &OtherItem{Type: typ, Raw: compactRaw(data)}, nil
	}
	if d.err != nil {
		return nil, fmt.Errorf("%s: %w", typ, d.err)
	}
	return it, nil
}

func decodeContentItem(raw json.RawMessage) (ContentItem, error) {
	d, err := newDec(raw)
	if err != nil {
		return ContentItem{}, err
	}
	c := ContentItem{Type: d.str("type")}
	switch c.Type {
	case ContentInputText, ContentOutputText:
		c.Text = d.str("text")
	case ContentInputImage:
		c.ImageURL = d.str("image_url")
		c.Detail = d.str("detail")
	case ContentInputAudio:
		c.AudioURL = d.str("audio_url")
	}
	c.Extra = d.extra()
	return c, d.err
}

type typedText struct{ Type, Text string }

func decodeTypedText(raw json.RawMessage) (typedText, error) {
	d, err := newDec(raw)
	if err != nil {
		return typedText{}, err
	}
	t := typedText{Type: d.str("type"), Text: d.str("text")}
	return t, d.err
}

func decodePayloadField(d *dec) FunctionCallOutputPayload {
	raw, ok := d.take("output")
	if !ok {
		return FunctionCallOutputPayload{Text: new(string)}
	}
	var p FunctionCallOutputPayload
	if err := p.UnmarshalJSON(raw); err != nil {
		d.fail("output", err)
	}
	return p
}

// MarshalJSON encodes the payload as a string or an array (Success is never written).
func (p FunctionCallOutputPayload) MarshalJSON() ([]byte, error) {
	w := newEnc(nil)
	writePayload(w, &p)
	return w.b, w.err
}

// UnmarshalJSON decodes a string or an array of content items. Success is left unchanged.
func (p *FunctionCallOutputPayload) UnmarshalJSON(data []byte) error {
	var elems []json.RawMessage
	switch firstByte(data) {
	case '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return fmt.Errorf("protocol: function call output: %w", err)
		}
		p.Text, p.Items = &s, nil
		return nil
	case '[':
		if err := json.Unmarshal(data, &elems); err != nil {
			return fmt.Errorf("protocol: function call output: %w", err)
		}
	default:
		return fmt.Errorf("protocol: function call output: expected a string or an array, got %.40s", data)
	}
	items := make([]FunctionCallOutputContentItem, 0, len(elems))
	for i, e := range elems {
		d, err := newDec(e)
		if err != nil {
			return fmt.Errorf("protocol: function call output: [%d]: %w", i, err)
		}
		c := FunctionCallOutputContentItem{Type: d.str("type")}
		switch c.Type {
		case ContentInputText:
			c.Text = d.str("text")
		case ContentInputImage:
			c.ImageURL = d.str("image_url")
			c.Detail = d.str("detail")
		case ContentInputAudio:
			c.AudioURL = d.str("audio_url")
		case ContentInputVideo:
			c.VideoURL = d.str("video_url")
			c.ID = d.str("id")
		case ContentEncryptedContent:
			c.EncryptedContent = d.str("encrypted_content")
		}
		c.Extra = d.extra()
		if d.err != nil {
			return fmt.Errorf("protocol: function call output: [%d]: %w", i, d.err)
		}
		items = append(items, c)
	}
	p.Text, p.Items = nil, items
	return nil
}

func firstByte(data []byte) byte {
	for _, b := range data {
		switch b {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return b
	}
	return 0
}

func appendUint(dst []byte, v uint64) []byte { return strconv.AppendUint(dst, v, 10) }
