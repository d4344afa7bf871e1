package responses

import (
	"slices"
	"strconv"

	"github.com/harnessflow/harnessflow/protocol"
)

// The Writer's output items: opened (added), closed and finished (done).

func (s *Writer) ensureCreated() error {
	if s.created {
		return nil
	}
	s.created = true
	for _, typ := range []string{"response.created", "response.in_progress"} {
		b := s.begin(typ)
		b = append(b, `,"response":`...)
		b, _ = s.appendResponse(b, StatusInProgress) // no items: nothing to fail
		if err := s.end(typ, b); err != nil {
			return err
		}
	}
	return nil
}

// clientID returns the id the client sees for an item of type typ that
// arrived with id src, at output index index.
func (s *Writer) clientID(src, typ string, index int) string {
	if s.used == nil {
		s.used = map[string]bool{}
	}
	id := src
	if !s.keepIDs || id == "" || s.used[id] {
		head := src
		if head == "" {
			head = protocol.ItemIDPrefix(typ)
		}
		id = head + "_" + s.idBase + "_" + strconv.Itoa(index)
	}
	s.used[id] = true
	return id
}

// open announces a new item: output_item.added and, for an assistant
// message, its output_text content part. implicit marks an item opened
// because a delta came while none of its type was open.
func (s *Writer) open(src protocol.ResponseItem, implicit bool) (*item, error) {
	it := &item{index: len(s.items), typ: src.ItemType(), src: protocol.ItemID(src)}
	it.id = s.clientID(it.src, it.typ, it.index)
	it.cont = implicit && s.closedEarly[it.typ]
	switch v := src.(type) {
	case *protocol.Message:
		it.role = v.Role
	case *protocol.FunctionCall:
		it.callID, it.name = v.CallID, v.Name
	case *protocol.CustomToolCall:
		it.callID, it.name = v.CallID, v.Name
	}
	it.added = announced(src, it.id)
	s.items = append(s.items, it)
	s.cur = it

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

func (it *item) isAssistantMessage() bool {
	return it.typ == protocol.TypeMessage && it.role == protocol.RoleAssistant
}

// matches reports whether done item d (of type typ, arrived with id src)
// closes item it.
func (it *item) matches(d protocol.ResponseItem, typ, src string) bool {
	if it.typ != typ {
		return false
	}
	if src != "" && it.src != "" {
		return it.src == src
	}
	switch v := d.(type) {
	case *protocol.Message:
		return it.role == v.Role
	case *protocol.FunctionCall:
		return it.callID == v.CallID
	case *protocol.CustomToolCall:
		return it.callID == v.CallID
	}
	return true
}

func (s *Writer) done(d protocol.ResponseItem) error {
	typ, src := d.ItemType(), protocol.ItemID(d)
	if it := s.cur; it != nil && it.matches(d, typ, src) {
		return s.finish(it, d)
	}
	if i := slices.IndexFunc(s.items, func(it *item) bool { return it.early && it.src == src && it.typ == typ }); src != "" && i >= 0 {
		s.items[i].early = false // closed already, when the next item opened
		return nil
	}
	if err := s.closeCurrent(); err != nil {
		return err
	}
	it, err := s.open(d, false)
	if err != nil {
		return err
	}
	return s.finish(it, d)
}

// closeCurrent closes the open item with what its deltas accumulated (its
// done event, if it comes, is dropped).
func (s *Writer) closeCurrent() error {
	it := s.cur
	if it == nil {
		return nil
	}
	if it.src != "" {
		if s.closedEarly == nil {
			s.closedEarly = map[string]bool{}
		}
		s.closedEarly[it.typ], it.early = true, true
	}
	return s.finish(it, it.accumulated(nil))
}

// finish writes the closing events of an item and its output_item.done.
func (s *Writer) finish(it *item, d protocol.ResponseItem) error {
	if it.cont {
		// The continuation of an item closed early: its done item holds
		// the whole item, this one only what came after the split.
		d = it.accumulated(d)
	}
	it.done = true
	if s.cur == it {
		s.cur = nil
	}
	final := completedItem(d, it.id)
	if m, ok := final.(*protocol.Message); ok && it.isAssistantMessage() && len(m.Content) == 0 {
		c := *m
		c.Content = withAnnotations([]protocol.ContentItem{protocol.OutputText(it.text.String())})
		final = &c
	}
	// Each closing event of a long item carries its text, and the terminal
	// response object every done item: one buffer big enough for the
	// largest, allocated now, serves them all (see reserve).
	it.size = itemSize(final)
	s.reserve(s.outSize + it.size)
	switch v := final.(type) {
	case *protocol.Message:
		if it.isAssistantMessage() {
			if err := s.finishMessage(it, v); err != nil {
				return err
			}
		}
	case *protocol.Reasoning:
		r, err := s.finishReasoning(it, v)
		if err != nil {
			return err
		}
		final = r
		it.size = itemSize(final) // the parts' texts may be the deltas'
		s.reserve(s.outSize + it.size)
	case *protocol.FunctionCall:
		if err := s.finishTool(it, "response.function_call_arguments", "arguments", v.Name, v.Arguments); err != nil {
			return err
		}
	case *protocol.CustomToolCall:
		if err := s.finishTool(it, "response.custom_tool_call_input", "input", "", v.Input); err != nil {
			return err
		}
	}
	// The item is encoded straight into the event. A short item's JSON is
	// kept for the response objects; a long one is encoded again for them
	// instead, since a copy would hold its text a second time.
	b := s.begin("response.output_item.done")
	b = s.appendIndex(b, it, false)
	b = append(b, `,"item":`...)
	start := len(b)
	b, err := protocol.AppendItem(b, final)
	if err != nil {
		return s.encodeErr("response.output_item.done", err)
	}
	it.final = final
	if len(b)-start <= keepJSONMax {
		it.doneJSON = slices.Clone(b[start:])
	}
	s.outSize += it.size
	it.text = deltaText{} // the done item has the text now
	return s.end("response.output_item.done", b)
}

func (s *Writer) finishMessage(it *item, m *protocol.Message) error {
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

// finishReasoning closes the open part, writes the parts the done item r
// has that were never opened (each opened, its whole text as one delta,
// closed: summaries, then content), and returns the done item: r with the
// parts in the order the client saw them.
func (s *Writer) finishReasoning(it *item, r *protocol.Reasoning) (*protocol.Reasoning, error) {
	if err := s.closePart(it, r); err != nil {
		return nil, err
	}
	for i, sum := range r.Summary {
		if it.findPart('s', i) == nil {
			if err := s.wholePart(it, r, 's', i, sum.Text); err != nil {
				return nil, err
			}
		}
	}
	for i, c := range r.Content {
		if it.findPart('c', i) == nil && (c.Type == protocol.ReasoningTypeText || c.Type == protocol.ReasoningTypeRawText) {
			if err := s.wholePart(it, r, 'c', i, c.Text); err != nil {
				return nil, err
			}
		}
	}
	final := *r
	final.Summary, final.Content = []protocol.SummaryText{}, []protocol.ReasoningContent{}
	for _, p := range it.parts {
		if p.kind == 's' {
			final.Summary = append(final.Summary, protocol.SummaryText{Type: protocol.SummaryTypeText, Text: p.final})
			continue
		}
		typ := protocol.ReasoningTypeText
		if p.src >= 0 && p.src < len(r.Content) && r.Content[p.src].Type != "" {
			typ = r.Content[p.src].Type
		}
		final.Content = append(final.Content, protocol.ReasoningContent{Type: typ, Text: p.final})
	}
	return &final, nil
}

// wholePart writes a reasoning part that came whole in the done item.
func (s *Writer) wholePart(it *item, r *protocol.Reasoning, kind byte, idx int, text string) error {
	p, err := s.openPart(it, kind, idx)
	if err != nil {
		return err
	}
	if text != "" {
		// The whole text in one delta: it is its own text so far.
		if err := s.partDelta(it, p, text, text); err != nil {
			return err
		}
	}
	return s.closePart(it, r)
}

// finishTool writes the final argument delta (when none was streamed) and
// the .done event of a function or custom tool call.
func (s *Writer) finishTool(it *item, prefix, field, name, value string) error {
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
