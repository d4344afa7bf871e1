package sinks

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/harnessflow/harnessflow/protocol"
)

// ResponsesSSEOptions configure a [ResponsesSSE] writer.
type ResponsesSSEOptions struct {
	// ResponseID is the id of the response object in every terminal and
	// lifecycle event; "" generates "resp_" followed by 24 random hex digits.
	ResponseID string
	// Model is the model named in the response objects until the stream
	// names one (a server_model event); "" omits it.
	Model string
	// CreatedAt is the response's created_at (Unix seconds); 0 means now.
	CreatedAt int64
	// Flush is called after every event. nil: w's own Flush() error or
	// http.Flusher method when it has one, else nothing.
	Flush func() error
}

// ResponsesSSE is a pipeline.Sink[protocol.ResponseEvent] that writes the
// events as an OpenAI Responses API stream (server-sent events, FORMATS §3),
// the stream Codex consumes:
//
//	response.created, response.in_progress
//	per item: response.output_item.added
//	  message:   response.content_part.added, response.output_text.delta*,
//	             response.output_text.done, response.content_part.done
//	  reasoning: response.reasoning_summary_part.added, response.reasoning_summary_text.delta*,
//	             response.reasoning_text.delta*, and their .done events
//	  function_call:    response.function_call_arguments.delta*, .done
//	  custom_tool_call: response.custom_tool_call_input.delta*, .done
//	response.output_item.done
//	response.completed | response.incomplete | response.failed
//
// Every payload carries "type" (also the SSE event name) and an increasing
// "sequence_number" from 0; every event is flushed as soon as it is written.
//
// Items keep the id they arrive with; an item without one gets a stable id
// (msg_…, rs_…, fc_…, ctc_…) used for its whole lifecycle and in the
// terminal response's output. Text deltas go to the latest open assistant
// message and reasoning deltas to the latest open reasoning item; one is
// opened (added) when none is. An output_item.done is matched to its open
// item by id, else by type (and call_id for tool calls); a done item that
// was never added gets its added event first. A completed event closes the
// items still open with what their deltas accumulated, then ends the stream
// with response.completed whose output lists every done item, or with
// response.incomplete when the finish reason is "length" (reason
// max_output_tokens) or "content_filter". A failed event ends it with
// response.failed {code, message}; items still open are left unfinished.
// Events after the terminal one are ignored, and so are tool input deltas
// of unknown items and event types with no Responses form.
//
// A write error stops the sink: Accept returns it (wrapped) from then on.
type ResponsesSSE struct {
	w         io.Writer
	flush     func() error
	id        string
	model     string
	createdAt int64
	idBase    string

	seq      int64
	events   int
	created  bool
	ended    bool
	terminal string
	err      error
	buf      []byte

	items []*sseItem
}

// sseItem is the state of one output item.
type sseItem struct {
	index    int
	id       string
	assigned bool // id assigned here
	typ      string
	role     string
	callID   string
	name     string
	done     bool
	doneJSON []byte

	added    protocol.ResponseItem // the item as announced
	text     strings.Builder       // message text, function arguments or custom input
	streamed bool                  // text came in deltas
	// reasoning: accumulated text per content index and per summary index
	content   map[int]*strings.Builder
	summaries map[int]*strings.Builder
}

// NewResponsesSSE returns a writer of Responses SSE events to w.
func NewResponsesSSE(w io.Writer, opts ResponsesSSEOptions) *ResponsesSSE {
	s := &ResponsesSSE{w: w, flush: opts.Flush, id: opts.ResponseID, model: opts.Model, createdAt: opts.CreatedAt}
	if s.id == "" {
		s.id = NewResponseID()
	}
	if s.createdAt == 0 {
		s.createdAt = time.Now().Unix()
	}
	s.idBase = strings.TrimPrefix(s.id, "resp_")
	if s.flush == nil {
		switch f := w.(type) {
		case interface{ Flush() error }:
			s.flush = f.Flush
		case http.Flusher:
			s.flush = func() error { f.Flush(); return nil }
		}
	}
	return s
}

// NewResponseID returns a fresh response id: "resp_" and 24 random hex
// digits.
func NewResponseID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "resp_" + hex.EncodeToString(b[:])
}

// ResponseID returns the id of the response object.
func (s *ResponsesSSE) ResponseID() string { return s.id }

// Events returns how many SSE events were written.
func (s *ResponsesSSE) Events() int { return s.events }

// Ended reports whether the terminal event (response.completed,
// response.incomplete or response.failed) was written.
func (s *ResponsesSSE) Ended() bool { return s.ended }

// Terminal returns the type of the terminal event written
// ("response.completed", "response.incomplete" or "response.failed"), or ""
// while the stream has not ended.
func (s *ResponsesSSE) Terminal() string { return s.terminal }

// Started reports whether any event was written.
func (s *ResponsesSSE) Started() bool { return s.events > 0 }

// Err returns the write error that stopped the sink, if any.
func (s *ResponsesSSE) Err() error { return s.err }

// Fail ends the stream with response.failed for e, unless it already ended
// (then it does nothing). Use it when the run producing the events fails.
func (s *ResponsesSSE) Fail(e *protocol.StreamError) error {
	if s.ended {
		return s.err
	}
	return s.Accept(protocol.Failed(e))
}

// Accept writes the SSE events of one ResponseEvent.
func (s *ResponsesSSE) Accept(ev protocol.ResponseEvent) error {
	if s.err != nil {
		return s.err
	}
	if s.ended {
		return nil
	}
	if ev.Type == protocol.EventServerModel {
		if ev.Model != "" {
			s.model = ev.Model
		}
		return nil
	}
	if err := s.ensureCreated(); err != nil {
		return err
	}
	switch ev.Type {
	case protocol.EventCreated:
		return nil
	case protocol.EventOutputItemAdded:
		if ev.Item == nil {
			return nil
		}
		_, err := s.open(ev.Item)
		return err
	case protocol.EventOutputItemDone:
		if ev.Item == nil {
			return nil
		}
		return s.done(ev.Item)
	case protocol.EventOutputTextDelta:
		return s.textDelta(ev.Delta)
	case protocol.EventReasoningContentDelta:
		return s.reasoningDelta(ev.Delta, ev.ContentIndex, false)
	case protocol.EventReasoningSummaryDelta:
		return s.reasoningDelta(ev.Delta, ev.SummaryIndex, true)
	case protocol.EventReasoningSummaryPartAdded:
		it, err := s.openReasoning(false)
		if err != nil {
			return err
		}
		_, err = s.summaryPart(it, ev.SummaryIndex)
		return err
	case protocol.EventToolCallInputDelta:
		return s.toolDelta(ev)
	case protocol.EventCompleted:
		return s.complete(ev)
	case protocol.EventFailed:
		return s.failed(ev.Error)
	}
	return nil
}

// ---------------------------------------------------------------------------
// items

func (s *ResponsesSSE) ensureCreated() error {
	if s.created {
		return nil
	}
	s.created = true
	for _, typ := range []string{"response.created", "response.in_progress"} {
		b := s.begin(typ)
		b = append(b, `,"response":`...)
		b = s.appendResponse(b, "in_progress", nil)
		if err := s.end(typ, b); err != nil {
			return err
		}
	}
	return nil
}

// latest returns the latest open item of type typ (and role, for messages).
func (s *ResponsesSSE) latest(typ, role string) *sseItem {
	for i := len(s.items) - 1; i >= 0; i-- {
		it := s.items[i]
		if !it.done && it.typ == typ && (role == "" || it.role == role) {
			return it
		}
	}
	return nil
}

func (s *ResponsesSSE) byID(id string) *sseItem {
	for _, it := range s.items {
		if it.id == id {
			return it
		}
	}
	return nil
}

// open announces a new item (output_item.added and, for an assistant
// message, its first content part).
func (s *ResponsesSSE) open(item protocol.ResponseItem) (*sseItem, error) {
	it := &sseItem{index: len(s.items), typ: item.ItemType()}
	it.id = itemID(item)
	if it.id == "" {
		it.id, it.assigned = s.newID(it.typ, it.index), true
	}
	switch v := item.(type) {
	case *protocol.Message:
		it.role = v.Role
	case *protocol.FunctionCall:
		it.callID, it.name = v.CallID, v.Name
	case *protocol.CustomToolCall:
		it.callID, it.name = v.CallID, v.Name
	}
	it.added = announced(item, it.id)
	s.items = append(s.items, it)

	b := s.begin("response.output_item.added")
	b = s.appendIndex(b, it, false)
	b = append(b, `,"item":`...)
	b, err := protocol.AppendItem(b, it.added)
	if err != nil {
		return nil, s.encodeErr("response.output_item.added", err)
	}
	if err := s.end("response.output_item.added", b); err != nil {
		return nil, err
	}
	if it.isAssistantMessage() {
		if err := s.contentPart("response.content_part.added", it, 0, protocol.ContentOutputText, ""); err != nil {
			return nil, err
		}
	}
	return it, nil
}

func (it *sseItem) isAssistantMessage() bool {
	return it.typ == protocol.TypeMessage && it.role == protocol.RoleAssistant
}

// match finds the open item a done item closes.
func (s *ResponsesSSE) match(item protocol.ResponseItem) *sseItem {
	id := itemID(item)
	if id != "" {
		if it := s.byID(id); it != nil {
			if it.done {
				return nil
			}
			return it
		}
	}
	typ := item.ItemType()
	var role, callID string
	switch v := item.(type) {
	case *protocol.Message:
		role = v.Role
	case *protocol.FunctionCall:
		callID = v.CallID
	case *protocol.CustomToolCall:
		callID = v.CallID
	}
	for i := len(s.items) - 1; i >= 0; i-- {
		it := s.items[i]
		if it.done || it.typ != typ || (id != "" && !it.assigned) {
			continue
		}
		switch typ {
		case protocol.TypeMessage:
			if it.role == role {
				return it
			}
		case protocol.TypeReasoning:
			return it
		case protocol.TypeFunctionCall, protocol.TypeCustomToolCall:
			if it.callID == callID {
				return it
			}
		}
	}
	return nil
}

func (s *ResponsesSSE) done(item protocol.ResponseItem) error {
	it := s.match(item)
	if it == nil {
		var err error
		if it, err = s.open(item); err != nil {
			return err
		}
	}
	return s.finish(it, item)
}

// finish writes the closing events of an item and its output_item.done.
func (s *ResponsesSSE) finish(it *sseItem, item protocol.ResponseItem) error {
	it.done = true
	final := completedItem(item, it.id)
	switch v := final.(type) {
	case *protocol.Message:
		if it.isAssistantMessage() {
			if err := s.finishMessage(it, v); err != nil {
				return err
			}
		}
	case *protocol.Reasoning:
		if err := s.finishReasoning(it, v); err != nil {
			return err
		}
	case *protocol.FunctionCall:
		if err := s.finishTool(it, "response.function_call_arguments", "arguments", v.Name, v.Arguments); err != nil {
			return err
		}
	case *protocol.CustomToolCall:
		if err := s.finishTool(it, "response.custom_tool_call_input", "input", "", v.Input); err != nil {
			return err
		}
	}
	itemJSON, err := protocol.AppendItem(nil, final)
	if err != nil {
		return s.encodeErr("response.output_item.done", err)
	}
	it.doneJSON = itemJSON
	b := s.begin("response.output_item.done")
	b = s.appendIndex(b, it, false)
	b = append(b, `,"item":`...)
	b = append(b, itemJSON...)
	return s.end("response.output_item.done", b)
}

func (s *ResponsesSSE) finishMessage(it *sseItem, m *protocol.Message) error {
	if len(m.Content) == 0 {
		text := it.text.String()
		if err := s.textDone(it, 0, text); err != nil {
			return err
		}
		return s.contentPart("response.content_part.done", it, 0, protocol.ContentOutputText, text)
	}
	for i, c := range m.Content {
		if i > 0 {
			if err := s.contentPart("response.content_part.added", it, i, c.Type, ""); err != nil {
				return err
			}
		}
		if c.Type == protocol.ContentOutputText {
			if err := s.textDone(it, i, c.Text); err != nil {
				return err
			}
		}
		if err := s.contentPart("response.content_part.done", it, i, c.Type, c.Text); err != nil {
			return err
		}
	}
	return nil
}

func (s *ResponsesSSE) finishReasoning(it *sseItem, r *protocol.Reasoning) error {
	for _, idx := range sortedKeys(it.content) {
		text := it.content[idx].String()
		if idx >= 0 && idx < len(r.Content) {
			text = r.Content[idx].Text
		}
		b := s.begin("response.reasoning_text.done")
		b = s.appendIndex(b, it, true)
		b = appendIntField(b, "content_index", idx)
		b = appendStrField(b, "text", text)
		if err := s.end("response.reasoning_text.done", b); err != nil {
			return err
		}
	}
	for _, idx := range sortedKeys(it.summaries) {
		text := it.summaries[idx].String()
		if idx >= 0 && idx < len(r.Summary) {
			text = r.Summary[idx].Text
		}
		b := s.begin("response.reasoning_summary_text.done")
		b = s.appendIndex(b, it, true)
		b = appendIntField(b, "summary_index", idx)
		b = appendStrField(b, "text", text)
		if err := s.end("response.reasoning_summary_text.done", b); err != nil {
			return err
		}
		b = s.begin("response.reasoning_summary_part.done")
		b = s.appendIndex(b, it, true)
		b = appendIntField(b, "summary_index", idx)
		b = append(b, `,"part":{"type":"summary_text","text":`...)
		b = protocol.AppendString(b, text)
		b = append(b, '}')
		if err := s.end("response.reasoning_summary_part.done", b); err != nil {
			return err
		}
	}
	return nil
}

// finishTool writes the final argument delta (when none was streamed) and
// the .done event of a function or custom tool call.
func (s *ResponsesSSE) finishTool(it *sseItem, prefix, field, name, value string) error {
	if !it.streamed && value != "" {
		typ := prefix + ".delta"
		b := s.begin(typ)
		b = s.appendIndex(b, it, true)
		b = appendStrField(b, "delta", value)
		if err := s.end(typ, b); err != nil {
			return err
		}
	}
	typ := prefix + ".done"
	b := s.begin(typ)
	b = s.appendIndex(b, it, true)
	if name != "" {
		b = appendStrField(b, "name", name)
	}
	b = appendStrField(b, field, value)
	return s.end(typ, b)
}

// ---------------------------------------------------------------------------
// deltas

func (s *ResponsesSSE) openMessage() (*sseItem, error) {
	if it := s.latest(protocol.TypeMessage, protocol.RoleAssistant); it != nil {
		return it, nil
	}
	return s.open(&protocol.Message{Role: protocol.RoleAssistant})
}

// openReasoning returns the latest open reasoning item, or opens one: with
// an empty reasoning_text content part when raw reasoning comes (as the
// chat wire's reasoning items are announced), with no content for a
// summary.
func (s *ResponsesSSE) openReasoning(raw bool) (*sseItem, error) {
	if it := s.latest(protocol.TypeReasoning, ""); it != nil {
		return it, nil
	}
	r := &protocol.Reasoning{}
	if raw {
		r.Content = []protocol.ReasoningContent{{Type: protocol.ReasoningTypeText}}
	}
	return s.open(r)
}

func (s *ResponsesSSE) textDelta(delta string) error {
	if delta == "" {
		return nil
	}
	it, err := s.openMessage()
	if err != nil {
		return err
	}
	it.text.WriteString(delta)
	it.streamed = true
	b := s.begin("response.output_text.delta")
	b = s.appendIndex(b, it, true)
	b = append(b, `,"content_index":0,"delta":`...)
	b = protocol.AppendString(b, delta)
	b = append(b, `,"logprobs":[]`...)
	return s.end("response.output_text.delta", b)
}

func (s *ResponsesSSE) textDone(it *sseItem, idx int, text string) error {
	b := s.begin("response.output_text.done")
	b = s.appendIndex(b, it, true)
	b = appendIntField(b, "content_index", idx)
	b = appendStrField(b, "text", text)
	b = append(b, `,"logprobs":[]`...)
	return s.end("response.output_text.done", b)
}

func (s *ResponsesSSE) contentPart(typ string, it *sseItem, idx int, partType, text string) error {
	b := s.begin(typ)
	b = s.appendIndex(b, it, true)
	b = appendIntField(b, "content_index", idx)
	b = append(b, `,"part":{"type":`...)
	b = protocol.AppendString(b, partType)
	b = appendStrField(b, "text", text)
	if partType == protocol.ContentOutputText {
		b = append(b, `,"annotations":[]`...)
	}
	b = append(b, '}')
	return s.end(typ, b)
}

func (s *ResponsesSSE) reasoningDelta(delta string, idx int, summary bool) error {
	if delta == "" {
		return nil
	}
	it, err := s.openReasoning(!summary)
	if err != nil {
		return err
	}
	var acc *strings.Builder
	typ, field := "response.reasoning_text.delta", "content_index"
	if summary {
		typ, field = "response.reasoning_summary_text.delta", "summary_index"
		if acc, err = s.summaryPart(it, idx); err != nil {
			return err
		}
	} else {
		if it.content == nil {
			it.content = map[int]*strings.Builder{}
		}
		if acc = it.content[idx]; acc == nil {
			acc = new(strings.Builder)
			it.content[idx] = acc
		}
	}
	acc.WriteString(delta)
	b := s.begin(typ)
	b = s.appendIndex(b, it, true)
	b = appendIntField(b, field, idx)
	b = appendStrField(b, "delta", delta)
	return s.end(typ, b)
}

// summaryPart opens summary part idx of a reasoning item once
// (response.reasoning_summary_part.added) and returns its accumulator.
func (s *ResponsesSSE) summaryPart(it *sseItem, idx int) (*strings.Builder, error) {
	if acc := it.summaries[idx]; acc != nil {
		return acc, nil
	}
	if it.summaries == nil {
		it.summaries = map[int]*strings.Builder{}
	}
	acc := new(strings.Builder)
	it.summaries[idx] = acc
	b := s.begin("response.reasoning_summary_part.added")
	b = s.appendIndex(b, it, true)
	b = appendIntField(b, "summary_index", idx)
	b = append(b, `,"part":{"type":"summary_text","text":""}`...)
	return acc, s.end("response.reasoning_summary_part.added", b)
}

func (s *ResponsesSSE) toolDelta(ev protocol.ResponseEvent) error {
	if ev.Delta == "" {
		return nil
	}
	var it *sseItem
	if ev.ItemID != "" {
		it = s.byID(ev.ItemID)
	}
	if it == nil && ev.CallID != "" {
		for i := len(s.items) - 1; i >= 0 && it == nil; i-- {
			if s.items[i].callID == ev.CallID {
				it = s.items[i]
			}
		}
	}
	if it == nil || it.done {
		return nil
	}
	var typ string
	switch it.typ {
	case protocol.TypeFunctionCall:
		typ = "response.function_call_arguments.delta"
	case protocol.TypeCustomToolCall:
		typ = "response.custom_tool_call_input.delta"
	default:
		return nil
	}
	it.text.WriteString(ev.Delta)
	it.streamed = true
	b := s.begin(typ)
	b = s.appendIndex(b, it, true)
	b = appendStrField(b, "delta", ev.Delta)
	return s.end(typ, b)
}

// ---------------------------------------------------------------------------
// terminal events

func (s *ResponsesSSE) complete(ev protocol.ResponseEvent) error {
	for _, it := range s.items {
		if !it.done {
			if err := s.finish(it, it.accumulated()); err != nil {
				return err
			}
		}
	}
	typ, status := "response.completed", "completed"
	reason := ""
	switch ev.FinishReason {
	case protocol.FinishLength:
		typ, status, reason = "response.incomplete", "incomplete", "max_output_tokens"
	case protocol.FinishContentFilter:
		typ, status, reason = "response.incomplete", "incomplete", "content_filter"
	}
	s.ended, s.terminal = true, typ
	b := s.begin(typ)
	b = append(b, `,"response":`...)
	b = s.appendResponse(b, status, func(b []byte) []byte {
		if reason != "" {
			b = append(b, `,"incomplete_details":{"reason":`...)
			b = protocol.AppendString(b, reason)
			b = append(b, '}')
		}
		b = append(b, `,"usage":`...)
		b = appendUsage(b, ev.TokenUsage)
		if ev.EndTurn != nil {
			b = append(b, `,"end_turn":`...)
			b = strconv.AppendBool(b, *ev.EndTurn)
		}
		return b
	})
	return s.end(typ, b)
}

func (s *ResponsesSSE) failed(e *protocol.StreamError) error {
	code, msg := "server_error", "upstream stream failed"
	if e != nil {
		switch {
		case e.Code != "":
			code = e.Code
		case e.Kind != "":
			code = e.Kind
		}
		if e.Message != "" {
			msg = e.Message
		}
		if e.RetryAfterMS > 0 && !strings.Contains(strings.ToLower(msg), "try again in") {
			msg += " Please try again in " + strconv.FormatInt(e.RetryAfterMS, 10) + "ms."
		}
	}
	s.ended, s.terminal = true, "response.failed"
	b := s.begin("response.failed")
	b = append(b, `,"response":`...)
	b = s.appendResponse(b, "failed", func(b []byte) []byte {
		b = append(b, `,"error":{"code":`...)
		b = protocol.AppendString(b, code)
		b = appendStrField(b, "message", msg)
		b = append(b, `},"usage":null`...)
		return b
	})
	return s.end("response.failed", b)
}

// accumulated builds the done item of an item still open at completion from
// the item as announced and what its deltas brought.
func (it *sseItem) accumulated() protocol.ResponseItem {
	switch v := it.added.(type) {
	case *protocol.Message:
		if it.isAssistantMessage() {
			c := *v
			c.Content = []protocol.ContentItem{protocol.OutputText(it.text.String())}
			return &c
		}
	case *protocol.Reasoning:
		c := *v
		if len(it.content) > 0 {
			c.Content = nil
			for _, idx := range sortedKeys(it.content) {
				c.Content = append(c.Content, protocol.ReasoningContent{Type: protocol.ReasoningTypeText, Text: it.content[idx].String()})
			}
		}
		if len(it.summaries) > 0 {
			c.Summary = nil
			for _, idx := range sortedKeys(it.summaries) {
				c.Summary = append(c.Summary, protocol.SummaryText{Type: protocol.SummaryTypeText, Text: it.summaries[idx].String()})
			}
		}
		return &c
	case *protocol.FunctionCall:
		c := *v
		c.Arguments = it.text.String()
		return &c
	case *protocol.CustomToolCall:
		c := *v
		c.Input = it.text.String()
		return &c
	}
	return it.added
}

// ---------------------------------------------------------------------------
// encoding

// begin starts an event: the SSE event line and the payload's type and
// sequence number.
func (s *ResponsesSSE) begin(typ string) []byte {
	b := append(s.buf[:0], "event: "...)
	b = append(b, typ...)
	b = append(b, "\ndata: {\"type\":"...)
	b = protocol.AppendString(b, typ)
	b = append(b, `,"sequence_number":`...)
	return strconv.AppendInt(b, s.seq, 10)
}

// end closes the payload, writes the event and flushes it.
func (s *ResponsesSSE) end(typ string, b []byte) error {
	b = append(b, "}\n\n"...)
	s.buf = b
	s.seq++
	if _, err := s.w.Write(b); err != nil {
		s.err = fmt.Errorf("responses sse: write event %d (%s): %w", s.seq-1, typ, err)
		return s.err
	}
	s.events++
	if s.flush != nil {
		if err := s.flush(); err != nil {
			s.err = fmt.Errorf("responses sse: flush event %d (%s): %w", s.seq-1, typ, err)
			return s.err
		}
	}
	return nil
}

func (s *ResponsesSSE) encodeErr(typ string, err error) error {
	s.err = fmt.Errorf("responses sse: encode %s: %w", typ, err)
	return s.err
}

// appendIndex appends item_id (when withID) and output_index.
func (s *ResponsesSSE) appendIndex(b []byte, it *sseItem, withID bool) []byte {
	if withID {
		b = appendStrField(b, "item_id", it.id)
	}
	return appendIntField(b, "output_index", it.index)
}

// appendResponse appends a response object: id, object, created_at, status,
// model, output (the done items; [] while in progress), then what more
// adds.
func (s *ResponsesSSE) appendResponse(b []byte, status string, more func([]byte) []byte) []byte {
	b = append(b, `{"id":`...)
	b = protocol.AppendString(b, s.id)
	b = append(b, `,"object":"response","created_at":`...)
	b = strconv.AppendInt(b, s.createdAt, 10)
	b = appendStrField(b, "status", status)
	if s.model != "" {
		b = appendStrField(b, "model", s.model)
	}
	b = append(b, `,"output":[`...)
	n := 0
	if status != "in_progress" {
		for _, it := range s.items {
			if it.doneJSON != nil {
				if n > 0 {
					b = append(b, ',')
				}
				b = append(b, it.doneJSON...)
				n++
			}
		}
	}
	b = append(b, ']')
	if more != nil {
		b = more(b)
	}
	return append(b, '}')
}

func appendUsage(b []byte, u *protocol.TokenUsage) []byte {
	if u == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"input_tokens":`...)
	b = strconv.AppendInt(b, u.InputTokens, 10)
	b = append(b, `,"input_tokens_details":{"cached_tokens":`...)
	b = strconv.AppendInt(b, u.CachedInputTokens, 10)
	b = append(b, `},"output_tokens":`...)
	b = strconv.AppendInt(b, u.OutputTokens, 10)
	b = append(b, `,"output_tokens_details":{"reasoning_tokens":`...)
	b = strconv.AppendInt(b, u.ReasoningOutputTokens, 10)
	b = append(b, `},"total_tokens":`...)
	b = strconv.AppendInt(b, u.TotalTokens, 10)
	return append(b, '}')
}

func appendStrField(b []byte, k, v string) []byte {
	b = append(b, ',', '"')
	b = append(b, k...)
	b = append(b, '"', ':')
	return protocol.AppendString(b, v)
}

func appendIntField(b []byte, k string, v int) []byte {
	b = append(b, ',', '"')
	b = append(b, k...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, int64(v), 10)
}

func sortedKeys(m map[int]*strings.Builder) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// newID returns the id of an item that arrived without one.
func (s *ResponsesSSE) newID(typ string, index int) string {
	prefix := "item"
	switch typ {
	case protocol.TypeMessage:
		prefix = "msg"
	case protocol.TypeReasoning:
		prefix = "rs"
	case protocol.TypeFunctionCall:
		prefix = "fc"
	case protocol.TypeCustomToolCall:
		prefix = "ctc"
	case protocol.TypeLocalShellCall:
		prefix = "lsh"
	}
	return prefix + "_" + s.idBase + "_" + strconv.Itoa(index)
}

// ---------------------------------------------------------------------------
// item copies (the caller's items are never modified)

var (
	emptyAnnotations = json.RawMessage(`[]`)
	statusInProgress = json.RawMessage(`"in_progress"`)
	statusCompleted  = json.RawMessage(`"completed"`)
)

// itemID returns an item's id, "" when it has none (or cannot have one).
func itemID(item protocol.ResponseItem) string {
	switch v := item.(type) {
	case *protocol.Message:
		return v.ID
	case *protocol.Reasoning:
		return v.ID
	case *protocol.FunctionCall:
		return v.ID
	case *protocol.CustomToolCall:
		return v.ID
	case *protocol.LocalShellCall:
		return v.ID
	case *protocol.FunctionCallOutput:
		return v.ID
	case *protocol.CustomToolCallOutput:
		return v.ID
	case *protocol.ToolSearchCall:
		return v.ID
	case *protocol.ToolSearchOutput:
		return v.ID
	case *protocol.WebSearchCall:
		return v.ID
	case *protocol.OtherItem:
		var head struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(v.Raw, &head) == nil {
			return head.ID
		}
	}
	return ""
}

// withStatus returns a copy of extra with "status" set when it has none.
func withStatus(extra protocol.Extra, status json.RawMessage) protocol.Extra {
	if _, ok := extra["status"]; ok {
		return extra
	}
	out := make(protocol.Extra, len(extra)+1)
	for k, v := range extra {
		out[k] = v
	}
	out["status"] = status
	return out
}

// withAnnotations returns content with "annotations":[] on every
// output_text part that lacks them (copying only when needed).
func withAnnotations(content []protocol.ContentItem) []protocol.ContentItem {
	out := slices.Clone(content)
	for i := range out {
		c := &out[i]
		if c.Type != protocol.ContentOutputText {
			continue
		}
		if _, ok := c.Extra["annotations"]; ok {
			continue
		}
		extra := make(protocol.Extra, len(c.Extra)+1)
		for k, v := range c.Extra {
			extra[k] = v
		}
		extra["annotations"] = emptyAnnotations
		c.Extra = extra
	}
	return out
}

// announced returns the item of an output_item.added event: a copy with
// the id set, an assistant message with one empty output_text part, tool
// calls with empty arguments/input, and status in_progress.
func announced(item protocol.ResponseItem, id string) protocol.ResponseItem {
	switch v := item.(type) {
	case *protocol.Message:
		c := *v
		c.ID = id
		if c.Role == protocol.RoleAssistant {
			c.Content = withAnnotations([]protocol.ContentItem{protocol.OutputText("")})
		}
		c.Extra = withStatus(c.Extra, statusInProgress)
		return &c
	case *protocol.FunctionCall:
		c := *v
		c.ID, c.Arguments = id, ""
		c.Extra = withStatus(c.Extra, statusInProgress)
		return &c
	case *protocol.CustomToolCall:
		c := *v
		c.ID, c.Input = id, ""
		if c.Status == "" {
			c.Status = "in_progress"
		}
		return &c
	}
	return setID(item, id)
}

// completedItem returns the item of an output_item.done event: a copy with
// the id set, annotations on output_text parts and status completed where
// the Responses API has one.
func completedItem(item protocol.ResponseItem, id string) protocol.ResponseItem {
	switch v := item.(type) {
	case *protocol.Message:
		c := *v
		c.ID = id
		c.Content = withAnnotations(c.Content)
		c.Extra = withStatus(c.Extra, statusCompleted)
		return &c
	case *protocol.FunctionCall:
		c := *v
		c.ID = id
		c.Extra = withStatus(c.Extra, statusCompleted)
		return &c
	case *protocol.CustomToolCall:
		c := *v
		c.ID = id
		if c.Status == "" {
			c.Status = "completed"
		}
		return &c
	}
	return setID(item, id)
}

// setID returns a copy of item with its id set (items of unmodelled types
// are returned as they are).
func setID(item protocol.ResponseItem, id string) protocol.ResponseItem {
	switch v := item.(type) {
	case *protocol.Message:
		c := *v
		c.ID = id
		return &c
	case *protocol.Reasoning:
		c := *v
		c.ID = id
		return &c
	case *protocol.FunctionCall:
		c := *v
		c.ID = id
		return &c
	case *protocol.CustomToolCall:
		c := *v
		c.ID = id
		return &c
	case *protocol.LocalShellCall:
		c := *v
		c.ID = id
		return &c
	case *protocol.FunctionCallOutput:
		c := *v
		c.ID = id
		return &c
	case *protocol.CustomToolCallOutput:
		c := *v
		c.ID = id
		return &c
	case *protocol.ToolSearchCall:
		c := *v
		c.ID = id
		return &c
	case *protocol.ToolSearchOutput:
		c := *v
		c.ID = id
		return &c
	case *protocol.WebSearchCall:
		c := *v
		c.ID = id
		return &c
	}
	return item
}
