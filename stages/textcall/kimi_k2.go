package textcall

import (
	"strconv"
	"strings"
)

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

var (
	kimiStarts      = []string{kimiSectionBegin, kimiSectionBegin1, kimiCallBegin}
	kimiStartStates = []uint8{kimiSection, kimiSection, kimiID}
)

func init() {
	Register(Format{
		Name:    "kimi_k2",
		Summary: "<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{json}<|tool_call_end|>…<|tool_calls_section_end|> (Kimi K2)",
		New:     func(cfg Config) Parser { return newKimi(cfg) },
		Starts:  kimiStarts,
		Claim:   kimiClaim,
		Models:  []string{"kimi"},
		Render:  renderKimi,
	})
}

const (
	kimiText    = iota // plain text
	kimiSection        // in a section: a call or the section's end comes next
	kimiID             // after <|tool_call_begin|>: the call id
	kimiArgs           // the JSON arguments
	kimiAfter          // arguments complete: <|tool_call_end|> comes next
)

// kimiParser parses the kimi_k2 format.
type kimiParser struct {
	markup
	schemas Schemas
}

func newKimi(cfg Config) *kimiParser {
	p := &kimiParser{schemas: cfg.Schemas}
	p.init("kimi_k2", '<', p)
	return p
}

func (p *kimiParser) run(out []Event, eof bool) []Event {
	for {
		switch p.st {
		case kimiText:
			var which int
			if out, which = p.openAt(out, eof, kimiStarts, kimiStartStates); which < 0 {
				return out
			}

		case kimiSection:
			var wait bool
			if out, wait = p.section(out, eof, kimiID, kimiCallBegin, kimiSectionEnd, kimiSectionEnd1); wait {
				return out
			}

		case kimiID:
			id, n, ok, wait := "", 0, false, false
			if out, id, n, ok, wait = p.head(out, eof, kimiArgBegin, kimiMaxID, "call id too long", true); wait {
				return out
			} else if ok {
				p.take(n)
				out = append(out, Event{Kind: CallBegin, Name: kimiName(id, p.schemas), ID: id})
				p.beginArgs()
				p.st = kimiArgs
			}

		case kimiArgs:
			var wait bool
			if out, wait = p.callArgs(out, eof, kimiCallEnd, kimiAfter, kimiSection); wait {
				return out
			}

		case kimiAfter:
			var wait bool
			if out, wait = p.callEnded(out, eof, kimiCallEnd, kimiCallBegin, kimiSectionEnd, kimiSectionEnd1); wait {
				return out
			}
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
	rest, c := claimSection(rest, kimiCallBegin, kimiSectionBegin, kimiSectionBegin1)
	if c != ClaimYes {
		return c
	}
	id, _, step := headBefore(rest[len(kimiCallBegin):], kimiArgBegin, kimiMaxID)
	if step == headOK && id == "" {
		return ClaimNo
	}
	return step.claim()
}

// renderKimi writes the calls in one section, each with its ID
// (functions.NAME:INDEX when the call has none) and JSON arguments.
func renderKimi(calls []Call) string {
	if len(calls) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(kimiSectionBegin)
	for i, c := range calls {
		id := c.ID
		if id == "" {
			id = "functions." + c.Name + ":" + strconv.Itoa(i)
		}
		b.WriteString(kimiCallBegin + id + kimiArgBegin + argsText(c.Arguments) + kimiCallEnd)
	}
	b.WriteString(kimiSectionEnd)
	return b.String()
}
