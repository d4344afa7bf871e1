package chatin

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/harnessflow/harnessflow/protocol"
)

// Reasoning field names of the writer's deltas and message (Options.ReasoningField).
const (
	ReasoningContent = "reasoning_content" // DeepSeek's, Kimi's, vLLM's and most servers'
	ReasoningAlias   = "reasoning"         // OpenRouter's and Ollama's
	ReasoningBoth    = "both"              // both fields, the same text
)

// Options configures a [Writer].
type Options struct {
	// ID is the completion's id ("" makes one: chatcmpl- and 24 hex digits).
	ID string
	// Model is the model named in every chunk (the client's, until the
	// stream's server_model event names the upstream's).
	Model string
	// Created is the chunks' created time (0: now).
	Created int64
	// IncludeUsage writes the usage chunk (stream_options.include_usage);
	// every other chunk then carries "usage":null.
	IncludeUsage bool
	// ReasoningField names the reasoning field: ReasoningContent (""),
	// ReasoningAlias or ReasoningBoth.
	ReasoningField string
	// Flush, when set, is called after every event written.
	Flush func() error
}

type call struct {
	index int
	id    string
	name  string
	args  strings.Builder
	sent  bool // the opening delta (id, type, name) went out
	done  bool
}

// Writer writes the chat.completion.chunk stream of a sequence of
// [protocol.ResponseEvent]s to an io.Writer, or, with a nil io.Writer,
// only builds the chat.completion for [Writer.AppendCompletion]. Use it as
// a pipeline sink (Accept); Fail ends a stream whose run failed.
//
// Not safe for concurrent use.
type Writer struct {
	w       io.Writer
	opts    Options
	id      string
	model   string
	created int64
	buf     []byte
	frame   []byte // the SSE frame being written, reused
	events  int
	err     error

	roleSent bool
	ended    bool
	failure  *protocol.StreamError

	text      strings.Builder // streamed content
	reasoning strings.Builder
	msgText   strings.Builder // content of the current assistant message (for its done)
	msgOpen   bool
	reasonCur strings.Builder // reasoning of the current reasoning item
	calls     []*call
	byItem    map[string]*call
	finish    string
	usage     *protocol.TokenUsage
}

// NewWriter returns a writer of the chunk stream to w (nil: none).
func NewWriter(w io.Writer, opts Options) *Writer {
	s := &Writer{w: w, opts: opts, id: opts.ID, model: opts.Model, created: opts.Created, byItem: map[string]*call{}}
	if s.id == "" {
		var b [12]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail
		s.id = "chatcmpl-" + hex.EncodeToString(b[:])
	}
	if s.created == 0 {
		s.created = time.Now().Unix()
	}
	return s
}

// Events returns how many SSE events were written (with a nil io.Writer:
// would have been).
func (s *Writer) Events() int { return s.events }

// Ended reports whether the stream ended ([DONE] or an error).
func (s *Writer) Ended() bool { return s.ended }

// Failure returns the error of a failed stream, nil otherwise.
func (s *Writer) Failure() *protocol.StreamError { return s.failure }

// Err returns the write error that stopped the writer, if any.
func (s *Writer) Err() error { return s.err }

// FinishReason returns the finish_reason the completion ended with.
func (s *Writer) FinishReason() string { return s.finish }

// Fail ends the stream with an error for e, unless it already ended.
func (s *Writer) Fail(e *protocol.StreamError) error {
	if s.ended {
		return s.err
	}
	return s.Accept(protocol.Failed(e))
}

// Accept writes the chunks of one ResponseEvent.
func (s *Writer) Accept(ev protocol.ResponseEvent) error {
	if s.err != nil || s.ended {
		return s.err
	}
	switch ev.Type {
	case protocol.EventServerModel:
		if ev.Model != "" && !s.roleSent {
			s.model = ev.Model
		}
	case protocol.EventOutputItemAdded:
		switch it := ev.Item.(type) {
		case *protocol.Message:
			if it.Role == protocol.RoleAssistant {
				s.msgOpen, s.msgText = true, strings.Builder{}
			}
		case *protocol.Reasoning:
			s.reasonCur = strings.Builder{}
		case *protocol.FunctionCall:
			s.opening(s.callOf(it.ID, it.CallID, it.Name))
		case *protocol.CustomToolCall:
			s.callOf(it.ID, it.CallID, it.Name)
		}
	case protocol.EventOutputTextDelta:
		s.content(ev.Delta)
	case protocol.EventReasoningContentDelta, protocol.EventReasoningSummaryDelta:
		s.reasoningDelta(ev.Delta)
	case protocol.EventReasoningSummaryPartAdded:
		if ev.SummaryIndex > 0 && s.reasonCur.Len() > 0 {
			s.reasoningDelta("\n\n")
		}
	case protocol.EventToolCallInputDelta:
		c := s.byItem[ev.ItemID]
		if c == nil && ev.CallID != "" {
			c = s.byItem[ev.CallID]
		}
		if c != nil && c.sent && !c.done {
			s.argsDelta(c, ev.Delta)
		}
	case protocol.EventOutputItemDone:
		s.done(ev.Item)
	case protocol.EventCompleted:
		s.completed(ev)
	case protocol.EventFailed:
		s.failed(ev.Error)
	}
	return s.err
}

func (s *Writer) callOf(itemID, callID, name string) *call {
	if c := s.byItem[itemID]; itemID != "" && c != nil {
		return c
	}
	if c := s.byItem[callID]; callID != "" && c != nil {
		return c
	}
	id := callID
	if id == "" {
		id = itemID
	}
	if id == "" {
		id = "call_" + strings.TrimPrefix(s.id, "chatcmpl-") + "_" + strconv.Itoa(len(s.calls))
	}
	c := &call{index: len(s.calls), id: id, name: name}
	s.calls = append(s.calls, c)
	if itemID != "" {
		s.byItem[itemID] = c
	}
	if callID != "" {
		s.byItem[callID] = c
	}
	return c
}

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
		if rest, ok := strings.CutPrefix(full.String(), s.msgText.String()); ok {
			s.content(rest)
		}
		s.msgOpen, s.msgText = false, strings.Builder{}
	case *protocol.Reasoning:
		var full strings.Builder
		for _, c := range it.Content {
			full.WriteString(c.Text)
		}
		if full.Len() == 0 {
			for i, c := range it.Summary {
				if i > 0 {
					full.WriteString("\n\n")
				}
				full.WriteString(c.Text)
			}
		}
		if rest, ok := strings.CutPrefix(full.String(), s.reasonCur.String()); ok {
			s.reasoningDelta(rest)
		}
		s.reasonCur = strings.Builder{}
	case *protocol.FunctionCall:
		s.finishCall(s.callOf(it.ID, it.CallID, it.Name), it.Arguments)
	case *protocol.CustomToolCall:
		s.finishCall(s.callOf(it.ID, it.CallID, it.Name), `{"input":`+string(protocol.AppendString(nil, it.Input))+`}`)
	}
}

func (s *Writer) finishCall(c *call, args string) {
	if c.done {
		return
	}
	s.opening(c)
	if args == "" && c.args.Len() == 0 {
		args = "{}" // an empty input is the empty object, as the tool schema has it
	}
	if rest, ok := strings.CutPrefix(args, c.args.String()); ok {
		s.argsDelta(c, rest)
	}
	c.done = true
}

// chunk starts a chunk whose delta follows: the caller appends the delta's
// members and calls endChunk.
func (s *Writer) chunk() []byte {
	b := append(s.buf[:0], `{"id":`...)
	b = protocol.AppendString(b, s.id)
	b = append(b, `,"object":"chat.completion.chunk","created":`...)
	b = strconv.AppendInt(b, s.created, 10)
	b = append(b, `,"model":`...)
	b = protocol.AppendString(b, s.model)
	b = append(b, `,"choices":[{"index":0,"delta":{`...)
	if !s.roleSent {
		s.roleSent = true
		b = append(b, `"role":"assistant",`...)
	}
	return b
}

// endChunk closes a chunk's delta with finish (null when "") and writes it.
func (s *Writer) endChunk(b []byte, finish string) {
	if b[len(b)-1] == ',' {
		b = b[:len(b)-1]
	}
	b = append(b, `},"logprobs":null,"finish_reason":`...)
	b = appendStrOrNull(b, finish)
	b = append(b, "}]"...)
	if s.opts.IncludeUsage {
		b = append(b, `,"usage":null`...)
	}
	b = append(b, '}')
	s.buf = b
	s.write(b)
}

func (s *Writer) content(text string) {
	if text == "" {
		return
	}
	s.text.WriteString(text)
	if s.msgOpen {
		s.msgText.WriteString(text)
	}
	b := s.chunk()
	b = append(b, `"content":`...)
	b = protocol.AppendString(b, text)
	s.endChunk(b, "")
}

func (s *Writer) reasoningDelta(text string) {
	if text == "" {
		return
	}
	s.reasoning.WriteString(text)
	s.reasonCur.WriteString(text)
	b := s.chunk()
	b = s.appendReasoning(b, text)
	s.endChunk(b, "")
}

func (s *Writer) appendReasoning(b []byte, text string) []byte {
	switch s.opts.ReasoningField {
	case ReasoningAlias:
		b = append(b, `"reasoning":`...)
		b = protocol.AppendString(b, text)
	case ReasoningBoth:
		b = append(b, `"reasoning_content":`...)
		b = protocol.AppendString(b, text)
		b = append(b, `,"reasoning":`...)
		b = protocol.AppendString(b, text)
	default:
		b = append(b, `"reasoning_content":`...)
		b = protocol.AppendString(b, text)
	}
	return b
}

// opening writes a call's first delta: index, id, type, name and empty
// arguments, as the API streams it.
func (s *Writer) opening(c *call) {
	if c.sent {
		return
	}
	c.sent = true
	b := s.chunk()
	b = append(b, `"tool_calls":[{"index":`...)
	b = strconv.AppendInt(b, int64(c.index), 10)
	b = append(b, `,"id":`...)
	b = protocol.AppendString(b, c.id)
	b = append(b, `,"type":"function","function":{"name":`...)
	b = protocol.AppendString(b, c.name)
	b = append(b, `,"arguments":""}}]`...)
	s.endChunk(b, "")
}

func (s *Writer) argsDelta(c *call, text string) {
	if text == "" {
		return
	}
	c.args.WriteString(text)
	b := s.chunk()
	b = append(b, `"tool_calls":[{"index":`...)
	b = strconv.AppendInt(b, int64(c.index), 10)
	b = append(b, `,"function":{"arguments":`...)
	b = protocol.AppendString(b, text)
	b = append(b, "}}]"...)
	s.endChunk(b, "")
}

// FinishReasonOf is the finish_reason of a completed event: its own when
// set (tool_calls when it says stop but calls were made), else tool_calls
// or stop.
func FinishReasonOf(finish string, toolCalls bool) string {
	if toolCalls && (finish == "" || finish == protocol.FinishStop) {
		return protocol.FinishToolCalls
	}
	if finish == "" {
		return protocol.FinishStop
	}
	return finish
}

func (s *Writer) completed(ev protocol.ResponseEvent) {
	for _, c := range s.calls {
		if !c.done {
			s.finishCall(c, c.args.String())
		}
	}
	s.finish = FinishReasonOf(ev.FinishReason, len(s.calls) > 0)
	s.usage = ev.TokenUsage
	s.endChunk(s.chunk(), s.finish)
	if s.opts.IncludeUsage {
		b := append(s.buf[:0], `{"id":`...)
		b = protocol.AppendString(b, s.id)
		b = append(b, `,"object":"chat.completion.chunk","created":`...)
		b = strconv.AppendInt(b, s.created, 10)
		b = append(b, `,"model":`...)
		b = protocol.AppendString(b, s.model)
		b = append(b, `,"choices":[],"usage":`...)
		b = appendUsage(b, s.usage)
		b = append(b, '}')
		s.buf = b
		s.write(b)
	}
	s.ended = true
	s.write([]byte("[DONE]"))
}

// appendUsage writes OpenAI's usage object.
func appendUsage(b []byte, u *protocol.TokenUsage) []byte {
	var in, out, total, cached, reasoning int64
	if u != nil {
		in, out, total, cached, reasoning = u.InputTokens, u.OutputTokens, u.TotalTokens, u.CachedInputTokens, u.ReasoningOutputTokens
		if total == 0 {
			total = in + out
		}
	}
	b = append(b, `{"prompt_tokens":`...)
	b = strconv.AppendInt(b, in, 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, out, 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, total, 10)
	b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
	b = strconv.AppendInt(b, cached, 10)
	b = append(b, `},"completion_tokens_details":{"reasoning_tokens":`...)
	b = strconv.AppendInt(b, reasoning, 10)
	return append(b, "}}"...)
}

// failed ends the stream with an error payload (no [DONE]: the stream did
// not complete; the openai SDKs raise it as an API error).
func (s *Writer) failed(e *protocol.StreamError) {
	if e == nil {
		e = &protocol.StreamError{Kind: protocol.ErrKindUpstream, Message: "the response failed"}
	}
	s.failure = e
	s.ended = true
	msg := e.Message
	if msg == "" {
		msg = "the upstream stream failed"
	}
	typ := e.Type
	if typ == "" {
		typ = ErrorType(e.HTTPStatus)
		if e.HTTPStatus == 0 {
			typ = "server_error"
		}
	}
	b := AppendError(s.buf[:0], msg, typ, "", e.Code)
	s.buf = b
	s.write(b)
}

// write writes one "data:" event.
func (s *Writer) write(data []byte) {
	s.events++
	if s.w == nil || s.err != nil {
		return
	}
	frame := append(s.frame[:0], "data: "...)
	frame = append(frame, data...)
	frame = append(frame, "\n\n"...)
	s.frame = frame
	if _, err := s.w.Write(frame); err != nil {
		s.err = err
		return
	}
	if s.opts.Flush != nil {
		if err := s.opts.Flush(); err != nil {
			s.err = err
		}
	}
}

// AppendCompletion appends the non-streaming chat.completion body.
func (s *Writer) AppendCompletion(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = protocol.AppendString(b, s.id)
	b = append(b, `,"object":"chat.completion","created":`...)
	b = strconv.AppendInt(b, s.created, 10)
	b = append(b, `,"model":`...)
	b = protocol.AppendString(b, s.model)
	b = append(b, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	if s.text.Len() == 0 && len(s.calls) > 0 {
		b = append(b, "null"...)
	} else {
		b = protocol.AppendString(b, s.text.String())
	}
	if s.reasoning.Len() > 0 {
		b = append(b, ',')
		b = s.appendReasoning(b, s.reasoning.String())
	}
	if len(s.calls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i, c := range s.calls {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = protocol.AppendString(b, c.id)
			b = append(b, `,"type":"function","function":{"name":`...)
			b = protocol.AppendString(b, c.name)
			b = append(b, `,"arguments":`...)
			b = protocol.AppendString(b, c.args.String())
			b = append(b, "}}"...)
		}
		b = append(b, ']')
	}
	b = append(b, `,"refusal":null},"logprobs":null,"finish_reason":`...)
	b = appendStrOrNull(b, s.finish)
	b = append(b, `}],"usage":`...)
	b = appendUsage(b, s.usage)
	return append(b, '}')
}
