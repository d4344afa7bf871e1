package textcall

import (
	"encoding/json"
	"slices"
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
	tcOpenTag      = "<tool_call>"
	tcCloseTag     = "</tool_call>"
	tcFuncOpen     = "<function="
	tcFuncNameOpen = "<function name=\""
	tcFuncClose    = "</function>"
	tcParamOpen    = "<parameter="
	tcParamEnd     = "</parameter>"
	tcFence        = "```"
)

// The variants models of the family write besides <tool_call> (the forms
// llama.cpp's Hermes parser accepts, and Functionary's): a call as
// <function=N>{json}</function> or <function name="N">{json}</function>
// anywhere in the reply; and, at the start of the reply only, a JSON call
// in another wrapper tag (tcWrappers) or a Markdown fence (```, ```json,
// ```xml, around a wrapper or the bare object), taken only when the
// object's first key is "name" and names a tool of the request — a fenced
// JSON example in an answer is not a call.
var tcWrappers = []string{"<function_call>", "<tools>", "<tool>", "<response>", "<json>", "<xml>", "<JSON>"}

// tcLeadStarts are the starts read only at the start of the reply.
var tcLeadStarts = append([]string{tcFence}, tcWrappers...)

func init() {
	Register(Format{
		Name:       "hermes",
		Summary:    `<tool_call>{"name": N, "arguments": {…}}</tool_call> per call (Hermes, Qwen2.5, Qwen3)`,
		New:        func(cfg Config) Parser { return newTCParser("hermes", cfg, true) },
		Starts:     []string{tcOpenTag, tcFuncOpen, tcFuncNameOpen},
		Claim:      claimHermes,
		LeadStarts: tcLeadStarts,
		LeadClaim:  func(rest string, cfg Config) Claim { c, _, _, _ := tcLead(rest, cfg, false); return c },
		Models:     []string{"hermes", "qwen2", "qwq", "qwen3"},
		Render:     renderHermes,
		Prompt:     &Prompt{Tools: hermesTools, Result: toolResponse},
	})
}

// claimHermes claims a <tool_call> whose body starts with '{', and a
// function tag whose body is a JSON object.
func claimHermes(rest string, _ bool) Claim {
	switch {
	case strings.HasPrefix(rest, tcFuncOpen):
		c, body := tcBareFunctionBody(rest, false)
		if c == ClaimYes && body != '{' {
			return ClaimNo // Qwen3-Coder's XML body
		}
		return c
	case strings.HasPrefix(rest, tcFuncNameOpen):
		return tcNamedFunction(rest, false)
	}
	body := strings.TrimLeft(rest[len(tcOpenTag):], " \t\r\n")
	switch {
	case body == "":
		return ClaimMore
	case body[0] == '{':
		return ClaimYes
	}
	return ClaimNo
}

// tcLead reads an opener at the start of the reply s: a fence (```,
// ```json or ```xml, then a new line) and a wrapper tag (tcWrappers, or
// <tool_call> inside a fence), either or both, then white space and a
// JSON object whose first key is "name" naming a tool of the request (any
// name when the tools are not known). On ClaimYes n is the opener's
// length (up to the '{'), closeTag the wrapper's closing tag ("" none) and
// fence whether a fence opened. With final, what cannot be told is no.
func tcLead(s string, cfg Config, final bool) (c Claim, n int, closeTag string, fence bool) {
	more := ClaimMore
	if final {
		more = ClaimNo
	}
	i := 0
	switch {
	case strings.HasPrefix(s, tcFence):
		fence, i = true, len(tcFence)
		for _, lang := range [...]string{"json", "xml"} {
			if strings.HasPrefix(s[i:], lang) {
				i += len(lang)
				break
			}
			if partialOf(s[i:], lang) {
				return more, 0, "", false
			}
		}
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r') && i < 16 {
			i++
		}
		switch {
		case i == len(s):
			return more, 0, "", false
		case s[i] != '\n':
			return ClaimNo, 0, "", false
		}
		i++
	case partialOf(s, tcFence):
		return more, 0, "", false
	}
	ws := spaceLen(s[i:])
	if ws > tcMaxName {
		return ClaimNo, 0, "", false
	}
	i += ws
	if i == len(s) {
		return more, 0, "", false
	}
	wrappers := tcWrappers
	if fence {
		wrappers = append([]string{tcOpenTag}, tcWrappers...)
	}
	for _, w := range wrappers {
		if strings.HasPrefix(s[i:], w) {
			closeTag = "</" + w[1:]
			i += len(w)
			break
		}
		if partialOf(s[i:], w) {
			return more, 0, "", false
		}
	}
	if !fence && closeTag == "" {
		return ClaimNo, 0, "", false
	}
	ws = spaceLen(s[i:])
	if ws > tcMaxName {
		return ClaimNo, 0, "", false
	}
	i += ws
	if c = tcNamedObject(s[i:], cfg, final); c != ClaimYes {
		return c, 0, "", false
	}
	return ClaimYes, i, closeTag, fence
}

// tcNamedObject reports whether s starts a JSON object whose first key is
// "name" with a string value naming a tool of the request (any name when
// the tools are not known).
func tcNamedObject(s string, cfg Config, final bool) Claim {
	more := ClaimMore
	if final {
		more = ClaimNo
	}
	if s == "" {
		return more
	}
	if s[0] != '{' {
		return ClaimNo
	}
	r := strings.TrimLeft(s[1:], " \t\r\n")
	for _, tok := range [...]string{`"name"`, ":", `"`} {
		switch {
		case r == "" || partialOf(r, tok):
			return more
		case !strings.HasPrefix(r, tok):
			return ClaimNo
		}
		r = r[len(tok):]
		if tok != `"` {
			r = strings.TrimLeft(r, " \t\r\n")
		}
	}
	end := strings.IndexByte(r, '"')
	switch {
	case end < 0 && len(r) > tcMaxName:
		return ClaimNo
	case end < 0:
		return more
	}
	name := strings.TrimSpace(r[:end])
	switch {
	case name == "" || strings.ContainsRune(name, '\\'):
		return ClaimNo
	case cfg.Schemas == nil || cfg.Schemas.Has(name):
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
	tcPyCall                   // in a call written as a Python dict
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

	inBlock     bool   // inside <tool_call> … </tool_call> (or another wrapper)
	closeWanted bool   // the block's closing tag may close the block of the last call
	closeTag    string // the open block's closing tag ("": </tool_call>)
	fence       bool   // a fence opened the block: ``` may close it
	lead        bool   // nothing but white space has been given back yet
	quoted      bool   // the open function's name is quoted (<function name="N">)
	pyFrom      int    // raw offset of a Python-dict call's '{'

	// XML body.
	params   argObject // parameters given
	seen     []string  // their names
	pname    string    // the parameter being read
	scan     int       // offset in in from which the value's end is searched
	jsonArgs bool      // the function's body was a JSON object
}

func newTCParser(format string, cfg Config, bare bool) *tcParser {
	return &tcParser{format: format, cfg: cfg, bare: bare, lead: true}
}

// FormatName returns the format's name.
func (p *tcParser) FormatName() string { return p.format }

// Quiet reports whether s is text with nothing held and no '<' (nor, at
// the start of the reply, a fence).
func (p *tcParser) Quiet(s string) bool {
	if p.st != tcText || len(p.in) != 0 || strings.IndexByte(s, '<') >= 0 {
		return false
	}
	if p.lead {
		rest := strings.TrimLeft(s, " \t\r\n")
		if rest != "" && rest[0] == '`' {
			return false
		}
		p.lead = rest == ""
	}
	return true
}

// starts returns what begins a call in text.
func (p *tcParser) starts() []string {
	switch {
	case p.lead:
		return tcAllStarts
	case p.bare:
		return tcBareStarts
	}
	return tcStarts
}

var (
	tcStarts     = []string{tcOpenTag}
	tcBareStarts = []string{tcOpenTag, tcFuncOpen, tcFuncNameOpen}
	tcAllStarts  = append(append([]string(nil), tcBareStarts...), tcLeadStarts...)
)

// Feed consumes the next piece of the reply.
func (p *tcParser) Feed(out []Event, s string) []Event {
	if p.st == tcText && len(p.in) == 0 && !p.lead {
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
	p.leaveBlock()
	return out
}

// leaveBlock goes back to text, outside any block.
func (p *tcParser) leaveBlock() {
	p.st, p.inBlock, p.closeWanted, p.closeTag, p.fence = tcText, false, false, "", false
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
			return p.beginBody(out, final)
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
	case tcPyCall:
		return p.stepPyCall(out, final)
	}
	return out, false
}

// pyDict reports whether b, which starts with '{', is a Python dict: its
// first key in single quotes (ClaimMore while only white space follows).
func pyDict(b []byte) Claim {
	for _, c := range b[1:] {
		switch {
		case jwIsSpace(c):
		case c == '\'':
			return ClaimYes
		default:
			return ClaimNo
		}
	}
	return ClaimMore
}

// beginBody begins a call's object at '{': JSON, read as it arrives, or a
// Python dict (as models trained on templates that render with Python's
// repr write it), held whole and read once it closes.
func (p *tcParser) beginBody(out []Event, final bool) ([]Event, bool) {
	switch pyDict(p.in) {
	case ClaimMore:
		if !final {
			return out, false
		}
	case ClaimYes:
		p.w = jsWalker{stack: p.w.stack[:0], python: true}
		p.pyFrom = len(p.raw)
		p.st = tcPyCall
		return out, true
	}
	p.beginObject()
	p.st = tcJSON
	return out, true
}

// stepPyCall reads a call written as a Python dict up to its end, then
// reads it as the JSON it converts to.
func (p *tcParser) stepPyCall(out []Event, final bool) ([]Event, bool) {
	for i := 0; i < len(p.in); i++ {
		p.raw = append(p.raw, p.in[i])
		if p.w.Step(p.in[i])&jwErr != 0 {
			p.in = p.in[i+1:]
			return p.fail(out, "the call is not a valid Python dict"), true
		}
		if !p.w.Done() {
			continue
		}
		p.in = p.in[i+1:]
		js, ok := literalJSON(string(p.raw[p.pyFrom:]))
		var call struct {
			Name       string          `json:"name"`
			Arguments  json.RawMessage `json:"arguments"`
			Parameters json.RawMessage `json:"parameters"`
		}
		if !ok || json.Unmarshal([]byte(js), &call) != nil {
			return p.fail(out, "the call is not a valid Python dict"), true
		}
		if strings.TrimSpace(call.Name) == "" {
			return p.fail(out, `the call has no "name"`), true
		}
		args := call.Arguments
		if args == nil {
			args = call.Parameters
		}
		a, ok := argsFromRaw(args)
		if !ok {
			return p.fail(out, "the arguments are not an object"), true
		}
		out = append(out, Event{Kind: CallBegin, Name: strings.TrimSpace(call.Name)})
		out = AppendArgs(out, a)
		out = p.end(out)
		p.closeWanted = p.inBlock
		return out, true
	}
	p.in = p.in[:0]
	if final {
		return p.fail(out, "the call's Python dict is not complete"), true
	}
	return out, false
}

// stepText gives back text up to the next block; it holds only a tail that
// could still start one.
func (p *tcParser) stepText(out []Event, final bool) ([]Event, bool) {
	v := bytesView(p.in)
	starts := p.starts()
	at, which := IndexFirst(v, starts...)
	if at < 0 {
		keep := 0
		if !final {
			keep = HeldTail(v, starts...)
		}
		out = p.text(out, v[:len(v)-keep])
		p.in = p.in[len(v)-keep:]
		return out, false
	}
	start := starts[which]
	if slices.Contains(tcLeadStarts, start) && !isSpace(v[:at]) {
		// A lead start after text is text.
		out = p.text(out, v[:at+1])
		p.in = p.in[at+1:]
		return out, true
	}
	v = v[at:]
	claim, n, closeTag, fence := ClaimNo, 0, "", false
	switch start {
	case tcOpenTag:
		claim, n, closeTag = ClaimYes, len(tcOpenTag), tcCloseTag
	case tcFuncOpen:
		claim, n = tcBareFunction(v, final), len(tcFuncOpen)
	case tcFuncNameOpen:
		claim, n = tcNamedFunction(v, final), len(tcFuncNameOpen)
	default:
		claim, n, closeTag, fence = tcLead(v, p.cfg, final)
	}
	switch claim {
	case ClaimMore:
		out = p.text(out, bytesView(p.in[:at]))
		p.in = p.in[at:]
		return out, false
	case ClaimNo:
		out = p.text(out, bytesView(p.in[:at+1]))
		p.in = p.in[at+1:]
		return out, true
	}
	out = AppendText(out, bytesView(p.in[:at]))
	p.in = p.in[at:]
	p.lead = false
	p.raw = append(p.raw[:0], p.in[:n]...)
	p.in = p.in[n:]
	switch start {
	case tcFuncOpen, tcFuncNameOpen:
		p.st, p.inBlock, p.quoted = tcFuncName, false, start == tcFuncNameOpen
	default:
		p.st, p.inBlock, p.closeTag, p.fence = tcOpen, true, closeTag, fence
	}
	return out, true
}

// text gives back text; non-space text ends the start of the reply.
func (p *tcParser) text(out []Event, s string) []Event {
	if p.lead && !isSpace(s) {
		p.lead = false
	}
	return AppendText(out, s)
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
			p.leaveBlock()
		}
		return out, false
	}
	var pending bool
	if p.closeWanted {
		closeTag := p.closeTag
		if closeTag == "" {
			closeTag = tcCloseTag
		}
		yes, maybe := bytesStart(p.in, closeTag)
		if yes {
			p.in = p.in[len(closeTag):]
			p.gap = p.gap[:0]
			p.closeWanted, p.inBlock = false, p.fence // a fence still closes after the tag
			return out, true
		}
		pending = pending || maybe
	}
	if p.fence {
		yes, maybe := bytesStart(p.in, tcFence)
		if yes {
			p.in = p.in[len(tcFence):]
			p.gap = p.gap[:0]
			p.leaveBlock()
			p.st = tcGap
			return out, true
		}
		pending = pending || maybe
	}
	if p.inBlock && p.in[0] == '{' {
		// Another JSON call in the same block.
		if pyDict(p.in) == ClaimMore && !final {
			return out, false
		}
		p.gap = p.gap[:0]
		p.raw = p.raw[:0]
		return p.beginBody(out, final)
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
		for _, m := range [...]struct {
			start string
			claim func(string, bool) Claim
		}{{tcFuncOpen, tcBareFunction}, {tcFuncNameOpen, tcNamedFunction}} {
			yes, maybe := bytesStart(p.in, m.start)
			c := ClaimNo
			if yes {
				c = m.claim(bytesView(p.in), final)
			}
			block = block || c == ClaimYes
			pending = pending || maybe || c == ClaimMore
		}
	}
	if pending && !final {
		return out, false
	}
	if !block {
		out = AppendText(out, string(p.gap))
	}
	p.gap = p.gap[:0]
	p.leaveBlock()
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
// start of a call: a name, '>', white space, then <parameter=,
// </function> or a JSON object. With final, what cannot be told is no.
func tcBareFunction(s string, final bool) Claim {
	c, _ := tcBareFunctionBody(s, final)
	return c
}

// tcBareFunctionBody is tcBareFunction, also telling what the body starts
// with on ClaimYes: '<' (a parameter, or </function>) or '{'.
func tcBareFunctionBody(s string, final bool) (Claim, byte) {
	rest := s[len(tcFuncOpen):]
	gt := strings.IndexByte(rest, '>')
	if gt < 0 {
		if len(rest) > tcMaxName || !tcValidName(rest, true) {
			return ClaimNo, 0
		}
		return tcMore(final), 0
	}
	if !tcValidName(rest[:gt], false) {
		return ClaimNo, 0
	}
	return tcFunctionBody(rest[gt+1:], final, tcParamOpen, tcFuncClose)
}

// tcNamedFunction reports whether s, which starts with <function name=",
// is the start of a call: a name, '">', white space, then a JSON object or
// </function>.
func tcNamedFunction(s string, final bool) Claim {
	rest := s[len(tcFuncNameOpen):]
	q := strings.IndexByte(rest, '"')
	if q < 0 {
		if len(rest) > tcMaxName || !tcValidName(rest, true) {
			return ClaimNo
		}
		return tcMore(final)
	}
	if !tcValidName(rest[:q], false) {
		return ClaimNo
	}
	switch after := rest[q+1:]; {
	case after == "":
		return tcMore(final)
	case after[0] != '>':
		return ClaimNo
	default:
		c, _ := tcFunctionBody(after[1:], final, tcFuncClose)
		return c
	}
}

// tcFunctionBody reads what follows a function tag: white space, then a
// JSON object or one of tags.
func tcFunctionBody(s string, final bool, tags ...string) (Claim, byte) {
	body := strings.TrimLeft(s, " \t\r\n")
	if len(s)-len(body) > tcMaxName {
		return ClaimNo, 0
	}
	if body == "" {
		return tcMore(final), 0
	}
	if body[0] == '{' {
		return ClaimYes, '{'
	}
	for _, m := range tags {
		if strings.HasPrefix(body, m) {
			return ClaimYes, '<'
		}
		if strings.HasPrefix(m, body) {
			return tcMore(final), 0
		}
	}
	return ClaimNo, 0
}

// tcMore is ClaimMore, or ClaimNo when the input is all there is.
func tcMore(final bool) Claim {
	if final {
		return ClaimNo
	}
	return ClaimMore
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

// renderHermes writes each call as <tool_call>\n{"name": N, "arguments":
// ARGS}\n</tool_call>, one per line.
func renderHermes(calls []Call) string {
	var b strings.Builder
	for i, c := range calls {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(tcOpenTag + "\n{\"name\": " + quote(c.Name) + `, "arguments": ` + argsText(c.Arguments) + "}\n" + tcCloseTag)
	}
	return b.String()
}

// hermesTools lists tools as one JSON line each:
// {"type":"function","function":{"name":…,"description":…,"parameters":…}}.
func hermesTools(tools []ToolDef) any {
	lines := make([]string, len(tools))
	for i, t := range tools {
		lines[i] = `{"type":"function","function":{"name":` + quote(t.Name) + `,"description":` + quote(t.Description) +
			`,"parameters":` + CompactJSON(t.Parameters, `{"type":"object","properties":{}}`) + "}}"
	}
	return lines
}
