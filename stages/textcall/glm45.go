package textcall

import "strings"

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
		Render:  func(calls []Call) string { return renderGLM(calls, "\n") },
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

const (
	glmText     = iota // outside a call
	glmAfter           // outside, right after a call: white space held
	glmHead            // after <tool_call>, before its first tag
	glmBetween         // in a call, expecting <arg_key> or </tool_call>
	glmKey             // inside <arg_key>
	glmAfterKey        // expecting <arg_value>
	glmValue           // inside <arg_value>
)

// glmParser parses glm45 and glm47 replies.
type glmParser struct {
	markup
	schemas Schemas
	tool    string // the open call's name
	value   tagValue
}

// glmValue0 is a glm parser's value reader before its first value.
var glmValue0 = newTagValue(glmValClose, false, glmConfirm)

func newGLM(format string, cfg Config) *glmParser {
	p := &glmParser{schemas: cfg.Schemas, value: glmValue0}
	p.init(format, '<', p)
	return p
}

// run makes moves until one needs more input (the end of the reply is
// Close's).
func (p *glmParser) run(out []Event, _ bool) []Event { return runMoves(out, p) }

// step makes one move; it reports false when it needs more input.
func (p *glmParser) step(out []Event) ([]Event, bool) {
	switch p.st {
	case glmText:
		return p.toBlock(out, glmOpen, glmHead)
	case glmAfter:
		return out, p.between(glmOpen, -1)
	case glmHead:
		name, end, c, _ := glmHeader(p.buf)
		var ok, more bool
		if out, ok, more = p.claimed(out, c, glmOpen); !ok {
			return out, more
		}
		p.take(end)
		p.tool, p.value.obj = name, argObject{}
		out = append(out, Event{Kind: CallBegin, Name: name})
		p.st = glmBetween
	case glmBetween, glmAfterKey:
		n, partial := glmSkip(p.buf)
		rest := p.buf[n:]
		want := []string{glmKeyOpen, glmClose}
		if p.st == glmAfterKey {
			want = []string{glmValOpen}
		}
		for _, tag := range want {
			if strings.HasPrefix(rest, tag) {
				p.take(n + len(tag))
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
		p.take(at + len(glmKeyClose))
		out = p.value.begin(out, p.schemas, p.tool, key)
		p.st = glmAfterKey
	case glmValue:
		return p.value.read(out, &p.markup, glmBetween)
	}
	return out, true
}

// openTag moves past an opening or closing tag just taken.
func (p *glmParser) openTag(out []Event, tag string) []Event {
	switch tag {
	case glmKeyOpen:
		p.st = glmKey
	case glmValOpen:
		p.st = glmValue
	case glmClose:
		out = p.end(out)
	}
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

// end closes the open call's arguments and the call.
func (p *glmParser) end(out []Event) []Event {
	return p.endArgs(out, &p.value.obj, glmAfter)
}

// Close ends the reply. A call whose only missing part is </tool_call> is
// ended; one cut inside a tag or a value is given back as text.
func (p *glmParser) Close(out []Event) []Event {
	if out, done := p.closeOutside(out, glmAfter, glmHead, "unterminated GLM tool call"); done {
		return out
	}
	switch p.st {
	case glmValue, glmBetween:
		var ok bool
		if out, ok = p.value.atEOF(out, &p.markup, glmValue, "GLM tool call cut inside an argument"); !ok {
			break
		}
		n, _ := glmSkip(p.buf)
		if rest := p.buf[n:]; rest == "" || strings.HasPrefix(glmClose, rest) {
			out = p.end(out)
			break
		}
		out = p.cut(out, "unterminated GLM tool call")
	default:
		out = p.cut(out, "GLM tool call cut inside an argument")
	}
	p.closed()
	return out
}

// renderGLM writes each call as <tool_call>NAME, then
// <arg_key>K</arg_key><arg_value>V</arg_value> per argument (V a string's
// text or another value's JSON), then </tool_call>; nl goes after the
// name and after each tag pair ("\n" for glm45, "" for glm47).
func renderGLM(calls []Call, nl string) string {
	var b strings.Builder
	for i, c := range calls {
		if i > 0 {
			b.WriteString(nl)
		}
		b.WriteString(glmOpen + c.Name + nl)
		for _, m := range argMembers(c.Arguments) {
			v, _ := valueText(m.value)
			b.WriteString(glmKeyOpen + m.key + glmKeyClose + nl + glmValOpen + v + glmValClose + nl)
		}
		b.WriteString(glmClose)
	}
	return b.String()
}
