package textcall

import (
	"encoding/json"
	"strings"
)

// This file holds what the special-token formats (kimi_k2, deepseek_v3,
// deepseek_v31, deepseek_v32, mistral) share: a scanner that finds where a
// streamed JSON object ends, so its text can be passed on as argument
// fragments while it arrives, and small helpers for markers.

// objScan follows one JSON object as its text arrives and finds where it
// ends. It tracks nesting and strings only; the caller validates the whole
// object once it is complete.
type objScan struct {
	depth   int
	quote   byte // the quote of the open string (0 outside strings)
	esc     bool
	started bool
	python  bool // a Python literal: strings in single quotes too
}

// scan consumes the bytes of s that belong to the object (s must start
// with '{' on the first call) and reports how many it took and whether the
// object closed.
func (o *objScan) scan(s string) (n int, done bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !o.started {
			o.started = true
		}
		switch {
		case o.esc:
			o.esc = false
		case o.quote != 0:
			switch c {
			case '\\':
				o.esc = true
			case o.quote:
				o.quote = 0
			}
		case c == '"' || (o.python && c == '\''):
			o.quote = c
		case c == '{' || c == '[':
			o.depth++
		case c == '}' || c == ']':
			o.depth--
			if o.depth <= 0 {
				return i + 1, true
			}
		}
	}
	return len(s), false
}

// spaceLen returns the length of the white space that begins s.
func spaceLen(s string) int {
	return len(s) - len(strings.TrimLeft(s, " \t\r\n"))
}

// partialOf reports whether s is a proper, non-empty prefix of one of
// markers: more text could still make it that marker.
func partialOf(s string, markers ...string) bool {
	if s == "" {
		return false
	}
	for _, m := range markers {
		if len(s) < len(m) && strings.HasPrefix(m, s) {
			return true
		}
	}
	return false
}

// hasPrefixAny returns the first of markers that s begins with ("" when
// none).
func hasPrefixAny(s string, markers ...string) string {
	for _, m := range markers {
		if strings.HasPrefix(s, m) {
			return m
		}
	}
	return ""
}

// markup is the state the special-token parsers share: the text not yet
// consumed, the markup consumed since the current call (or section)
// began — given back as text when it fails — and the arguments of the open
// call.
type markup struct {
	buf  string
	raw  strings.Builder
	args strings.Builder
	obj  objScan
}

// take consumes the first n bytes of the pending text as markup.
func (m *markup) take(n int) string {
	s := m.buf[:n]
	m.raw.WriteString(s)
	m.buf = m.buf[n:]
	return s
}

// fail reports malformed markup and gives its text back.
func (m *markup) fail(out []Event, why string) []Event {
	out = append(out, Event{Kind: Malformed, Text: why})
	out = AppendText(out, m.raw.String())
	m.raw.Reset()
	return out
}

// giveBack gives the consumed text back as text: it was not markup.
func (m *markup) giveBack(out []Event) []Event {
	out = AppendText(out, m.raw.String())
	m.raw.Reset()
	return out
}

// recovered ends the open call and forgets its markup.
func (m *markup) recovered(out []Event) []Event {
	m.raw.Reset()
	return append(out, Event{Kind: CallEnd})
}

// beginArgs prepares for the arguments of a new call.
func (m *markup) beginArgs() {
	m.args.Reset()
	m.obj = objScan{}
}

// argStep says where streaming a call's JSON arguments stands.
type argStep uint8

const (
	argMore argStep = iota // the object is not complete: more input needed
	argDone                // the object is complete and valid JSON
	argBad                 // not a JSON object, or invalid JSON
)

// streamArgs consumes the pending text of a call's JSON object, passing it
// on as CallArgs as it arrives. An object written as a Python literal (its
// first key in single quotes, as models trained on templates that render
// with Python's repr write) is held whole and passed on converted to JSON.
func (m *markup) streamArgs(out []Event, eof bool) ([]Event, argStep) {
	if !m.obj.started {
		m.take(spaceLen(m.buf))
		if m.buf == "" {
			return out, argMore
		}
		if m.buf[0] != '{' {
			return out, argBad
		}
		k := 1 + spaceLen(m.buf[1:])
		if k == len(m.buf) && !eof {
			return out, argMore // what follows '{' tells JSON from Python
		}
		m.obj.python = k < len(m.buf) && m.buf[k] == '\''
	}
	n, done := m.obj.scan(m.buf)
	s := m.take(n)
	m.args.WriteString(s)
	if !m.obj.python {
		out = AppendArgs(out, s)
	}
	if !done {
		return out, argMore
	}
	if m.obj.python {
		js, ok := literalJSON(m.args.String())
		if !ok || js[0] != '{' {
			return out, argBad
		}
		return AppendArgs(out, js), argDone
	}
	if !json.Valid([]byte(m.args.String())) {
		return out, argBad
	}
	return out, argDone
}
