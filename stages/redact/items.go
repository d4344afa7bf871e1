package redact

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/harnessflow/harnessflow/internal/jsonx"
	"github.com/harnessflow/harnessflow/protocol"
)

// Item returns item with the secrets in its text redacted: message and
// reasoning text, function_call arguments (JSON-aware, see JSON),
// custom_tool_call input, tool outputs, local shell commands, and the raw
// JSON of items this package does not model. The item is never modified:
// when something changes a copy is returned, otherwise item itself.
func (r *Redactor) Item(item protocol.ResponseItem) protocol.ResponseItem {
	if r == nil || len(r.dets) == 0 || item == nil {
		return item
	}
	switch it := item.(type) {
	case *protocol.Message:
		if content, ok := r.contentItems(it.Content); ok {
			c := *it
			c.Content = content
			return &c
		}
	case *protocol.Reasoning:
		summary, ok1 := redactEach(it.Summary, func(v *protocol.SummaryText) *string { return &v.Text }, r)
		content, ok2 := redactEach(it.Content, func(v *protocol.ReasoningContent) *string { return &v.Text }, r)
		if ok1 || ok2 {
			c := *it
			c.Summary, c.Content = summary, content
			return &c
		}
	case *protocol.FunctionCall:
		if a := r.JSON(it.Arguments); a != it.Arguments {
			c := *it
			c.Arguments = a
			return &c
		}
	case *protocol.CustomToolCall:
		if in := r.String(it.Input); in != it.Input {
			c := *it
			c.Input = in
			return &c
		}
	case *protocol.FunctionCallOutput:
		if out, ok := r.payload(it.Output); ok {
			c := *it
			c.Output = out
			return &c
		}
	case *protocol.CustomToolCallOutput:
		if out, ok := r.payload(it.Output); ok {
			c := *it
			c.Output = out
			return &c
		}
	case *protocol.LocalShellCall:
		if cmd, ok := redactEach(it.Action.Command, func(v *string) *string { return v }, r); ok {
			c := *it
			c.Action.Command = cmd
			return &c
		}
	case *protocol.ToolSearchCall:
		if a := r.JSON(string(it.Arguments)); a != string(it.Arguments) {
			c := *it
			c.Arguments = json.RawMessage(a)
			return &c
		}
	case *protocol.OtherItem:
		if raw := r.JSON(string(it.Raw)); raw != string(it.Raw) {
			c := *it
			c.Raw = json.RawMessage(raw)
			return &c
		}
	}
	return item
}

// Items redacts every item (see Item). The slice is never modified: when
// something changes a new slice is returned, otherwise items itself.
func (r *Redactor) Items(items []protocol.ResponseItem) []protocol.ResponseItem {
	var out []protocol.ResponseItem
	for i, it := range items {
		if red := r.Item(it); red != it {
			if out == nil {
				out = slices.Clone(items)
			}
			out[i] = red
		}
	}
	if out == nil {
		return items
	}
	return out
}

func (r *Redactor) contentItems(cs []protocol.ContentItem) ([]protocol.ContentItem, bool) {
	return redactEach(cs, func(v *protocol.ContentItem) *string { return &v.Text }, r)
}

func (r *Redactor) payload(p protocol.FunctionCallOutputPayload) (protocol.FunctionCallOutputPayload, bool) {
	changed := false
	if p.Text != nil {
		if t := r.String(*p.Text); t != *p.Text {
			p.Text, changed = &t, true
		}
	}
	if items, ok := redactEach(p.Items, func(v *protocol.FunctionCallOutputContentItem) *string { return &v.Text }, r); ok {
		p.Items, changed = items, true
	}
	return p, changed
}

// redactEach redacts the text field of every element, cloning the slice on
// the first change.
func redactEach[T any](xs []T, field func(*T) *string, r *Redactor) ([]T, bool) {
	var out []T
	for i := range xs {
		f := field(&xs[i])
		red := r.String(*f)
		if red == *f {
			continue
		}
		if out == nil {
			out = slices.Clone(xs)
		}
		*field(&out[i]) = red
	}
	if out == nil {
		return xs, false
	}
	return out, true
}

// JSON redacts the string values of a JSON text, each as a whole text,
// keeping everything else (layout, keys, numbers) byte for byte. A value
// that changes is written back as a JSON string. Object keys are kept, and
// so are the values of opaque fields that must round-trip unchanged
// ("encrypted_content", "encrypted_function_args", "signature"). Text that
// is not valid JSON is redacted as plain text.
func (r *Redactor) JSON(doc string) string {
	if r == nil || len(r.dets) == 0 || (!r.mayMatch(doc) && !strings.Contains(doc, `\u`)) {
		return doc
	}
	if !json.Valid([]byte(doc)) {
		return r.String(doc)
	}
	var b strings.Builder
	last := 0
	key := "" // the raw literal of the last object key
	for i := 0; i < len(doc); {
		if doc[i] != '"' {
			i++
			continue
		}
		end, escaped := stringEnd(doc, i)
		j := end
		for j < len(doc) && (doc[j] == ' ' || doc[j] == '\t' || doc[j] == '\n' || doc[j] == '\r') {
			j++
		}
		lit := doc[i:end]
		if j < len(doc) && doc[j] == ':' { // an object key
			key, i = lit, end
			continue
		}
		if opaqueKeys[key] {
			i = end
			continue
		}
		var red string
		if !escaped {
			if v := r.String(lit[1 : len(lit)-1]); v != lit[1:len(lit)-1] {
				red = `"` + v + `"` // markers need no escaping
			}
		} else {
			var v string
			if json.Unmarshal([]byte(lit), &v) == nil {
				if w := r.String(v); w != v {
					red = quoteJSON(w)
				}
			}
		}
		if red != "" {
			b.WriteString(doc[last:i])
			b.WriteString(red)
			last = end
		}
		i = end
	}
	if last == 0 {
		return doc
	}
	b.WriteString(doc[last:])
	return b.String()
}

// opaqueKeys are the raw keys whose string values are never redacted.
var opaqueKeys = map[string]bool{
	`"encrypted_content"`:       true,
	`"encrypted_function_args"`: true,
	`"signature"`:               true,
}

// stringEnd returns the offset just past the JSON string literal starting at
// doc[i] (doc is valid JSON), and whether it contains escapes.
func stringEnd(doc string, i int) (int, bool) {
	escaped := false
	for j := i + 1; j < len(doc); j++ {
		switch doc[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j + 1, escaped
		}
	}
	return len(doc), escaped
}

func quoteJSON(s string) string { return string(jsonx.AppendString(nil, s)) }

// mayMatch reports whether s contains any byte a secret can start with.
func (r *Redactor) mayMatch(s string) bool {
	for i := 0; i < len(s); i++ {
		if r.trigger[s[i]] {
			return true
		}
	}
	return false
}
