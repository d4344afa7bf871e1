package textcall

import (
	"strconv"
	"strings"
)

// DeepSeek V3.2 writes its calls in "DSML", XML-like tags whose names start
// with the token ｜DSML｜ (bars U+FF5C):
//
//	<｜DSML｜function_calls>
//	<｜DSML｜invoke name="NAME">
//	<｜DSML｜parameter name="P" string="true">raw text</｜DSML｜parameter>
//	<｜DSML｜parameter name="Q" string="false">JSON</｜DSML｜parameter>
//	</｜DSML｜invoke>
//	</｜DSML｜function_calls>
//
// string="true" marks a raw string, string="false" a JSON value. The
// request's tool schema, when it lists the parameter, types the value
// instead (TypedValue). Also read: an invoke whose body is one JSON object
// instead of parameters, the section named tool_calls (as DeepSeek V4
// writes it), the tags with the ｜DSML｜ token stripped by the server
// (<function_calls>, <invoke name=…>, <parameter …>; one section keeps one
// spelling), a missing </｜DSML｜parameter> (the next tag ends the value),
// and missing closing tags at the end of the output.
const (
	v32CallsOpen    = "<｜DSML｜function_calls>"
	v32CallsOpen1   = "<｜DSML｜tool_calls>"
	v32CallsClose   = "</｜DSML｜function_calls>"
	v32CallsClose1  = "</｜DSML｜tool_calls>"
	v32InvokeOpen   = "<｜DSML｜invoke"
	v32InvokeClose  = "</｜DSML｜invoke>"
	v32ParamOpen    = "<｜DSML｜parameter"
	v32ParamClose   = "</｜DSML｜parameter>"
	v32MaxTag       = 1024 // bounds the attributes of one tag
	v32AttrSpace    = " \t\r\n"
	deepseekV32Name = "deepseek_v32"
)

var v32Starts = []string{v32CallsOpen, v32CallsOpen1, v32InvokeOpen}

// v32PlainStarts begin the same markup with the ｜DSML｜ token stripped (a
// server that skips special tokens): <function_calls>, <invoke name=…>.
// Too close to other XML to look for in every reply, auto looks for them
// only when the model name says DeepSeek V3.2 (Format.ModelStarts).
var v32PlainStarts = []string{"<function_calls>", "<invoke"}

// v32Tags are the tags inside a section, in one spelling: a section's
// opening tag decides which.
type v32Tags struct {
	callsClose                                     []string
	invokeOpen, invokeClose, paramOpen, paramClose string
	sectionNext, bodyNext, valueEnds               []string
}

func newV32Tags(callsClose []string, invokeOpen, invokeClose, paramOpen, paramClose string) *v32Tags {
	t := &v32Tags{callsClose: callsClose, invokeOpen: invokeOpen, invokeClose: invokeClose, paramOpen: paramOpen, paramClose: paramClose}
	t.sectionNext = append([]string{invokeOpen}, callsClose...)
	t.bodyNext = append([]string{paramOpen, invokeClose}, t.sectionNext...)
	t.valueEnds = []string{paramClose, paramOpen, invokeClose}
	return t
}

var (
	v32DSMLTags  = newV32Tags([]string{v32CallsClose, v32CallsClose1}, v32InvokeOpen, v32InvokeClose, v32ParamOpen, v32ParamClose)
	v32PlainTags = newV32Tags([]string{"</function_calls>"}, "<invoke", "</invoke>", "<parameter", "</parameter>")
	v32AllStarts = append(append([]string{}, v32Starts...), v32PlainStarts...)
	// v32StartStates are the states v32AllStarts begin.
	v32StartStates = []uint8{v32Section, v32Section, v32Invoke, v32Section, v32Invoke}
)

func init() {
	Register(Format{
		Name:        deepseekV32Name,
		Summary:     `<｜DSML｜function_calls><｜DSML｜invoke name="NAME"><｜DSML｜parameter name="P" string="true|false">V</｜DSML｜parameter>…</｜DSML｜invoke></｜DSML｜function_calls> (DeepSeek V3.2)`,
		New:         func(cfg Config) Parser { return newV32(cfg) },
		Starts:      v32Starts,
		ModelStarts: v32PlainStarts,
		Claim:       v32Claim,
		Models:      []string{"deepseek-v3.2", "deepseek-v3p2", "deepseek_v32", "deepseek-v3-2"},
		Render:      renderV32,
	})
}

const (
	v32Text      = iota // plain text
	v32Section          // in a section: an invoke or the section's end comes next
	v32Invoke           // after <｜DSML｜invoke: its attributes up to '>'
	v32Body             // in an invoke: a parameter, a JSON object or the invoke's end
	v32ParamTag         // after <｜DSML｜parameter: its attributes up to '>'
	v32Value            // a parameter's value
	v32JSON             // an invoke whose body is a JSON object
	v32AfterJSON        // the JSON object complete: </｜DSML｜invoke> comes next
)

// v32Parser parses the deepseek_v32 format.
type v32Parser struct {
	markup
	schemas  Schemas
	tags     *v32Tags // the open section's spelling
	tool     string   // the open call's name
	params   argObject
	jsonBody bool   // the invoke's body is a JSON object
	param    string // the open parameter's name
	isString string // its string attribute ("" when absent)
	value    strings.Builder
}

func newV32(cfg Config) *v32Parser {
	p := &v32Parser{schemas: cfg.Schemas}
	p.init(deepseekV32Name, '<', p)
	return p
}

func (p *v32Parser) run(out []Event, eof bool) []Event {
	for {
		switch p.st {
		case v32Text:
			var which int
			if out, which = p.openAt(out, eof, v32AllStarts, v32StartStates); which < 0 {
				return out
			}
			p.tags = v32DSMLTags
			if which >= len(v32Starts) {
				p.tags = v32PlainTags
			}

		case v32Section:
			var wait bool
			if out, wait = p.section(out, eof, v32Invoke, p.tags.invokeOpen, p.tags.callsClose...); wait {
				return out
			}

		case v32Invoke:
			attrs, n, step := v32Tag(p.buf, eof)
			switch {
			case step == tagMore:
				return out
			case step == tagCut:
				out = p.failText(out, "unterminated invoke tag")
				continue
			case step == tagNot || attrs["name"] == "":
				out = p.giveBack(out) // prose mentioning the tag
				p.st = v32Text
				continue
			}
			p.take(n)
			p.tool, p.params, p.jsonBody = attrs["name"], argObject{}, false
			out = append(out, Event{Kind: CallBegin, Name: p.tool})
			p.st = v32Body

		case v32Body:
			rest := p.rest()
			switch {
			case strings.HasPrefix(rest, p.tags.paramOpen):
				p.takeTo(rest, len(p.tags.paramOpen))
				p.st = v32ParamTag
			case strings.HasPrefix(rest, p.tags.invokeClose):
				p.takeTo(rest, len(p.tags.invokeClose))
				out = p.endCall(out)
			case rest != "" && rest[0] == '{' && p.params.n == 0 && !p.jsonBody:
				p.beginArgs()
				p.jsonBody = true // arguments written as they come
				p.st = v32JSON
			case !eof && (rest == "" || partialOf(rest, p.tags.bodyNext...)):
				return out
			case rest == "" || hasPrefixAny(rest, p.tags.sectionNext...) != "":
				// The invoke's closing tag is missing: its parameters are
				// complete all the same.
				p.takeTo(rest, 0)
				out = p.endCall(out)
			default:
				out = p.failText(out, "unexpected text in an invoke")
			}

		case v32ParamTag:
			attrs, n, step := v32Tag(p.buf, eof)
			if step == tagMore {
				return out
			}
			if step != tagDone || attrs["name"] == "" {
				out = p.failText(out, "bad parameter tag")
				continue
			}
			p.take(n)
			p.param, p.isString = attrs["name"], attrs["string"]
			p.value.Reset()
			p.st = v32Value

		case v32Value:
			at, which := IndexFirst(p.buf, p.tags.valueEnds...)
			if at < 0 {
				if !eof {
					keep := HeldTail(p.buf, p.tags.valueEnds...)
					p.value.WriteString(p.take(len(p.buf) - keep))
					return out
				}
				p.take(len(p.buf))
				out = p.failText(out, "unterminated parameter value")
				continue
			}
			p.value.WriteString(p.take(at))
			if which == 0 {
				p.take(len(p.tags.paramClose))
			}
			v := paramValue(p.schemas, p.tool, p.param, p.value.String(), p.isString == "false")
			out = p.params.member(out, p.param, v)
			p.st = v32Body

		case v32JSON:
			var wait bool
			if out, wait = p.callArgs(out, eof, "", v32AfterJSON, 0); wait {
				return out
			}

		case v32AfterJSON:
			var wait bool
			if out, wait = p.callEnded(out, eof, p.tags.invokeClose); wait {
				return out
			}
			p.st = v32Section
			if eof && p.buf == "" {
				return out
			}
		}
	}
}

// endCall closes the open call's arguments and ends it.
func (p *v32Parser) endCall(out []Event) []Event {
	p.calls++
	return p.endArgs(out, &p.params, v32Section)
}

// tagStep says where reading a tag's attributes stands.
type tagStep uint8

const (
	tagMore tagStep = iota // the tag is not complete yet
	tagDone                // read, up to and including its '>'
	tagNot                 // not a tag's attributes: not markup
	tagCut                 // the output ended inside the tag
)

// v32Tag reads the attributes of a tag whose name was consumed, up to and
// including its '>' (n bytes).
func v32Tag(s string, eof bool) (attrs map[string]string, n int, step tagStep) {
	end := strings.IndexByte(s, '>')
	region := s
	if end >= 0 {
		region = s[:end]
	}
	if len(region) > v32MaxTag || (region != "" && strings.IndexByte(v32AttrSpace, region[0]) < 0) {
		return nil, 0, tagNot
	}
	if end < 0 {
		if eof {
			return nil, 0, tagCut
		}
		return nil, 0, tagMore
	}
	attrs, ok := v32Attrs(region)
	if !ok {
		return nil, 0, tagNot
	}
	return attrs, end + 1, tagDone
}

// v32Attrs parses ` name="v" string="true"` (white space first, values in
// double or single quotes).
func v32Attrs(s string) (map[string]string, bool) {
	attrs := map[string]string{}
	if s != "" && strings.IndexByte(v32AttrSpace, s[0]) < 0 {
		return nil, false
	}
	for {
		s = strings.TrimLeft(s, v32AttrSpace)
		if s == "" {
			return attrs, true
		}
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			return nil, false
		}
		key := strings.TrimRight(s[:eq], v32AttrSpace)
		s = strings.TrimLeft(s[eq+1:], v32AttrSpace)
		if s == "" || (s[0] != '"' && s[0] != '\'') {
			return nil, false
		}
		q := s[0]
		end := strings.IndexByte(s[1:], q)
		if end < 0 {
			return nil, false
		}
		attrs[key] = s[1 : 1+end]
		s = s[end+2:]
	}
}

// v32Claim recognizes a DSML section or invoke (or one with the ｜DSML｜
// token stripped): an invoke tag with a name.
func v32Claim(rest string, _ bool) Claim {
	tags := v32DSMLTags
	if hasPrefixAny(rest, v32PlainStarts...) != "" {
		tags = v32PlainTags
	}
	rest, c := claimSection(rest, tags.invokeOpen, v32CallsOpen, v32CallsOpen1, v32PlainStarts[0])
	if c != ClaimYes {
		return c
	}
	attrs, _, step := v32Tag(rest[len(tags.invokeOpen):], false)
	switch {
	case step == tagMore:
		return ClaimMore
	case step == tagDone && attrs["name"] != "":
		return ClaimYes
	}
	return ClaimNo
}

// renderV32 writes the calls in one function_calls block, a parameter
// element per argument: string="true" and a string's text, or
// string="false" and another value's JSON.
func renderV32(calls []Call) string {
	if len(calls) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(v32CallsOpen + "\n")
	for _, c := range calls {
		b.WriteString(v32InvokeOpen + ` name="` + c.Name + `">` + "\n")
		for _, m := range argMembers(c.Arguments) {
			v, isString := valueText(m.value)
			b.WriteString(v32ParamOpen + ` name="` + m.key + `" string="` + strconv.FormatBool(isString) + `">` + v + v32ParamClose + "\n")
		}
		b.WriteString(v32InvokeClose + "\n")
	}
	b.WriteString(v32CallsClose)
	return b.String()
}
