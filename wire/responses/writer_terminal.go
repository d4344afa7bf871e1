package responses

import (
	"strconv"
	"strings"

	"github.com/harnessflow/harnessflow/protocol"
)

// The Writer's terminal events: the completed, incomplete or failed response.

func (s *Writer) complete(ev protocol.ResponseEvent) error {
	if err := s.closeCurrent(); err != nil {
		return err
	}
	typ, status := EventCompleted, StatusCompleted
	switch ev.FinishReason {
	case protocol.FinishLength:
		typ, status, s.reason = EventIncomplete, StatusIncomplete, "max_output_tokens"
	case protocol.FinishContentFilter:
		typ, status, s.reason = EventIncomplete, StatusIncomplete, "content_filter"
	}
	s.usage, s.endTurn = ev.TokenUsage, ev.EndTurn
	if s.keep != nil {
		var fail *protocol.StreamError
		if s.store, fail = s.keep(s.Output()); fail != nil {
			s.endTurn = nil // a failed response has no end_turn
			return s.failed(fail)
		}
	}
	s.ended, s.terminal, s.status = true, typ, status
	return s.terminalEvent(typ, status)
}

func (s *Writer) failed(e *protocol.StreamError) error {
	f := protocol.StreamError{Kind: protocol.ErrKindUpstream, Code: "server_error", Message: "upstream stream failed"}
	if e != nil {
		f = *e
		if f.Code == "" {
			f.Code = f.Kind
		}
		if f.Code == "" {
			f.Code = "server_error"
		}
		if f.Message == "" {
			f.Message = "upstream stream failed"
		}
		if f.RetryAfterMS > 0 && !strings.Contains(strings.ToLower(f.Message), "try again in") {
			f.Message += " Please try again in " + strconv.FormatInt(f.RetryAfterMS, 10) + "ms."
		}
	}
	s.failure = &f
	s.ended, s.terminal, s.status, s.store = true, EventFailed, StatusFailed, false
	return s.terminalEvent(EventFailed, StatusFailed)
}

// terminalEvent writes the terminal event typ, carrying the response
// object in status, and lets go of the event buffer: nothing is written
// after it, and after a long text the buffer is as big as the text.
func (s *Writer) terminalEvent(typ, status string) error {
	s.reserve(s.outSize)
	b := s.begin(typ)
	b = append(b, `,"response":`...)
	b, err := s.appendResponse(b, status)
	if err != nil {
		return s.encodeErr(typ, err)
	}
	err = s.end(typ, b)
	s.buf = nil
	return err
}

// accumulated builds the done item of an item from the item as announced
// and what its deltas brought. base, when not nil, is the done item whose
// other fields (encrypted content, extras) are kept.
func (it *item) accumulated(base protocol.ResponseItem) protocol.ResponseItem {
	if base == nil || base.ItemType() != it.typ {
		base = it.added
	}
	switch v := base.(type) {
	case *protocol.Message:
		if it.isAssistantMessage() {
			c := *v
			c.Content = []protocol.ContentItem{protocol.OutputText(it.text.String())}
			return &c
		}
	case *protocol.Reasoning:
		// finishReasoning fills in the parts from the deltas.
		c := *v
		c.Content, c.Summary = []protocol.ReasoningContent{}, []protocol.SummaryText{}
		return &c
	case *protocol.FunctionCall:
		if it.streamed || v == it.added {
			c := *v
			c.Arguments = it.text.String()
			return &c
		}
	case *protocol.CustomToolCall:
		if it.streamed || v == it.added {
			c := *v
			c.Input = it.text.String()
			return &c
		}
	}
	return base
}
