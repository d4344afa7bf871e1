package textcall

import (
	"strings"
	"unicode/utf8"
)

// This file holds the machinery the string-buffered formats share
// (deepseek_v3/v31/v32, kimi_k2, mistral, glm45/47, minimax_m2, gpt_oss):
// the "markup with give-back" state, the reader of a section of
// special-token calls, streamed JSON arguments, and the tag-value reader
// with the confirm-the-closing-tag rule and schema typing. A format keeps
// its markers, its Claim and what is truly its own; see
// docs/text-tool-calls.md.

// machine is what a format built on markup adds: its state machine, run
// over the pending text (eof: the reply has ended).
type machine interface {
	run(out []Event, eof bool) []Event
}

// markup is the state the string-buffered parsers share: the text not yet
// consumed, the markup consumed since the current call (or section)
// began — given back as text when it fails — and the arguments of the
// open call. It implements Parser around the format's machine: st 0 is
// plain text for every format.
type markup struct {
	name    string  // the format's name (Malformed reasons start with it)
	trigger byte    // the byte every start of the format begins with
	self    machine // the format's parser
	st      uint8   // the format's state; 0: plain text
	buf     string
	raw     strings.Builder
	args    strings.Builder
	obj     objScan
	calls   int // calls recovered in the open section
}

// init names the format and the machine that drives the parser.
func (m *markup) init(name string, trigger byte, self machine) {
	m.name, m.trigger, m.self = name, trigger, self
}

// FormatName returns the parser's format.
func (m *markup) FormatName() string { return m.name }

// Quiet reports whether s holds no trigger byte while the parser is in
// plain text with nothing held.
func (m *markup) Quiet(s string) bool {
	return m.st == 0 && m.buf == "" && strings.IndexByte(s, m.trigger) < 0
}

// Feed parses the next piece of the reply.
func (m *markup) Feed(out []Event, s string) []Event {
	m.buf += s
	return m.self.run(out, false)
}

// Close ends the reply: the machine runs to the end, and what it left is
// text.
func (m *markup) Close(out []Event) []Event {
	out = m.self.run(out, true)
	out = AppendText(out, m.buf)
	m.buf = ""
	return out
}

// mover is a format that makes one move at a time (more false: it needs
// more input); its run is runMoves.
type mover interface {
	step(out []Event) (_ []Event, more bool)
}

// runMoves makes moves until one needs more input.
func runMoves(out []Event, m mover) []Event {
	for {
		var more bool
		if out, more = m.step(out); !more {
			return out
		}
	}
}

// take consumes the first n bytes of the pending text as markup.
func (m *markup) take(n int) string {
	s := m.buf[:n]
	m.raw.WriteString(s)
	m.buf = m.buf[n:]
	return s
}

// takeTo consumes the pending text up to rest (a suffix of it) and then n
// bytes more.
func (m *markup) takeTo(rest string, n int) string {
	return m.take(len(m.buf) - len(rest) + n)
}

// malformed reports the markup as malformed (why), gives its text back
// and goes back to plain text; the pending text is read again as text.
func (m *markup) malformed(out []Event, why string) []Event {
	m.st = 0
	out = append(out, Event{Kind: Malformed, Text: why})
	out = AppendText(out, m.raw.String())
	m.raw.Reset()
	return out
}

// failText is malformed with why after the format's name.
func (m *markup) failText(out []Event, why string) []Event {
	return m.malformed(out, m.name+": "+why)
}

// cut is malformed at the end of the reply: the pending text follows the
// markup given back.
func (m *markup) cut(out []Event, why string) []Event {
	out = m.malformed(out, why)
	out = AppendText(out, m.buf)
	m.buf = ""
	return out
}

// closeOutside ends the reply in the states outside a call: plain text
// (given back), after a block (white space dropped, other text given back)
// and at a block's opening tag not yet claimed (why). done is false in
// the other states.
func (m *markup) closeOutside(out []Event, after, head uint8, why string) (_ []Event, done bool) {
	switch m.st {
	case 0:
		out = AppendText(out, m.buf)
	case after:
		if m.rest() != "" {
			out = AppendText(out, m.buf)
		}
	case head:
		out = m.cut(out, why)
	default:
		return out, false
	}
	m.closed()
	return out, true
}

// closed forgets everything at the end of the reply.
func (m *markup) closed() {
	m.buf, m.st = "", 0
	m.raw.Reset()
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

// text gives back the pending text (as kind k) up to the first of starts
// and reports which begins there (-1: none; then a tail that could still
// begin one is held, unless eof).
func (m *markup) text(out []Event, k Kind, eof bool, starts ...string) ([]Event, int) {
	at, which := IndexFirst(m.buf, starts...)
	if at < 0 {
		keep := 0
		if !eof {
			keep = HeldTail(m.buf, starts...)
		}
		out = appendText(out, k, m.buf[:len(m.buf)-keep])
		m.buf = m.buf[len(m.buf)-keep:]
		return out, -1
	}
	out = appendText(out, k, m.buf[:at])
	m.buf = m.buf[at:]
	return out, which
}

// openAt gives back text up to the first of starts (see text) and opens
// markup with it: the state is states[which] for starts[which]; which is
// -1 when no start came.
func (m *markup) openAt(out []Event, eof bool, starts []string, states []uint8) ([]Event, int) {
	out, which := m.text(out, Text, eof, starts...)
	if which >= 0 {
		m.raw.Reset()
		m.calls = 0
		m.take(len(starts[which]))
		m.st = states[which]
	}
	return out, which
}

// toBlock gives back text up to start, a block's opening tag, and goes to
// state head there (the tag still pending: its Claim reads it); more is
// false when no start came.
func (m *markup) toBlock(out []Event, start string, head uint8) (_ []Event, more bool) {
	out, which := m.text(out, Text, false, start)
	if which < 0 {
		return out, false
	}
	m.raw.Reset()
	m.st = head
	return out, true
}

// claimed acts on the Claim c of the block at start, its opening tag:
// more input is needed (ClaimMore), or the tag is text (ClaimNo: back to
// plain text); ok on ClaimYes.
func (m *markup) claimed(out []Event, c Claim, start string) (_ []Event, ok, more bool) {
	switch c {
	case ClaimMore:
		return out, false, false
	case ClaimNo:
		out = AppendText(out, start)
		m.buf = m.buf[len(start):]
		m.st = 0
		return out, false, true
	}
	return out, true, true
}

// between reads the white space after a block of calls: it is held while
// another block (start) may follow — markup, dropped, when one does — and
// is text otherwise; maxWS (-1: no bound) bounds what is held. more is
// false while it waits.
func (m *markup) between(start string, maxWS int) (more bool) {
	rest := m.rest()
	ws := len(m.buf) - len(rest)
	if (rest == "" || partialOf(rest, start)) && (maxWS < 0 || ws <= maxWS) {
		return false
	}
	if strings.HasPrefix(rest, start) {
		m.buf = rest
	}
	m.st = 0
	return true
}

// rest returns the pending text after its leading white space.
func (m *markup) rest() string { return m.buf[spaceLen(m.buf):] }

// section reads what follows in a section of calls: white space, then
// callBegin (taken; the state is call) or one of ends (taken). Anything
// else ends the section without its end marker. A section that held no
// call was no markup and is given back as text. wait: more input is
// needed.
func (m *markup) section(out []Event, eof bool, call uint8, callBegin string, ends ...string) (_ []Event, wait bool) {
	rest := m.rest()
	if strings.HasPrefix(rest, callBegin) {
		m.takeTo(rest, len(callBegin))
		m.st = call
		return out, false
	}
	if e := hasPrefixAny(rest, ends...); e != "" {
		m.takeTo(rest, len(e))
	} else if !eof && (rest == "" || partialOf(rest, callBegin) || partialOf(rest, ends...)) {
		return out, true
	}
	if m.calls == 0 {
		out = m.giveBack(out)
	}
	m.raw.Reset()
	m.st = 0
	return out, false
}

// head reads a call's head (an id or a name) up to sep with headBefore:
// what is no head is given back as text, a malformed one fails (long: why
// for one longer than max; an empty one fails too when required). ok: the
// head, and n the length of it through sep, not yet taken. wait: more
// input is needed.
func (m *markup) head(out []Event, eof bool, sep string, max int, long string, required bool) (_ []Event, head string, n int, ok, wait bool) {
	head, n, step := headBefore(m.buf, sep, max)
	switch {
	case step == headNot:
		out = m.giveBack(out) // not a call: prose mentioning the marker
		m.st = 0
	case step == headLong:
		out = m.failText(out, long)
	case step == headMore && !eof:
		return out, "", 0, false, true
	case step == headMore:
		out = m.failText(out, "unterminated tool call")
	case step == headNoSep || (required && head == ""):
		out = m.failText(out, "tool call without "+sep)
	default:
		return out, head, n, true, false
	}
	return out, "", 0, false, false
}

// argStep says where streaming a call's JSON arguments stands.
type argStep uint8

const (
	argMore argStep = iota // the object is not complete: more input needed
	argDone                // the object is complete and valid JSON
	argBad                 // not a JSON object, or invalid JSON
)

// beginArgs prepares for the arguments of a new call.
func (m *markup) beginArgs() {
	m.args.Reset()
	m.obj.reset(false)
}

// callArgs streams the open call's JSON arguments (see streamArgs) and
// goes to state done when they are complete. When callEnd (not "") comes
// where the object would begin, the call ends with no arguments ({}): it
// is recovered and the state is none. Running out of input at eof and bad
// arguments fail the markup (back to plain text). wait: more input is
// needed.
func (m *markup) callArgs(out []Event, eof bool, callEnd string, done, none uint8) (_ []Event, wait bool) {
	if !m.obj.started && callEnd != "" {
		rest := m.rest()
		if strings.HasPrefix(rest, callEnd) {
			out = AppendArgs(out, "{}")
			m.takeTo(rest, len(callEnd))
			m.calls++
			m.st = none
			return m.recovered(out), false
		}
		if !eof && (rest == "" || partialOf(rest, callEnd)) {
			return out, true
		}
	}
	out, step := m.streamArgs(out, eof)
	switch {
	case step == argMore && !eof:
		return out, true
	case step == argMore:
		out = m.failText(out, "unterminated tool-call arguments")
	case step == argBad:
		out = m.failText(out, "tool-call arguments are not a JSON object")
	default:
		m.st = done
	}
	return out, false
}

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
		m.obj.reset(k < len(m.buf) && m.buf[k] == '\'')
	}
	n, done := m.obj.scan(m.buf)
	s := m.take(n)
	m.args.WriteString(s)
	if !m.obj.w.python {
		out = AppendArgs(out, s)
	}
	switch {
	case !done:
		return out, argMore
	case m.obj.bad():
		return out, argBad
	case m.obj.w.python:
		js, ok := literalJSON(m.args.String())
		if !ok || js[0] != '{' {
			return out, argBad
		}
		return AppendArgs(out, js), argDone
	}
	return out, argDone
}

// endArgs ends the open call's arguments object a, and the call; the
// state is next.
func (m *markup) endArgs(out []Event, a *argObject, next uint8) []Event {
	out = a.end(out)
	m.st = next
	return m.recovered(out)
}

// field finds the end of a field of markup (a name or an id) at offset end
// of the pending text (-1: not come yet). It fails the markup, back to
// text, when the field runs past max (why: long) or the reply ends first;
// ok is false then, and while more input is needed (wait).
func (m *markup) field(out []Event, eof bool, end, max int, long string) (_ []Event, ok, wait bool) {
	n := end
	if end < 0 {
		n = len(m.buf)
	}
	switch {
	case n > max:
		return m.failText(out, long), false, false
	case end >= 0:
		return out, true, false
	case !eof:
		return out, false, true
	}
	return m.failText(out, "unterminated tool call"), false, false
}

// callEnded reads what follows a call's complete arguments: white space
// and callEnd (taken when there). Without it the call is complete all the
// same — its arguments are — unless more input could still bring one of
// next (wait: more input needed). The call is recovered.
func (m *markup) callEnded(out []Event, eof bool, callEnd string, next ...string) ([]Event, bool) {
	rest := m.rest()
	if strings.HasPrefix(rest, callEnd) {
		m.takeTo(rest, len(callEnd))
	} else if !eof && (rest == "" || partialOf(rest, callEnd) || partialOf(rest, next...)) {
		return out, true
	}
	m.calls++
	return m.recovered(out), false
}

// headStep says what headBefore found.
type headStep uint8

const (
	headNot   headStep = iota // not one run of characters: no markup
	headLong                  // longer than the format allows
	headMore                  // the separator has not come yet
	headNoSep                 // a '<' that is not the separator
	headOK                    // the head and its separator
)

// headBefore reads the text of a call's head (an id, a name or a type) up
// to the next '<' in s, which must begin sep: the head (white space
// trimmed) and the length through sep.
func headBefore(s, sep string, max int) (head string, n int, step headStep) {
	j := strings.IndexByte(s, '<')
	region := s
	if j >= 0 {
		region = s[:j]
	}
	switch {
	case !idText(region):
		return "", 0, headNot
	case len(region) > max:
		return "", 0, headLong
	case j < 0 || partialOf(s[j:], sep):
		return "", 0, headMore
	case !strings.HasPrefix(s[j:], sep):
		return "", 0, headNoSep
	}
	return strings.TrimSpace(region), j + len(sep), headOK
}

// claim is headStep as a Format's Claim.
func (h headStep) claim() Claim {
	switch h {
	case headOK:
		return ClaimYes
	case headMore:
		return ClaimMore
	}
	return ClaimNo
}

// idText reports whether s can be a call's id or name so far: white space
// around one run of characters.
func idText(s string) bool {
	t := strings.TrimLeft(s, " \t\r\n")
	if i := strings.IndexAny(t, " \t\r\n"); i >= 0 {
		return strings.TrimLeft(t[i:], " \t\r\n") == ""
	}
	return true
}

// claimSection strips one of sections (a section's begin marker) from the
// start of rest, which must then go on with callBegin: rest from
// callBegin on, or a Claim (ClaimMore, ClaimNo) when it does not.
func claimSection(rest, callBegin string, sections ...string) (string, Claim) {
	if m := hasPrefixAny(rest, sections...); m != "" {
		rest = strings.TrimLeft(rest[len(m):], " \t\r\n")
		if rest == "" || partialOf(rest, callBegin) {
			return "", ClaimMore
		}
		if !strings.HasPrefix(rest, callBegin) {
			return "", ClaimNo
		}
	}
	return rest, ClaimYes
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

// isWS reports whether c is ASCII white space.
func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// argObject writes a call's arguments as one JSON object, member by
// member.
type argObject struct{ n int }

// member appends the next member's key (and value, when known).
func (a *argObject) member(out []Event, key, value string) []Event {
	sep := ","
	if a.n == 0 {
		sep = "{"
	}
	a.n++
	return AppendArgs(out, sep+quote(key)+":"+value)
}

// end appends the object's end ({} when it had no member).
func (a *argObject) end(out []Event) []Event {
	if a.n == 0 {
		return AppendArgs(out, "{}")
	}
	return AppendArgs(out, "}")
}

// paramValue returns a raw parameter value as JSON: typed by the
// request's schema when it lists the parameter (with a type), else read
// as JSON (or a Python literal) when the markup says it is (isJSON), else
// a string.
func paramValue(schemas Schemas, tool, param, raw string, isJSON bool) string {
	if typ, ok := schemas.Type(tool, param); ok && typ != "" {
		return TypedValue(raw, typ)
	}
	if isJSON {
		if js, ok := literalJSON(strings.TrimSpace(raw)); ok {
			return js
		}
	}
	return quote(raw)
}

// tagValue is the reader of a raw parameter value between XML-like tags
// (glm45, minimax_m2). A value ends at a closing tag that what follows it
// confirms, so code that holds the tags passes. A value of a string type
// (or none) streams as a JSON string while it arrives; a typed one is held
// whole and typed by the schema (TypedValue).
type tagValue struct {
	closeTag string             // the value's closing tag
	trimNL   bool               // one leading and one trailing newline are layout
	confirm  func(string) Claim // whether the text after closeTag confirms it
	held     []string           // what the value's tail may be the start of
	typ      string             // schema type of the open value
	stream   bool               // the open value streams as a JSON string
	lead     bool               // trimNL: the value's first byte has not been seen
	val      strings.Builder    // the open value, when typed
	obj      argObject          // the open call's arguments
}

// newTagValue returns the value reader for closeTag: a template a parser
// copies (it shares held, which is never written).
func newTagValue(closeTag string, trimNL bool, confirm func(string) Claim) tagValue {
	v := tagValue{closeTag: closeTag, trimNL: trimNL, confirm: confirm, held: []string{closeTag}}
	if trimNL {
		v.held = []string{"\n" + closeTag, closeTag}
	}
	return v
}

// begin opens the value of parameter key of tool: its key is written, and
// a streamed value's opening quote.
func (v *tagValue) begin(out []Event, schemas Schemas, tool, key string) []Event {
	v.typ, _ = schemas.Type(tool, key)
	v.stream = valueStreams(v.typ)
	v.lead = v.trimNL
	v.val.Reset()
	open := ""
	if v.stream {
		open = `"`
	}
	return v.obj.member(out, key, open)
}

// piece passes on a piece of the open value.
func (v *tagValue) piece(out []Event, s string) []Event {
	if v.stream {
		return AppendArgs(out, jsonEscape(s))
	}
	v.val.WriteString(s)
	return out
}

// read reads the open value from m's pending text; when the value ends
// (its closing tag taken) the state is next. more is false when more
// input is needed.
func (v *tagValue) read(out []Event, m *markup, next uint8) (_ []Event, more bool) {
	if v.lead {
		if m.buf == "" {
			return out, false
		}
		if m.buf[0] == '\n' {
			m.take(1)
		}
		v.lead = false
	}
	at := strings.Index(m.buf, v.closeTag)
	if at < 0 {
		n := safeCut(m.buf[:len(m.buf)-HeldTail(m.buf, v.held...)])
		out = v.piece(out, m.take(n))
		return out, false
	}
	switch v.confirm(m.buf[at+len(v.closeTag):]) {
	case ClaimNo: // the closing tag inside the value
		return v.piece(out, m.take(at+len(v.closeTag))), true
	case ClaimMore:
		n := at
		if v.trimNL {
			n = len(strings.TrimSuffix(m.buf[:at], "\n"))
		}
		return v.piece(out, m.take(safeCut(m.buf[:n]))), false
	}
	m.st = next
	return v.finish(out, m, at), true
}

// finish ends the open value at the closing tag at offset at of m's
// pending text.
func (v *tagValue) finish(out []Event, m *markup, at int) []Event {
	s := m.buf[:at]
	if v.trimNL {
		s = strings.TrimSuffix(s, "\n")
	}
	out = v.piece(out, s)
	if v.stream {
		out = AppendArgs(out, `"`)
	} else {
		out = AppendArgs(out, TypedValue(v.val.String(), v.typ))
	}
	m.take(at + len(v.closeTag))
	return out
}

// atEOF ends the open value, when m is in state value, at the end of the
// reply: a closing tag that was waiting for what follows ends it. A value
// cut before its closing tag fails the markup (why): ok is false.
func (v *tagValue) atEOF(out []Event, m *markup, value uint8, why string) (_ []Event, ok bool) {
	if m.st != value {
		return out, true
	}
	at := strings.Index(m.buf, v.closeTag)
	if at < 0 {
		return m.cut(out, why), false
	}
	return v.finish(out, m, at), true
}

// valueStreams reports whether a value of schema type typ is a JSON string
// (so it can be passed on while it arrives) rather than a typed value
// parsed once whole: see TypedValue.
func valueStreams(typ string) bool {
	for _, t := range strings.Split(typ, "|") {
		if n := typeName(t); n != "" && n != "string" {
			return false
		}
	}
	return true
}

// jsonEscape returns s escaped as the inside of a JSON string; pieces of a
// text cut at character boundaries escape to the pieces of the whole.
func jsonEscape(s string) string {
	plain := utf8.ValidString(s)
	for i := 0; plain && i < len(s); i++ {
		// What encoding/json escapes: controls, quote, backslash, and
		// U+2028/U+2029 (which start with 0xE2).
		c := s[i]
		plain = c >= 0x20 && c != '"' && c != '\\' && c != 0xE2
	}
	if plain {
		return s
	}
	q := quote(s)
	return q[1 : len(q)-1]
}

// safeCut returns the length of s without an incomplete UTF-8 character
// at its end, which must wait for its other bytes.
func safeCut(s string) int {
	for k := 1; k <= utf8.UTFMax-1 && k <= len(s); k++ {
		c := s[len(s)-k]
		if c < 0x80 {
			return len(s)
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRuneInString(s[len(s)-k:]) {
				return len(s) - k
			}
			return len(s)
		}
	}
	return len(s)
}
