package textcall

import (
	"strings"
	"unicode/utf8"
)

// GLM writes a call as a name followed by key and value tags:
//
//	<tool_call>NAME
//	<arg_key>KEY</arg_key>
//	<arg_value>VALUE</arg_value>
//	</tool_call>
//
// GLM-4.5 and 4.6 put a newline after the name and around each tag (glm45);
// GLM-4.7 and 5 write no newlines at all (glm47). A call without arguments
// is <tool_call>NAME</tool_call>. Values are raw text: a string as written,
// anything else as JSON, so they are typed by the request's tool schema.
// A value ends at an </arg_value> that what follows confirms (<arg_key>,
// </tool_call> or the end of the reply), so code holding the tags passes.
// Both formats share one parser that accepts either spacing; their Claims
// differ only in the spacing they expect, so auto reports the one the
// model wrote.

const (
	glmOpen      = "<tool_call>"
	glmClose     = "</tool_call>"
	glmKeyOpen   = "<arg_key>"
	glmKeyClose  = "</arg_key>"
	glmValOpen   = "<arg_value>"
	glmValClose  = "</arg_value>"
	glmMaxHeader = 256 // bytes between <tool_call> and the first tag
	glmMaxKey    = 256 // bytes of an argument name
)

func init() {
	Register(Format{
		Name:    "glm45",
		Summary: "GLM-4.5/4.6: <tool_call>NAME\\n<arg_key>K</arg_key>\\n<arg_value>V</arg_value>\\n</tool_call>",
		New:     func(cfg Config) Parser { return newGLM("glm45", cfg) },
		Starts:  []string{glmOpen},
		Claim:   func(rest string, _ bool) Claim { return glmClaim(rest, true) },
		Models:  []string{"glm-4.5", "glm-4.6", "glm4.5", "glm4.6", "glm-4-5", "glm-4-6"},
	})
}

// glmClaim says whether rest (which starts with <tool_call>) is a GLM call
// written with (newline) or without a newline after the name.
func glmClaim(rest string, newline bool) Claim {
	_, _, c, nl := glmHeader(rest)
	if c == ClaimYes && nl != newline {
		return ClaimNo
	}
	return c
}

// glmNameByte reports whether c may be part of a tool name.
func glmNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '.' || c == ':' || c == '/' || c >= 0x80
}

// glmHeader reads the start of a GLM call in s (which starts with
// <tool_call>): white space, a name, white space, then <arg_key> or
// </tool_call>. It returns the name, the offset of that first tag, whether
// s is a call (ClaimMore while it could still be), and whether a newline
// came after the name.
func glmHeader(s string) (name string, end int, c Claim, newline bool) {
	i := len(glmOpen)
	for i < len(s) && isWS(s[i]) {
		i++
	}
	start := i
	for i < len(s) && glmNameByte(s[i]) {
		i++
	}
	if i-len(glmOpen) > glmMaxHeader {
		return "", 0, ClaimNo, false
	}
	if i == len(s) {
		return "", 0, ClaimMore, false
	}
	if i == start {
		return "", 0, ClaimNo, false
	}
	name = s[start:i]
	j := i
	for j < len(s) && isWS(s[j]) {
		j++
	}
	if j-len(glmOpen) > glmMaxHeader {
		return "", 0, ClaimNo, false
	}
	newline = strings.IndexByte(s[i:j], '\n') >= 0
	tail := s[j:]
	switch {
	case strings.HasPrefix(tail, glmKeyOpen) || strings.HasPrefix(tail, glmClose):
		return name, j, ClaimYes, newline
	case strings.HasPrefix(glmKeyOpen, tail) || strings.HasPrefix(glmClose, tail):
		return "", 0, ClaimMore, false
	}
	return "", 0, ClaimNo, false
}

// isWS reports whether c is ASCII white space.
func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// glmSkip returns the length of the white space at the start of s, where
// the two characters \n written literally (GLM-4.7 sometimes does) count
// as white space too; partial is true when s ends in a lone backslash that
// could still be one.
func glmSkip(s string) (n int, partial bool) {
	for n < len(s) {
		switch {
		case isWS(s[n]):
			n++
		case s[n] == '\\' && n+1 == len(s):
			return n, true
		case s[n] == '\\' && s[n+1] == 'n':
			n += 2
		default:
			return n, false
		}
	}
	return n, false
}

type glmState uint8

const (
	glmText     glmState = iota // outside a call
	glmAfter                    // outside, right after a call: white space held
	glmHead                     // after <tool_call>, before its first tag
	glmBetween                  // in a call, expecting <arg_key> or </tool_call>
	glmKey                      // inside <arg_key>
	glmAfterKey                 // expecting <arg_value>
	glmValue                    // inside <arg_value>
)

// glmParser parses glm45 and glm47 replies.
type glmParser struct {
	format  string
	schemas Schemas
	state   glmState
	buf     string          // input not consumed yet
	raw     strings.Builder // the open call's markup as written
	tool    string          // the open call's name
	nargs   int             // arguments begun in the open call
	typ     string          // schema type of the open value
	stream  bool            // the open value streams as a JSON string
	val     strings.Builder // the open value, when typed
}

func newGLM(format string, cfg Config) *glmParser {
	return &glmParser{format: format, schemas: cfg.Schemas}
}

// FormatName returns the parser's format.
func (p *glmParser) FormatName() string { return p.format }

// Quiet reports whether s passes as text: outside a call, nothing held,
// and no '<' that could start one.
func (p *glmParser) Quiet(s string) bool {
	return p.state == glmText && p.buf == "" && strings.IndexByte(s, '<') < 0
}

// eat moves n bytes of the buffer into the open call's markup.
func (p *glmParser) eat(n int) {
	p.raw.WriteString(p.buf[:n])
	p.buf = p.buf[n:]
}

// Feed parses the next piece of the reply.
func (p *glmParser) Feed(out []Event, s string) []Event {
	p.buf += s
	for {
		var more bool
		out, more = p.step(out)
		if !more {
			return out
		}
	}
}

// step makes one move; it reports false when it needs more input.
func (p *glmParser) step(out []Event) ([]Event, bool) {
	switch p.state {
	case glmText:
		at := strings.Index(p.buf, glmOpen)
		if at < 0 {
			keep := HeldTail(p.buf, glmOpen)
			out = AppendText(out, p.buf[:len(p.buf)-keep])
			p.buf = p.buf[len(p.buf)-keep:]
			return out, false
		}
		out = AppendText(out, p.buf[:at])
		p.buf = p.buf[at:]
		p.raw.Reset()
		p.state = glmHead
	case glmAfter:
		rest := strings.TrimLeft(p.buf, " \t\r\n")
		if rest == "" || (len(rest) < len(glmOpen) && strings.HasPrefix(glmOpen, rest)) {
			return out, false
		}
		if strings.HasPrefix(rest, glmOpen) {
			p.buf = rest // white space between calls is part of the markup
		}
		p.state = glmText
	case glmHead:
		name, end, c, _ := glmHeader(p.buf)
		switch c {
		case ClaimMore:
			return out, false
		case ClaimNo: // not a call: the tag is text
			out = AppendText(out, glmOpen)
			p.buf = p.buf[len(glmOpen):]
			p.state = glmText
			return out, true
		}
		p.eat(end)
		p.tool, p.nargs = name, 0
		out = append(out, Event{Kind: CallBegin, Name: name})
		p.state = glmBetween
	case glmBetween, glmAfterKey:
		n, partial := glmSkip(p.buf)
		rest := p.buf[n:]
		want := []string{glmKeyOpen, glmClose}
		if p.state == glmAfterKey {
			want = []string{glmValOpen}
		}
		for _, tag := range want {
			if strings.HasPrefix(rest, tag) {
				p.eat(n + len(tag))
				return p.openTag(out, tag), true
			}
		}
		if partial || rest == "" || HeldTail(rest, want...) == len(rest) {
			return out, false
		}
		return p.malformed(out, "unexpected text between GLM argument tags"), true
	case glmKey:
		at := strings.Index(p.buf, glmKeyClose)
		if at < 0 {
			if len(p.buf) > glmMaxKey+len(glmKeyClose) {
				return p.malformed(out, "GLM argument name too long or not closed"), true
			}
			return out, false
		}
		key := strings.TrimSpace(p.buf[:at])
		if key == "" {
			return p.malformed(out, "empty GLM argument name"), true
		}
		p.eat(at + len(glmKeyClose))
		if p.nargs == 0 {
			out = AppendArgs(out, "{")
		} else {
			out = AppendArgs(out, ",")
		}
		p.nargs++
		out = AppendArgs(out, quote(key)+":")
		p.typ, _ = p.schemas.Type(p.tool, key)
		p.stream = xvStreams(p.typ)
		p.state = glmAfterKey
	case glmValue:
		at := strings.Index(p.buf, glmValClose)
		if at < 0 {
			n := xvSafeCut(p.buf[:len(p.buf)-HeldTail(p.buf, glmValClose)])
			out = p.value(out, p.buf[:n])
			p.eat(n)
			return out, false
		}
		switch glmConfirm(p.buf[at+len(glmValClose):]) {
		case ClaimNo: // an </arg_value> inside the value
			out = p.value(out, p.buf[:at+len(glmValClose)])
			p.eat(at + len(glmValClose))
			return out, true
		case ClaimMore:
			n := xvSafeCut(p.buf[:at])
			out = p.value(out, p.buf[:n])
			p.eat(n)
			return out, false
		}
		out = p.finish(out, at)
		p.state = glmBetween
	}
	return out, true
}

// openTag moves past an opening or closing tag just eaten.
func (p *glmParser) openTag(out []Event, tag string) []Event {
	switch tag {
	case glmKeyOpen:
		p.state = glmKey
	case glmValOpen:
		p.val.Reset()
		if p.stream {
			out = AppendArgs(out, `"`)
		}
		p.state = glmValue
	case glmClose:
		out = p.end(out)
	}
	return out
}

// finish ends the open value at the </arg_value> at offset at.
func (p *glmParser) finish(out []Event, at int) []Event {
	out = p.value(out, p.buf[:at])
	if p.stream {
		out = AppendArgs(out, `"`)
	} else {
		out = AppendArgs(out, TypedValue(p.val.String(), p.typ))
	}
	p.eat(at + len(glmValClose))
	p.state = glmBetween
	return out
}

// glmConfirm says whether rest, the text after an </arg_value>, confirms
// it as the value's end: white space, then <arg_key> or </tool_call>.
// ClaimMore: the text so far (or the end of the reply) cannot tell.
func glmConfirm(rest string) Claim {
	n, partial := glmSkip(rest)
	r := rest[n:]
	switch {
	case n > glmMaxHeader:
		return ClaimNo
	case strings.HasPrefix(r, glmKeyOpen) || strings.HasPrefix(r, glmClose):
		return ClaimYes
	case partial || HeldTail(r, glmKeyOpen, glmClose) == len(r):
		return ClaimMore
	}
	return ClaimNo
}

// value passes on a piece of the open value.
func (p *glmParser) value(out []Event, s string) []Event {
	if p.stream {
		return AppendArgs(out, xvEscape(s))
	}
	p.val.WriteString(s)
	return out
}

// end closes the open call's arguments and the call.
func (p *glmParser) end(out []Event) []Event {
	if p.nargs == 0 {
		out = AppendArgs(out, "{}")
	} else {
		out = AppendArgs(out, "}")
	}
	p.state = glmAfter
	p.raw.Reset()
	return append(out, Event{Kind: CallEnd})
}

// malformed voids the open call and gives its markup back as text; the
// unconsumed input is read again as text.
func (p *glmParser) malformed(out []Event, why string) []Event {
	out = append(out, Event{Kind: Malformed, Text: why})
	out = AppendText(out, p.raw.String())
	p.raw.Reset()
	p.state = glmText
	return out
}

// Close ends the reply. A call whose only missing part is </tool_call> is
// ended; one cut inside a tag or a value is given back as text.
func (p *glmParser) Close(out []Event) []Event {
	switch p.state {
	case glmText:
		out = AppendText(out, p.buf)
	case glmAfter:
		if strings.TrimLeft(p.buf, " \t\r\n") != "" {
			out = AppendText(out, p.buf)
		}
	case glmHead:
		out = append(out, Event{Kind: Malformed, Text: "unterminated GLM tool call"})
		out = AppendText(out, p.buf)
	case glmValue, glmBetween:
		if p.state == glmValue {
			// The reply ended after an </arg_value> that was waiting for
			// what follows: it ends the value.
			at := strings.Index(p.buf, glmValClose)
			if at < 0 {
				out = append(out, Event{Kind: Malformed, Text: "GLM tool call cut inside an argument"})
				out = AppendText(out, p.raw.String()+p.buf)
				break
			}
			out = p.finish(out, at)
		}
		n, _ := glmSkip(p.buf)
		if rest := p.buf[n:]; rest == "" || strings.HasPrefix(glmClose, rest) {
			out = p.end(out)
			break
		}
		out = append(out, Event{Kind: Malformed, Text: "unterminated GLM tool call"})
		out = AppendText(out, p.raw.String()+p.buf)
	default:
		out = append(out, Event{Kind: Malformed, Text: "GLM tool call cut inside an argument"})
		out = AppendText(out, p.raw.String()+p.buf)
	}
	p.buf, p.state = "", glmText
	p.raw.Reset()
	return out
}

// xvStreams reports whether a value of schema type typ is a JSON string
// (so it can be passed on while it arrives) rather than a typed value
// parsed once whole: see TypedValue.
func xvStreams(typ string) bool {
	switch typ {
	case "integer", "number", "boolean", "object", "array", "null":
		return false
	}
	return true
}

// xvEscape returns s escaped as the inside of a JSON string; pieces of a
// text cut at character boundaries escape to the pieces of the whole.
func xvEscape(s string) string {
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

// xvSafeCut returns the length of s without an incomplete UTF-8 character
// at its end, which must wait for its other bytes.
func xvSafeCut(s string) int {
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
