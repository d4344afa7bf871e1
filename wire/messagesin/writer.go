package messagesin

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"github.com/harnessflow/harnessflow/protocol"
)

// Options configures a [Writer].
type Options struct {
	// MessageID is the id of the message ("" makes one: msg_ and 24 hex
	// digits).
	MessageID string
	// Model is the model named in the message (the client's, until the
	// stream's server_model event names the upstream's).
	Model string
	// Flush, when set, is called after every event written.
	Flush func() error
}

// Block kinds of a [Writer].
const (
	kindText     = 't'
	kindThinking = 'k'
	kindRedacted = 'r'
	kindTool     = 'u'
)

// block is one content block of the message.
type block struct {
	kind    byte
	index   int
	started bool // content_block_start written
	stopped bool // content_block_stop written
	text    strings.Builder
	sig     string
	id      string // tool_use id
	name    string
	custom  bool // a custom (freeform) tool call: its input is wrapped as {"input": TEXT}
	done    bool
}

// Writer writes the Messages SSE stream of a sequence of
// [protocol.ResponseEvent]s to an io.Writer, or, with a nil io.Writer, only
// builds the message for [Writer.AppendMessage]. Use it as a pipeline sink
// (Accept); Fail ends a stream whose run failed. Text, thinking and tool
// input are written as they arrive; a content block the events only give
// whole (an output_item.done without deltas) is written whole.
//
// Not safe for concurrent use.
type Writer struct {
	w      io.Writer
	flush  func() error
	id     string
	model  string
	buf    []byte
	frame  []byte // the SSE frame being written, reused
	events int
	err    error

	started bool
	ended   bool
	failure *protocol.StreamError

	blocks []*block
	cur    *block            // the open block
	byItem map[string]*block // tool blocks by item id and call id
	msgOut *block            // the text block of the assistant message in progress
	tools  bool
	stop   string
	usage  *protocol.TokenUsage
}

// NewWriter returns a writer of the Messages stream to w (nil: none).
func NewWriter(w io.Writer, opts Options) *Writer {
	s := &Writer{w: w, flush: opts.Flush, id: opts.MessageID, model: opts.Model, byItem: map[string]*block{}}
	if s.id == "" {
		s.id = NewMessageID()
	}
	return s
}

// NewMessageID returns a message id: msg_ and 24 hex digits.
func NewMessageID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail
	return "msg_" + hex.EncodeToString(b[:])
}

// Events returns how many SSE events were written (with a nil io.Writer:
// would have been).
func (s *Writer) Events() int { return s.events }

// Ended reports whether the stream ended: message_stop or an error event.
func (s *Writer) Ended() bool { return s.ended }

// Failure returns the error of a failed stream, nil otherwise.
func (s *Writer) Failure() *protocol.StreamError { return s.failure }

// Err returns the write error that stopped the writer, if any.
func (s *Writer) Err() error { return s.err }

// StopReason returns the stop_reason the message ended with ("" before).
func (s *Writer) StopReason() string { return s.stop }

// Fail ends the stream with an error event for e, unless it already ended.
func (s *Writer) Fail(e *protocol.StreamError) error {
	if s.ended {
		return s.err
	}
	return s.Accept(protocol.Failed(e))
}

// Accept writes the SSE events of one ResponseEvent.
func (s *Writer) Accept(ev protocol.ResponseEvent) error {
	if s.err != nil || s.ended {
		return s.err
	}
	switch ev.Type {
	case protocol.EventServerModel:
		if ev.Model != "" && !s.started {
			s.model = ev.Model
		}
		return nil
	case protocol.EventCreated:
		return nil
	case protocol.EventFailed:
		return s.failed(ev.Error)
	}
	s.start()
	switch ev.Type {
	case protocol.EventOutputItemAdded:
		s.added(ev.Item)
	case protocol.EventOutputItemDone:
		s.done(ev.Item)
	case protocol.EventOutputTextDelta:
		b := s.msgOut
		if b == nil || b.stopped {
			b = s.open(kindText)
			s.msgOut = b
		}
		s.delta(b, ev.Delta)
	case protocol.EventReasoningContentDelta, protocol.EventReasoningSummaryDelta:
		b := s.cur
		if b == nil || b.kind != kindThinking || b.stopped {
			b = s.open(kindThinking)
		}
		s.delta(b, ev.Delta)
	case protocol.EventReasoningSummaryPartAdded:
		if b := s.cur; ev.SummaryIndex > 0 && b != nil && b.kind == kindThinking && b.text.Len() > 0 {
			s.delta(b, "\n\n")
		}
	case protocol.EventToolCallInputDelta:
		b := s.byItem[ev.ItemID]
		if b == nil && ev.CallID != "" {
			b = s.byItem[ev.CallID]
		}
		if b != nil && b == s.cur && !b.custom {
			s.delta(b, ev.Delta)
		}
	case protocol.EventCompleted:
		s.completed(ev)
	}
	return s.err
}

// start writes message_start and a ping, once.
func (s *Writer) start() {
	if s.started {
		return
	}
	s.started = true
	b := append(s.buf[:0], `{"type":"message_start","message":{"id":`...)
	b = protocol.AppendString(b, s.id)
	b = append(b, `,"type":"message","role":"assistant","model":`...)
	b = protocol.AppendString(b, s.model)
	b = append(b, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}}`...)
	s.buf = b
	s.write("message_start", b)
	s.write("ping", []byte(`{"type":"ping"}`))
}

// open closes the open block and starts a block of kind.
func (s *Writer) open(kind byte) *block {
	b := &block{kind: kind, index: len(s.blocks)}
	s.blocks = append(s.blocks, b)
	s.begin(b)
	return b
}

// begin closes the open block and writes b's content_block_start.
func (s *Writer) begin(b *block) {
	s.closeCurrent()
	s.cur = b
	b.started = true
	out := append(s.buf[:0], `{"type":"content_block_start","index":`...)
	out = strconv.AppendInt(out, int64(b.index), 10)
	out = append(out, `,"content_block":`...)
	switch b.kind {
	case kindText:
		out = append(out, `{"type":"text","text":""}`...)
	case kindThinking:
		out = append(out, `{"type":"thinking","thinking":"","signature":""}`...)
	case kindRedacted:
		out = append(out, `{"type":"redacted_thinking","data":`...)
		out = protocol.AppendString(out, b.sig)
		out = append(out, '}')
	case kindTool:
		out = append(out, `{"type":"tool_use","id":`...)
		out = protocol.AppendString(out, b.id)
		out = append(out, `,"name":`...)
		out = protocol.AppendString(out, b.name)
		out = append(out, `,"input":{}}`...)
	}
	out = append(out, '}')
	s.buf = out
	s.write("content_block_start", out)
}

// delta writes a content_block_delta of b's kind.
func (s *Writer) delta(b *block, text string) {
	if text == "" {
		return
	}
	b.text.WriteString(text)
	out := append(s.buf[:0], `{"type":"content_block_delta","index":`...)
	out = strconv.AppendInt(out, int64(b.index), 10)
	switch b.kind {
	case kindText:
		out = append(out, `,"delta":{"type":"text_delta","text":`...)
	case kindThinking:
		out = append(out, `,"delta":{"type":"thinking_delta","thinking":`...)
	case kindTool:
		out = append(out, `,"delta":{"type":"input_json_delta","partial_json":`...)
	}
	out = protocol.AppendString(out, text)
	out = append(out, "}}"...)
	s.buf = out
	s.write("content_block_delta", out)
}

// closeCurrent ends the open block: a thinking block with its signature
// (signature_delta, also when empty: every thinking block carries one).
func (s *Writer) closeCurrent() {
	b := s.cur
	if b == nil || b.stopped {
		return
	}
	s.cur = nil
	b.stopped = true
	if b.kind == kindThinking {
		out := append(s.buf[:0], `{"type":"content_block_delta","index":`...)
		out = strconv.AppendInt(out, int64(b.index), 10)
		out = append(out, `,"delta":{"type":"signature_delta","signature":`...)
		out = protocol.AppendString(out, b.sig)
		out = append(out, "}}"...)
		s.buf = out
		s.write("content_block_delta", out)
	}
	out := append(s.buf[:0], `{"type":"content_block_stop","index":`...)
	out = strconv.AppendInt(out, int64(b.index), 10)
	out = append(out, '}')
	s.buf = out
	s.write("content_block_stop", out)
}

// added starts the block of an output item: reasoning and tool calls at
// once, an assistant message at its first text.
func (s *Writer) added(it protocol.ResponseItem) {
	switch it := it.(type) {
	case *protocol.Message:
		if it.Role == protocol.RoleAssistant {
			s.msgOut = nil
		}
	case *protocol.Reasoning:
		if strings.HasPrefix(it.ID, redactedPrefix) {
			return // written whole when done
		}
		s.open(kindThinking)
	case *protocol.FunctionCall:
		b := s.toolBlock(it.ID, it.CallID, it.Name, false)
		s.begin(b)
	case *protocol.CustomToolCall:
		s.toolBlock(it.ID, it.CallID, it.Name, true)
	}
}

const redactedPrefix = "anthropic-redacted-thinking-"

// toolBlock returns the tool block of an item, made on first sight.
func (s *Writer) toolBlock(itemID, callID, name string, custom bool) *block {
	if b := s.byItem[itemID]; itemID != "" && b != nil {
		return b
	}
	if b := s.byItem[callID]; callID != "" && b != nil {
		return b
	}
	id := callID
	if id == "" {
		id = itemID
	}
	if id == "" {
		id = "toolu_" + strings.TrimPrefix(s.id, "msg_") + "_" + strconv.Itoa(len(s.blocks))
	}
	b := &block{kind: kindTool, index: len(s.blocks), id: id, name: name, custom: custom}
	s.blocks = append(s.blocks, b)
	if itemID != "" {
		s.byItem[itemID] = b
	}
	if callID != "" {
		s.byItem[callID] = b
	}
	s.tools = true
	return b
}

// done finishes the block of an output item with what it holds in full:
// the rest of its text that was not streamed, or all of it.
func (s *Writer) done(it protocol.ResponseItem) {
	switch it := it.(type) {
	case *protocol.Message:
		if it.Role != protocol.RoleAssistant {
			return
		}
		var full strings.Builder
		for _, c := range it.Content {
			if c.Type == protocol.ContentOutputText || c.Type == "refusal" {
				full.WriteString(c.Text)
			}
		}
		b := s.msgOut
		if b == nil || b.stopped {
			if full.Len() == 0 {
				return
			}
			b = s.open(kindText)
		}
		s.rest(b, full.String())
		s.closeCurrent()
		s.msgOut = nil
	case *protocol.Reasoning:
		sig := ""
		if it.EncryptedContent != nil {
			sig = *it.EncryptedContent
		}
		if strings.HasPrefix(it.ID, redactedPrefix) {
			b := &block{kind: kindRedacted, index: len(s.blocks), sig: sig}
			s.blocks = append(s.blocks, b)
			s.begin(b)
			s.closeCurrent()
			return
		}
		b := s.cur
		if b == nil || b.kind != kindThinking || b.stopped {
			if reasoningText(it) == "" && sig == "" {
				return
			}
			b = s.open(kindThinking)
		}
		b.sig = sig
		s.rest(b, reasoningText(it))
		s.closeCurrent()
	case *protocol.FunctionCall:
		b := s.toolBlock(it.ID, it.CallID, it.Name, false)
		s.finishTool(b, it.Arguments)
	case *protocol.CustomToolCall:
		b := s.toolBlock(it.ID, it.CallID, it.Name, true)
		s.finishTool(b, `{"input":`+string(protocol.AppendString(nil, it.Input))+`}`)
	}
}

// finishTool writes a tool block's input not streamed yet and ends it.
func (s *Writer) finishTool(b *block, args string) {
	if b.done {
		return
	}
	b.done = true
	if !b.started {
		s.begin(b)
	} else if b != s.cur {
		return // ended already: its input went out as it was streamed
	}
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	if b.text.Len() == 0 && !json.Valid([]byte(args)) {
		args = `{"input":` + string(protocol.AppendString(nil, args)) + `}`
	}
	s.rest(b, args)
	s.closeCurrent()
}

// rest writes the part of full that b's deltas did not carry yet, when
// they are a prefix of it (otherwise what was streamed stands).
func (s *Writer) rest(b *block, full string) {
	sent := b.text.String()
	if rest, ok := strings.CutPrefix(full, sent); ok {
		s.delta(b, rest)
	}
}

func reasoningText(r *protocol.Reasoning) string {
	var t strings.Builder
	for _, c := range r.Content {
		t.WriteString(c.Text)
	}
	if t.Len() > 0 {
		return t.String()
	}
	for i, c := range r.Summary {
		if i > 0 {
			t.WriteString("\n\n")
		}
		t.WriteString(c.Text)
	}
	return t.String()
}

// StopReasonOf is the stop_reason of a finish reason: length → max_tokens,
// content_filter → refusal, tool calls → tool_use, else end_turn.
func StopReasonOf(finish string, toolCalls bool) string {
	switch finish {
	case protocol.FinishLength:
		return "max_tokens"
	case protocol.FinishContentFilter:
		return "refusal"
	case protocol.FinishToolCalls:
		return "tool_use"
	}
	if toolCalls {
		return "tool_use"
	}
	return "end_turn"
}

// completed ends the message: message_delta with stop_reason and usage,
// message_stop.
func (s *Writer) completed(ev protocol.ResponseEvent) {
	s.closeCurrent()
	s.stop = StopReasonOf(ev.FinishReason, s.tools)
	s.usage = ev.TokenUsage
	out := append(s.buf[:0], `{"type":"message_delta","delta":{"stop_reason":`...)
	out = protocol.AppendString(out, s.stop)
	out = append(out, `,"stop_sequence":null},"usage":`...)
	out = appendUsage(out, s.usage)
	out = append(out, '}')
	s.buf = out
	s.write("message_delta", out)
	s.ended = true
	s.write("message_stop", []byte(`{"type":"message_stop"}`))
}

// appendUsage writes the API's usage object: input_tokens are the tokens
// neither read from nor written to the cache.
func appendUsage(b []byte, u *protocol.TokenUsage) []byte {
	var in, read, write, out int64
	if u != nil {
		read, write, out = u.CachedInputTokens, u.CacheWriteInputTokens, u.OutputTokens
		in = max(u.InputTokens-read-write, 0)
	}
	b = append(b, `{"input_tokens":`...)
	b = strconv.AppendInt(b, in, 10)
	b = append(b, `,"cache_creation_input_tokens":`...)
	b = strconv.AppendInt(b, write, 10)
	b = append(b, `,"cache_read_input_tokens":`...)
	b = strconv.AppendInt(b, read, 10)
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, out, 10)
	return append(b, '}')
}

// failed ends the stream with an error event (no message_stop: the API
// sends none after an error).
func (s *Writer) failed(e *protocol.StreamError) error {
	if e == nil {
		e = &protocol.StreamError{Kind: protocol.ErrKindUpstream, Message: "the response failed"}
	}
	s.failure = e
	s.ended = true
	msg := e.Message
	if msg == "" {
		msg = "the upstream stream failed"
	}
	out := AppendError(s.buf[:0], StreamErrorType(e), msg)
	s.buf = out
	s.write("error", out)
	return s.err
}

// write writes one SSE event.
func (s *Writer) write(event string, data []byte) {
	s.events++
	if s.w == nil || s.err != nil {
		return
	}
	frame := append(s.frame[:0], "event: "...)
	frame = append(frame, event...)
	frame = append(frame, "\ndata: "...)
	frame = append(frame, data...)
	frame = append(frame, "\n\n"...)
	s.frame = frame
	if _, err := s.w.Write(frame); err != nil {
		s.err = err
		return
	}
	if s.flush != nil {
		if err := s.flush(); err != nil {
			s.err = err
		}
	}
}

// AppendMessage appends the non-streaming Message body: the content
// blocks in order, stop_reason and usage.
func (s *Writer) AppendMessage(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = protocol.AppendString(b, s.id)
	b = append(b, `,"type":"message","role":"assistant","model":`...)
	b = protocol.AppendString(b, s.model)
	b = append(b, `,"content":[`...)
	n := 0
	for _, bl := range s.blocks {
		if !bl.started {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		switch bl.kind {
		case kindText:
			b = append(b, `{"type":"text","text":`...)
			b = protocol.AppendString(b, bl.text.String())
		case kindThinking:
			b = append(b, `{"type":"thinking","thinking":`...)
			b = protocol.AppendString(b, bl.text.String())
			b = append(b, `,"signature":`...)
			b = protocol.AppendString(b, bl.sig)
		case kindRedacted:
			b = append(b, `{"type":"redacted_thinking","data":`...)
			b = protocol.AppendString(b, bl.sig)
		case kindTool:
			b = append(b, `{"type":"tool_use","id":`...)
			b = protocol.AppendString(b, bl.id)
			b = append(b, `,"name":`...)
			b = protocol.AppendString(b, bl.name)
			b = append(b, `,"input":`...)
			b = append(b, toolInput(bl.text.String())...)
		}
		b = append(b, '}')
	}
	b = append(b, `],"stop_reason":`...)
	if s.stop == "" {
		b = append(b, "null"...)
	} else {
		b = protocol.AppendString(b, s.stop)
	}
	b = append(b, `,"stop_sequence":null,"usage":`...)
	b = appendUsage(b, s.usage)
	return append(b, '}')
}

// toolInput is a tool call's input object: its arguments compacted when
// they are a JSON object, else {"input": TEXT}.
func toolInput(args string) []byte {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) == nil && obj != nil {
		out, err := json.Marshal(json.RawMessage(args))
		if err == nil {
			return out
		}
	}
	if strings.TrimSpace(args) == "" {
		return []byte("{}")
	}
	return append(protocol.AppendString([]byte(`{"input":`), args), '}')
}
