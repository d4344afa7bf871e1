package textcall

import "strings"

// DeepSeek V3 and R1 write their calls with special tokens, the name after
// a type and the arguments in a fenced JSON block:
//
//	<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME
//	```json
//	{json}
//	```<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>
//
// DeepSeek V3.1 dropped the type and the fence:
//
//	<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>
//
// The bars are U+FF5C and the "underscores" U+2581, three bytes each: a
// marker cut anywhere, inside a character too, is held whole (HeldTail
// compares bytes). Both formats share one parser that reads either shape
// of a call (they differ by what follows <｜tool▁sep｜>: the name, or the
// JSON object); they are two formats so that auto and --tool-format name
// the model's own convention.
const (
	dsCallsBegin = "<｜tool▁calls▁begin｜>"
	dsCallsEnd   = "<｜tool▁calls▁end｜>"
	dsCallBegin  = "<｜tool▁call▁begin｜>"
	dsCallEnd    = "<｜tool▁call▁end｜>"
	dsSep        = "<｜tool▁sep｜>"
	dsFence      = "```"

	// dsMaxHead bounds the text read as a call's type or name.
	dsMaxHead = 256
)

var dsStarts = []string{dsCallsBegin, dsCallBegin}

func init() {
	Register(Format{
		Name:    "deepseek_v3",
		Summary: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\\n```json\\n{json}\\n```<｜tool▁call▁end｜>…<｜tool▁calls▁end｜> (DeepSeek V3, R1)",
		New:     func(Config) Parser { return &dsParser{name: "deepseek_v3"} },
		Starts:  dsStarts,
		Claim:   func(rest string, _ bool) Claim { return dsClaim(rest, false) },
		Models:  []string{"deepseek-r1", "deepseek-v3", "deepseek_v3", "deepseek-chat"},
	})
	Register(Format{
		Name:    "deepseek_v31",
		Summary: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>…<｜tool▁calls▁end｜> (DeepSeek V3.1)",
		New:     func(Config) Parser { return &dsParser{name: "deepseek_v31"} },
		Starts:  dsStarts,
		Claim:   func(rest string, _ bool) Claim { return dsClaim(rest, true) },
		Models:  []string{"deepseek-v3.1", "deepseek-v3p1", "deepseek_v31", "deepseek-v3-1"},
	})
}

type dsState uint8

const (
	dsText     dsState = iota
	dsSection          // in a section: a call or the section's end comes next
	dsHead             // after <｜tool▁call▁begin｜>: the type (V3) or name (V3.1)
	dsAfterSep         // after <｜tool▁sep｜>: the name (V3) or the arguments (V3.1)
	dsName             // V3: the name, up to the end of its line
	dsOpen             // V3: the opening fence, or the arguments
	dsArgs             // the JSON arguments
	dsAfter            // arguments complete: a closing fence and <｜tool▁call▁end｜>
)

// dsParser parses deepseek_v3 and deepseek_v31.
type dsParser struct {
	markup
	name   string
	st     dsState
	head   string
	fenced bool // the arguments opened with a fence
	calls  int  // calls recovered in the open section
}

// FormatName returns the parser's format.
func (p *dsParser) FormatName() string { return p.name }

// Quiet reports whether s holds no '<' while the parser is in plain text.
func (p *dsParser) Quiet(s string) bool {
	return p.st == dsText && p.buf == "" && strings.IndexByte(s, '<') < 0
}

// Feed parses the next piece of the reply.
func (p *dsParser) Feed(out []Event, s string) []Event {
	p.buf += s
	return p.run(out, false)
}

// Close ends the reply.
func (p *dsParser) Close(out []Event) []Event {
	out = p.run(out, true)
	out = AppendText(out, p.buf)
	p.buf = ""
	return out
}

func (p *dsParser) failText(out []Event, why string) []Event {
	p.st = dsText
	return p.fail(out, p.name+": "+why)
}

func (p *dsParser) run(out []Event, eof bool) []Event {
	for {
		switch p.st {
		case dsText:
			at, which := IndexFirst(p.buf, dsStarts...)
			if at < 0 {
				keep := 0
				if !eof {
					keep = HeldTail(p.buf, dsStarts...)
				}
				out = AppendText(out, p.buf[:len(p.buf)-keep])
				p.buf = p.buf[len(p.buf)-keep:]
				return out
			}
			out = AppendText(out, p.buf[:at])
			p.buf = p.buf[at:]
			p.raw.Reset()
			p.calls = 0
			m := dsStarts[which]
			p.take(len(m))
			p.st = dsSection
			if m == dsCallBegin {
				p.st = dsHead
			}

		case dsSection:
			rest := p.buf[spaceLen(p.buf):]
			switch m := hasPrefixAny(rest, dsCallBegin, dsCallsEnd); {
			case m == dsCallBegin:
				p.take(len(p.buf) - len(rest) + len(m))
				p.st = dsHead
				continue
			case m != "":
				p.take(len(p.buf) - len(rest) + len(m))
				if p.calls == 0 { // an empty section is no markup
					out = p.giveBack(out)
				}
				p.raw.Reset()
				p.st = dsText
				continue
			case !eof && (rest == "" || partialOf(rest, dsCallBegin, dsCallsEnd)):
				return out
			}
			// A section marker with no call after it is not markup; after
			// calls, the section ended without its end marker.
			if p.calls == 0 {
				out = p.giveBack(out)
			}
			p.raw.Reset()
			p.st = dsText

		case dsHead:
			j := strings.IndexByte(p.buf, '<')
			region := p.buf
			if j >= 0 {
				region = p.buf[:j]
			}
			if !kimiIDText(region) {
				out = p.giveBack(out) // not a call: prose mentioning the marker
				p.st = dsText
				continue
			}
			if len(region) > dsMaxHead {
				out = p.failText(out, "tool name too long")
				continue
			}
			if j < 0 || partialOf(p.buf[j:], dsSep) {
				if !eof {
					return out
				}
				out = p.failText(out, "unterminated tool call")
				continue
			}
			if !strings.HasPrefix(p.buf[j:], dsSep) {
				out = p.failText(out, "tool call without "+dsSep)
				continue
			}
			p.head = strings.TrimSpace(region)
			p.take(j + len(dsSep))
			p.st = dsAfterSep

		case dsAfterSep:
			rest := p.buf[spaceLen(p.buf):]
			if rest == "" {
				if !eof {
					return out
				}
				out = p.failText(out, "unterminated tool call")
				continue
			}
			if !eof && partialOf(rest, dsCallEnd) {
				return out
			}
			if rest[0] == '{' || strings.HasPrefix(rest, dsCallEnd) { // V3.1: the head was the name
				if p.head == "" {
					out = p.failText(out, "tool call without a name")
					continue
				}
				out = append(out, Event{Kind: CallBegin, Name: p.head})
				p.beginArgs()
				p.fenced = false
				p.st = dsArgs
				continue
			}
			p.take(len(p.buf) - len(rest))
			p.st = dsName

		case dsName:
			end := strings.IndexAny(p.buf, "\n`{<")
			region := p.buf
			if end >= 0 {
				region = p.buf[:end]
			}
			if len(region) > dsMaxHead {
				out = p.failText(out, "tool name too long")
				continue
			}
			if end < 0 {
				if !eof {
					return out
				}
				out = p.failText(out, "unterminated tool call")
				continue
			}
			name := strings.TrimSpace(region)
			if name == "" || strings.ContainsAny(name, " \t") {
				out = p.failText(out, "tool call without a name")
				continue
			}
			p.take(end)
			out = append(out, Event{Kind: CallBegin, Name: name})
			p.beginArgs()
			p.fenced = false
			p.st = dsOpen

		case dsOpen:
			rest := p.buf[spaceLen(p.buf):]
			if strings.HasPrefix(rest, dsFence) {
				// The fence and its language word (```json).
				lang := strings.TrimLeft(rest[len(dsFence):], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
				if lang == "" && !eof {
					return out
				}
				p.take(len(p.buf) - len(lang))
				p.fenced = true
				p.st = dsArgs
				continue
			}
			if !eof && (rest == "" || partialOf(rest, dsFence)) {
				return out
			}
			p.st = dsArgs

		case dsArgs:
			if !p.obj.started {
				rest := p.buf[spaceLen(p.buf):]
				if strings.HasPrefix(rest, dsCallEnd) && !p.fenced { // no arguments
					out = AppendArgs(out, "{}")
					p.take(len(p.buf) - len(rest) + len(dsCallEnd))
					out = p.recovered(out)
					p.calls++
					p.st = dsSection
					continue
				}
				if !eof && (rest == "" || partialOf(rest, dsCallEnd)) {
					return out
				}
			}
			var step argStep
			out, step = p.streamArgs(out, eof)
			switch step {
			case argMore:
				if !eof {
					return out
				}
				out = p.failText(out, "unterminated tool-call arguments")
			case argBad:
				out = p.failText(out, "tool-call arguments are not a JSON object")
			case argDone:
				p.st = dsAfter
			}

		case dsAfter:
			rest := p.buf[spaceLen(p.buf):]
			if p.fenced && strings.HasPrefix(rest, dsFence) {
				p.take(len(p.buf) - len(rest) + len(dsFence))
				p.fenced = false
				continue
			}
			if strings.HasPrefix(rest, dsCallEnd) {
				p.take(len(p.buf) - len(rest) + len(dsCallEnd))
			} else if !eof && (rest == "" || partialOf(rest, dsFence, dsCallEnd, dsCallBegin, dsCallsEnd)) {
				return out
			}
			// Without its closing fence or <｜tool▁call▁end｜> the call is
			// complete all the same: its arguments are.
			out = p.recovered(out)
			p.calls++
			p.st = dsSection
			if eof && p.buf == "" {
				return out
			}
		}
	}
}

// dsClaim recognizes a DeepSeek section or call and tells V3.1 (the JSON
// object right after <｜tool▁sep｜>) from V3 (a name there).
func dsClaim(rest string, v31 bool) Claim {
	if strings.HasPrefix(rest, dsCallsBegin) {
		rest = strings.TrimLeft(rest[len(dsCallsBegin):], " \t\r\n")
		if rest == "" || partialOf(rest, dsCallBegin) {
			return ClaimMore
		}
		if !strings.HasPrefix(rest, dsCallBegin) {
			return ClaimNo
		}
	}
	rest = rest[len(dsCallBegin):]
	j := strings.IndexByte(rest, '<')
	region := rest
	if j >= 0 {
		region = rest[:j]
	}
	switch {
	case !kimiIDText(region) || len(region) > dsMaxHead:
		return ClaimNo
	case j < 0 || partialOf(rest[j:], dsSep):
		return ClaimMore
	case !strings.HasPrefix(rest[j:], dsSep):
		return ClaimNo
	}
	after := strings.TrimLeft(rest[j+len(dsSep):], " \t\r\n")
	if after == "" || partialOf(after, dsCallEnd) {
		return ClaimMore
	}
	if (after[0] == '{' || strings.HasPrefix(after, dsCallEnd)) == v31 {
		return ClaimYes
	}
	return ClaimNo
}
