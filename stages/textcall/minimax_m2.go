package textcall

import "strings"

// MiniMax-M2 writes one block of calls, each an invoke with parameters:
//
//	<minimax:tool_call>
//	<invoke name="NAME">
//	<parameter name="KEY">VALUE</parameter>
//	</invoke>
//	</minimax:tool_call>
//
// A block holds one or more invokes. Values are raw text (a string as
// written, anything else as JSON), typed by the request's tool schema; one
// leading and one trailing newline of a value are dropped (models put the
// value on its own lines). A value ends at a </parameter> that what
// follows confirms (the next parameter, </invoke> and the next invoke or
// the block's end, or the end of the reply), so code that contains the
// tags passes. The name attribute may be quoted with " or ', or not at
// all.

const (
	mmOpen       = "<minimax:tool_call>"
	mmClose      = "</minimax:tool_call>"
	mmInvoke     = "<invoke name="
	mmInvokeEnd  = "</invoke>"
	mmParam      = "<parameter name="
	mmParamEnd   = "</parameter>"
	mmParamEndNL = "\n</parameter>"
	mmMaxAttr    = 256 // bytes of a name attribute, or of white space before a tag
)

func init() {
	Register(Format{
		Name:    "minimax_m2",
		Summary: `MiniMax-M2: <minimax:tool_call><invoke name="N"><parameter name="K">V</parameter></invoke></minimax:tool_call>`,
		New:     func(cfg Config) Parser { return newMiniMax(cfg) },
		Starts:  []string{mmOpen},
		Claim:   func(rest string, _ bool) Claim { return mmHeader(rest) },
		Models:  []string{"minimax-m2", "minimax_m2", "minimax-m2.1", "minimax-m2.5"},
		Render:  renderMiniMax,
	})
}

// mmHeader says whether s, which starts with <minimax:tool_call>, opens a
// block of calls: white space, then <invoke name=.
func mmHeader(s string) Claim {
	rest := strings.TrimLeft(s[len(mmOpen):], " \t\r\n")
	switch {
	case len(s)-len(rest)-len(mmOpen) > mmMaxAttr:
		return ClaimNo
	case strings.HasPrefix(rest, mmInvoke):
		return ClaimYes
	case strings.HasPrefix(mmInvoke, rest):
		return ClaimMore
	}
	return ClaimNo
}

// mmAttr reads the name attribute of a tag in s, which starts with prefix:
// the name, the length of the tag through its '>', and ClaimMore while the
// '>' has not come (ClaimNo when it is too far or the name is empty).
func mmAttr(s, prefix string) (name string, n int, c Claim) {
	at := strings.IndexByte(s[len(prefix):], '>')
	if at < 0 {
		if len(s)-len(prefix) > mmMaxAttr {
			return "", 0, ClaimNo
		}
		return "", 0, ClaimMore
	}
	v := strings.TrimSpace(s[len(prefix) : len(prefix)+at])
	v = strings.TrimSuffix(v, "/")
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	v = strings.TrimSpace(v)
	if v == "" || at > mmMaxAttr {
		return "", 0, ClaimNo
	}
	return v, len(prefix) + at + 1, ClaimYes
}

const (
	mmText      = iota // outside a block
	mmAfter            // outside, right after a block: white space held
	mmHead             // after <minimax:tool_call>, before <invoke
	mmBlock            // in a block, between invokes
	mmInvokeTag        // inside <invoke name=...>
	mmInCall           // in an invoke, between parameters
	mmParamTag         // inside <parameter name=...>
	mmValue            // inside a parameter's value
)

// mmParser parses minimax_m2 replies.
type mmParser struct {
	markup
	schemas Schemas
	tool    string // the open call's name
	value   tagValue
}

// mmValue0 is a minimax_m2 parser's value reader before its first value.
var mmValue0 = newTagValue(mmParamEnd, true, mmConfirm)

func newMiniMax(cfg Config) *mmParser {
	p := &mmParser{schemas: cfg.Schemas, value: mmValue0}
	p.init("minimax_m2", '<', p)
	return p
}

// run makes moves until one needs more input (the end of the reply is
// Close's).
func (p *mmParser) run(out []Event, _ bool) []Event { return runMoves(out, p) }

// tag returns the white space at the start of p.buf and which of tags
// follows it (-1: none; partial: the rest could still become one).
func (p *mmParser) tag(tags ...string) (ws, which int, partial bool) {
	rest := p.rest()
	ws = len(p.buf) - len(rest)
	for i, t := range tags {
		if strings.HasPrefix(rest, t) {
			return ws, i, false
		}
	}
	return ws, -1, HeldTail(rest, tags...) == len(rest) && ws <= mmMaxAttr
}

func (p *mmParser) step(out []Event) ([]Event, bool) {
	switch p.st {
	case mmText:
		return p.toBlock(out, mmOpen, mmHead)
	case mmAfter:
		return out, p.between(mmOpen, mmMaxAttr)
	case mmHead:
		var ok, more bool
		if out, ok, more = p.claimed(out, mmHeader(p.buf), mmOpen); !ok {
			return out, more
		}
		p.take(len(mmOpen))
		p.st = mmBlock
	case mmBlock:
		ws, which, partial := p.tag(mmInvoke, mmClose)
		switch {
		case which == 0:
			p.take(ws)
			p.st = mmInvokeTag
		case which == 1:
			p.take(ws + len(mmClose))
			p.raw.Reset()
			p.st = mmAfter
		case partial:
			return out, false
		default:
			return p.malformed(out, "unexpected text in a MiniMax tool-call block"), true
		}
	case mmInvokeTag, mmParamTag:
		prefix := mmInvoke
		if p.st == mmParamTag {
			prefix = mmParam
		}
		name, n, c := mmAttr(p.buf, prefix)
		switch c {
		case ClaimMore:
			return out, false
		case ClaimNo:
			return p.malformed(out, "bad MiniMax "+strings.Trim(prefix, "< =")+" tag"), true
		}
		p.take(n)
		if p.st == mmInvokeTag {
			p.tool, p.value.obj = name, argObject{}
			out = append(out, Event{Kind: CallBegin, Name: name})
			p.st = mmInCall
			break
		}
		out = p.value.begin(out, p.schemas, p.tool, name)
		p.st = mmValue
	case mmInCall:
		ws, which, partial := p.tag(mmParam, mmInvokeEnd, mmClose)
		switch {
		case which == 0:
			p.take(ws)
			p.st = mmParamTag
		case which == 1:
			p.take(ws + len(mmInvokeEnd))
			out = p.end(out, mmBlock)
		case which == 2: // </invoke> left out
			p.take(ws + len(mmClose))
			out = p.end(out, mmAfter)
		case partial:
			return out, false
		default:
			return p.malformed(out, "unexpected text in a MiniMax invoke"), true
		}
	case mmValue:
		return p.value.read(out, &p.markup, mmInCall)
	}
	return out, true
}

// mmConfirm says whether rest, the text after a </parameter>, confirms it
// as the value's end: white space, then the next parameter, or </invoke>
// followed by the next invoke or the block's end, or the block's end.
// ClaimMore: the text so far (or the end of the reply) cannot tell.
func mmConfirm(rest string) Claim {
	r := strings.TrimLeft(rest, " \t\r\n")
	if len(rest)-len(r) > mmMaxAttr {
		return ClaimNo
	}
	switch {
	case strings.HasPrefix(r, mmParam) || strings.HasPrefix(r, mmClose):
		return ClaimYes
	case strings.HasPrefix(r, mmInvokeEnd):
		r2 := strings.TrimLeft(r[len(mmInvokeEnd):], " \t\r\n")
		switch {
		case len(r)-len(r2)-len(mmInvokeEnd) > mmMaxAttr:
			return ClaimNo
		case strings.HasPrefix(r2, mmInvoke) || strings.HasPrefix(r2, mmClose):
			return ClaimYes
		case HeldTail(r2, mmInvoke, mmClose) == len(r2):
			return ClaimMore
		}
		return ClaimNo
	case HeldTail(r, mmParam, mmClose, mmInvokeEnd) == len(r):
		return ClaimMore
	}
	return ClaimNo
}

// end closes the open call and goes to state next.
func (p *mmParser) end(out []Event, next uint8) []Event {
	return p.endArgs(out, &p.value.obj, next)
}

// Close ends the reply. Missing </invoke> and </minimax:tool_call> at the
// end are forgiven; a call cut inside a tag or a value is given back.
func (p *mmParser) Close(out []Event) []Event {
	if out, done := p.closeOutside(out, mmAfter, mmHead, "unterminated MiniMax tool-call block"); done {
		return out
	}
	rest := p.rest()
	switch p.st {
	case mmBlock:
		if rest != "" && !strings.HasPrefix(mmClose, rest) {
			out = p.cut(out, "unterminated MiniMax tool-call block")
		}
	case mmValue, mmInCall:
		var ok bool
		if out, ok = p.value.atEOF(out, &p.markup, mmValue, "MiniMax tool call cut inside a tag or value"); !ok {
			break
		}
		rest = p.rest()
		if rest == "" || strings.HasPrefix(mmInvokeEnd, rest) || strings.HasPrefix(mmClose, rest) ||
			strings.HasPrefix(rest, mmInvokeEnd) && strings.HasPrefix(mmClose, strings.TrimLeft(rest[len(mmInvokeEnd):], " \t\r\n")) {
			out = p.end(out, mmText)
			break
		}
		out = p.cut(out, "unterminated MiniMax invoke")
	default:
		out = p.cut(out, "MiniMax tool call cut inside a tag or value")
	}
	p.closed()
	return out
}

// renderMiniMax writes the calls in one <minimax:tool_call> block, an
// <invoke> per call and a <parameter> per argument (a string's text or
// another value's JSON).
func renderMiniMax(calls []Call) string {
	if len(calls) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(mmOpen + "\n")
	for _, c := range calls {
		b.WriteString(mmInvoke + quote(c.Name) + ">\n")
		for _, m := range argMembers(c.Arguments) {
			v, _ := valueText(m.value)
			b.WriteString(mmParam + quote(m.key) + ">" + v + mmParamEnd + "\n")
		}
		b.WriteString(mmInvokeEnd + "\n")
	}
	b.WriteString(mmClose)
	return b.String()
}
