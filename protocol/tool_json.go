package protocol

import (
	"encoding/json"
	"fmt"

	"github.com/harnessflow/harnessflow/internal/jsonx"
)

// MarshalJSON implements json.Marshaler (see [ToolSpec] for the rules).
func (t ToolSpec) MarshalJSON() ([]byte, error) {
	w := newEnc(nil)
	writeTool(w, &t)
	if w.Err != nil {
		return nil, fmt.Errorf("protocol: tool %q: %w", t.ToolName(), w.Err)
	}
	return w.B, nil
}

// UnmarshalJSON implements json.Unmarshaler. The object must have a string "type".
func (t *ToolSpec) UnmarshalJSON(data []byte) error {
	v, err := decodeTool(data)
	if err != nil {
		return fmt.Errorf("protocol: tool: %w", err)
	}
	*t = v
	return nil
}

func writeTool(w *jsonx.Encoder, t *ToolSpec) {
	if t.Type == "" && len(t.Raw) > 0 {
		w.RawValue("raw", t.Raw, "")
		return
	}
	f := w.Open()
	w.Str("type", t.Type)
	switch t.Type {
	case ToolTypeFunction:
		w.Str("name", t.Name)
		w.Str("description", t.Description)
		w.Bool("strict", t.Strict != nil && *t.Strict)
		w.BoolOpt("defer_loading", t.DeferLoading)
		w.Raw("parameters", t.Parameters, defaultParameters)
	case ToolTypeNamespace:
		w.Str("name", t.Name)
		w.Str("description", t.Description)
		w.Key("tools")
		writeTools(w, t.Tools)
	case ToolTypeCustom:
		w.Str("name", t.Name)
		w.Str("description", t.Description)
		w.BoolOpt("defer_loading", t.DeferLoading)
		if t.Format != nil {
			w.Key("format")
			ff := w.Open()
			w.Str("type", t.Format.Type)
			w.Str("syntax", t.Format.Syntax)
			w.Str("definition", t.Format.Definition)
			w.Close(ff)
		}
	case ToolTypeToolSearch:
		w.Str("execution", t.Execution)
		w.Str("description", t.Description)
		w.Raw("parameters", t.Parameters, defaultParameters)
	default:
		w.StrOpt("name", t.Name)
		w.StrOpt("description", t.Description)
		w.BoolOpt("strict", t.Strict)
		w.BoolOpt("defer_loading", t.DeferLoading)
		w.StrOpt("execution", t.Execution)
		w.RawOpt("parameters", t.Parameters)
		if t.Tools != nil {
			w.Key("tools")
			writeTools(w, t.Tools)
		}
	}
	w.Extra(t.Extra)
	w.Close(f)
}

func writeTools(w *jsonx.Encoder, ts []ToolSpec) {
	w.B = append(w.B, '[')
	for i := range ts {
		w.Elem(i)
		writeTool(w, &ts[i])
	}
	w.B = append(w.B, ']')
}

// defaultParameters is written for a function or tool_search tool without Parameters.
const defaultParameters = `{"type":"object","properties":{}}`

func paramsOrDefault(p json.RawMessage) json.RawMessage {
	if p == nil {
		return json.RawMessage(defaultParameters)
	}
	return p
}

func decodeTool(data []byte) (ToolSpec, error) {
	d, err := jsonx.NewFields(data)
	if err != nil {
		return ToolSpec{}, err
	}
	typ, err := itemType(d)
	if err != nil {
		return ToolSpec{}, err
	}
	t := ToolSpec{Type: typ, Raw: jsonx.Compact(data)}
	switch typ {
	case ToolTypeFunction:
		t.Name = d.Str("name")
		t.Description = d.Str("description")
		t.Strict = d.BoolPtr("strict")
		if t.Strict == nil {
			t.Strict = new(bool) // strict is a plain bool in the reference: absent means false
		}
		t.DeferLoading = d.BoolPtr("defer_loading")
		t.Parameters = paramsOrDefault(d.Raw("parameters"))
	case ToolTypeNamespace:
		t.Name = d.Str("name")
		t.Description = d.Str("description")
		t.Tools = make([]ToolSpec, 0)
		d.Array("tools", func(_ int, raw json.RawMessage) error {
			sub, err := decodeTool(raw)
			t.Tools = append(t.Tools, sub)
			return err
		})
	case ToolTypeCustom:
		t.Name = d.Str("name")
		t.Description = d.Str("description")
		t.DeferLoading = d.BoolPtr("defer_loading")
		d.Object("format", func(f *jsonx.Fields) error {
			t.Format = &ToolFormat{Type: f.Str("type"), Syntax: f.Str("syntax"), Definition: f.Str("definition")}
			return f.Err
		})
	case ToolTypeToolSearch:
		t.Execution = d.Str("execution")
		t.Description = d.Str("description")
		t.Parameters = paramsOrDefault(d.Raw("parameters"))
	case ToolTypeLocalShell, ToolTypeImageGeneration, ToolTypeWebSearch:
	default:
		t.Name = d.Str("name") // so that ToolName reports it
	}
	t.Extra = d.Extra("type")
	if d.Err != nil {
		return ToolSpec{}, fmt.Errorf("%s: %w", typ, d.Err)
	}
	return t, nil
}

// MarshalJSON implements json.Marshaler: {"kind":...} plus name and namespace for
// namespaced_function.
func (k ToolOutputKind) MarshalJSON() ([]byte, error) {
	w := newEnc(nil)
	f := w.Open()
	w.Str("kind", k.Kind)
	if k.Kind == KindNamespacedFunction {
		w.Str("name", k.Name)
		w.Str("namespace", k.Namespace)
	}
	w.Close(f)
	return w.B, nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (k *ToolOutputKind) UnmarshalJSON(data []byte) error {
	d, err := jsonx.NewFields(data)
	if err != nil {
		return fmt.Errorf("protocol: tool output kind: %w", err)
	}
	v := ToolOutputKind{Kind: d.Str("kind")}
	switch v.Kind {
	case KindFunction, KindCustom, KindToolSearch, KindToolCall:
	case KindNamespacedFunction:
		v.Name = d.Str("name")
		v.Namespace = d.Str("namespace")
	default:
		return fmt.Errorf("protocol: tool output kind: unknown kind %q", v.Kind)
	}
	if d.Err != nil {
		return fmt.Errorf("protocol: tool output kind: %w", d.Err)
	}
	*k = v
	return nil
}
