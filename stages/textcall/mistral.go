package textcall

import (
	"encoding/json"
	"strings"
)

// Mistral models write their calls after the [TOOL_CALLS] token, in one of
// two shapes:
//
//	[TOOL_CALLS] [{"name": "N", "arguments": {…}, "id": "abc123def"}, …]   (tokenizers before v11)
//	[TOOL_CALLS]N[ARGS]{json}[TOOL_CALLS]M[ARGS]{json}                     (v11 and later)
//
// and, in the later shape, [TOOL_CALLS]N[CALL_ID]ID[ARGS]{json} when the
// call carries an id. A server that strips special tokens leaves
// [TOOL_CALLS]N{json} (no [ARGS]); that is read too. The v11 shape has no
// end marker: the call ends with its JSON object. Reasoning ([THINK] …
// [/THINK]) is split off by the Reader before the parser sees the text.
//
// The old shape's arguments pass on per call, when the call's object is
// complete (its keys come in any order, the id often after the
// arguments); the v11 shape's pass on as they arrive.
const (
	mistralToolCalls = "[TOOL_CALLS]"
	mistralArgs      = "[ARGS]"
	mistralCallID    = "[CALL_ID]"
	mistralMaxName   = 256
	mistralName      = "mistral"
)

func init() {
	Register(Format{
		Name:    mistralName,
		Summary: `[TOOL_CALLS] [{"name":…,"arguments":{…}}] or [TOOL_CALLS]NAME[ARGS]{json}; reasoning [THINK]…[/THINK] (Mistral, Magistral, Devstral)`,
		New:     func(Config) Parser { return newMistral() },
		Starts:  []string{mistralToolCalls},
		Claim:   mistralClaim,
		Models:  []string{"mistral", "magistral", "devstral", "ministral", "codestral", "pixtral"},
		Render:  renderMistral,
	})
}

const (
	mistralText   = iota // plain text
	mistralHead          // after [TOOL_CALLS]: which shape
	mistralFnName        // v11: the name
	mistralID            // after [CALL_ID]: the id
	mistralJSON          // v11: the JSON arguments
	mistralArray         // old: between the objects of the array
	mistralObject        // old: one call's object
	mistralEnded         // v11: the object ended the call
)

var (
	mistralStarts      = []string{mistralToolCalls}
	mistralStartStates = []uint8{mistralHead}
)

// mistralParser parses the mistral format.
type mistralParser struct {
	markup
	name     string
	single   bool // the old shape's object came without its array
	objects  int  // objects read in the open array
	needNext bool // a comma was read: another object comes next
}

func newMistral() *mistralParser {
	p := &mistralParser{}
	p.init(mistralName, '[', p)
	return p
}

// notMarkup gives [TOOL_CALLS] back as text: what follows is no call.
func (p *mistralParser) notMarkup(out []Event) []Event {
	p.st = mistralText
	return p.giveBack(out)
}

func (p *mistralParser) run(out []Event, eof bool) []Event {
	for {
		switch p.st {
		case mistralText:
			var which int
			if out, which = p.openAt(out, eof, mistralStarts, mistralStartStates); which < 0 {
				return out
			}

		case mistralHead:
			ws := spaceLen(p.buf)
			rest := p.buf[ws:]
			switch {
			case rest == "":
				if !eof {
					return out
				}
				out = p.notMarkup(out)
			case rest[0] == '[':
				after := strings.TrimLeft(rest[1:], " \t\r\n")
				switch {
				case after == "" && !eof:
					return out
				case after != "" && after[0] == '{':
					p.take(ws + 1)
					p.objects, p.needNext, p.single = 0, true, false
					p.st = mistralArray
				default:
					out = p.notMarkup(out)
				}
			case rest[0] == '{':
				p.take(ws)
				p.single = true
				p.beginArgs()
				p.st = mistralObject
			default:
				p.take(ws)
				p.st = mistralFnName
			}

		case mistralFnName:
			end := strings.IndexAny(p.buf, " \t\r\n[{")
			if end < 0 {
				switch {
				case len(p.buf) > mistralMaxName:
					out = p.notMarkup(out)
				case eof:
					p.take(len(p.buf))
					out = p.failText(out, "unterminated tool call")
				default:
					return out
				}
				continue
			}
			if end == 0 || end > mistralMaxName {
				out = p.notMarkup(out)
				continue
			}
			rest := p.buf[end+spaceLen(p.buf[end:]):]
			m := hasPrefixAny(rest, mistralArgs, mistralCallID, "{")
			if m == "" {
				if !eof && (rest == "" || partialOf(rest, mistralArgs, mistralCallID)) {
					return out
				}
				out = p.notMarkup(out)
				continue
			}
			p.name = p.buf[:end]
			if m == "{" {
				p.take(len(p.buf) - len(rest))
			} else {
				p.take(len(p.buf) - len(rest) + len(m))
			}
			if m == mistralCallID {
				p.st = mistralID
				continue
			}
			out = append(out, Event{Kind: CallBegin, Name: p.name})
			p.beginArgs()
			p.st = mistralJSON

		case mistralID:
			i := strings.Index(p.buf, mistralArgs)
			var ok, wait bool
			if out, ok, wait = p.field(out, eof, i, mistralMaxName, "call id too long"); !ok {
				if wait {
					return out
				}
				continue
			}
			id := strings.TrimSpace(p.buf[:i])
			p.take(i + len(mistralArgs))
			out = append(out, Event{Kind: CallBegin, Name: p.name, ID: id})
			p.beginArgs()
			p.st = mistralJSON

		case mistralJSON:
			var wait bool
			if out, wait = p.callArgs(out, eof, "", mistralEnded, 0); wait {
				return out
			}

		case mistralEnded:
			// The v11 shape has no end marker: the object ends the call.
			out = p.recovered(out)
			p.st = mistralText

		case mistralArray:
			ws := spaceLen(p.buf)
			rest := p.buf[ws:]
			switch {
			case rest == "" && !eof:
				return out
			case rest != "" && rest[0] == '{' && p.needNext:
				p.take(ws)
				p.beginArgs()
				p.st = mistralObject
			case rest != "" && rest[0] == ',' && !p.needNext:
				p.take(ws + 1)
				p.needNext = true
			case rest != "" && rest[0] == ']' && !p.needNext:
				p.take(ws + 1)
				p.raw.Reset()
				p.st = mistralText
			default:
				// The array ended without its ']' (or with a dangling
				// comma): what follows is text.
				out = p.giveBack(out)
				p.st = mistralText
			}

		case mistralObject:
			n, done := p.obj.scan(p.buf)
			p.args.WriteString(p.take(n))
			if !done {
				if !eof {
					return out
				}
				out = p.failText(out, "unterminated tool call")
				continue
			}
			call, args, ok := mistralObjectCall(p.args.String())
			if !ok {
				out = p.failText(out, "tool call object without a name or with arguments that are not an object")
				continue
			}
			out = append(out, call)
			out = AppendArgs(out, args)
			out = p.recovered(out)
			p.objects++
			p.needNext = false
			p.st = mistralArray
			if p.single {
				p.st = mistralText
			}
		}
	}
}

// mistralObjectCall reads one call of the old shape: {"name", "arguments"
// (an object, or a string holding one, JSON or a Python dict: argsFromRaw;
// "parameters" is read too), "id"}.
func mistralObjectCall(s string) (Event, string, bool) {
	var obj struct {
		Name       json.RawMessage `json:"name"`
		Arguments  json.RawMessage `json:"arguments"`
		Parameters json.RawMessage `json:"parameters"`
		ID         json.RawMessage `json:"id"`
	}
	if json.Unmarshal([]byte(s), &obj) != nil {
		return Event{}, "", false
	}
	var name, id string
	if json.Unmarshal(obj.Name, &name) != nil || name == "" {
		return Event{}, "", false
	}
	if len(obj.ID) > 0 && json.Unmarshal(obj.ID, &id) != nil {
		id = "" // not a string: no id
	}
	args := obj.Arguments
	if len(args) == 0 {
		args = obj.Parameters
	}
	a, ok := argsFromRaw(args)
	if !ok {
		return Event{}, "", false
	}
	return Event{Kind: CallBegin, Name: name, ID: id}, a, true
}

// mistralClaim recognizes the start of a call after [TOOL_CALLS]: an
// array of objects, an object, or a name followed by [ARGS], [CALL_ID] or
// the arguments' object.
func mistralClaim(rest string, _ bool) Claim {
	rest = strings.TrimLeft(rest[len(mistralToolCalls):], " \t\r\n")
	switch {
	case rest == "":
		return ClaimMore
	case rest[0] == '[':
		after := strings.TrimLeft(rest[1:], " \t\r\n")
		switch {
		case after == "":
			return ClaimMore
		case after[0] == '{':
			return ClaimYes
		}
		return ClaimNo
	case rest[0] == '{':
		return ClaimYes
	}
	end := strings.IndexAny(rest, " \t\r\n[{")
	switch {
	case end < 0 && len(rest) <= mistralMaxName:
		return ClaimMore
	case end <= 0 || end > mistralMaxName:
		return ClaimNo
	}
	after := strings.TrimLeft(rest[end:], " \t\r\n")
	switch {
	case hasPrefixAny(after, mistralArgs, mistralCallID, "{") != "":
		return ClaimYes
	case after == "" || partialOf(after, mistralArgs, mistralCallID):
		return ClaimMore
	}
	return ClaimNo
}

// renderMistral writes each call in the v11 shape,
// [TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{json} ([CALL_ID] only for a call with
// an ID).
func renderMistral(calls []Call) string {
	var b strings.Builder
	for _, c := range calls {
		b.WriteString(mistralToolCalls + c.Name)
		if c.ID != "" {
			b.WriteString(mistralCallID + c.ID)
		}
		b.WriteString(mistralArgs + argsText(c.Arguments))
	}
	return b.String()
}
