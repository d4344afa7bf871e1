package textcall

import (
	"strings"
)

// gpt-oss writes the harmony format: a reply is a sequence of messages,
// each a header and a body,
//
//	<|channel|>analysis<|message|>REASONING<|end|>
//	<|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{ARGS}<|call|>
//	<|start|>assistant<|channel|>final<|message|>ANSWER<|return|>
//
// The analysis channel is reasoning, final is the answer, commentary
// without a recipient is text the model says before its calls, and a
// header with a recipient (to=functions.NAME, in the channel part or in
// the role part: <|start|>assistant to=functions.NAME<|channel|>commentary)
// is a call whose body is its JSON arguments. The reply's first header has
// no <|start|>assistant (the prompt wrote it). The closing <|call|> and
// <|return|> are stop tokens that servers often leave out, so a call ends
// when its JSON object closes; a special token inside the arguments cuts
// them (malformed).
//
// A server that decodes with special tokens skipped leaves the same reply
// without them ("degraded"): analysisREASONINGassistantcommentary to=functions.NAME json{ARGS}
// or analysisREASONINGassistantfinalANSWER. The parser reads it when the
// model name says gpt-oss, or when the reply itself opens with a channel
// name glued to what follows (analysisThe…, finalAnswer) or with a call
// header (commentary to=functions.NAME); the glued assistantfinal,
// assistantanalysis, assistantcommentary and "assistant to=" then separate
// its messages. Auto looks for degraded text only when the model name
// says gpt-oss (Format.ModelStarts), and so also only then for a reply
// that opens with the role part's recipient (to=functions.NAME<|channel|>…).

const (
	hmStart     = "<|start|>"
	hmChannel   = "<|channel|>"
	hmMessage   = "<|message|>"
	hmEnd       = "<|end|>"
	hmCall      = "<|call|>"
	hmReturn    = "<|return|>"
	hmConstrain = "<|constrain|>"
	hmAssistant = "assistant"
	hmMaxHeader = 512 // bytes of a header
)

// hmBodyEnds end a message's body.
var hmBodyEnds = []string{hmEnd, hmCall, hmReturn, hmStart, hmChannel}

// hmMarkers separate messages in degraded text.
var hmMarkers = []string{"assistantanalysis", "assistantcommentary", "assistantfinal", "assistant to="}

// hmChannels are harmony's channels.
var hmChannels = []string{"analysis", "commentary", "final"}

// hmModelStarts are where auto, told by the model name that the model is
// gpt-oss, looks for degraded harmony.
var hmModelStarts = append([]string{"analysis", "commentary", "final", "to=functions."}, hmMarkers...)

func init() {
	Register(Format{
		Name:        "gpt_oss",
		Summary:     "gpt-oss harmony: <|channel|>analysis|commentary|final, calls to=functions.N <|constrain|>json<|message|>{…}<|call|> (also with the special tokens stripped)",
		New:         func(cfg Config) Parser { return newHarmony(cfg) },
		Starts:      []string{hmStart, hmChannel},
		ModelStarts: hmModelStarts,
		Claim:       hmClaim,
		Models:      []string{"gpt-oss", "gpt_oss", "gptoss"},
		Render:      renderHarmony,
	})
}

// hmHinted reports whether a model name says gpt-oss.
func hmHinted(model string) bool {
	m := strings.ToLower(model)
	return strings.Contains(m, "gpt-oss") || strings.Contains(m, "gpt_oss") || strings.Contains(m, "gptoss")
}

// hmClaim says whether rest starts a harmony message: a header that parses
// through <|message|>, or (for the model-only starts) a degraded header.
func hmClaim(rest string, atStart bool) Claim {
	if strings.HasPrefix(rest, hmStart) || strings.HasPrefix(rest, hmChannel) {
		at := strings.Index(rest, hmMessage)
		if at < 0 {
			if len(rest) > hmMaxHeader {
				return ClaimNo
			}
			return ClaimMore
		}
		if _, ok := hmParseHeader(rest[:at]); ok {
			return ClaimYes
		}
		return ClaimNo
	}
	if strings.HasPrefix(rest, hmAssistant) {
		_, c := hmDegradedHeader(rest[len(hmAssistant):], true, true)
		return c
	}
	if !atStart {
		return ClaimNo
	}
	if strings.HasPrefix(rest, "to=") {
		return hmRoleHeader(rest, true)
	}
	_, c := hmDegradedHeader(rest, false, true)
	return c
}

// hmHeader is what a header says.
type hmHeader struct {
	channel   string
	recipient string
	n         int // length of the header through what ends it
}

// hmParseHeader parses a header written with its special tokens, up to
// (not including) <|message|>: [<|start|>]ROLE [to=R]<|channel|>CH [to=R]
// [<|constrain|>]TYPE. It is not a header when it holds another special
// token.
func hmParseHeader(h string) (hmHeader, bool) {
	h = strings.TrimPrefix(h, hmStart)
	h = strings.NewReplacer(hmChannel, " \x00c ", hmConstrain, " \x00k ").Replace(h)
	var hd hmHeader
	if strings.Contains(h, "<|") {
		return hd, false
	}
	fields := strings.Fields(h)
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		switch {
		case f == "\x00c" && i+1 < len(fields):
			hd.channel = fields[i+1]
			i++
		case f == "\x00k":
			i++ // the content type
		case strings.HasPrefix(f, "to="):
			hd.recipient = f[3:]
		}
	}
	if strings.ContainsRune(hd.channel, 0) || strings.ContainsRune(hd.recipient, 0) {
		return hd, false
	}
	return hd, true
}

// hmRoleHeader decides a reply that opens with the role part's recipient
// (to=functions.NAME…): written with special tokens (ClaimYes when "<|"
// comes first), or degraded (hmDegradedHeader decides).
func hmRoleHeader(s string, loose bool) Claim {
	lt, br := strings.Index(s, "<|"), strings.IndexByte(s, '{')
	switch {
	case lt >= 0 && (br < 0 || lt < br):
		return ClaimYes
	case br >= 0:
		_, c := hmDegradedHeader(s, false, loose)
		return c
	case len(s) > hmMaxHeader:
		return ClaimNo
	}
	return ClaimMore
}

// hmRecipientByte reports whether c may be part of a degraded recipient.
func hmRecipientByte(c byte) bool {
	return !isWS(c) && c != '{' && c != '<'
}

// hmDegradedHeader reads a header without special tokens at the start of
// s: CH[ to=R][ TYPE] or, in the role part, [ ]to=R+CH[ TYPE]. A call's
// header ends where its JSON arguments begin ('{'); another's right after
// the channel name. glued says s follows "assistant" in a reply, where
// the glued marker is evidence enough; otherwise s opens the reply and the
// byte after a channel name must show it is glued to the body: an
// upper-case letter, or (loose: the model is gpt-oss) anything but white
// space, a lower-case letter or punctuation that goes on a sentence.
func hmDegradedHeader(s string, glued, loose bool) (hmHeader, Claim) {
	var hd hmHeader
	i := 0
	if glued && strings.HasPrefix(s, " ") {
		i = 1
		if len(s) == 1 {
			return hd, ClaimMore
		}
	}
	if strings.HasPrefix(s[i:], "to=") || (i < len(s) && strings.HasPrefix("to=", s[i:])) {
		// Role part: to=R with the channel glued after R.
		j := i + 3
		for j < len(s) && hmRecipientByte(s[j]) {
			j++
		}
		if j >= len(s) {
			if j > hmMaxHeader {
				return hd, ClaimNo
			}
			return hd, ClaimMore
		}
		r := s[min(i+3, j):j]
		for _, ch := range hmChannels[:2] { // analysis, commentary
			if strings.HasSuffix(r, ch) && len(r) > len(ch) {
				hd.channel, hd.recipient = ch, r[:len(r)-len(ch)]
			}
		}
		if hd.channel == "" || (!glued && !loose && !strings.HasPrefix(hd.recipient, "functions.")) {
			return hd, ClaimNo
		}
		return hmCallHeaderEnd(s, j, hd)
	}
	if glued && i > 0 {
		return hd, ClaimNo
	}
	rest := s[i:]
	for _, ch := range hmChannels {
		if strings.HasPrefix(ch, rest) && len(rest) < len(ch) {
			return hd, ClaimMore
		}
		if !strings.HasPrefix(rest, ch) {
			continue
		}
		hd.channel = ch
		j := i + len(ch)
		after := s[j:]
		if ch != "final" && (strings.HasPrefix(after, " to=") || strings.HasPrefix(" to=", after) && after != "") {
			if len(after) < 4 {
				return hd, ClaimMore
			}
			k := j + 4
			for k < len(s) && hmRecipientByte(s[k]) {
				k++
			}
			if k >= len(s) {
				if k > hmMaxHeader {
					return hd, ClaimNo
				}
				return hd, ClaimMore
			}
			hd.recipient = s[j+4 : k]
			if hd.recipient == "" || (!glued && !loose && !strings.HasPrefix(hd.recipient, "functions.")) {
				return hd, ClaimNo
			}
			return hmCallHeaderEnd(s, k, hd)
		}
		hd.n = j
		if after == "" && (!glued || ch != "final") {
			return hd, ClaimMore // " to=" may follow
		}
		if glued {
			return hd, ClaimYes
		}
		c := after[0]
		switch {
		case c >= 'A' && c <= 'Z':
			return hd, ClaimYes
		case loose && !isWS(c) && !(c >= 'a' && c <= 'z') && strings.IndexByte(":;,.!?)-", c) < 0:
			return hd, ClaimYes
		}
		return hd, ClaimNo
	}
	return hd, ClaimNo
}

// hmCallHeaderEnd reads the rest of a degraded call header from s[j:]:
// spaces, an optional content type (json), spaces, then '{' where the
// header ends.
func hmCallHeaderEnd(s string, j int, hd hmHeader) (hmHeader, Claim) {
	k := j
	for k < len(s) && s[k] == ' ' {
		k++
	}
	k0 := k
	for k < len(s) && (s[k] >= 'a' && s[k] <= 'z' || s[k] >= 'A' && s[k] <= 'Z') {
		k++
	}
	if k-k0 > 16 {
		return hd, ClaimNo
	}
	for k < len(s) && s[k] == ' ' {
		k++
	}
	if k >= len(s) {
		if k > hmMaxHeader {
			return hd, ClaimNo
		}
		return hd, ClaimMore
	}
	if s[k] != '{' {
		return hd, ClaimNo
	}
	hd.n = k
	return hd, ClaimYes
}

const (
	hmOut      = iota // between messages (or text outside them)
	hmHead            // a header written with special tokens
	hmDHead           // a degraded header
	hmBody            // a text or reasoning body
	hmArgs            // a call's JSON arguments
	hmArgsDone        // after a call's arguments
)

// harmonyParser parses gpt_oss replies.
type harmonyParser struct {
	markup
	loose bool   // degraded markers are read (model hint, or seen)
	start bool   // nothing but white space so far
	glued bool   // the degraded header follows "assistant"
	kind  Kind   // Text or Reasoning: the open body's kind
	lead  string // white space before the reply's first header
}

func newHarmony(cfg Config) *harmonyParser {
	p := &harmonyParser{loose: hmHinted(cfg.Model), start: true}
	p.init("gpt_oss", '<', p)
	return p
}

// Quiet reports whether s passes as text: in text outside messages or in
// a final or commentary body, nothing held, no '<' and (reading degraded
// text) nothing that could start a marker.
func (p *harmonyParser) Quiet(s string) bool {
	if p.buf != "" || p.start || !(p.st == hmOut || p.st == hmBody && p.kind == Text) {
		return false
	}
	if strings.IndexByte(s, '<') >= 0 {
		return false
	}
	return !p.loose || (!strings.Contains(s, hmAssistant) && HeldTail(s, hmMarkers...) == 0)
}

// run makes moves until one needs more input (the end of the reply is
// Close's).
func (p *harmonyParser) run(out []Event, _ bool) []Event { return runMoves(out, p) }

func (p *harmonyParser) step(out []Event) ([]Event, bool) {
	switch p.st {
	case hmOut:
		if p.start {
			return p.opening(out)
		}
		marks := []string{hmStart, hmChannel}
		if p.loose {
			marks = append(marks, hmMarkers...)
		}
		var which int
		if out, which = p.text(out, Text, false, marks...); which < 0 {
			return out, false
		}
		p.raw.Reset()
		if which < 2 {
			p.st = hmHead
		} else {
			p.st, p.glued = hmDHead, true
		}
	case hmHead:
		at := strings.Index(p.buf, hmMessage)
		if at < 0 {
			if len(p.buf) > hmMaxHeader {
				return p.notHeader(out, "harmony header without <|message|>"), true
			}
			return out, false
		}
		hd, ok := hmParseHeader(p.buf[:at])
		if !ok {
			return p.notHeader(out, "bad harmony header"), true
		}
		p.take(at + len(hmMessage))
		return p.open(out, hd), true
	case hmDHead:
		s := p.buf
		if p.glued {
			s = s[len(hmAssistant):]
		}
		hd, c := hmDegradedHeader(s, p.glued, p.loose)
		switch c {
		case ClaimMore:
			return out, false
		case ClaimNo:
			// Not a header: its first byte is text; read on.
			out = AppendText(out, p.lead+p.buf[:1])
			p.lead = ""
			p.buf = p.buf[1:]
			p.st = hmOut
			return out, true
		}
		if p.glued {
			hd.n += len(hmAssistant)
		}
		p.loose = true
		p.take(hd.n)
		return p.open(out, hd), true
	case hmBody:
		ends := hmBodyEnds
		if p.loose {
			ends = append(ends[:len(ends):len(ends)], hmMarkers...)
		}
		var which int
		if out, which = p.text(out, p.kind, false, ends...); which < 0 {
			return out, false
		}
		if which <= 2 { // <|end|>, <|call|>, <|return|>
			p.buf = p.buf[len(ends[which]):]
		}
		p.st = hmOut
	case hmArgs:
		return p.argsStep(out)
	case hmArgsDone:
		rest := strings.TrimLeft(p.buf, " \t\r\n")
		ends := hmBodyEnds
		if p.loose {
			ends = append(ends[:len(ends):len(ends)], hmMarkers...)
		}
		for i, e := range ends {
			if strings.HasPrefix(rest, e) {
				p.buf = rest
				if i <= 2 {
					p.buf = rest[len(e):]
				}
				return p.end(out), true
			}
		}
		if rest == "" || HeldTail(rest, ends...) == len(rest) {
			return out, false
		}
		// Text after complete arguments: the call stands; the text is text.
		return p.end(out), true
	}
	return out, true
}

// opening reads the start of the reply: white space, then a header with
// special tokens, the role part's recipient, a degraded header, or text.
func (p *harmonyParser) opening(out []Event) ([]Event, bool) {
	rest := strings.TrimLeft(p.buf, " \t\r\n")
	if rest == "" {
		return out, false
	}
	next := func(st uint8) ([]Event, bool) {
		// White space before the first header goes with it (dropped
		// once the header is read, given back if it is none).
		p.lead = p.buf[:len(p.buf)-len(rest)]
		p.buf, p.start, p.st = rest, false, st
		p.raw.Reset()
		return out, true
	}
	switch {
	case strings.HasPrefix(rest, hmStart) || strings.HasPrefix(rest, hmChannel):
		return next(hmHead)
	case strings.HasPrefix(rest, "to="):
		// The role part's recipient: with special tokens when "<|" comes
		// before the arguments' '{', else degraded.
		lt, br := strings.Index(rest, "<|"), strings.IndexByte(rest, '{')
		switch {
		case lt >= 0 && (br < 0 || lt < br):
			return next(hmHead)
		case br >= 0:
			p.glued = false
			return next(hmDHead)
		case len(rest) <= hmMaxHeader:
			return out, false
		}
		p.start = false
		return out, true
	}
	_, c := hmDegradedHeader(rest, false, p.loose)
	switch {
	case c == ClaimYes:
		p.glued = false
		return next(hmDHead)
	case c == ClaimMore, HeldTail(rest, hmStart, hmChannel, "to=") == len(rest):
		return out, false
	}
	p.start = false
	return out, true
}

// open starts the body of a message whose header hd was just read.
func (p *harmonyParser) open(out []Event, hd hmHeader) []Event {
	p.lead = ""
	if hd.recipient != "" {
		name := strings.TrimPrefix(hd.recipient, "functions.")
		p.beginArgs()
		p.st = hmArgs
		return append(out, Event{Kind: CallBegin, Name: name})
	}
	p.kind = Text
	if hd.channel == "analysis" {
		p.kind = Reasoning
	}
	p.st = hmBody
	return out
}

// notHeader gives back the first byte of what looked like a header, and
// reads on.
func (p *harmonyParser) notHeader(out []Event, why string) []Event {
	out = append(out, Event{Kind: Malformed, Text: why})
	out = AppendText(out, p.lead)
	p.lead = ""
	n := len(hmChannel)
	if strings.HasPrefix(p.buf, hmStart) {
		n = len(hmStart)
	}
	n = min(n, len(p.buf))
	out = AppendText(out, p.buf[:n])
	p.buf = p.buf[n:]
	p.st = hmOut
	return out
}

// argsStep passes on the bytes of a call's JSON arguments up to where the
// object closes, a special token cuts it, or the held tail begins.
func (p *harmonyParser) argsStep(out []Event) ([]Event, bool) {
	if !p.obj.started {
		rest := p.rest()
		if rest == "" {
			return out, false
		}
		if rest[0] != '{' {
			return p.malformed(out, "harmony call arguments are not a JSON object"), true
		}
		p.takeTo(rest, 0)
	}
	lim, which := IndexFirst(p.buf, hmBodyEnds...)
	if lim < 0 {
		lim = safeCut(p.buf[:len(p.buf)-HeldTail(p.buf, hmBodyEnds...)])
	}
	n, done := p.obj.scan(p.buf[:lim])
	out = AppendArgs(out, p.take(n))
	switch {
	case done && p.obj.bad():
		return p.malformed(out, "harmony call arguments are not valid JSON"), true
	case done:
		p.st = hmArgsDone
		return out, true
	case which >= 0:
		return p.malformed(out, "harmony call arguments cut by "+hmBodyEnds[which]), true
	}
	return out, false
}

// end ends the open call.
func (p *harmonyParser) end(out []Event) []Event {
	p.st = hmOut
	return p.recovered(out)
}

// Close ends the reply. A call whose arguments are complete is ended
// (<|call|> is a stop token servers leave out); one cut inside its
// arguments or header is given back as text.
func (p *harmonyParser) Close(out []Event) []Event {
	switch p.st {
	case hmOut:
		out = AppendText(out, p.buf)
	case hmHead:
		out = append(out, Event{Kind: Malformed, Text: "unterminated harmony header"})
		out = AppendText(out, p.lead+p.buf)
	case hmDHead:
		if strings.Contains(p.buf, "to=") {
			out = append(out, Event{Kind: Malformed, Text: "unterminated harmony call header"})
		}
		out = AppendText(out, p.lead+p.buf)
	case hmBody:
		out = appendText(out, p.kind, p.buf)
	case hmArgs:
		out = p.cut(out, "unterminated harmony call arguments")
	case hmArgsDone:
		out = p.end(out)
		if rest := strings.TrimLeft(p.buf, " \t\r\n"); rest != "" {
			out = AppendText(out, p.buf)
		}
	}
	p.buf, p.lead, p.st = "", "", hmOut
	p.raw.Reset()
	return out
}

// renderHarmony writes each call as a commentary message to
// functions.NAME with JSON arguments, ended by <|call|>.
func renderHarmony(calls []Call) string {
	var b strings.Builder
	for i, c := range calls {
		if i > 0 {
			b.WriteString(hmStart + hmAssistant)
		}
		b.WriteString(hmChannel + "commentary to=functions." + c.Name + " " + hmConstrain + "json" + hmMessage + argsText(c.Arguments) + hmCall)
	}
	return b.String()
}
