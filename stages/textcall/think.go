package textcall

import "strings"

// thinkTags are the reasoning blocks models write into the text: <think>
// (Qwen3, DeepSeek R1, GLM, Kimi, MiniMax) and [THINK] (Mistral).
var thinkTags = [...]struct{ open, close string }{
	{"<think>", "</think>"},
	{"[THINK]", "[/THINK]"},
}

// splitState is where a thinkSplitter is in the reply.
type splitState uint8

const (
	splitStart     splitState = iota // only white space so far
	splitText                        // after the start: text
	splitReasoning                   // inside a reasoning block
)

// thinkSplitter separates reasoning blocks from the text of a reply. A
// block opens only at the start of the reply (after white space), or the
// reply starts inside one when the prompt opened it (open); it ends at its
// closing tag. Text after the block is text, passed on without looking.
type thinkSplitter struct {
	state    splitState
	held     string
	closeTag string // the closing tag of the open block
	afterNL  bool   // new lines right after the closing tag are still dropped
}

func newThinkSplitter(open bool) thinkSplitter {
	if open {
		return thinkSplitter{state: splitReasoning}
	}
	return thinkSplitter{}
}

// quiet reports whether s passes as text unchanged.
func (t *thinkSplitter) quiet(s string) bool {
	switch t.state {
	case splitText:
		return !t.afterNL
	case splitStart:
		return t.held == "" && isSpace(s)
	}
	return false
}

// feed appends Text and Reasoning events for s.
func (t *thinkSplitter) feed(out []Event, s string) []Event {
	buf := t.held + s
	t.held = ""
	for buf != "" {
		switch t.state {
		case splitText:
			if t.afterNL { // the new lines after </think> may come in later pieces
				if buf = strings.TrimLeft(buf, "\r\n"); buf == "" {
					return out
				}
				t.afterNL = false
			}
			return appendText(out, Text, buf)
		case splitStart:
			// White space before a block is given back as it comes (so
			// plain text keeps its deltas); the block may still open.
			rest := strings.TrimLeft(buf, " \t\r\n")
			out = appendText(out, Text, buf[:len(buf)-len(rest)])
			buf = rest
			if rest == "" {
				return out
			}
			opened := false
			for _, tag := range thinkTags {
				if strings.HasPrefix(rest, tag.open) {
					t.state, t.closeTag, opened = splitReasoning, tag.close, true
					buf = rest[len(tag.open):]
					break
				}
				if strings.HasPrefix(tag.open, rest) {
					t.held = rest // could still become the tag
					return out
				}
			}
			if !opened {
				t.state = splitText
			}
		case splitReasoning:
			closes := []string{t.closeTag}
			if t.closeTag == "" { // opened by the prompt: either tag closes it
				closes = []string{thinkTags[0].close, thinkTags[1].close}
			}
			at, which := IndexFirst(buf, closes...)
			if at < 0 {
				keep := HeldTail(buf, closes...)
				out = appendText(out, Reasoning, buf[:len(buf)-keep])
				t.held = buf[len(buf)-keep:]
				return out
			}
			out = appendText(out, Reasoning, buf[:at])
			buf = buf[at+len(closes[which]):]
			t.state, t.afterNL = splitText, true
		}
	}
	return out
}

// close gives back what is held: white space or a partial tag as text, a
// partial closing tag as reasoning.
func (t *thinkSplitter) close() []Event {
	h := t.held
	t.held = ""
	if t.state == splitReasoning {
		return appendText(nil, Reasoning, h)
	}
	return appendText(nil, Text, h)
}
