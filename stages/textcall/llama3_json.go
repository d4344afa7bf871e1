package textcall

import (
	"encoding/json"
	"strings"
)

// Llama 3.x writes a call as a bare JSON object,
//
//	{"name": "N", "parameters": {…}}
//
// optionally after <|python_tag|>, several separated by ';' (or, as some
// servers' parsers also take, the elements of a JSON array). Bare JSON is
// also what a model writes when asked for JSON, so an object is taken as a
// call only when it is the whole start of the reply (or follows
// <|python_tag|> or a call), has no keys but name, parameters (or
// arguments) and type, and — when the request lists its tools — names one
// of them. Anything else is given back as the text it was. White space and
// ';' between and after calls are layout and dropped. Auto takes a reply
// that starts with '{' for this format only when the object's "name" is a
// tool of the request (or, when the request's tools are not known, when
// the model is a Llama): it holds the reply while it can still become
// such an object and gives it back the moment it cannot, so a JSON answer
// naming no tool passes untouched. <|python_tag|> it looks for always.

// Markers of llama3_json.
const (
	llTag = "<|python_tag|>"
)

func init() {
	Register(Format{
		Name:       "llama3_json",
		Summary:    `{"name": N, "parameters": {…}} at the start of the reply, optional <|python_tag|>, several separated by ';' (Llama 3.x)`,
		New:        func(cfg Config) Parser { return &llamaParser{cfg: cfg} },
		Starts:     []string{llTag},
		LeadStarts: []string{"{", "["},
		LeadClaim:  claimLlamaLead,
		Claim:      claimLlama,
		Models:     []string{"llama"},
		Render:     renderLlama,
	})
}

// claimLlamaLead claims a reply that starts with a call object: its keys
// are a call's, and its "name" is one of the request's tools (any name for
// a Llama model when the tools are not known). It needs more text until
// the name has come.
func claimLlamaLead(rest string, cfg Config) Claim {
	if rest[0] == '[' { // an array of calls: its first element decides
		r := strings.TrimLeft(rest[1:], " \t\r\n")
		switch {
		case r == "":
			return ClaimMore
		case r[0] != '{':
			return ClaimNo
		}
		rest = r
	}
	var w jsWalker
	var key string
	keyStart, valStart := 0, 0
	for i := 0; i < len(rest); i++ {
		d0 := w.Depth()
		f := w.Step(rest[i])
		switch {
		case f&jwErr != 0:
			return ClaimNo
		case f&jwKeyBegin != 0 && d0 == 1:
			keyStart = i
		case f&jwKeyEnd != 0 && d0 == 1:
			if json.Unmarshal([]byte(rest[keyStart:i+1]), &key) != nil || !llamaKey(key) {
				return ClaimNo
			}
		case f&jwBegin != 0 && d0 == 1:
			valStart = i
		case f&jwEnd != 0 && w.Depth() == 1 && key == "name":
			var name string
			if rest[valStart] != '"' || json.Unmarshal([]byte(rest[valStart:i+1]), &name) != nil {
				return ClaimNo
			}
			name = strings.TrimSpace(name)
			switch {
			case name == "":
				return ClaimNo
			case cfg.Schemas == nil:
				if strings.Contains(strings.ToLower(cfg.Model), "llama") {
					return ClaimYes
				}
				return ClaimNo
			case cfg.Schemas.Has(name):
				return ClaimYes
			}
			return ClaimNo
		}
		if w.Done() {
			return ClaimNo // an object without a name
		}
	}
	return ClaimMore
}

// claimLlama claims <|python_tag|>, and a '{' at the start of the reply
// whose first key is one a call has.
func claimLlama(rest string, atStart bool) Claim {
	if strings.HasPrefix(rest, llTag) {
		return ClaimYes
	}
	if !atStart {
		return ClaimNo
	}
	r := strings.TrimLeft(rest[1:], " \t\r\n")
	if r == "" {
		return ClaimMore
	}
	if r[0] != '"' {
		return ClaimNo
	}
	end := strings.IndexByte(r[1:], '"')
	if end < 0 {
		if len(r) > 16 {
			return ClaimNo
		}
		return ClaimMore
	}
	if llamaKey(r[1 : 1+end]) {
		return ClaimYes
	}
	return ClaimNo
}

// llamaKey reports whether k is a key a Llama call object has.
func llamaKey(k string) bool {
	return k == "name" || k == "type" || isArgsKey(k)
}

// llState is where a llamaParser is in the reply.
type llState uint8

const (
	llStart    llState = iota // only white space so far (held)
	llProse                   // text: only <|python_tag|> starts a call
	llAfterTag                // after <|python_tag|>
	llCall                    // in a call's JSON object
	llSep                     // after a call: white space and ';'
)

// llamaParser parses llama3_json.
type llamaParser struct {
	jsonCall
	cfg Config
	st  llState
	gap []byte // white space and ';' before it: dropped when it is a call

	viaTag   bool // the object follows <|python_tag|>: surely meant as a call
	argsOpen bool // the arguments object has begun (and not ended)
	inArray  bool // the calls are the elements of a JSON array
}

// FormatName returns "llama3_json".
func (p *llamaParser) FormatName() string { return "llama3_json" }

// Quiet reports whether s is prose with nothing held and no '<'.
func (p *llamaParser) Quiet(s string) bool {
	return p.st == llProse && len(p.in) == 0 && strings.IndexByte(s, '<') < 0
}

var llStarts = []string{llTag}

// Feed consumes the next piece of the reply.
func (p *llamaParser) Feed(out []Event, s string) []Event {
	if p.st == llProse && len(p.in) == 0 {
		if out, s = p.feedText(out, s, llStarts...); s == "" {
			return out
		}
	}
	p.in = append(p.in, s...)
	return p.run(out, false)
}

// run makes moves until none can be made with the input at hand (final:
// the input is all there is).
func (p *llamaParser) run(out []Event, final bool) []Event {
	for progress := true; progress; {
		out, progress = p.step(out, final)
	}
	return p.settle(out)
}

// Close ends the reply.
func (p *llamaParser) Close(out []Event) []Event {
	out = p.run(out, true)
	out = AppendText(out, string(p.in))
	p.in, p.st = nil, llProse
	return out
}

// space moves leading white space (and ';' when semi) from the input to
// the gap.
func (p *llamaParser) space(semi bool) {
	n := 0
	for n < len(p.in) && (jwIsSpace(p.in[n]) || (semi && (p.in[n] == ';' || (p.inArray && p.in[n] == ',')))) {
		n++
	}
	p.gap = append(p.gap, p.in[:n]...)
	p.in = p.in[n:]
}

// startCall begins reading an object (after a tag when viaTag).
func (p *llamaParser) startCall(viaTag bool) {
	p.st, p.viaTag = llCall, viaTag
	p.beginObject()
}

func (p *llamaParser) step(out []Event, final bool) ([]Event, bool) {
	switch p.st {
	case llStart, llSep:
		p.space(p.st == llSep)
		if len(p.in) == 0 {
			if final {
				if p.st == llStart {
					out = AppendText(out, string(p.gap))
				}
				p.gap, p.st = p.gap[:0], llProse
			}
			return out, false
		}
		if p.in[0] == '{' {
			p.raw = p.raw[:0]
			p.startCall(false)
			return out, true
		}
		if p.st == llSep && p.inArray && p.in[0] == ']' {
			p.gap = p.gap[:0] // the array's layout is markup
			p.in, p.inArray = p.in[1:], false
			return out, true
		}
		if p.st == llStart && p.in[0] == '[' {
			// An array of calls: its first element must be an object.
			j := 1
			for j < len(p.in) && jwIsSpace(p.in[j]) {
				j++
			}
			switch {
			case j < len(p.in) && p.in[j] == '{':
				p.gap = append(p.gap, p.in[:j]...)
				p.in, p.inArray = p.in[j:], true
				p.raw = p.raw[:0]
				p.startCall(false)
				return out, true
			case j == len(p.in) && !final:
				return out, false
			}
		}
		yes, maybe := bytesStart(p.in, llTag)
		switch {
		case yes:
			p.raw = append(p.raw[:0], llTag...)
			p.in = p.in[len(llTag):]
			p.st, p.viaTag = llAfterTag, true
			return out, true
		case maybe && !final:
			return out, false
		}
		out = AppendText(out, string(p.gap))
		p.gap, p.st, p.inArray = p.gap[:0], llProse, false
		return out, true
	case llProse:
		v := bytesView(p.in)
		at := strings.Index(v, llTag)
		if at < 0 {
			keep := 0
			if !final {
				keep = HeldTail(v, llTag)
			}
			out = AppendText(out, v[:len(v)-keep])
			p.in = p.in[len(v)-keep:]
			return out, false
		}
		out = AppendText(out, v[:at])
		p.raw = append(p.raw[:0], llTag...)
		p.in = p.in[at+len(llTag):]
		p.gap, p.st, p.viaTag = p.gap[:0], llAfterTag, true
		return out, true
	case llAfterTag:
		n := 0
		for n < len(p.in) && jwIsSpace(p.in[n]) {
			n++
		}
		p.raw = append(p.raw, p.in[:n]...)
		p.in = p.in[n:]
		if len(p.in) == 0 {
			if final {
				return p.fail(out, "<|python_tag|> without a JSON call"), true
			}
			return out, false
		}
		if p.in[0] != '{' {
			return p.fail(out, "<|python_tag|> is not followed by a JSON call"), true
		}
		p.startCall(true)
		return out, true
	case llCall:
		return p.walk(out, p, final)
	}
	return out, false
}

// fail gives the object (and what held before it) back as text; when
// it was surely meant as a call, or a call had begun, it is reported as
// malformed. The reply goes on as prose.
func (p *llamaParser) fail(out []Event, why string) []Event {
	out = p.flushArgs(out) // what was read is passed on however the input was cut
	if p.viaTag || p.begun {
		out = append(out, Event{Kind: Malformed, Text: "llama3_json: " + why})
	}
	out = AppendText(out, string(p.gap))
	out = AppendText(out, string(p.raw))
	p.reset()
	p.st, p.inArray = llProse, false
	return out
}

func (p *llamaParser) reset() {
	p.resetCall()
	p.gap = p.gap[:0]
	p.viaTag, p.argsOpen = false, false
}

// keyEnded is a jsonHooks method: a key a call does not have makes the
// object no call.
func (p *llamaParser) keyEnded(out []Event) ([]Event, bool) {
	if !llamaKey(p.key) {
		return p.fail(out, "the object has a key a call does not have"), false
	}
	return out, true
}

// valueBegins is a jsonHooks method: the arguments object begins the call
// when the name is known.
func (p *llamaParser) valueBegins(out []Event, c byte) []Event {
	if c == '{' && isArgsKey(p.key) && !p.argsSeen {
		p.argsOpen = true
		out = p.begin(out)
	}
	return out
}

// objectDone is a jsonHooks method: the object is a call when it had a
// name and arguments.
func (p *llamaParser) objectDone(out []Event) []Event {
	if p.name == "" || !p.argsSeen {
		return p.fail(out, `the object lacks "name" or "parameters"`)
	}
	out = p.begin(out)
	out = append(out, Event{Kind: CallEnd})
	p.reset()
	p.st = llSep
	return out
}

// begin begins the call once its name is known and its arguments have
// begun, passing on the arguments read so far.
func (p *llamaParser) begin(out []Event) []Event {
	if p.begun || p.name == "" || !(p.argsOpen || p.argsSeen) {
		return out
	}
	p.begun = true
	out = append(out, Event{Kind: CallBegin, Name: p.name})
	if p.argsOpen {
		p.streaming, p.argsFrom = true, p.valStart
	} else {
		out = AppendArgs(out, p.args)
	}
	return out
}

// member is a jsonHooks method: it handles the value raw[valStart:end]
// of key p.key; ok is false when the object turned out to be no call.
func (p *llamaParser) member(out []Event, end int) ([]Event, bool) {
	switch {
	case p.key == "name":
		name, ok := p.nameValue(end)
		if !ok {
			return p.fail(out, `"name" is not one non-empty string`), false
		}
		if !p.viaTag && p.cfg.Schemas != nil && !p.cfg.Schemas.Has(name) {
			return p.fail(out, "the name is not one of the request's tools"), false
		}
		p.name = name
		out = p.begin(out)
	case isArgsKey(p.key):
		out, streamed, why := p.argsValue(out, end)
		if why != "" {
			return p.fail(out, why), false
		}
		p.argsOpen = false
		if !streamed {
			out = p.begin(out)
		}
		return out, true
	}
	return out, true
}

// renderLlama writes the calls as {"name": N, "parameters": ARGS}
// separated by "; " (the reply is the calls and nothing else).
func renderLlama(calls []Call) string {
	var b strings.Builder
	for i, c := range calls {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(`{"name": ` + quote(c.Name) + `, "parameters": ` + argsText(c.Arguments) + "}")
	}
	return b.String()
}
