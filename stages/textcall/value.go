package textcall

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/harnessflow/harnessflow/internal/jsonx"
)

// Schemas types raw parameter values: tool name → parameter name → JSON
// Schema type ("string", "integer", "number", "boolean", "object",
// "array", or a union such as "integer|null"; "" when the schema gives
// none). TypedValue also reads the other spellings tool schemas use
// (float, double, int, bool, …).
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

// schemaType returns the type of a property schema as the Schemas map
// holds it: "type" as a string, a "type" array, or the typed branches of
// anyOf/oneOf, joined by '|' in their order ("integer|null"); "nullable":
// true adds "|null". The names are the schema's own (typeName reads the
// spellings models' tool schemas use).
func schemaType(p json.RawMessage) string {
	var s struct {
		Type     json.RawMessage   `json:"type"`
		Nullable bool              `json:"nullable"`
		AnyOf    []json.RawMessage `json:"anyOf"`
		OneOf    []json.RawMessage `json:"oneOf"`
	}
	if json.Unmarshal(p, &s) != nil {
		return ""
	}
	var types []string
	add := func(t string) {
		if t != "" && !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	var one string
	var many []string
	switch {
	case json.Unmarshal(s.Type, &one) == nil:
		add(one)
	case json.Unmarshal(s.Type, &many) == nil:
		for _, t := range many {
			add(t)
		}
	}
	if len(types) == 0 {
		for _, b := range append(s.AnyOf, s.OneOf...) {
			for _, t := range strings.Split(schemaType(b), "|") {
				add(t)
			}
		}
	}
	if s.Nullable && len(types) > 0 {
		add("null")
	}
	return strings.Join(types, "|")
}

// typeName maps the type names tool schemas are written with to the JSON
// Schema type they mean ("" for a name it does not know, which types
// nothing): float, double and number are numbers; int and integer
// integers; bool and boolean booleans; dict objects; list and tuple
// arrays; str and text strings.
func typeName(t string) string {
	switch strings.ToLower(strings.TrimSpace(t)) {
	case "string", "str", "text":
		return "string"
	case "integer", "int", "int32", "int64", "long":
		return "integer"
	case "number", "float", "double", "float32", "float64", "decimal":
		return "number"
	case "boolean", "bool":
		return "boolean"
	case "object", "dict", "map":
		return "object"
	case "array", "list", "tuple":
		return "array"
	case "null", "none":
		return "null"
	}
	return ""
}

// TypedValue turns a raw parameter value into JSON text by its schema type
// typ (one type name, or a union joined by '|' as Schemas holds it): a
// string (or no type, or one it does not know) stays the raw text as a
// JSON string; for an integer, number, boolean, object or array the value
// is parsed — as JSON, else as a Python literal (True, None, {'k': 'v'}),
// which chat templates that render values with Python's repr make models
// write — and falls back to the string when it parses as none of the
// union's types. null or None is JSON null when the type is not a lone
// string (a union with null, or a typed value), and an object or array
// written as a quoted string of itself ("{'k': 'v'}") is unquoted once.
func TypedValue(raw, typ string) string {
	var types [4]string
	n := 0
	for _, t := range strings.Split(typ, "|") {
		if t = typeName(t); t != "" && t != "string" && n < len(types) {
			types[n], n = t, n+1
		}
	}
	if n == 0 {
		return quote(raw)
	}
	v := strings.TrimSpace(raw)
	lower := strings.ToLower(v)
	if lower == "null" || lower == "none" {
		return "null"
	}
	js, ok := literalJSON(v)
	for _, t := range types[:n] {
		if t == "boolean" && (lower == "true" || lower == "false") {
			return lower
		}
		got, fits := js, ok
		if fits && js[0] == '"' && (t == "object" || t == "array") {
			var inner string
			if json.Unmarshal([]byte(js), &inner) == nil {
				got, fits = literalJSON(strings.TrimSpace(inner))
			}
		}
		if fits && fitsType(got, t) {
			return got
		}
	}
	return quote(raw) // none of the union's types fits: the model's text
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
