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
	splitOpened                      // the prompt opened a block; only white space of the reply so far
)

// thinkSplitter separates reasoning blocks from the text of a reply. A
// block opens only at the start of the reply (after white space), or the
// reply starts inside one when the prompt opened it (open); it ends at its
// closing tag. Text after the block is text, passed on without looking.
//
// Three readings make it robust to what templates and servers do around
// the block (docs/text-tool-calls.md#reasoning-in-the-text): inside a
// block the prompt opened, an opening tag the model writes again at the
// start is the same block; a closing tag at the start of the reply with
// no opener before it ends a block the reply did not show (its text went
// elsewhere, or was empty) and is dropped; and reasoning the server sent
// in its own field (serverReasoning) means the server split the block, so
// the content starts after it.
type thinkSplitter struct {
	state    splitState
	held     string
	closeTag string // the closing tag of the open block ("": either)
	afterNL  bool   // new lines right after the closing tag are still dropped
}

func newThinkSplitter(open bool) thinkSplitter {
	if open {
		return thinkSplitter{state: splitOpened}
	}
	return thinkSplitter{}
}

// serverReasoning is told that the server sent reasoning in its own
// field: a block the prompt opened was split by the server, so the
// content (not yet begun) starts after it — where a closing tag may still
// show up, and is dropped.
func (t *thinkSplitter) serverReasoning() {
	if t.state == splitOpened {
		t.state = splitStart
	}
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
		case splitStart, splitOpened:
			// White space before a block is given back as it comes (so
			// plain text keeps its deltas); the block may still open.
			kind := Text
			if t.state == splitOpened {
				kind = Reasoning
			}
			rest := strings.TrimLeft(buf, " \t\r\n")
			out = appendText(out, kind, buf[:len(buf)-len(rest)])
			buf = rest
			if rest == "" {
				return out
			}
			var hold bool
			buf, hold = t.start(rest)
			if hold {
				t.held = buf
				return out
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

// start reads the first non-space text of the reply (or of a block the
// prompt opened): an opening tag opens a block (in an opened one it is the
// same block), a closing tag at the start of the reply ends the block the
// reply did not show; what could still become a tag is held (hold), and
// anything else is text (or the opened block's reasoning). It returns the
// text after what it took.
func (t *thinkSplitter) start(rest string) (_ string, hold bool) {
	opened := t.state == splitOpened
	for _, tag := range thinkTags {
		switch {
		case strings.HasPrefix(rest, tag.open):
			t.state, t.closeTag = splitReasoning, tag.close
			return rest[len(tag.open):], false
		case !opened && strings.HasPrefix(rest, tag.close):
			t.state, t.afterNL = splitText, true
			return rest[len(tag.close):], false
		case strings.HasPrefix(tag.open, rest), !opened && strings.HasPrefix(tag.close, rest):
			return rest, true // could still become the tag
		}
	}
	if opened {
		t.state = splitReasoning // closeTag "": either tag closes it
	} else {
		t.state = splitText
	}
	return rest, false
}

// close gives back what is held: white space or a partial tag as text, a
// partial closing tag as reasoning.
func (t *thinkSplitter) close() []Event {
	h := t.held
	t.held = ""
	if t.state == splitReasoning || t.state == splitOpened {
		return appendText(nil, Reasoning, h)
	}
	return appendText(nil, Text, h)
}
