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

var (
	dsStarts      = []string{dsCallsBegin, dsCallBegin}
	dsStartStates = []uint8{dsSection, dsHead}
)

func init() {
	Register(Format{
		Name:    "deepseek_v3",
		Summary: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\\n```json\\n{json}\\n```<｜tool▁call▁end｜>…<｜tool▁calls▁end｜> (DeepSeek V3, R1)",
		New:     func(Config) Parser { return newDS("deepseek_v3") },
		Starts:  dsStarts,
		Claim:   func(rest string, _ bool) Claim { return dsClaim(rest, false) },
		Models:  []string{"deepseek-r1", "deepseek-v3", "deepseek_v3", "deepseek-chat"},
		Render:  func(calls []Call) string { return renderDS(calls, false) },
	})
	Register(Format{
		Name:    "deepseek_v31",
		Summary: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>…<｜tool▁calls▁end｜> (DeepSeek V3.1)",
		New:     func(Config) Parser { return newDS("deepseek_v31") },
		Starts:  dsStarts,
		Claim:   func(rest string, _ bool) Claim { return dsClaim(rest, true) },
		Models:  []string{"deepseek-v3.1", "deepseek-v3p1", "deepseek_v31", "deepseek-v3-1"},
		Render:  func(calls []Call) string { return renderDS(calls, true) },
	})
}

const (
	dsText     = iota // plain text
	dsSection         // in a section: a call or the section's end comes next
	dsHead            // after <｜tool▁call▁begin｜>: the type (V3) or name (V3.1)
	dsAfterSep        // after <｜tool▁sep｜>: the name (V3) or the arguments (V3.1)
	dsName            // V3: the name, up to the end of its line
	dsOpen            // V3: the opening fence, or the arguments
	dsArgs            // the JSON arguments
	dsAfter           // arguments complete: a closing fence and <｜tool▁call▁end｜>
)

// dsParser parses deepseek_v3 and deepseek_v31.
type dsParser struct {
	markup
	first  string // the text before <｜tool▁sep｜>: the type (V3) or the name (V3.1)
	fenced bool   // the arguments opened with a fence
}

func newDS(name string) *dsParser {
	p := &dsParser{}
	p.init(name, '<', p)
	return p
}

// beginCall begins the call named name; its arguments come next.
func (p *dsParser) beginCall(out []Event, name string, next uint8) []Event {
	p.beginArgs()
	p.fenced = false
	p.st = next
	return append(out, Event{Kind: CallBegin, Name: name})
}

func (p *dsParser) run(out []Event, eof bool) []Event {
	for {
		switch p.st {
		case dsText:
			var which int
			if out, which = p.openAt(out, eof, dsStarts, dsStartStates); which < 0 {
				return out
			}

		case dsSection:
			var wait bool
			if out, wait = p.section(out, eof, dsHead, dsCallBegin, dsCallsEnd); wait {
				return out
			}

		case dsHead:
			head, n, ok, wait := "", 0, false, false
			if out, head, n, ok, wait = p.head(out, eof, dsSep, dsMaxHead, "tool name too long", false); wait {
				return out
			} else if ok {
				p.first = head
				p.take(n)
				p.st = dsAfterSep
			}

		case dsAfterSep:
			rest := p.rest()
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
				if p.first == "" {
					out = p.failText(out, "tool call without a name")
					continue
				}
				out = p.beginCall(out, p.first, dsArgs)
				continue
			}
			p.takeTo(rest, 0)
			p.st = dsName

		case dsName:
			end := strings.IndexAny(p.buf, "\n`{<")
			var ok, wait bool
			if out, ok, wait = p.field(out, eof, end, dsMaxHead, "tool name too long"); !ok {
				if wait {
					return out
				}
				continue
			}
			name := strings.TrimSpace(p.buf[:end])
			if name == "" || strings.ContainsAny(name, " \t") {
				out = p.failText(out, "tool call without a name")
				continue
			}
			p.take(end)
			out = p.beginCall(out, name, dsOpen)

		case dsOpen:
			rest := p.rest()
			if strings.HasPrefix(rest, dsFence) {
				// The fence and its language word (```json).
				lang := strings.TrimLeft(rest[len(dsFence):], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
				if lang == "" && !eof {
					return out
				}
				p.takeTo(lang, 0)
				p.fenced = true
				p.st = dsArgs
				continue
			}
			if !eof && (rest == "" || partialOf(rest, dsFence)) {
				return out
			}
			p.st = dsArgs

		case dsArgs:
			callEnd := dsCallEnd
			if p.fenced { // a fence holds arguments
				callEnd = ""
			}
			var wait bool
			if out, wait = p.callArgs(out, eof, callEnd, dsAfter, dsSection); wait {
				return out
			}

		case dsAfter:
			if rest := p.rest(); p.fenced && strings.HasPrefix(rest, dsFence) {
				p.takeTo(rest, len(dsFence))
				p.fenced = false
				continue
			}
			// Without its closing fence or <｜tool▁call▁end｜> the call is
			// complete all the same: its arguments are.
			var wait bool
			if out, wait = p.callEnded(out, eof, dsCallEnd, dsFence, dsCallBegin, dsCallsEnd); wait {
				return out
			}
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
	rest, c := claimSection(rest, dsCallBegin, dsCallsBegin)
	if c != ClaimYes {
		return c
	}
	rest = rest[len(dsCallBegin):]
	_, n, step := headBefore(rest, dsSep, dsMaxHead)
	if step != headOK {
		return step.claim()
	}
	after := strings.TrimLeft(rest[n:], " \t\r\n")
	if after == "" || partialOf(after, dsCallEnd) {
		return ClaimMore
	}
	if (after[0] == '{' || strings.HasPrefix(after, dsCallEnd)) == v31 {
		return ClaimYes
	}
	return ClaimNo
}

// renderDS writes the calls in one section; a V3 call is
// function<｜tool▁sep｜>NAME and its arguments in a json fence, a V3.1
// (v31) call NAME<｜tool▁sep｜>ARGS.
func renderDS(calls []Call, v31 bool) string {
	if len(calls) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(dsCallsBegin)
	for _, c := range calls {
		if v31 {
			b.WriteString(dsCallBegin + c.Name + dsSep + argsText(c.Arguments) + dsCallEnd)
		} else {
			b.WriteString(dsCallBegin + "function" + dsSep + c.Name + "\n" + dsFence + "json\n" + argsText(c.Arguments) + "\n" + dsFence + dsCallEnd)
		}
	}
	b.WriteString(dsCallsEnd)
	return b.String()
}
