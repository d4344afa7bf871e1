package protocol

import (
	"encoding/json"
	"fmt"
)

// MarshalJSON implements json.Marshaler (see [ToolSpec] for the rules).
func (t ToolSpec) MarshalJSON() ([]byte, error) {
	w := newEnc(nil)
	writeTool(w, &t)
	if w.err != nil {
		return nil, fmt.Errorf("protocol: tool %q: %w", t.ToolName(), w.err)
	}
	return w.b, nil
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

func writeTool(w *enc, t *ToolSpec) {
	if t.Type == "" && len(t.Raw) > 0 {
		w.rawValue("raw", t.Raw, "")
		return
	}
	f := w.open()
	w.str("type", t.Type)
	switch t.Type {
	case ToolTypeFunction:
		w.str("name", t.Name)
		w.str("description", t.Description)
		w.key("strict")
		w.b = append(w.b, boolText(t.Strict != nil && *t.Strict)...)
		if t.DeferLoading != nil {
			w.boolPtr("defer_loading", t.DeferLoading)
		}
		w.raw("parameters", t.Parameters, defaultParameters)
	case ToolTypeNamespace:
		w.str("name", t.Name)
		w.str("description", t.Description)
		w.key("tools")
		writeTools(w, t.Tools)
	case ToolTypeCustom:
		w.str("name", t.Name)
		w.str("description", t.Description)
		if t.DeferLoading != nil {
			w.boolPtr("defer_loading", t.DeferLoading)
		}
		if t.Format != nil {
			w.key("format")
			ff := w.open()
			w.str("type", t.Format.Type)
			w.str("syntax", t.Format.Syntax)
			w.str("definition", t.Format.Definition)
			w.close(ff)
		}
	case ToolTypeToolSearch:
		w.str("execution", t.Execution)
		w.str("description", t.Description)
		w.raw("parameters", t.Parameters, defaultParameters)
	default:
		w.strOpt("name", t.Name)
		w.strOpt("description", t.Description)
		if t.Strict != nil {
			w.boolPtr("strict", t.Strict)
		}
		if t.DeferLoading != nil {
			w.boolPtr("defer_loading", t.DeferLoading)
		}
		w.strOpt("execution", t.Execution)
		if len(t.Parameters) > 0 {
			w.raw("parameters", t.Parameters, "")
		}
		if t.Tools != nil {
			w.key("tools")
			writeTools(w, t.Tools)
		}
	}
	w.extra(t.Extra)
	w.close(f)
}

func writeTools(w *enc, ts []ToolSpec) {
	w.b = append(w.b, '[')
	for i := range ts {
		w.elem(i)
		writeTool(w, &ts[i])
	}
	w.b = append(w.b, ']')
}

// defaultParameters is written for a function or tool_search tool without Parameters.
const defaultParameters = `{"type":"object","properties":{}}`

func paramsOrDefault(p json.RawMessage) json.RawMessage {
	if p == nil {
		return json.RawMessage(defaultParameters)
	}
	return p
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func decodeTool(data []byte) (ToolSpec, error) {
	d, err := newDec(data)
	if err != nil {
		return ToolSpec{}, err
	}
	typ, err := itemType(d)
	if err != nil {
		return ToolSpec{}, err
	}
	t := ToolSpec{Type: typ, Raw: compactRaw(data)}
	switch typ {
	case ToolTypeFunction:
		t.Name = d.str("name")
		t.Description = d.str("description")
		t.Strict = d.boolPtr("strict")
		if t.Strict == nil {
			t.Strict = new(bool) // strict is a plain bool in the reference: absent means false
		}
		t.DeferLoading = d.boolPtr("defer_loading")
		t.Parameters = paramsOrDefault(d.raw("parameters"))
	case ToolTypeNamespace:
		t.Name = d.str("name")
		t.Description = d.str("description")
		t.Tools = make([]ToolSpec, 0)
		d.array("tools", func(_ int, raw json.RawMessage) error {
			sub, err := decodeTool(raw)
			t.Tools = append(t.Tools, sub)
			return err
		})
	case ToolTypeCustom:
		t.Name = d.str("name")
		t.Description = d.str("description")
		t.DeferLoading = d.boolPtr("defer_loading")
		d.object("format", func(f *dec) error {
			t.Format = &ToolFormat{Type: f.str("type"), Syntax: f.str("syntax"), Definition: f.str("definition")}
			return f.err
		})
	case ToolTypeToolSearch:
		t.Execution = d.str("execution")
		t.Description = d.str("description")
		t.Parameters = paramsOrDefault(d.raw("parameters"))
	case ToolTypeLocalShell, ToolTypeImageGeneration, ToolTypeWebSearch:
	default:
		t.Name = d.str("name") // so that ToolName reports it
	}
	t.Extra = d.extra()
	if d.err != nil {
		return ToolSpec{}, fmt.Errorf("%s: %w", typ, d.err)
	}
	return t, nil
}

// MarshalJSON implements json.Marshaler: {"kind":...} plus name and namespace for
// namespaced_function.
func (k ToolOutputKind) MarshalJSON() ([]byte, error) {
	w := newEnc(nil)
	f := w.open()
	w.str("kind", k.Kind)
	if k.Kind == KindNamespacedFunction {
		w.str("name", k.Name)
		w.str("namespace", k.Namespace)
	}
	w.close(f)
	return w.b, nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (k *ToolOutputKind) UnmarshalJSON(data []byte) error {
	d, err := newDec(data)
	if err != nil {
		return fmt.Errorf("protocol: tool output kind: %w", err)
	}
	v := ToolOutputKind{Kind: d.str("kind")}
	switch v.Kind {
	case KindFunction, KindCustom:
	case KindNamespacedFunction:
		v.Name = d.str("name")
		v.Namespace = d.str("namespace")
	default:
		return fmt.Errorf("protocol: tool output kind: unknown kind %q", v.Kind)
	}
	if d.err != nil {
		return fmt.Errorf("protocol: tool output kind: %w", d.err)
	}
	*k = v
	return nil
}
