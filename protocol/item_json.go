package protocol

//go:generate go run ../internal/codecgen -pkg protocol -out item_codec_gen.go

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/harnessflow/harnessflow/internal/jsonx"
)

// ---------------------------------------------------------------------------------------------
// Public entry points

// MarshalItem encodes one ResponseItem (docs/protocol.md#response-items).
func MarshalItem(it ResponseItem) ([]byte, error) { return AppendItem(nil, it) }

// AppendItem appends the JSON of one ResponseItem to dst.
func AppendItem(dst []byte, it ResponseItem) ([]byte, error) {
	w := newEnc(dst)
	writeItem(w, it)
	if w.Err != nil {
		return dst, w.Err
	}
	return w.B, nil
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
	if w.Err != nil {
		return nil, w.Err
	}
	return w.B, nil
}

// UnmarshalJSON decodes a JSON array of items; null gives nil.
func (s *Items) UnmarshalJSON(data []byte) error {
	elems, err := jsonx.SplitArray(data)
	if err != nil {
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

func writeItems(w *jsonx.Encoder, s []ResponseItem) {
	w.B = append(w.B, '[')
	for i, it := range s {
		w.Elem(i)
		if w.Err == nil {
			writeItem(w, it)
			if w.Err != nil {
				w.Err = fmt.Errorf("items[%d]: %w", i, w.Err)
			}
		}
	}
	w.B = append(w.B, ']')
}

// The per-type MarshalJSON and UnmarshalJSON (item_codec_gen.go) let json.Marshal work on the
// concrete types and on structs that embed them.

// UnmarshalJSON implements json.Unmarshaler. Any object with a string "type" is accepted.
func (o *OtherItem) UnmarshalJSON(data []byte) error {
	d, err := jsonx.NewFields(data)
	if err != nil {
		return fmt.Errorf("protocol: response item: %w", err)
	}
	typ, err := itemType(d)
	if err != nil {
		return fmt.Errorf("protocol: response item: %w", err)
	}
	*o = OtherItem{Type: typ, Raw: jsonx.Compact(data)}
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

func writeItem(w *jsonx.Encoder, it ResponseItem) {
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
			writeFunctionCall(w, v)
			return
		}
	case *FunctionCallOutput:
		if v != nil {
			writeFunctionCallOutput(w, v)
			return
		}
	case *CustomToolCall:
		if v != nil {
			writeCustomToolCall(w, v)
			return
		}
	case *CustomToolCallOutput:
		if v != nil {
			writeCustomToolCallOutput(w, v)
			return
		}
	case *ToolSearchCall:
		if v != nil {
			writeToolSearchCall(w, v)
			return
		}
	case *ToolSearchOutput:
		if v != nil {
			writeToolSearchOutput(w, v)
			return
		}
	case *WebSearchCall:
		if v != nil {
			writeWebSearchCall(w, v)
			return
		}
	case *OtherItem:
		if v != nil {
			if len(v.Raw) == 0 {
				f := w.Open()
				w.Str("type", v.Type)
				w.Close(f)
				return
			}
			w.RawValue("raw", v.Raw, "")
			return
		}
	}
	w.Fail(errNilItem)
}

// writeRawArray writes k and an array of raw JSON values (null for an empty one).
func writeRawArray(w *jsonx.Encoder, k string, vs []json.RawMessage) {
	w.Key(k)
	w.B = append(w.B, '[')
	for i, v := range vs {
		w.Elem(i)
		w.RawValue(fmt.Sprintf("%s[%d]", k, i), v, "null")
	}
	w.B = append(w.B, ']')
}

// decodeRawArray returns the elements of the array at k, compacted; never
// nil.
func decodeRawArray(d *jsonx.Fields, k string) []json.RawMessage {
	vs := make([]json.RawMessage, 0)
	d.Array(k, func(_ int, raw json.RawMessage) error {
		vs = append(vs, jsonx.Compact(raw))
		return nil
	})
	return vs
}

func writeMessage(w *jsonx.Encoder, m *Message) {
	f := w.Open()
	w.Str("type", TypeMessage)
	w.StrOpt("id", m.ID)
	w.Str("role", m.Role)
	w.Key("content")
	w.B = append(w.B, '[')
	for i := range m.Content {
		w.Elem(i)
		writeContentItem(w, &m.Content[i])
	}
	w.B = append(w.B, ']')
	w.StrOpt("phase", m.Phase)
	w.Extra(m.Extra)
	w.Close(f)
}

func writeContentItem(w *jsonx.Encoder, c *ContentItem) {
	writeContentPart(w, &FunctionCallOutputContentItem{Type: c.Type, Text: c.Text, ImageURL: c.ImageURL,
		Detail: c.Detail, AudioURL: c.AudioURL, Extra: c.Extra}, true)
}

func writeReasoning(w *jsonx.Encoder, r *Reasoning) {
	f := w.Open()
	w.Str("type", TypeReasoning)
	w.StrOpt("id", r.ID)
	w.Key("summary")
	writeTypedTexts(w, r.Summary, func(s *SummaryText) (string, string) { return s.Type, s.Text })
	switch {
	case r.Content == nil:
		w.Key("content")
		w.B = append(w.B, "null"...)
	case hasReasoningText(r.Content):
		w.Key("content")
		writeTypedTexts(w, r.Content, func(c *ReasoningContent) (string, string) { return c.Type, c.Text })
	}
	w.StrPtr("encrypted_content", r.EncryptedContent)
	if r.Content != nil && !hasReasoningText(r.Content) {
		// "content" is deliberately dropped; keep an Extra "content" from sneaking in.
		w.Written("content")
	}
	w.Extra(r.Extra)
	w.Close(f)
}

// writeTypedTexts writes parts as an array of {"type","text"} objects.
func writeTypedTexts[T any](w *jsonx.Encoder, parts []T, typeText func(*T) (string, string)) {
	w.B = append(w.B, '[')
	for i := range parts {
		w.Elem(i)
		f := w.Open()
		typ, text := typeText(&parts[i])
		w.Str("type", typ)
		w.Str("text", text)
		w.Close(f)
	}
	w.B = append(w.B, ']')
}

func hasReasoningText(c []ReasoningContent) bool {
	return slices.ContainsFunc(c, func(x ReasoningContent) bool { return x.Type == ReasoningTypeText })
}

func writeLocalShellCall(w *jsonx.Encoder, c *LocalShellCall) {
	f := w.Open()
	w.Str("type", TypeLocalShellCall)
	w.StrOpt("id", c.ID)
	w.StrPtr("call_id", c.CallID)
	w.Str("status", c.Status)
	w.Key("action")
	a := &c.Action
	af := w.Open()
	typ := a.Type
	if typ == "" {
		typ = "exec"
	}
	w.Str("type", typ)
	w.Strings("command", a.Command)
	w.Key("timeout_ms")
	if a.TimeoutMS == nil {
		w.B = append(w.B, "null"...)
	} else {
		w.B = appendUint(w.B, *a.TimeoutMS)
	}
	w.StrPtr("working_directory", a.WorkingDirectory)
	w.Key("env")
	if a.Env == nil {
		w.B = append(w.B, "null"...)
	} else {
		keys := make([]string, 0, len(a.Env))
		for k := range a.Env {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		ef := w.Open()
		for _, k := range keys {
			w.MapKey(k)
			w.B = AppendString(w.B, a.Env[k])
		}
		w.Close(ef)
	}
	w.StrPtr("user", a.User)
	w.Extra(a.Extra)
	w.Close(af)
	w.Extra(c.Extra)
	w.Close(f)
}

func writePayload(w *jsonx.Encoder, p *FunctionCallOutputPayload) {
	switch {
	case p.Text != nil:
		w.B = AppendString(w.B, *p.Text)
	case p.Items != nil:
		w.B = append(w.B, '[')
		for i := range p.Items {
			w.Elem(i)
			writeOutputContentItem(w, &p.Items[i])
		}
		w.B = append(w.B, ']')
	default:
		w.B = append(w.B, `""`...)
	}
}

func writeOutputContentItem(w *jsonx.Encoder, c *FunctionCallOutputContentItem) {
	writeContentPart(w, c, false)
}

// writeContentPart writes one content part of a message (message: its
// types are text, output text, image and audio) or of a tool output (text,
// image, audio, video and encrypted content). A part of another type keeps
// whichever fields it has.
func writeContentPart(w *jsonx.Encoder, c *FunctionCallOutputContentItem, message bool) {
	f := w.Open()
	w.Str("type", c.Type)
	switch {
	case c.Type == ContentInputText, message && c.Type == ContentOutputText:
		w.Str("text", c.Text)
	case c.Type == ContentInputImage:
		w.Str("image_url", c.ImageURL)
		w.StrOpt("detail", c.Detail)
	case c.Type == ContentInputAudio:
		w.Str("audio_url", c.AudioURL)
	case !message && c.Type == ContentInputVideo:
		w.Str("video_url", c.VideoURL)
		w.StrOpt("id", c.ID)
	case !message && c.Type == ContentEncryptedContent:
		w.Str("encrypted_content", c.EncryptedContent)
	default:
		w.StrOpt("text", c.Text)
		w.StrOpt("image_url", c.ImageURL)
		w.StrOpt("detail", c.Detail)
		w.StrOpt("audio_url", c.AudioURL)
		w.StrOpt("video_url", c.VideoURL)
		w.StrOpt("id", c.ID)
		w.StrOpt("encrypted_content", c.EncryptedContent)
	}
	w.Extra(c.Extra)
	w.Close(f)
}

// ---------------------------------------------------------------------------------------------
// Decoding

func itemType(d *jsonx.Fields) (string, error) {
	raw, ok := d.Peek("type")
	if !ok {
		return "", errors.New(`missing "type"`)
	}
	if len(raw) == 0 || raw[0] != '"' {
		return "", fmt.Errorf(`"type" is not a string: %.40s`, raw)
	}
	typ, err := jsonx.DecodeString(raw)
	if err != nil {
		return "", fmt.Errorf(`"type" is not a string: %.40s`, raw)
	}
	return typ, nil
}

func decodeItem(data []byte) (ResponseItem, error) {
	d, err := jsonx.NewFields(data)
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
		m := &Message{ID: d.Str("id"), Role: d.Str("role")}
		m.Content = make([]ContentItem, 0)
		d.Array("content", func(_ int, raw json.RawMessage) error {
			c, err := decodeContentItem(raw)
			m.Content = append(m.Content, c)
			return err
		})
		m.Phase = d.Str("phase")
		m.Extra = d.Extra("type")
		it = m
	case TypeReasoning:
		r := &Reasoning{ID: d.Str("id")}
		r.Summary = make([]SummaryText, 0)
		d.Array("summary", func(_ int, raw json.RawMessage) error {
			s, err := decodeTypedText(raw)
			r.Summary = append(r.Summary, SummaryText(s))
			return err
		})
		content := make([]ReasoningContent, 0)
		if d.Array("content", func(_ int, raw json.RawMessage) error {
			s, err := decodeTypedText(raw)
			content = append(content, ReasoningContent(s))
			return err
		}) {
			r.Content = content
		}
		r.EncryptedContent = d.StrPtr("encrypted_content")
		r.Extra = d.Extra("type")
		it = r
	case TypeLocalShellCall:
		c := &LocalShellCall{ID: d.Str("id"), CallID: d.StrPtr("call_id"), Status: d.Str("status")}
		c.Action = LocalShellAction{Type: "exec", Command: []string{}}
		d.Object("action", func(a *jsonx.Fields) error {
			if t := a.Str("type"); t != "" {
				c.Action.Type = t
			}
			if cmd := a.Strings("command"); cmd != nil {
				c.Action.Command = cmd
			}
			c.Action.TimeoutMS = a.Uint64Ptr("timeout_ms")
			c.Action.WorkingDirectory = a.StrPtr("working_directory")
			a.Decode("env", &c.Action.Env)
			c.Action.User = a.StrPtr("user")
			c.Action.Extra = a.Extra("type")
			return a.Err
		})
		c.Extra = d.Extra("type")
		it = c
	case TypeFunctionCall:
		it = decodeFunctionCall(d)
	case TypeFunctionCallOutput:
		it = decodeFunctionCallOutput(d)
	case TypeCustomToolCall:
		it = decodeCustomToolCall(d)
	case TypeCustomToolCallOutput:
		it = decodeCustomToolCallOutput(d)
	case TypeToolSearchCall:
		it = decodeToolSearchCall(d)
	case TypeToolSearchOutput:
		it = decodeToolSearchOutput(d)
	case TypeWebSearchCall:
		it = decodeWebSearchCall(d)
	default:
		return &OtherItem{Type: typ, Raw: jsonx.Compact(data)}, nil
	}
	if d.Err != nil {
		return nil, fmt.Errorf("%s: %w", typ, d.Err)
	}
	return it, nil
}

func decodeContentItem(raw json.RawMessage) (ContentItem, error) {
	d, err := jsonx.NewFields(raw)
	if err != nil {
		return ContentItem{}, err
	}
	c := ContentItem{Type: d.Str("type")}
	switch c.Type {
	case ContentInputText, ContentOutputText:
		c.Text = d.Str("text")
	case ContentInputImage:
		c.ImageURL = d.Str("image_url")
		c.Detail = d.Str("detail")
	case ContentInputAudio:
		c.AudioURL = d.Str("audio_url")
	}
	c.Extra = d.Extra("type")
	return c, d.Err
}

type typedText struct{ Type, Text string }

func decodeTypedText(raw json.RawMessage) (typedText, error) {
	d, err := jsonx.NewFields(raw)
	if err != nil {
		return typedText{}, err
	}
	t := typedText{Type: d.Str("type"), Text: d.Str("text")}
	return t, d.Err
}

func decodePayloadField(d *jsonx.Fields) FunctionCallOutputPayload {
	raw, ok := d.Take("output")
	if !ok {
		return FunctionCallOutputPayload{Text: new(string)}
	}
	var p FunctionCallOutputPayload
	if err := p.UnmarshalJSON(raw); err != nil {
		d.Fail("output", err)
	}
	return p
}

// MarshalJSON encodes the payload as a string or an array (Success is never written).
func (p FunctionCallOutputPayload) MarshalJSON() ([]byte, error) {
	w := newEnc(nil)
	writePayload(w, &p)
	return w.B, w.Err
}

// UnmarshalJSON decodes a string or an array of content items. Success is left unchanged.
func (p *FunctionCallOutputPayload) UnmarshalJSON(data []byte) error {
	var elems []json.RawMessage
	switch firstByte(data) {
	case '"':
		s, err := jsonx.DecodeString(data)
		if err != nil {
			return fmt.Errorf("protocol: function call output: %w", err)
		}
		p.Text, p.Items = &s, nil
		return nil
	case '[':
		var err error
		if elems, err = jsonx.SplitArray(data); err != nil {
			return fmt.Errorf("protocol: function call output: %w", err)
		}
	default:
		return fmt.Errorf("protocol: function call output: expected a string or an array, got %.40s", data)
	}
	items := make([]FunctionCallOutputContentItem, 0, len(elems))
	for i, e := range elems {
		d, err := jsonx.NewFields(e)
		if err != nil {
			return fmt.Errorf("protocol: function call output: [%d]: %w", i, err)
		}
		c := FunctionCallOutputContentItem{Type: d.Str("type")}
		switch c.Type {
		case ContentInputText:
			c.Text = d.Str("text")
		case ContentInputImage:
			c.ImageURL = d.Str("image_url")
			c.Detail = d.Str("detail")
		case ContentInputAudio:
			c.AudioURL = d.Str("audio_url")
		case ContentInputVideo:
			c.VideoURL = d.Str("video_url")
			c.ID = d.Str("id")
		case ContentEncryptedContent:
			c.EncryptedContent = d.Str("encrypted_content")
		}
		c.Extra = d.Extra("type")
		if d.Err != nil {
			return fmt.Errorf("protocol: function call output: [%d]: %w", i, d.Err)
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
