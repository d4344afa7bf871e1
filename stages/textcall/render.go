package textcall

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// This file holds what the render halves of the formats share: reading a
// call's arguments into members in their order, and the text of one
// member's value. Each format's own render function sits in its file, next
// to its parser (docs/text-tool-calls.md#adding-a-model-family).

// RenderCalls writes calls in the named format's text, the way the model
// writes them; an unknown name, or a format without a render half, is an
// error.
func RenderCalls(name string, calls []Call) (string, error) {
	f, ok := Lookup(name)
	if !ok {
		return "", CheckName(name)
	}
	if f.Render == nil {
		return "", errors.New("textcall: format " + name + " has no renderer")
	}
	return f.Render(calls), nil
}

// Prompt is the half of a format that puts tools into a prompt for a
// server that takes no tools field (stages/toolprompt): the tool list and
// the wrapping of tool results. The instruction text around the tool list
// is a template of the prompt pack (prompts/pack/toolprompt/NAME.tmpl).
type Prompt struct {
	// Tools returns the template data of the tool list: a slice with one
	// value per tool, in order.
	Tools func(tools []ToolDef) any
	// Result wraps one tool result's text as the model is shown it.
	Result func(text string) string
}

// ToolDef is one tool a prompt describes.
type ToolDef struct {
	Name, Description string
	// Parameters is the JSON schema of the arguments; empty means an
	// object without properties.
	Parameters json.RawMessage
}

// toolResponse wraps a tool result in <tool_response> (hermes and
// qwen3_coder).
func toolResponse(text string) string {
	return "<tool_response>\n" + text + "\n</tool_response>"
}

// member is one member of a JSON object, in the order written.
type member struct {
	key   string
	value json.RawMessage
}

// objectMembers returns the members of a JSON object in order; anything
// but one JSON object is an error.
func objectMembers(raw []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{key, v})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("text after the JSON object")
	}
	return out, nil
}

// argsText is a call's arguments for a format that writes them as JSON:
// as given when they are JSON ("{}" when empty), else as a JSON string.
func argsText(args json.RawMessage) string {
	a := strings.TrimSpace(string(args))
	switch {
	case a == "":
		return "{}"
	case json.Valid([]byte(a)):
		return string(args)
	}
	return quote(string(args))
}

// argMembers is a call's arguments for a format that writes one element
// per parameter: the object's members, or one member "input" holding the
// arguments' text when they are not a JSON object.
func argMembers(args json.RawMessage) []member {
	if strings.TrimSpace(string(args)) == "" {
		return nil
	}
	ms, err := objectMembers(args)
	if err != nil {
		return []member{{"input", json.RawMessage(quote(string(args)))}}
	}
	return ms
}

// valueText is a parameter value as the XML-like formats write it: a
// string's text, anything else as its JSON; isString says which.
func valueText(v json.RawMessage) (text string, isString bool) {
	var s string
	if len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil {
		return s, true
	}
	return string(v), false
}

// CompactJSON returns raw compacted, or def when raw is empty or not JSON
// (the renderers' and stages/toolprompt's way to write a schema or
// arguments on one line).
func CompactJSON(raw json.RawMessage, def string) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return def
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return def
	}
	return b.String()
}
