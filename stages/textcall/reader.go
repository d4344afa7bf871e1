package textcall

import (
	"encoding/json"
	"fmt"
)

// Reader parses one reply (one choice of a chat answer): its content text,
// split into reasoning blocks and text, and its reasoning text, each run
// through its own parser of the format — so a call written inside the
// reasoning (before </think>, or into a server's reasoning field) is
// recovered too. Events out: Text (content), Reasoning, and calls.
type Reader struct {
	think     thinkSplitter
	content   Parser
	reasoning Parser
	scratch   []Event
	rscratch  []Event // the reasoning parser's events, fed apart from out
	before    func()  // ReaderOptions.BeforeMarkup, until called
}

// ReaderOptions configure a Reader.
type ReaderOptions struct {
	// Format is auto, off or a registered format's name.
	Format string
	// Config is what the parsers know of the request.
	Config Config
	// ThinkingOpen says the prompt opened a reasoning block, so the reply
	// starts inside one and its first </think> closes it.
	ThinkingOpen bool
	// BeforeMarkup, when set, is called once, before a parser is first
	// given text it does not find quiet (text that could be markup): the
	// moment to fill Config.Schemas when reading them costs.
	BeforeMarkup func()
}

// NewReader returns a Reader for one reply. With format off it still
// splits reasoning blocks from the text.
func NewReader(opts ReaderOptions) (*Reader, error) {
	c, err := NewParser(opts.Format, opts.Config)
	if err != nil {
		return nil, err
	}
	r, _ := NewParser(opts.Format, opts.Config)
	return &Reader{think: newThinkSplitter(opts.ThinkingOpen), content: c, reasoning: r, before: opts.BeforeMarkup}, nil
}

// Chosen returns the format the reader's content parser uses: the format
// given, or the one auto locked on ("" while auto has not).
func (r *Reader) Chosen() string {
	for _, p := range []Parser{r.content, r.reasoning} {
		if a, ok := p.(*auto); ok {
			if a.name != "" {
				return a.name
			}
			continue
		}
		if n, ok := p.(interface{ FormatName() string }); ok {
			return n.FormatName()
		}
	}
	return ""
}

// QuietContent reports whether content text s passes unchanged as text.
func (r *Reader) QuietContent(s string) bool {
	return r.think.quiet(s) && (r.content == nil || r.content.Quiet(s))
}

// QuietReasoning reports whether reasoning text s passes unchanged. It is
// false while a block the prompt opened waits for the reply: the server's
// reasoning then tells the reader that the server split the block.
func (r *Reader) QuietReasoning(s string) bool {
	return r.think.state != splitOpened && (r.reasoning == nil || r.reasoning.Quiet(s))
}

// Content appends the events of the next piece of content text.
func (r *Reader) Content(out []Event, s string) []Event {
	if r.think.state == splitText && !r.think.afterNL {
		return r.text(out, s)
	}
	r.scratch = r.think.feed(r.scratch[:0], s)
	for _, e := range r.scratch {
		if e.Kind == Reasoning {
			out = r.reasoningText(out, e.Text)
		} else {
			out = r.text(out, e.Text)
		}
	}
	return out
}

func (r *Reader) text(out []Event, s string) []Event {
	if r.content == nil {
		return appendText(out, Text, s)
	}
	r.beforeFeed(r.content, s)
	return r.content.Feed(out, s)
}

// beforeFeed calls BeforeMarkup, once, when p is about to read s and s
// could be markup to p.
func (r *Reader) beforeFeed(p Parser, s string) {
	if r.before != nil && !p.Quiet(s) {
		r.before()
		r.before = nil
	}
}

// Reasoning appends the events of the next piece of reasoning text the
// server sent in its own field. The server's reasoning wins over a block
// the prompt opened: the content, when it begins, starts after the block.
func (r *Reader) Reasoning(out []Event, s string) []Event {
	if s != "" {
		r.think.serverReasoning()
	}
	return r.reasoningText(out, s)
}

// reasoningText appends the events of a piece of reasoning text: the
// server's, or a block's in the content.
func (r *Reader) reasoningText(out []Event, s string) []Event {
	if r.reasoning == nil {
		return appendText(out, Reasoning, s)
	}
	r.beforeFeed(r.reasoning, s)
	r.rscratch = r.reasoning.Feed(r.rscratch[:0], s)
	return asReasoning(out, r.rscratch)
}

// asReasoning appends events to out, their Text as Reasoning. The events
// are produced apart from out: a parser merges text into the last event it
// sees, which must not be content given before.
func asReasoning(out, events []Event) []Event {
	for _, e := range events {
		if e.Kind == Text {
			out = appendText(out, Reasoning, e.Text)
			continue
		}
		out = append(out, e)
	}
	return out
}

// Close ends the reply.
func (r *Reader) Close(out []Event) []Event {
	for _, e := range r.think.close() {
		if e.Kind == Reasoning {
			out = r.reasoningText(out, e.Text)
		} else {
			out = r.text(out, e.Text)
		}
	}
	if r.reasoning != nil {
		r.rscratch = r.reasoning.Close(r.rscratch[:0])
		out = asReasoning(out, r.rscratch)
	}
	if r.content != nil {
		out = r.content.Close(out)
	}
	return out
}

// Reply is a whole reply parsed: what `harnessflow parse --tool-format`
// prints.
type Reply struct {
	Content   string `json:"content"`
	Reasoning string `json:"reasoning"`
	Calls     []Call `json:"calls"`
	// Malformed lists why markup was given back as text.
	Malformed []string `json:"malformed,omitempty"`
}

// Call is one recovered tool call.
type Call struct {
	Name string `json:"name"`
	// Arguments is the call's arguments, a JSON object.
	Arguments json.RawMessage `json:"arguments"`
	// ID is the id the markup carried, omitted when it carried none.
	ID string `json:"id,omitempty"`
}

// Collect folds events into a Reply. An event sequence that breaks the
// parser contract (arguments outside a call, a call never ended, arguments
// that are not one JSON object) is an error.
func Collect(events []Event) (Reply, error) {
	rep := Reply{Calls: []Call{}}
	var open *Call
	var args []byte
	for i, e := range events {
		switch e.Kind {
		case Text:
			rep.Content += e.Text
		case Reasoning:
			rep.Reasoning += e.Text
		case CallBegin:
			if open != nil {
				return rep, fmt.Errorf("textcall: event %d: call %q begins inside call %q", i, e.Name, open.Name)
			}
			open, args = &Call{Name: e.Name, ID: e.ID}, args[:0]
		case CallArgs:
			if open == nil {
				return rep, fmt.Errorf("textcall: event %d: arguments outside a call", i)
			}
			args = append(args, e.Text...)
		case CallEnd:
			if open == nil {
				return rep, fmt.Errorf("textcall: event %d: call end outside a call", i)
			}
			a := string(args)
			if len(args) == 0 {
				a = "{}"
			}
			var obj map[string]json.RawMessage
			if err := json.Unmarshal([]byte(a), &obj); err != nil || obj == nil {
				return rep, fmt.Errorf("textcall: event %d: call %q: arguments are not a JSON object: %q", i, open.Name, a)
			}
			open.Arguments = json.RawMessage(a)
			rep.Calls = append(rep.Calls, *open)
			open = nil
		case Malformed:
			open = nil
			rep.Malformed = append(rep.Malformed, e.Text)
		default:
			return rep, fmt.Errorf("textcall: event %d: unknown kind %v", i, e.Kind)
		}
	}
	if open != nil {
		return rep, fmt.Errorf("textcall: call %q never ended", open.Name)
	}
	return rep, nil
}

// ParseReply parses one whole reply with opts.
func ParseReply(opts ReaderOptions, text string) (Reply, error) {
	r, err := NewReader(opts)
	if err != nil {
		return Reply{}, err
	}
	return Collect(r.Close(r.Content(nil, text)))
}
