package textcall

import "strings"

// Kimi K2 writes its calls with special tokens:
//
//	<|tool_calls_section_begin|>
//	<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{json}<|tool_call_end|>
//	…
//	<|tool_calls_section_end|>
//
// The id (functions.NAME:IDX) is the call's id: the chat template replays
// it, so it is kept exactly as written. Variants seen in the wild: the
// singular <|tool_call_section_begin|>, ids without the "functions."
// prefix, other id shapes, and a call without its section.
const (
	kimiSectionBegin  = "<|tool_calls_section_begin|>"
	kimiSectionBegin1 = "<|tool_call_section_begin|>"
	kimiSectionEnd    = "<|tool_calls_section_end|>"
	kimiSectionEnd1   = "<|tool_call_section_end|>"
	kimiCallBegin     = "<|tool_call_begin|>"
	kimiArgBegin      = "<|tool_call_argument_begin|>"
	kimiCallEnd       = "<|tool_call_end|>"

	// kimiMaxID bounds the text read as a call id.
	kimiMaxID = 512
)

var kimiStarts = []string{kimiSectionBegin, kimiSectionBegin1, kimiCallBegin}

func init() {
	Register(Format{
		Name:    "kimi_k2",
		Summary: "<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{json}<|tool_call_end|>…<|tool_calls_section_end|> (Kimi K2)",
		New:     func(cfg Config) Parser { return &kimiParser{schemas: cfg.Schemas} },
		Starts:  kimiStarts,
		Claim:   kimiClaim,
		Models:  []string{"kimi"},
	})
}

type kimiState uint8

const (
	kimiText    kimiState = iota
	kimiSection           // in a section: a call or the section's end comes next
	kimiID                // after <|tool_call_begin|>: the call id
	kimiArgs              // the JSON arguments
	kimiAfter             // arguments complete: <|tool_call_end|> comes next
)

// kimiParser parses the kimi_k2 format.
type kimiParser struct {
	markup
	schemas Schemas
	st      kimiState
	calls   int // calls recovered in the open section
}

// FormatName returns "kimi_k2".
func (p *kimiParser) FormatName() string { return "kimi_k2" }

// Quiet reports whether s holds no '<' while the parser is in plain text.
func (p *kimiParser) Quiet(s string) bool {
	return p.st == kimiText && p.buf == "" && strings.IndexByte(s, '<') < 0
}

// Feed parses the next piece of the reply.
func (p *kimiParser) Feed(out []Event, s string) []Event {
	p.buf += s
	return p.run(out, false)
}

// Close ends the reply.
func (p *kimiParser) Close(out []Event) []Event {
	out = p.run(out, true)
	out = AppendText(out, p.buf)
	p.buf = ""
	return out
}

func (p *kimiParser) run(out []Event, eof bool) []Event {
	for {
		switch p.st {
		case kimiText:
			at, which := IndexFirst(p.buf, kimiStarts...)
			if at < 0 {
				keep := 0
				if !eof {
					keep = HeldTail(p.buf, kimiStarts...)
				}
				out = AppendText(out, p.buf[:len(p.buf)-keep])
				p.buf = p.buf[len(p.buf)-keep:]
				return out
			}
			out = AppendText(out, p.buf[:at])
			p.buf = p.buf[at:]
			p.raw.Reset()
			p.calls = 0
			m := kimiStarts[which]
			p.take(len(m))
			p.st = kimiSection
			if m == kimiCallBegin {
				p.st = kimiID
			}

		case kimiSection:
			rest := p.buf[spaceLen(p.buf):]
			switch m := hasPrefixAny(rest, kimiCallBegin, kimiSectionEnd, kimiSectionEnd1); {
			case m == kimiCallBegin:
				p.take(len(p.buf) - len(rest) + len(m))
				p.st = kimiID
				continue
			case m != "":
				p.take(len(p.buf) - len(rest) + len(m))
				if p.calls == 0 { // an empty section is no markup
					out = p.giveBack(out)
				}
				p.raw.Reset()
				p.st = kimiText
				continue
			case !eof && (rest == "" || partialOf(rest, kimiCallBegin, kimiSectionEnd, kimiSectionEnd1)):
				return out
			}
			// Something else: a section marker with no call after it is
			// not markup (prose that mentions it); after calls, the
			// section ended without its end marker.
			if p.calls == 0 {
				out = p.giveBack(out)
			}
			p.raw.Reset()
			p.st = kimiText

		case kimiID:
			j := strings.IndexByte(p.buf, '<')
			region := p.buf
			if j >= 0 {
				region = p.buf[:j]
			}
			if !kimiIDText(region) {
				out = p.giveBack(out) // not an id: prose mentioning the marker
				p.st = kimiText
				continue
			}
			if len(region) > kimiMaxID {
				out = p.fail(out, "kimi_k2: call id too long")
				p.st = kimiText
				continue
			}
			if j < 0 || partialOf(p.buf[j:], kimiArgBegin) {
				if !eof {
					return out
				}
				out = p.fail(out, "kimi_k2: unterminated tool call")
				p.st = kimiText
				continue
			}
			if !strings.HasPrefix(p.buf[j:], kimiArgBegin) || strings.TrimSpace(region) == "" {
				out = p.fail(out, "kimi_k2: tool call without "+kimiArgBegin)
				p.st = kimiText
				continue
			}
			id := strings.TrimSpace(region)
			p.take(j + len(kimiArgBegin))
			out = append(out, Event{Kind: CallBegin, Name: kimiName(id, p.schemas), ID: id})
			p.beginArgs()
			p.st = kimiArgs

		case kimiArgs:
			if !p.obj.started {
				rest := p.buf[spaceLen(p.buf):]
				if strings.HasPrefix(rest, kimiCallEnd) { // no arguments
					out = AppendArgs(out, "{}")
					p.take(len(p.buf) - len(rest) + len(kimiCallEnd))
					out = p.recovered(out)
					p.calls++
					p.st = kimiSection
					continue
				}
				if !eof && (rest == "" || partialOf(rest, kimiCallEnd)) {
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
				out = p.fail(out, "kimi_k2: unterminated tool-call arguments")
				p.st = kimiText
			case argBad:
				out = p.fail(out, "kimi_k2: tool-call arguments are not a JSON object")
				p.st = kimiText
			case argDone:
				p.st = kimiAfter
			}

		case kimiAfter:
			rest := p.buf[spaceLen(p.buf):]
			if strings.HasPrefix(rest, kimiCallEnd) {
				p.take(len(p.buf) - len(rest) + len(kimiCallEnd))
			} else if !eof && (rest == "" || partialOf(rest, kimiCallEnd, kimiCallBegin, kimiSectionEnd, kimiSectionEnd1)) {
				return out
			}
			// Without <|tool_call_end|> the call is complete all the same:
			// its arguments are.
			out = p.recovered(out)
			p.calls++
			p.st = kimiSection
			if eof && p.buf == "" {
				return out
			}
		}
		if eof && p.buf == "" && p.st == kimiText {
			return out
		}
	}
}

// kimiIDText reports whether s (the text after <|tool_call_begin|> so far)
// can be a call id: white space around one run of characters.
func kimiIDText(s string) bool {
	t := strings.TrimLeft(s, " \t\r\n")
	if i := strings.IndexAny(t, " \t\r\n"); i >= 0 {
		return strings.TrimLeft(t[i:], " \t\r\n") == ""
	}
	return true
}

// kimiName returns the tool name a call id carries: functions.NAME:IDX or
// NAME:IDX; an id without a colon is read as functions_NAME_IDX, NAME_IDX
// or NAME, the first of these whose name the request's tools have (the id
// itself, less a "functions." prefix, when they have none of them).
func kimiName(id string, tools Schemas) string {
	name := strings.TrimPrefix(id, "functions.")
	if i := strings.LastIndexByte(name, ':'); i > 0 {
		return name[:i]
	}
	if tools == nil || tools.Has(name) {
		return name
	}
	bare := name
	if i := strings.LastIndexByte(bare, '_'); i > 0 && i < len(bare)-1 && strings.Trim(bare[i+1:], "0123456789") == "" {
		bare = bare[:i]
	}
	for _, c := range []string{bare, strings.TrimPrefix(bare, "functions_"), strings.TrimPrefix(name, "functions_")} {
		if tools.Has(c) {
			return c
		}
	}
	return name
}

// kimiClaim recognizes the start of a kimi_k2 section or call: a section
// marker followed by a call, or a call marker followed by an id and the
// argument marker.
func kimiClaim(rest string, _ bool) Claim {
	if m := hasPrefixAny(rest, kimiSectionBegin, kimiSectionBegin1); m != "" {
		rest = strings.TrimLeft(rest[len(m):], " \t\r\n")
		if rest == "" || partialOf(rest, kimiCallBegin) {
			return ClaimMore
		}
		if !strings.HasPrefix(rest, kimiCallBegin) {
			return ClaimNo
		}
	}
	rest = rest[len(kimiCallBegin):]
	j := strings.IndexByte(rest, '<')
	region := rest
	if j >= 0 {
		region = rest[:j]
	}
	switch {
	case !kimiIDText(region) || len(region) > kimiMaxID:
		return ClaimNo
	case j < 0 || partialOf(rest[j:], kimiArgBegin):
		return ClaimMore
	case strings.HasPrefix(rest[j:], kimiArgBegin) && strings.TrimSpace(region) != "":
		return ClaimYes
	}
	return ClaimNo
}
