package textcall

import (
	"encoding/json"
	"strings"
	"unsafe"
)

// This file holds what the formats that write a call as one JSON object
// ({"name": N, "arguments": {…}}: hermes, llama3_json) share: their input
// as bytes (text passes without being copied), the markup consumed since a
// call began, and the walk over the object's top-level members with the
// package's JSON scanner (jsWalker), passing the arguments on as they
// arrive once the name is known.

// jsonHooks is what a format does at the object's top level.
type jsonHooks interface {
	// keyEnded: a key ended (jsonCall.key); ok false when it failed the
	// call.
	keyEnded(out []Event) ([]Event, bool)
	// valueBegins: a value begins, its first byte c at raw[valStart].
	valueBegins(out []Event, c byte) []Event
	// member: the value raw[valStart:end] of key ended; ok false when it
	// failed the call.
	member(out []Event, end int) ([]Event, bool)
	// objectDone: the object is complete.
	objectDone(out []Event) []Event
	// fail: the markup is no call (why).
	fail(out []Event, why string) []Event
}

// jsonCall is the state of a parser of JSON calls.
type jsonCall struct {
	in  []byte // input not yet consumed
	raw []byte // the markup consumed since it began: given back if it fails

	w         jsWalker
	key       string // the top-level key whose value is read
	keyStart  int    // raw offset of the key's opening quote
	valStart  int    // raw offset of the value's first byte
	name      string
	begun     bool
	args      string // the arguments, when held whole
	argsSeen  bool
	streaming bool // the arguments object is being passed on as it arrives
	argsFrom  int  // raw offset of the argument bytes not yet passed on
}

// bytesView returns b as a string without copying; it must not be
// retained.
func bytesView(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// feedText passes s on as text up to the first of starts when nothing is
// held, without copying it; the rest (from a start, or a tail that could
// still begin one) is what the parser must read.
func (j *jsonCall) feedText(out []Event, s string, starts ...string) ([]Event, string) {
	var at int
	if len(starts) == 1 {
		at = strings.Index(s, starts[0])
	} else {
		at, _ = IndexFirst(s, starts...)
	}
	if at < 0 {
		keep := HeldTail(s, starts...)
		j.in = append(j.in, s[len(s)-keep:]...)
		return AppendText(out, s[:len(s)-keep]), ""
	}
	return AppendText(out, s[:at]), s[at:]
}

// settle ends a parser's run, made when no move can be made with the
// input at hand: it passes on the arguments read.
func (j *jsonCall) settle(out []Event) []Event {
	out = j.flushArgs(out)
	if len(j.in) == 0 {
		j.in = nil // the consumed front of the buffer is not reused
	}
	return out
}

// flushArgs passes on the argument bytes read and not yet passed on.
func (j *jsonCall) flushArgs(out []Event) []Event {
	if j.streaming && len(j.raw) > j.argsFrom {
		out = AppendArgs(out, string(j.raw[j.argsFrom:]))
		j.argsFrom = len(j.raw)
	}
	return out
}

// take moves the first n bytes of the input to the markup.
func (j *jsonCall) take(n int) {
	j.raw = append(j.raw, j.in[:n]...)
	j.in = j.in[n:]
}

// takeSpace moves leading white space of the input to the markup.
func (j *jsonCall) takeSpace() {
	n := 0
	for n < len(j.in) && jwIsSpace(j.in[n]) {
		n++
	}
	j.take(n)
}

// beginObject readies the walk of a new object.
func (j *jsonCall) beginObject() {
	j.w = jsWalker{stack: j.w.stack[:0]}
}

// resetCall forgets the open call.
func (j *jsonCall) resetCall() {
	j.raw = j.raw[:0]
	j.key, j.name, j.begun = "", "", false
	j.args, j.argsSeen, j.streaming = "", false, false
}

// walk reads the object a byte at a time and tells h what happens at its
// top level; progress is false when it needs more input.
func (j *jsonCall) walk(out []Event, h jsonHooks, final bool) ([]Event, bool) {
	for i := 0; i < len(j.in); i++ {
		c := j.in[i]
		pos := len(j.raw)
		j.raw = append(j.raw, c)
		d0 := j.w.Depth()
		f := j.w.Step(c)
		if f&jwErr != 0 {
			j.in = j.in[i+1:]
			return h.fail(out, "the call is not valid JSON"), true
		}
		ok := true
		if f&jwEndBefore != 0 && d0 == 1 {
			out, ok = h.member(out, pos)
		}
		switch {
		case !ok:
		case f&jwKeyBegin != 0 && d0 == 1:
			j.keyStart = pos
		case f&jwKeyEnd != 0 && d0 == 1:
			if json.Unmarshal(j.raw[j.keyStart:pos+1], &j.key) != nil {
				j.key = ""
			}
			out, ok = h.keyEnded(out)
		case f&jwBegin != 0 && d0 == 1:
			j.valStart = pos
			out = h.valueBegins(out, c)
		case f&jwEnd != 0 && j.w.Depth() == 1:
			out, ok = h.member(out, pos+1)
		}
		if !ok {
			j.in = j.in[i+1:]
			return out, true
		}
		if j.w.Done() {
			j.in = j.in[i+1:]
			return h.objectDone(out), true
		}
	}
	j.in = j.in[:0]
	if final {
		return h.fail(out, "the call's JSON is not complete"), true
	}
	return out, false
}

// nameValue reads the value raw[valStart:end] of "name": one non-empty
// string, the first name of the call.
func (j *jsonCall) nameValue(end int) (string, bool) {
	val := j.raw[j.valStart:end]
	var name string
	if val[0] != '"' || json.Unmarshal(val, &name) != nil || strings.TrimSpace(name) == "" || j.name != "" {
		return "", false
	}
	return strings.TrimSpace(name), true
}

// argsValue reads the value raw[valStart:end] of the arguments key: an
// object (whose rest is passed on when it was streaming: streamed), null,
// or a string holding an object; else why it is no call's arguments.
func (j *jsonCall) argsValue(out []Event, end int) (_ []Event, streamed bool, why string) {
	if j.argsSeen {
		return out, false, "the call has two argument objects"
	}
	j.argsSeen = true
	switch val := j.raw[j.valStart:end]; val[0] {
	case '{':
		if j.streaming {
			out = AppendArgs(out, string(j.raw[j.argsFrom:end]))
			j.streaming = false
			return out, true, ""
		}
		j.args = string(val)
	case 'n':
		j.args = "{}"
	case '"':
		var s string
		_ = json.Unmarshal(val, &s) // validated by the walker
		args, ok := argsFromString(s)
		if !ok {
			return out, false, "the arguments string is not a JSON object"
		}
		j.args = args
	default:
		return out, false, "the arguments are not an object"
	}
	return out, false, ""
}

// isArgsKey reports whether k is the key of a call's arguments.
func isArgsKey(k string) bool { return k == "arguments" || k == "parameters" }

// argsFromRaw reads arguments given as a JSON value: an object, a string
// holding one, null or nothing.
func argsFromRaw(raw json.RawMessage) (string, bool) {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return "{}", true
	case raw[0] == '{':
		return string(raw), true
	case raw[0] == '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return argsFromString(s)
	}
	return "", false
}

// argsFromString reads arguments a model wrote as a string: a JSON object
// (or a Python dict), or nothing.
func argsFromString(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "{}", true
	}
	js, ok := literalJSON(s)
	if !ok || js[0] != '{' {
		return "", false
	}
	return js, true
}

// bytesStart reports whether b starts with m, and whether b is a proper
// prefix of m (more input could still make it start with m).
func bytesStart(b []byte, m string) (yes, maybe bool) {
	if len(b) >= len(m) {
		return string(b[:len(m)]) == m, false
	}
	return false, string(b) == m[:len(b)]
}
