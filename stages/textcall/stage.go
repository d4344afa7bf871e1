package textcall

import (
	"context"
	"log/slog"
	"strconv"
	"unsafe"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/stages/chatstream"
)

// Name is the name of the chat.textcalls node.
const Name = "chat.textcalls"

// Outcomes counted through Options.Observe
// (harnessflow_text_tool_calls_total{format,outcome}).
const (
	// OutcomeRecovered: a call was recovered from the text.
	OutcomeRecovered = "recovered"
	// OutcomeUnknownTool: a recovered call names a tool the request does
	// not have; it is passed on as a function call all the same.
	OutcomeUnknownTool = "unknown_tool"
	// OutcomeMalformed: markup that could not be parsed was given back as
	// text.
	OutcomeMalformed = "malformed"
	// OutcomeNativeWon: the upstream sent real tool_calls, so the rest of
	// the text was left as text.
	OutcomeNativeWon = "native_won"
)

// Options configure the chat.textcalls stage.
type Options struct {
	// Format is auto, off or a registered format ("" means off).
	Format string
	// Config is what the parsers know of the request (tool schemas, model).
	Config Config
	// LoadSchemas, when set and Config.Schemas is nil, gives the request's
	// tool schemas; it is called once, when a parser is first given text
	// that could be markup (Parser.Quiet is false), so a stream with no
	// markup never pays for it — reading a Codex request's tool schemas
	// costs more than translating a whole short answer.
	LoadSchemas func() Schemas
	// ThinkingOpen says the prompt opened a reasoning block.
	ThinkingOpen bool
	// Observe, when set, is called once per outcome with the format that
	// produced it.
	Observe func(format, outcome string)
	// Logger logs malformed markup at debug level; nil logs nothing.
	Logger *slog.Logger
}

// Node returns the chat.textcalls node (chatstream.Chunk →
// chatstream.Chunk), or an error naming the choices when opts.Format is
// not auto, off or a registered format.
func Node(opts Options) (pipeline.Node, error) {
	if opts.Format == "" {
		opts.Format = Off
	}
	if err := CheckName(opts.Format); err != nil {
		return pipeline.Node{}, err
	}
	return pipeline.NewNode(Name, func() pipeline.Stage[chatstream.Chunk, chatstream.Chunk] {
		return NewStage(opts)
	}, pipeline.Describe("tool calls and reasoning written in the text ("+opts.Format+") → tool-call fragments, reasoning")), nil
}

// NewStage returns a fresh chat.textcalls stage. Per choice it runs a
// Reader over the content and reasoning text and rewrites each chunk: text
// without markup, reasoning, and recovered calls as tool_calls fragments
// (one per call, released when the call's markup ends: the engine shows a
// call only once it is done). A chunk whose text cannot start any markup
// passes unchanged. Once a choice carries real tool_calls, they win: the
// reader is closed and the rest of that choice's text passes as it is. At
// the end of the stream (done, error, truncation or EOF) every reader is
// closed and what it gives back is sent in one chunk before the end.
func NewStage(opts Options) pipeline.Stage[chatstream.Chunk, chatstream.Chunk] {
	if opts.Format == "" {
		opts.Format = Off
	}
	st := &stage{opts: opts}
	if opts.LoadSchemas != nil && opts.Config.Schemas == nil {
		// Parsers share this map; it is filled before they first need it.
		st.opts.Config.Schemas, st.load = Schemas{}, opts.LoadSchemas
	}
	return st
}

// loadSchemas fills the parsers' shared schema map from LoadSchemas, once.
func (s *stage) loadSchemas() {
	if s.load == nil {
		return
	}
	for k, v := range s.load() {
		s.opts.Config.Schemas[k] = v
	}
	s.load = nil
}

type stage struct {
	opts    Options
	load    func() Schemas // fills opts.Config.Schemas once (loadSchemas)
	choices []choiceState
	respID  string
	calls   int // calls recovered in the stream
	events  []Event
	out     chatstream.Chunk
	outCh   []chatstream.Choice
	outCall []chatstream.ToolCall
}

type choiceState struct {
	index  int64
	reader *Reader
	native bool // real tool_calls seen: pass the rest
	shift  int  // added to real tool-call indices (calls recovered before)
	open   *chatstream.ToolCall
	args   []byte
}

// Push rewrites one chunk.
func (s *stage) Push(_ context.Context, c chatstream.Chunk, emit func(chatstream.Chunk)) error {
	if s.opts.Format == Off && !s.opts.ThinkingOpen {
		emit(c)
		return nil
	}
	if c.Kind != chatstream.ChunkData {
		s.closeAll(c, emit)
		emit(c)
		return nil
	}
	if s.respID == "" && len(c.ID) > 0 {
		s.respID = string(c.ID)
	}
	quiet := true
	for i := range c.Choices {
		if !s.quiet(&c.Choices[i]) {
			quiet = false
			break
		}
	}
	if quiet {
		emit(c)
		return nil
	}
	out := s.begin(c)
	for i := range c.Choices {
		ch := &c.Choices[i]
		st := s.state(ch.Index)
		if st.native {
			out.Choices = append(out.Choices, s.shifted(st, ch))
			continue
		}
		s.events = s.events[:0]
		if len(ch.ToolCalls) > 0 {
			// Real tool calls win: the reader gives back what it holds,
			// and this chunk's text and everything after pass as they are.
			st.native, st.shift = true, s.calls
			s.events = st.reader.Close(s.events)
			s.observe(st, OutcomeNativeWon)
			nc := s.render(st, ch)
			for _, p := range ch.Content {
				nc.Content = append(nc.Content, p)
			}
			if len(ch.Reasoning) > 0 {
				nc.Reasoning = append(nc.Reasoning, ch.Reasoning...)
				nc.ReasoningSource = ch.ReasoningSource
			}
			nc.ToolCalls = append(nc.ToolCalls, s.shifted(st, ch).ToolCalls...)
			out.Choices = append(out.Choices, nc)
			continue
		}
		if len(ch.Reasoning) > 0 {
			s.events = st.reader.Reasoning(s.events, string(ch.Reasoning))
		}
		for _, p := range ch.Content {
			s.events = st.reader.Content(s.events, string(p))
		}
		out.Choices = append(out.Choices, s.render(st, ch))
	}
	s.outCh = out.Choices[:0]
	emit(*out)
	return nil
}

// shifted returns ch with its real tool-call indices moved past the calls
// recovered before them, so the two never share a slot.
func (s *stage) shifted(st *choiceState, ch *chatstream.Choice) chatstream.Choice {
	if st.shift == 0 || len(ch.ToolCalls) == 0 {
		return *ch
	}
	nc := *ch
	start := len(s.outCall)
	for _, t := range ch.ToolCalls {
		if t.HasIndex {
			t.Index += st.shift
		}
		s.outCall = append(s.outCall, t)
	}
	nc.ToolCalls = s.outCall[start:len(s.outCall):len(s.outCall)]
	return nc
}

// quiet reports whether a choice passes unchanged.
func (s *stage) quiet(ch *chatstream.Choice) bool {
	st := s.state(ch.Index)
	if st.native {
		return st.shift == 0 || len(ch.ToolCalls) == 0
	}
	if len(ch.ToolCalls) > 0 || st.open != nil {
		return false
	}
	if len(ch.Reasoning) > 0 && !st.reader.QuietReasoning(borrow(ch.Reasoning)) {
		return false
	}
	for _, p := range ch.Content {
		if !st.reader.QuietContent(borrow(p)) {
			return false
		}
	}
	return true
}

// borrow views b as a string for a call that does not keep it.
func borrow(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// state returns the state of choice index, made on first use.
func (s *stage) state(index int64) *choiceState {
	for i := range s.choices {
		if s.choices[i].index == index {
			return &s.choices[i]
		}
	}
	ro := ReaderOptions{Format: s.opts.Format, Config: s.opts.Config, ThinkingOpen: s.opts.ThinkingOpen}
	if s.load != nil {
		ro.BeforeMarkup = s.loadSchemas
	}
	r, err := NewReader(ro)
	if err != nil { // Node and NewStage's callers checked the name
		r, _ = NewReader(ReaderOptions{Format: Off, ThinkingOpen: s.opts.ThinkingOpen})
	}
	s.choices = append(s.choices, choiceState{index: index, reader: r})
	return &s.choices[len(s.choices)-1]
}

// begin starts an output chunk with c's top-level fields.
func (s *stage) begin(c chatstream.Chunk) *chatstream.Chunk {
	s.out = chatstream.Chunk{Kind: chatstream.ChunkData, Offset: c.Offset, ID: c.ID, Model: c.Model, Usage: c.Usage}
	s.out.Choices = s.outCh[:0]
	s.outCall = s.outCall[:0]
	return &s.out
}

// render turns s.events into the choice that replaces ch.
func (s *stage) render(st *choiceState, ch *chatstream.Choice) chatstream.Choice {
	nc := chatstream.Choice{Index: ch.Index, Refusal: ch.Refusal, FinishReason: ch.FinishReason}
	var text, rsn []byte
	callStart := len(s.outCall)
	for _, e := range s.events {
		switch e.Kind {
		case Text:
			text = append(text, e.Text...)
		case Reasoning:
			rsn = append(rsn, e.Text...)
		case CallBegin:
			id := e.ID
			if id == "" {
				id = s.callID()
			}
			st.open = &chatstream.ToolCall{ID: []byte(id), Type: []byte("function"), Name: []byte(e.Name)}
			st.args = st.args[:0]
		case CallArgs:
			st.args = append(st.args, e.Text...)
		case CallEnd:
			if st.open == nil {
				continue
			}
			call := *st.open
			call.Index, call.HasIndex = s.calls, true
			call.Arguments = append([]byte(nil), st.args...)
			if len(call.Arguments) == 0 {
				call.Arguments = []byte("{}")
			}
			s.calls++
			s.outCall = append(s.outCall, call)
			s.observe(st, OutcomeRecovered)
			if s.opts.Config.Schemas != nil && !s.opts.Config.Schemas.Has(string(call.Name)) {
				s.observe(st, OutcomeUnknownTool)
			}
			st.open = nil
		case Malformed:
			st.open = nil
			s.observe(st, OutcomeMalformed)
			if s.opts.Logger != nil {
				s.opts.Logger.Debug("textcalls: markup given back as text", "format", s.format(st), "reason", e.Text)
			}
		}
	}
	if text != nil {
		nc.Content = [][]byte{text}
	}
	if rsn != nil {
		nc.Reasoning, nc.ReasoningSource = rsn, chatstream.ReasoningContent
	}
	if len(s.outCall) > callStart {
		nc.ToolCalls = s.outCall[callStart:len(s.outCall):len(s.outCall)]
	}
	return nc
}

// callID makes an id for a call whose markup carried none: unique within
// the response and, through the upstream's response id, across turns.
func (s *stage) callID() string {
	base := s.respID
	if base == "" {
		base = "text"
	}
	return "call_" + base + "_" + strconv.Itoa(s.calls)
}

func (s *stage) format(st *choiceState) string {
	if n := st.reader.Chosen(); n != "" {
		return n
	}
	return s.opts.Format
}

func (s *stage) observe(st *choiceState, outcome string) {
	if s.opts.Observe != nil {
		s.opts.Observe(s.format(st), outcome)
	}
}

// closeAll closes every reader before the end chunk c and sends what they
// give back.
func (s *stage) closeAll(c chatstream.Chunk, emit func(chatstream.Chunk)) {
	if len(s.choices) == 0 {
		return
	}
	out := s.begin(chatstream.Chunk{ID: []byte(s.respID), Offset: c.Offset})
	for i := range s.choices {
		st := &s.choices[i]
		if st.native {
			continue
		}
		s.events = st.reader.Close(s.events[:0])
		if len(s.events) == 0 {
			continue
		}
		nc := s.render(st, &chatstream.Choice{Index: st.index})
		if nc.Content != nil || nc.Reasoning != nil || nc.ToolCalls != nil {
			out.Choices = append(out.Choices, nc)
		}
	}
	s.choices = s.choices[:0]
	if len(out.Choices) > 0 {
		emit(*out)
	}
}
