package textcall

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/harnessflow/harnessflow/internal/jsonx"
)

// Schemas types raw parameter values: tool name → parameter name → JSON
// Schema type ("string", "integer", "number", "boolean", "object",
// "array"; "" when the schema gives none).
type Schemas map[string]map[string]string

// Has reports whether the request has a tool named tool.
func (s Schemas) Has(tool string) bool {
	_, ok := s[tool]
	return ok
}

// Type returns the schema type of tool's parameter param, and whether the
// schema lists the parameter.
func (s Schemas) Type(tool, param string) (string, bool) {
	t, ok := s[tool][param]
	return t, ok
}

// SchemasFromChatTools reads the "tools" array of a Chat Completions body
// ([{"type":"function","function":{"name","parameters"}}]).
func SchemasFromChatTools(tools []byte) (Schemas, error) {
	tools = bytes.TrimSpace(tools)
	if len(tools) == 0 || string(tools) == "null" {
		return Schemas{}, nil
	}
	var list []struct {
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(tools, &list); err != nil {
		return nil, fmt.Errorf("textcall: chat tools: %w", err)
	}
	s := make(Schemas, len(list))
	for _, t := range list {
		s[t.Function.Name] = ParamTypes(t.Function.Parameters)
	}
	return s, nil
}

// ParamTypes reads the property types of an object schema (parameter →
// type).
func ParamTypes(schema json.RawMessage) map[string]string {
	var obj struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	types := map[string]string{}
	if json.Unmarshal(schema, &obj) != nil {
		return types
	}
	for name, p := range obj.Properties {
		types[name] = schemaType(p)
	}
	return types
}

// schemaType returns the type of a property schema: "type" as a string, the
// first non-null of a "type" array, or the first typed branch of
// anyOf/oneOf.
func schemaType(p json.RawMessage) string {
	var s struct {
		Type  json.RawMessage   `json:"type"`
		AnyOf []json.RawMessage `json:"anyOf"`
		OneOf []json.RawMessage `json:"oneOf"`
	}
	if json.Unmarshal(p, &s) != nil {
		return ""
	}
	var one string
	if json.Unmarshal(s.Type, &one) == nil {
		return one
	}
	var many []string
	if json.Unmarshal(s.Type, &many) == nil {
		for _, t := range many {
			if t != "null" {
				return t
			}
		}
	}
	for _, b := range append(s.AnyOf, s.OneOf...) {
		if t := schemaType(b); t != "" && t != "null" {
			return t
		}
	}
	return ""
}

// TypedValue turns a raw parameter value into JSON text by its schema type:
// a string (or no type, or an unknown one) stays the raw text as a JSON
// string; an integer, number, boolean, object or array is parsed — as
// JSON, else as a Python literal (True, None, {'k': 'v'}), which chat
// templates that render values with Python's repr make models write — and
// falls back to the string when it parses as neither or is of another
// type. For those types null or None is JSON null, and an object or array
// written as a quoted string of itself ("{'k': 'v'}") is unquoted once.
func TypedValue(raw, typ string) string {
	switch typ {
	case "integer", "number", "boolean", "object", "array", "null":
		v := strings.TrimSpace(raw)
		switch strings.ToLower(v) {
		case "true", "false":
			if typ == "boolean" {
				return strings.ToLower(v)
			}
		case "null", "none":
			return "null"
		}
		js, ok := literalJSON(v)
		if ok && js[0] == '"' && (typ == "object" || typ == "array") {
			var inner string
			if json.Unmarshal([]byte(js), &inner) == nil {
				js, ok = literalJSON(strings.TrimSpace(inner))
			}
		}
		if ok && fitsType(js, typ) {
			return js
		}
	}
	return quote(raw)
}

// fitsType reports whether JSON text js is of the schema type typ.
func fitsType(js, typ string) bool {
	switch js[0] {
	case '{':
		return typ == "object"
	case '[':
		return typ == "array"
	case 't', 'f':
		return typ == "boolean"
	case 'n':
		return typ == "null"
	case '"':
		return false
	}
	if typ == "integer" {
		_, err := strconv.ParseInt(js, 10, 64)
		return err == nil
	}
	return typ == "number"
}

// quote returns s as a JSON string (HTML characters not escaped).
func quote(s string) string { return string(jsonx.AppendString(nil, s)) }

// literalJSON returns v as compact JSON when it is a JSON value or a Python
// literal (dict, list, tuple, str, int, float, True, False, None).
func literalJSON(v string) (string, bool) {
	if v == "" {
		return "", false
	}
	if json.Valid([]byte(v)) {
		var b bytes.Buffer
		if json.Compact(&b, []byte(v)) == nil {
			return b.String(), true
		}
	}
	p := pyLit{s: v}
	var b strings.Builder
	if !p.value(&b, 0) {
		return "", false
	}
	p.space()
	if p.i != len(p.s) || !json.Valid([]byte(b.String())) {
		return "", false
	}
	return b.String(), true
}

// pyLit converts a Python literal to JSON.
type pyLit struct {
	s string
	i int
}

const maxLiteralDepth = 64

func (p *pyLit) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *pyLit) value(b *strings.Builder, depth int) bool {
	if depth > maxLiteralDepth {
		return false
	}
	p.space()
	if p.i >= len(p.s) {
		return false
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.seq(b, '{', '}', '{', '}', true, depth)
	case c == '[':
		return p.seq(b, '[', ']', '[', ']', false, depth)
	case c == '(':
		return p.seq(b, '(', ')', '[', ']', false, depth)
	case c == '\'' || c == '"':
		return p.str(b)
	}
	for _, w := range [...][2]string{{"True", "true"}, {"False", "false"}, {"None", "null"}} {
		if strings.HasPrefix(p.s[p.i:], w[0]) {
			p.i += len(w[0])
			b.WriteString(w[1])
			return true
		}
	}
	j := p.i
	for j < len(p.s) && strings.IndexByte("+-0123456789.eE", p.s[j]) >= 0 {
		j++
	}
	if j == p.i {
		return false
	}
	num := p.s[p.i:j]
	if _, err := strconv.ParseFloat(num, 64); err != nil {
		return false
	}
	num = strings.TrimPrefix(num, "+")
	if !json.Valid([]byte(num)) {
		f, _ := strconv.ParseFloat(num, 64)
		num = strconv.FormatFloat(f, 'g', -1, 64)
	}
	b.WriteString(num)
	p.i = j
	return true
}

// seq converts a dict (pairs), list or tuple.
func (p *pyLit) seq(b *strings.Builder, open, close, jopen, jclose byte, pairs bool, depth int) bool {
	p.i++ // open
	b.WriteByte(jopen)
	first := true
	for {
		p.space()
		if p.i >= len(p.s) {
			return false
		}
		if p.s[p.i] == close {
			p.i++
			b.WriteByte(jclose)
			return true
		}
		if !first {
			if p.s[p.i] != ',' {
				return false
			}
			p.i++
			p.space()
			if p.i < len(p.s) && p.s[p.i] == close { // trailing comma
				p.i++
				b.WriteByte(jclose)
				return true
			}
			b.WriteByte(',')
		}
		first = false
		if pairs {
			p.space()
			if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
				return false // JSON keys are strings
			}
			if !p.str(b) {
				return false
			}
			p.space()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return false
			}
			p.i++
			b.WriteByte(':')
		}
		if !p.value(b, depth+1) {
			return false
		}
	}
}

// str converts a single- or double-quoted Python string.
func (p *pyLit) str(b *strings.Builder) bool {
	q := p.s[p.i]
	p.i++
	var out strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			b.WriteString(quote(out.String()))
			return true
		case c == '\\' && p.i+1 < len(p.s):
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case 'n':
				out.WriteByte('\n')
			case 't':
				out.WriteByte('\t')
			case 'r':
				out.WriteByte('\r')
			case '\\', '\'', '"':
				out.WriteByte(e)
			case 'u':
				if p.i+4 <= len(p.s) {
					if r, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32); err == nil {
						out.WriteRune(rune(r))
						p.i += 4
						continue
					}
				}
				return false
			default:
				out.WriteByte('\\')
				out.WriteByte(e)
			}
		default:
			r, size := utf8.DecodeRuneInString(p.s[p.i:])
			out.WriteRune(r)
			p.i += size
		}
	}
	return false
}
