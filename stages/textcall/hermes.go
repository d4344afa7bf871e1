package textcall

import (
	"encoding/json"
	"strings"
	"unicode"
)

// The <tool_call> family: Hermes and Qwen2.5/Qwen3 write
//
//	<tool_call>
//	{"name": "N", "arguments": {…}}
//	</tool_call>
//
// and Qwen3-Coder writes the same block with an XML body (qwen3_coder.go).
// Both formats share one parser, tcParser: the body of each block is read
// as JSON when it starts with '{' and as XML when it starts with
// <function=, so a Qwen3-Coder reply read with --tool-format hermes still
// gives its calls. The formats differ in what auto locks on (their Claim)
// and in qwen3_coder also taking a <function= block whose <tool_call> the
// model left out.

// Markers of the <tool_call> family.
const (
	tcOpenTag   = "<tool_call>"
	tcCloseTag  = "</tool_call>"
	tcFuncOpen  = "<function="
	tcFuncClose = "</function>"
	tcParamOpen = "<parameter="
	tcParamEnd  = "</parameter>"
)

func init() {
	Register(Format{
		Name:    "hermes",
		Summary: `<tool_call>{"name": N, "arguments": {…}}</tool_call> per call (Hermes, Qwen2.5, Qwen3)`,
		New:     func(cfg Config) Parser { return newTCParser("hermes", cfg, false) },
		Starts:  []string{tcOpenTag},
		Claim:   claimHermes,
		Models:  []string{"hermes", "qwen2", "qwq", "qwen3"},
	})
}

// claimHermes claims a <tool_call> whose body starts with '{'.
func claimHermes(rest string, _ bool) Claim {
	body := strings.TrimLeft(rest[len(tcOpenTag):], " \t\r\n")
	switch {
	case body == "":
		return ClaimMore
	case body[0] == '{':
		return ClaimYes
	}
	return ClaimNo
}

// tcState is where a tcParser is in the reply.
type tcState uint8

const (
	tcText      tcState = iota // text: looking for a block
	tcOpen                     // after <tool_call>: what the body is
	tcJSON                     // in a JSON body
	tcGap                      // after a call: white space, a closer, the next block
	tcFuncName                 // after <function=: the name up to '>'
	tcFuncBody                 // in a function body, between parameters
	tcParamName                // after <parameter=: the name up to '>'
	tcValue                    // in a parameter's value
	tcFuncJSON                 // in a JSON object as a function's body
)

// tcMaxName bounds a function or parameter name, so that text that only
// looks like the start of a tag is given back soon.
const tcMaxName = 256

// tcParser parses the <tool_call> family (hermes and qwen3_coder).
type tcParser struct {
	jsonCall
	format string
	cfg    Config
	bare   bool // <function= without <tool_call> starts a call
	st     tcState
	gap    []byte // white space after a call, given back if text follows

	inBlock     bool // inside <tool_call> … </tool_call>
	closeWanted bool // a </tool_call> may close the block of the last call

	// XML body.
	params   argObject // parameters given
	seen     []string  // their names
	pname    string    // the parameter being read
	scan     int       // offset in in from which the value's end is searched
	jsonArgs bool      // the function's body was a JSON object
}

func newTCParser(format string, cfg Config, bare bool) *tcParser {
	return &tcParser{format: format, cfg: cfg, bare: bare}
}

// FormatName returns the format's name.
func (p *tcParser) FormatName() string { return p.format }

// Quiet reports whether s is text with nothing held and no '<'.
func (p *tcParser) Quiet(s string) bool {
	return p.st == tcText && len(p.in) == 0 && strings.IndexByte(s, '<') < 0
}

// starts returns what begins a call in text.
func (p *tcParser) starts() []string {
	if p.bare {
		return tcBareStarts
	}
	return tcStarts
}

var (
	tcStarts     = []string{tcOpenTag}
	tcBareStarts = []string{tcOpenTag, tcFuncOpen}
)

// Feed consumes the next piece of the reply.
func (p *tcParser) Feed(out []Event, s string) []Event {
	if p.st == tcText && len(p.in) == 0 {
		// Nothing held: text before a possible block goes out without
		// being copied.
		if out, s = p.feedText(out, s, p.starts()...); s == "" {
			return out
		}
	}
	p.in = append(p.in, s...)
	return p.run(out, false)
}

// run makes moves until none can be made with the input at hand (final:
// the input is all there is).
func (p *tcParser) run(out []Event, final bool) []Event {
	for progress := true; progress; {
		out, progress = p.step(out, final)
	}
	return p.settle(out)
}

// Close ends the reply: text held is given back, a call complete enough is
// ended, and unterminated markup is reported and given back.
func (p *tcParser) Close(out []Event) []Event {
	out = p.run(out, true)
	if p.st != tcText && p.st != tcGap {
		out = p.fail(out, "unterminated markup")
	}
	out = AppendText(out, string(p.in))
	p.in, p.gap, p.st = nil, nil, tcText
	return out
}

// fail reports the markup as malformed and gives it back as text; the
// reply goes on as text after it.
func (p *tcParser) fail(out []Event, why string) []Event {
	out = p.flushArgs(out) // what was read is passed on however the input was cut
	out = append(out, Event{Kind: Malformed, Text: p.format + ": " + why})
	out = AppendText(out, string(p.raw))
	p.reset()
	p.st, p.inBlock, p.closeWanted = tcText, false, false
	return out
}

// reset clears the open call.
func (p *tcParser) reset() {
	p.resetCall()
	p.params, p.seen, p.pname, p.scan, p.jsonArgs = argObject{}, p.seen[:0], "", 0, false
}

// end ends the open call.
func (p *tcParser) end(out []Event) []Event {
	out = append(out, Event{Kind: CallEnd})
	p.reset()
	p.st = tcGap
	return out
}

// step makes one move; progress is false when it needs more input.
func (p *tcParser) step(out []Event, final bool) ([]Event, bool) {
	switch p.st {
	case tcText:
		return p.stepText(out, final)
	case tcOpen:
		p.takeSpace()
		if len(p.in) == 0 {
			if final {
				return p.fail(out, "<tool_call> without a body"), true
			}
			return out, false
		}
		if p.in[0] == '{' {
			p.beginObject()
			p.st = tcJSON
			return out, true
		}
		yes, maybe := bytesStart(p.in, tcFuncOpen)
		switch {
		case yes:
			p.take(len(tcFuncOpen))
			p.st = tcFuncName
			return out, true
		case maybe && !final:
			return out, false
		}
		return p.fail(out, "<tool_call> is followed by neither a JSON object nor <function="), true
	case tcJSON:
		return p.stepJSON(out, final)
	case tcGap:
		return p.stepGap(out, final)
	case tcFuncName:
		return p.stepFuncName(out, final)
	case tcFuncBody:
		return p.stepFuncBody(out, final)
	case tcParamName:
		return p.stepParamName(out, final)
	case tcValue:
		return p.stepValue(out, final)
	case tcFuncJSON:
		return p.stepFuncJSON(out, final)
	}
	return out, false
}

// stepText gives back text up to the next block; it holds only a tail that
// could still start one.
func (p *tcParser) stepText(out []Event, final bool) ([]Event, bool) {
	v := bytesView(p.in)
	at, which := IndexFirst(v, p.starts()...)
	if at < 0 {
		keep := 0
		if !final {
			keep = HeldTail(v, p.starts()...)
		}
		out = AppendText(out, v[:len(v)-keep])
		p.in = p.in[len(v)-keep:]
		return out, false
	}
	out = AppendText(out, v[:at])
	p.in = p.in[at:]
	if which == 0 {
		p.raw = append(p.raw[:0], tcOpenTag...)
		p.in = p.in[len(tcOpenTag):]
		p.st, p.inBlock = tcOpen, true
		return out, true
	}
	switch tcBareFunction(bytesView(p.in), final) {
	case ClaimYes:
		p.raw = append(p.raw[:0], tcFuncOpen...)
		p.in = p.in[len(tcFuncOpen):]
		p.st, p.inBlock = tcFuncName, false
		return out, true
	case ClaimMore:
		return out, false
	}
	out = AppendText(out, "<")
	p.in = p.in[1:]
	return out, true
}

// stepGap reads what follows a call: white space (dropped when a block or
// the end follows, given back when text does), the </tool_call> closing
// the call's block, another function or JSON call of the same block.
func (p *tcParser) stepGap(out []Event, final bool) ([]Event, bool) {
	n := 0
	for n < len(p.in) && jwIsSpace(p.in[n]) {
		n++
	}
	p.gap = append(p.gap, p.in[:n]...)
	p.in = p.in[n:]
	if len(p.in) == 0 {
		if final {
			p.gap = p.gap[:0]
			p.st, p.inBlock, p.closeWanted = tcText, false, false
		}
		return out, false
	}
	var pending bool
	if p.closeWanted {
		yes, maybe := bytesStart(p.in, tcCloseTag)
		if yes {
			p.in = p.in[len(tcCloseTag):]
			p.gap = p.gap[:0]
			p.closeWanted, p.inBlock = false, false
			return out, true
		}
		pending = pending || maybe
	}
	if p.inBlock && p.in[0] == '{' {
		// Another JSON call in the same block.
		p.gap = p.gap[:0]
		p.raw = p.raw[:0]
		p.beginObject()
		p.st = tcJSON
		return out, true
	}
	if p.inBlock {
		yes, maybe := bytesStart(p.in, tcFuncOpen)
		if yes {
			p.gap = p.gap[:0]
			p.raw = append(p.raw[:0], tcFuncOpen...)
			p.in = p.in[len(tcFuncOpen):]
			p.st = tcFuncName
			return out, true
		}
		pending = pending || maybe
	}
	block, maybe := bytesStart(p.in, tcOpenTag)
	pending = pending || maybe
	if p.bare && !block {
		yes, maybe := bytesStart(p.in, tcFuncOpen)
		block = yes && tcBareFunction(bytesView(p.in), final) == ClaimYes
		pending = pending || maybe || (yes && tcBareFunction(bytesView(p.in), final) == ClaimMore)
	}
	if pending && !final {
		return out, false
	}
	if !block {
		out = AppendText(out, string(p.gap))
	}
	p.gap = p.gap[:0]
	p.st, p.inBlock, p.closeWanted = tcText, false, false
	return out, true
}

// stepJSON reads a JSON body a byte at a time: the name, and the arguments
// (passed on as they arrive once the name is known).
func (p *tcParser) stepJSON(out []Event, final bool) ([]Event, bool) {
	return p.walk(out, p, final)
}

// keyEnded is a jsonHooks method: a key needs nothing more.
func (p *tcParser) keyEnded(out []Event) ([]Event, bool) { return out, true }

// valueBegins is a jsonHooks method: the arguments object streams when the
// name came first.
func (p *tcParser) valueBegins(out []Event, c byte) []Event {
	if c == '{' && isArgsKey(p.key) && p.name != "" && !p.argsSeen {
		p.streaming, p.argsFrom = true, p.valStart
	}
	return out
}

// objectDone is a jsonHooks method: the object is a call when it had a
// name.
func (p *tcParser) objectDone(out []Event) []Event {
	if p.name == "" {
		return p.fail(out, `the call has no "name"`)
	}
	if !p.argsSeen {
		out = AppendArgs(out, "{}")
	}
	out = p.end(out)
	p.closeWanted = p.inBlock
	return out
}

// member is a jsonHooks method: it handles the value raw[valStart:end] of
// the top-level key p.key; ok is false when it failed the call.
func (p *tcParser) member(out []Event, end int) ([]Event, bool) {
	val := p.raw[p.valStart:end]
	switch {
	case p.key == "name":
		name, ok := p.nameValue(end)
		if !ok {
			return p.fail(out, `"name" is not one non-empty string`), false
		}
		p.name, p.begun = name, true
		out = append(out, Event{Kind: CallBegin, Name: p.name})
		if p.argsSeen {
			out = AppendArgs(out, p.args)
		}
	case p.key == "function" && val[0] == '{' && p.name == "" && !p.argsSeen:
		// The Chat Completions shape: {"type": "function", "function":
		// {"name": N, "arguments": "{…}"}}.
		var fn struct {
			Name       string          `json:"name"`
			Arguments  json.RawMessage `json:"arguments"`
			Parameters json.RawMessage `json:"parameters"`
		}
		if json.Unmarshal(val, &fn) != nil || strings.TrimSpace(fn.Name) == "" {
			return p.fail(out, `"function" has no name`), false
		}
		args := fn.Arguments
		if args == nil {
			args = fn.Parameters
		}
		a, ok := argsFromRaw(args)
		if !ok {
			return p.fail(out, "the arguments are not an object"), false
		}
		p.name, p.args, p.argsSeen, p.begun = strings.TrimSpace(fn.Name), a, true, true
		out = append(out, Event{Kind: CallBegin, Name: p.name})
		out = AppendArgs(out, p.args)
	case isArgsKey(p.key):
		out, streamed, why := p.argsValue(out, end)
		switch {
		case why != "":
			return p.fail(out, why), false
		case !streamed && p.name != "":
			out = AppendArgs(out, p.args)
		}
		return out, true
	}
	return out, true
}

// tcBareFunction reports whether s, which starts with <function=, is the
// start of a call: a name, '>', white space, then <parameter= or
// </function>. With final, what cannot be told is no.
func tcBareFunction(s string, final bool) Claim {
	more := ClaimMore
	if final {
		more = ClaimNo
	}
	rest := s[len(tcFuncOpen):]
	gt := strings.IndexByte(rest, '>')
	if gt < 0 {
		if len(rest) > tcMaxName || !tcValidName(rest, true) {
			return ClaimNo
		}
		return more
	}
	if !tcValidName(rest[:gt], false) {
		return ClaimNo
	}
	body := strings.TrimLeft(rest[gt+1:], " \t\r\n")
	if len(rest[gt+1:])-len(body) > tcMaxName {
		return ClaimNo
	}
	for _, m := range [...]string{tcParamOpen, tcFuncClose} {
		if strings.HasPrefix(body, m) {
			return ClaimYes
		}
		if strings.HasPrefix(m, body) {
			return more
		}
	}
	return ClaimNo
}

// tcValidName reports whether s can be a function or parameter name (partial:
// s may be the start of one, possibly empty).
func tcValidName(s string, partial bool) bool {
	if (s == "" && !partial) || len(s) > tcMaxName {
		return false
	}
	for _, r := range s {
		if unicode.IsSpace(r) || strings.ContainsRune(`<>{}"'`, r) {
			return false
		}
	}
	return true
}
