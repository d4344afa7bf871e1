package textcall

import (
	"encoding/json"
	"strings"
)

// Qwen3-Coder (and Qwen3.5) write a call as XML inside <tool_call>:
//
//	<tool_call>
//	<function=N>
//	<parameter=P>
//	VALUE
//	</parameter>
//	</function>
//	</tool_call>
//
// A value is raw text: one leading and one trailing newline are layout, the
// rest is typed by the request's tool schema (TypedValue). Values hold
// code, so a closing tag inside a value is taken as the end only when what
// follows it is structure: </parameter> ends a value when white space and
// then <parameter=, </function>, </tool_call>, <tool_call> or the end of
// the reply follow. A missing </parameter> is ended by a new line starting
// <parameter= with a name not given yet (in the schema, when the tool has
// one), or by </function> or </tool_call> followed by the end of the call.
// The model may leave out <tool_call>: a <function=N> followed by
// <parameter= or </function> starts a call too. A function body that is
// one JSON object (<function=N>{…}</function>) is the arguments, passed on
// as they arrive. The parser is tcParser (hermes.go), which takes a hermes
// JSON body as well.

func init() {
	Register(Format{
		Name:    "qwen3_coder",
		Summary: "<tool_call><function=N><parameter=P>value</parameter></function></tool_call> (Qwen3-Coder, Qwen3.5)",
		New:     func(cfg Config) Parser { return newTCParser("qwen3_coder", cfg, true) },
		Starts:  []string{tcOpenTag, tcFuncOpen},
		Claim:   claimQwen3Coder,
		Models:  []string{"qwen3-coder", "qwen3_coder", "qwen3.5", "qwen3-next"},
		Render:  renderQwen3Coder,
		Prompt:  &Prompt{Tools: coderTools, Result: toolResponse},
	})
}

// claimQwen3Coder claims a <tool_call> whose body starts with <function=,
// and a <function= that starts a call by itself.
func claimQwen3Coder(rest string, _ bool) Claim {
	if strings.HasPrefix(rest, tcFuncOpen) {
		c, body := tcBareFunctionBody(rest, false)
		if c == ClaimYes && body == '{' {
			return ClaimNo // a JSON body: hermes's (Functionary's) form
		}
		return c
	}
	body := strings.TrimLeft(rest[len(tcOpenTag):], " \t\r\n")
	switch {
	case strings.HasPrefix(body, tcFuncOpen):
		return ClaimYes
	case strings.HasPrefix(tcFuncOpen, body):
		return ClaimMore
	}
	return ClaimNo
}

// stepFuncName reads the function name up to '>' (or '">' for a quoted
// one) and begins the call.
func (p *tcParser) stepFuncName(out []Event, final bool) ([]Event, bool) {
	v := bytesView(p.in)
	end, tail := strings.IndexByte(v, '>'), 1
	if p.quoted {
		end = strings.IndexByte(v, '"')
		if end >= 0 && end+1 < len(v) && v[end+1] != '>' {
			return p.fail(out, "<function name=\"N\" without its '>'"), true
		}
		if end >= 0 && end+1 == len(v) {
			end = -1 // the '>' has not come yet
		}
		tail = 2
	}
	gt := end
	if gt < 0 {
		if final || !tcValidName(v, true) {
			return p.fail(out, "<function= without a valid name"), true
		}
		return out, false
	}
	if !tcValidName(v[:gt], false) {
		return p.fail(out, "<function= without a valid name"), true
	}
	p.name = v[:gt]
	p.name = strings.Clone(p.name)
	p.take(gt + tail)
	out = append(out, Event{Kind: CallBegin, Name: p.name})
	p.begun, p.params, p.seen = true, argObject{}, p.seen[:0]
	p.st = tcFuncBody
	return out, true
}

// closeCall ends the open XML call.
func (p *tcParser) closeCall(out []Event) []Event {
	if !p.jsonArgs {
		out = p.params.end(out)
	}
	return p.end(out)
}

// stepFuncBody reads what comes between parameters.
func (p *tcParser) stepFuncBody(out []Event, final bool) ([]Event, bool) {
	p.takeSpace()
	if len(p.in) == 0 && !final {
		return out, false
	}
	if len(p.in) > 0 && p.in[0] == '{' && p.params.n == 0 && !p.jsonArgs {
		// <function=N>{json}</function>: the arguments as one object.
		p.beginObject()
		p.streaming, p.argsFrom = true, len(p.raw)
		p.st = tcFuncJSON
		return out, true
	}
	pending := false
	if p.params.n > 0 || p.jsonArgs {
		// A new block after a complete body: the model left out the
		// closers.
		yes, maybe := bytesStart(p.in, tcOpenTag)
		if yes {
			out = p.closeCall(out)
			p.inBlock, p.closeWanted = false, false
			return out, true
		}
		pending = maybe
	}
	for _, m := range [...]string{tcParamOpen, tcFuncClose, tcCloseTag} {
		yes, maybe := bytesStart(p.in, m)
		if yes {
			p.take(len(m))
			switch m {
			case tcParamOpen:
				if p.jsonArgs {
					return p.fail(out, "<parameter= after JSON arguments"), true
				}
				p.st = tcParamName
			case tcFuncClose:
				out = p.closeCall(out)
				// A </tool_call> may follow even when the model left out
				// the opening tag.
				p.closeWanted = true
			case tcCloseTag:
				if !p.inBlock {
					return p.fail(out, "</tool_call> closes a call it did not open"), true
				}
				out = p.closeCall(out)
				p.inBlock, p.closeWanted = false, false
			}
			return out, true
		}
		pending = pending || maybe
	}
	if pending && !final {
		return out, false
	}
	if final && (p.params.n > 0 || p.jsonArgs) {
		// Every parameter given is complete: the call is recovered, what
		// is left is given back by the gap.
		out = p.closeCall(out)
		return out, true
	}
	if final {
		return p.fail(out, "unterminated <function=…> call"), true
	}
	return p.fail(out, "unexpected text in a <function=…> call"), true
}

// stepParamName reads a parameter name up to '>'.
func (p *tcParser) stepParamName(out []Event, final bool) ([]Event, bool) {
	v := bytesView(p.in)
	gt := strings.IndexByte(v, '>')
	if gt < 0 {
		if final || !tcValidName(v, true) {
			return p.fail(out, "<parameter= without a valid name"), true
		}
		return out, false
	}
	if !tcValidName(v[:gt], false) {
		return p.fail(out, "<parameter= without a valid name"), true
	}
	p.pname = strings.Clone(v[:gt])
	p.take(gt + 1)
	p.scan = 0
	p.st = tcValue
	return out, true
}

// Where a parameter value may end (see the comment at the top).
var tcValueEnds = []string{tcParamEnd, "\n" + tcParamOpen, tcFuncClose, tcCloseTag}

// stepValue finds the end of the parameter value and gives the parameter.
func (p *tcParser) stepValue(out []Event, final bool) ([]Event, bool) {
	v := bytesView(p.in)
	for {
		at, which := IndexFirst(v[p.scan:], tcValueEnds...)
		if at < 0 {
			if final {
				return p.fail(out, "unterminated <parameter="+p.pname+"> value"), true
			}
			p.scan = len(v) - HeldTail(v, tcValueEnds...)
			return out, false
		}
		at += p.scan
		end, take, decided := p.valueEnd(v, at, which, final)
		if !decided {
			p.scan = at
			return out, false
		}
		if end < 0 { // literal text of the value
			p.scan = at + 1
			continue
		}
		out = p.param(out, v[:end])
		p.take(take)
		p.scan = 0
		p.st = tcFuncBody
		return out, true
	}
}

// valueEnd decides whether the tag tcValueEnds[which] at v[at:] ends the
// value: end is the value's length (-1: the tag is part of the value) and
// take how much input the value and its tag use; decided is false when
// more input is needed.
func (p *tcParser) valueEnd(v string, at, which int, final bool) (end, take int, decided bool) {
	// follows reports whether what comes after white space is one of ms,
	// the end of the reply, or cannot be told yet.
	follows := func(rest string, ms ...string) (yes, decided bool) {
		r := strings.TrimLeft(rest, " \t\r\n")
		if r == "" {
			return final, final
		}
		for _, m := range ms {
			if strings.HasPrefix(r, m) {
				return true, true
			}
			if strings.HasPrefix(m, r) && !final {
				return false, false
			}
		}
		return false, true
	}
	switch which {
	case 0: // </parameter>
		yes, ok := follows(v[at+len(tcParamEnd):], tcParamOpen, tcFuncClose, tcCloseTag, tcOpenTag)
		if !ok {
			return 0, 0, false
		}
		if yes || (final && isSpace(v[at+len(tcParamEnd):])) {
			return at, at + len(tcParamEnd), true
		}
	case 1: // a new line starting <parameter=
		rest := v[at+1+len(tcParamOpen):]
		gt := strings.IndexByte(rest, '>')
		if gt < 0 {
			if !final && len(rest) <= tcMaxName && tcValidName(rest, true) {
				return 0, 0, false
			}
			return -1, 0, true
		}
		if p.implicitEnd(rest[:gt]) {
			return at + 1, at + 1, true
		}
	case 2: // </function> without </parameter>
		ms := []string{tcCloseTag, tcOpenTag}
		if !p.inBlock {
			ms = append(ms, tcFuncOpen)
		}
		yes, ok := follows(v[at+len(tcFuncClose):], ms...)
		if !ok {
			return 0, 0, false
		}
		if yes || (final && isSpace(v[at+len(tcFuncClose):])) {
			return at, at, true
		}
	case 3: // </tool_call> without </parameter> and </function>
		if !p.inBlock {
			break
		}
		yes, ok := follows(v[at+len(tcCloseTag):], tcOpenTag)
		if !ok {
			return 0, 0, false
		}
		if yes || (final && isSpace(v[at+len(tcCloseTag):])) {
			return at, at, true
		}
	}
	return -1, 0, true
}

// implicitEnd reports whether a line starting <parameter=name> ends the
// value before it (its </parameter> was left out): the name is one not
// given yet in this call and, when the request's schema lists the tool's
// parameters, one of them.
func (p *tcParser) implicitEnd(name string) bool {
	if !tcValidName(name, false) || name == p.pname {
		return false
	}
	for _, s := range p.seen {
		if s == name {
			return false
		}
	}
	if props := p.cfg.Schemas[p.name]; len(props) > 0 {
		_, ok := props[name]
		return ok
	}
	return true
}

// param passes on one parameter: its name and its value, typed by the
// schema (a parameter the schema does not list stays a string).
func (p *tcParser) param(out []Event, raw string) []Event {
	raw = strings.TrimPrefix(raw, "\n")
	raw = strings.TrimSuffix(raw, "\n")
	p.seen = append(p.seen, p.pname)
	return p.params.member(out, p.pname, paramValue(p.cfg.Schemas, p.name, p.pname, raw, false))
}

// stepFuncJSON reads a function body that is one JSON object, passing it
// on as the arguments while it arrives.
func (p *tcParser) stepFuncJSON(out []Event, final bool) ([]Event, bool) {
	for i := 0; i < len(p.in); i++ {
		p.raw = append(p.raw, p.in[i])
		if p.w.Step(p.in[i])&jwErr != 0 {
			p.in = p.in[i+1:]
			return p.fail(out, "the function's JSON arguments are not valid"), true
		}
		if p.w.Done() {
			p.in = p.in[i+1:]
			out = p.flushArgs(out)
			p.streaming, p.jsonArgs = false, true
			p.st = tcFuncBody
			return out, true
		}
	}
	p.in = p.in[:0]
	if final {
		return p.fail(out, "the function's JSON arguments are not complete"), true
	}
	return out, false
}

// renderQwen3Coder writes each call as
// <tool_call>\n<function=N>\n<parameter=P>\nVALUE\n</parameter>\n…</function>\n</tool_call>,
// one per line; a VALUE is a string's text or any other value's JSON.
func renderQwen3Coder(calls []Call) string {
	var b strings.Builder
	for i, c := range calls {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(tcOpenTag + "\n" + tcFuncOpen + c.Name + ">\n")
		for _, m := range argMembers(c.Arguments) {
			v, _ := valueText(m.value)
			b.WriteString(tcParamOpen + m.key + ">\n" + v + "\n" + tcParamEnd + "\n")
		}
		b.WriteString(tcFuncClose + "\n" + tcCloseTag)
	}
	return b.String()
}

// coderTool is one tool of a qwen3_coder tool list (the template data of
// prompts/pack/toolprompt/qwen3_coder.tmpl).
type coderTool struct {
	Name, Description string
	Params            []coderParam
	// Required is the JSON array of required parameters, or "".
	Required string
}

// coderParam is one parameter of a qwen3_coder tool: its name, its type
// (the schema's "type", a JSON value when not a string; "any" when absent),
// its description and the other keys of its schema as compact JSON.
type coderParam struct {
	Name, Type, Description string
	Extra                   []keyValue
}

type keyValue struct{ Key, Value string }

// coderTools lists tools as coderTool values.
func coderTools(tools []ToolDef) any {
	list := make([]coderTool, len(tools))
	for i, t := range tools {
		list[i] = newCoderTool(t)
	}
	return list
}

func newCoderTool(t ToolDef) coderTool {
	ct := coderTool{Name: t.Name, Description: t.Description}
	schema, err := objectMembers(t.Parameters)
	if err != nil {
		return ct
	}
	for _, f := range schema {
		switch f.key {
		case "properties":
			props, err := objectMembers(f.value)
			if err != nil {
				continue
			}
			for _, p := range props {
				ct.Params = append(ct.Params, newCoderParam(p.key, p.value))
			}
		case "required":
			if r := CompactJSON(f.value, ""); r != "" && r != "[]" {
				ct.Required = r
			}
		}
	}
	return ct
}

func newCoderParam(name string, schema json.RawMessage) coderParam {
	p := coderParam{Name: name, Type: "any"}
	fields, err := objectMembers(schema)
	if err != nil {
		return p
	}
	for _, f := range fields {
		switch f.key {
		case "type":
			var s string
			if json.Unmarshal(f.value, &s) == nil {
				p.Type = s
			} else {
				p.Type = CompactJSON(f.value, "any")
			}
		case "description":
			var s string
			if json.Unmarshal(f.value, &s) == nil {
				p.Description = s
				continue
			}
			p.Extra = append(p.Extra, keyValue{f.key, CompactJSON(f.value, "")})
		default:
			p.Extra = append(p.Extra, keyValue{f.key, CompactJSON(f.value, "")})
		}
	}
	return p
}
