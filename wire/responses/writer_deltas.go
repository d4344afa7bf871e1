package responses

import (
	"github.com/harnessflow/harnessflow/protocol"
)

// The Writer's delta events: text, reasoning and tool-call arguments as they stream.

func (s *Writer) openMessage() (*item, error) {
	if it := s.cur; it != nil && it.isAssistantMessage() {
		return it, nil
	}
	if err := s.closeCurrent(); err != nil {
		return nil, err
	}
	return s.open(&protocol.Message{Role: protocol.RoleAssistant}, true)
}

func (s *Writer) openReasoning() (*item, error) {
	if it := s.cur; it != nil && it.typ == protocol.TypeReasoning {
		return it, nil
	}
	if err := s.closeCurrent(); err != nil {
		return nil, err
	}
	return s.open(&protocol.Reasoning{}, true)
}

func (s *Writer) textDelta(delta, soFar string) error {
	if delta == "" {
		return nil
	}
	it, err := s.openMessage()
	if err != nil {
		return err
	}
	it.text.add(delta, soFar)
	it.streamed = true
	if s.w == nil {
		s.seq++
		s.events++
		return nil
	}
	b := s.begin("response.output_text.delta")
	b = s.appendIndex(b, it, true)
	b = append(b, `,"content_index":0,"delta":`...)
	b = protocol.AppendString(b, delta)
	b = append(b, `,"logprobs":[]`...)
	return s.end("response.output_text.delta", b)
}

func (s *Writer) textDone(it *item, idx int, text string) error {
	b := s.begin("response.output_text.done")
	b = s.appendIndex(b, it, true)
	b = appendIntField(b, "content_index", idx)
	b = appendStrField(b, "text", text)
	b = append(b, `,"logprobs":[]`...)
	return s.end("response.output_text.done", b)
}

func (s *Writer) contentPart(typ string, it *item, idx int, partType, text string) error {
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

func (s *Writer) reasoningDelta(delta, soFar string, kind byte, idx int) error {
	if delta == "" {
		return nil
	}
	it, err := s.openReasoning()
	if err != nil {
		return err
	}
	p, err := s.openPart(it, kind, idx)
	if err != nil {
		return err
	}
	return s.partDelta(it, p, delta, soFar)
}

// openPart makes the part of a reasoning item that arrives with index idx
// the open one: the open part, if another, is closed, and the part is
// announced the first time (reasoning_summary_part.added, or
// content_part.added of a reasoning_text part) under the next index of its
// kind.
func (s *Writer) openPart(it *item, kind byte, idx int) (*part, error) {
	if p := it.open; p != nil && p.kind == kind && p.src == idx {
		return p, nil
	}
	if err := s.closePart(it, nil); err != nil {
		return nil, err
	}
	p := &part{kind: kind, src: idx}
	if q := it.findPart(kind, idx); q != nil {
		// Deltas of a part closed already: a part of their own.
		q.split, p.split = true, true
	}
	for _, q := range it.parts {
		if q.kind == kind {
			p.n++
		}
	}
	it.parts = append(it.parts, p)
	it.open = p
	if kind == 's' {
		b := s.begin("response.reasoning_summary_part.added")
		b = s.appendIndex(b, it, true)
		b = appendIntField(b, "summary_index", p.n)
		b = append(b, `,"part":{"type":"summary_text","text":""}`...)
		return p, s.end("response.reasoning_summary_part.added", b)
	}
	return p, s.reasoningPart("response.content_part.added", it, p.n, "")
}

func (s *Writer) reasoningPart(typ string, it *item, idx int, text string) error {
	b := s.begin(typ)
	b = s.appendIndex(b, it, true)
	b = appendIntField(b, "content_index", idx)
	b = append(b, `,"part":{"type":"reasoning_text","text":`...)
	b = protocol.AppendString(b, text)
	b = append(b, '}')
	return s.end(typ, b)
}

// partDelta writes a delta of part p; soFar is the producer's claim of
// the part's text so far (protocol.ResponseEvent.SoFar), "" when none.
func (s *Writer) partDelta(it *item, p *part, delta, soFar string) error {
	p.text.add(delta, soFar)
	if s.w == nil {
		s.seq++
		s.events++
		return nil
	}
	typ, field := "response.reasoning_text.delta", "content_index"
	if p.kind == 's' {
		typ, field = "response.reasoning_summary_text.delta", "summary_index"
	}
	b := s.begin(typ)
	b = s.appendIndex(b, it, true)
	b = appendIntField(b, field, p.n)
	b = appendStrField(b, "delta", delta)
	return s.end(typ, b)
}

// closePart closes the open reasoning part: its text done event and its
// part done event, with its text (partText: the done item's when it comes
// while the part is open). The done item of the reasoning lists each part
// with the text its done events carried.
func (s *Writer) closePart(it *item, r *protocol.Reasoning) error {
	p := it.open
	if p == nil {
		return nil
	}
	it.open = nil
	text := partText(p, r)
	p.done, p.final = true, text
	p.text = deltaText{} // final has the text now
	if p.kind == 's' {
		b := s.begin("response.reasoning_summary_text.done")
		b = s.appendIndex(b, it, true)
		b = appendIntField(b, "summary_index", p.n)
		b = appendStrField(b, "text", text)
		if err := s.end("response.reasoning_summary_text.done", b); err != nil {
			return err
		}
		b = s.begin("response.reasoning_summary_part.done")
		b = s.appendIndex(b, it, true)
		b = appendIntField(b, "summary_index", p.n)
		b = append(b, `,"part":{"type":"summary_text","text":`...)
		b = protocol.AppendString(b, text)
		b = append(b, '}')
		return s.end("response.reasoning_summary_part.done", b)
	}
	b := s.begin("response.reasoning_text.done")
	b = s.appendIndex(b, it, true)
	b = appendIntField(b, "content_index", p.n)
	b = appendStrField(b, "text", text)
	if err := s.end("response.reasoning_text.done", b); err != nil {
		return err
	}
	return s.reasoningPart("response.content_part.done", it, p.n, text)
}

func (s *Writer) toolDelta(ev protocol.ResponseEvent) error {
	if ev.Delta == "" {
		return nil
	}
	it := s.cur
	if it == nil || !(ev.ItemID != "" && it.src == ev.ItemID || ev.CallID != "" && it.callID == ev.CallID) {
		return nil // not the open item: unknown, or closed already
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
	it.text.add(ev.Delta, ev.SoFar)
	it.streamed = true
	b := s.begin(typ)
	b = s.appendIndex(b, it, true)
	b = appendStrField(b, "delta", ev.Delta)
	return s.end(typ, b)
}
