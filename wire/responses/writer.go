package responses

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/harnessflow/harnessflow/protocol"
)

// Options configure a [Writer].
type Options struct {
	// ResponseID is the id of the response object in every lifecycle and
	// terminal event; "" generates one ([NewResponseID]).
	ResponseID string
	// Model is the model named in the response objects until the stream
	// names one (a server_model event).
	Model string
	// CreatedAt is the response's created_at (Unix seconds); 0 means now.
	CreatedAt int64
	// Flush is called after every event. nil: w's own Flush() error or
	// http.Flusher method when it has one, else nothing.
	Flush func() error
	// Request is the client's request: the response objects echo its
	// parameters (instructions, tools, tool_choice, parallel_tool_calls,
	// reasoning, text, temperature, top_p, metadata, …). nil: the values
	// of a request that set none.
	Request *protocol.ResponsesRequest
	// Store is the response objects' "store": whether the response will be
	// kept for later reference. Keep, when set, decides the terminal
	// object's.
	Store bool
	// Keep, when set, is called once, just before the terminal event of a
	// completed or incomplete response is written, with the output items
	// as the client receives them (ids included). It reports whether the
	// response was kept (the terminal object's "store"). Because it runs
	// before the terminal event, a client that refers to the response as
	// soon as it has read it finds it kept.
	Keep func(output []protocol.ResponseItem) bool
	// KeepItemIDs keeps the id an item arrives with when it is not empty
	// and not yet used in this response (for an upstream whose ids are
	// unique already: the Responses wire). Otherwise every item gets an id
	// of its own: the id it arrived with (the decoders' fixed ids, such as
	// "chat-message-1") or the Responses prefix of its type ("msg", "rs",
	// "fc", …), followed by the response id's random part and the item's
	// output index.
	KeepItemIDs bool
}

// Writer is a pipeline.Sink[protocol.ResponseEvent] that writes the events
// as an OpenAI Responses API stream (server-sent events: "event: TYPE" and
// one "data:" line per event), the stream Codex and the SDKs consume. See
// the package documentation for the order of the events.
//
// Every payload carries "type" (also the SSE event name) and an increasing
// "sequence_number" from 0; every event is flushed as soon as it is
// written.
//
// Text deltas go to the open assistant message and reasoning deltas to the
// open reasoning item; when the open item is another, it is closed first
// and one is opened. Reasoning parts (summary and raw content) are opened
// and closed one at a time too. An output_item.done closes the open item
// it matches — by the id it arrived with, else by type (and call_id for
// tool calls); the done item is authoritative for the item's content. A
// done item that was never added is announced first. A done item whose
// item the writer already closed (because another opened) is dropped. A
// completed event closes the open item with what its deltas accumulated,
// then ends the stream with response.completed, or with
// response.incomplete when the finish reason is "length" (reason
// max_output_tokens) or "content_filter". A failed event ends it with
// response.failed {code, message}; the open item is left unfinished.
// Events after the terminal one are ignored, and so are tool input deltas
// of unknown or closed items and event types with no Responses form.
//
// The writer keeps the text of the open item (and of each reasoning part)
// as the client received it, for the events that close it. When a delta
// carries SoFar (protocol.ResponseEvent.SoFar) and it proves to be exactly
// the deltas written so far, the writer keeps that string instead of a
// copy of its own; a SoFar that does not (a stage before the writer
// rewrote, held back or dropped deltas) is never used, so what SoFar
// claims never changes what is written.
//
// With a nil io.Writer nothing is written: the Writer only builds the
// Response object ([Writer.AppendResponse]), for a client that did not ask
// for a stream.
//
// A write error stops the sink: Accept returns it (wrapped) from then on.
type Writer struct {
	w         io.Writer
	flush     func() error
	id        string
	model     string
	createdAt int64
	idBase    string
	echo      echo
	store     bool
	keep      func([]protocol.ResponseItem) bool
	keepIDs   bool

	seq      int64
	events   int
	created  bool
	ended    bool
	terminal string
	err      error
	buf      []byte // the event being built, reused (see reserve)
	echoSize int    // bytes of the echoed request parameters in a response object
	outSize  int    // estimated bytes of the done items' JSON (see itemSize)

	// the terminal state
	status  string
	usage   *protocol.TokenUsage
	reason  string
	endTurn *bool
	failure *protocol.StreamError

	items       []*item
	cur         *item           // the open item (at most one)
	used        map[string]bool // ids given out
	closedEarly map[string]bool // types of items closed before their done arrived
}

// item is the state of one output item.
type item struct {
	index  int
	id     string // the id the client sees
	src    string // the id it arrived with ("" when none, or opened here)
	typ    string
	role   string
	callID string
	name   string
	cont   bool // opened by a delta after an item of its type was closed early
	early  bool // closed before its done item came (which is then dropped)
	done   bool

	added    protocol.ResponseItem // the item as announced
	final    protocol.ResponseItem // the item as done
	doneJSON []byte                // final's JSON when short (see keepJSONMax), for the response objects
	size     int                   // estimated bytes of final's JSON

	text     deltaText // message text, function arguments or custom input, from the deltas
	streamed bool      // text came in deltas

	// reasoning: every part opened, in order, and the open one
	parts []*part
	open  *part
}

// part is a summary or content part of a reasoning item.
type part struct {
	kind  byte // 's' summary, 'c' content
	src   int  // the index it arrived with
	n     int  // its index for the client: parts of a kind count from 0
	split bool // another part of the item arrived with the same index
	text  deltaText
	done  bool   // closed: its done events were written, with final
	final string // the text they carried
}

// deltaText is the text of an item or a reasoning part as the client
// received it: exactly the concatenation of the deltas written for it,
// whatever the stages before the writer did to them. It keeps that text
// without a copy of its own while each delta's SoFar (the producer's claim
// of the text so far, protocol.ResponseEvent.SoFar) proves to be the text
// so far followed by the delta, and in a builder of its own from the first
// delta that has no SoFar or one that does not prove itself (a stage
// rewrote, held back or dropped deltas and left SoFar as it was).
//
// Proving a SoFar: it must be as long as the text so far and the delta,
// end with the delta, and begin with the text so far. The last is free
// when it starts at the same address as the SoFar kept (the producer
// appended to the same buffer; the bytes there cannot have changed, since
// a SoFar is never modified) and costs one comparison of the text so far
// when it does not (the producer's buffer moved as it grew). Those
// comparisons are paid from a credit that every accepted byte adds to, so
// that checking stays linear in the text: a producer whose buffer grows by
// a fraction of itself each time stays well within it, and one whose SoFar
// moves with every delta runs out and is copied instead.
type deltaText struct {
	soFar  string // while !copied: soFar[base:] is the text
	base   int    // where the text begins in soFar
	credit int    // bytes the next prefix comparisons may take
	copied bool   // the text is in b from now on
	b      strings.Builder
}

const (
	// compareCredit is the credit a text starts with, and creditPerByte
	// what each accepted byte adds.
	compareCredit = 64 << 10
	creditPerByte = 8
)

// add appends delta (non-empty); soFar is its SoFar ("" when none).
func (t *deltaText) add(delta, soFar string) {
	if !t.copied {
		if t.accept(delta, soFar) {
			return
		}
		// From here on a copy of its own, starting with the text proven so far.
		t.copied = true
		t.b.WriteString(t.soFar[t.base:])
		t.soFar, t.base = "", 0
	}
	t.b.WriteString(delta)
}

// accept takes soFar as the text so far with delta appended if it proves
// to be that (see deltaText) and reports whether it did.
func (t *deltaText) accept(delta, soFar string) bool {
	if len(soFar) < len(delta) || soFar[len(soFar)-len(delta):] != delta {
		return false
	}
	if t.soFar == "" {
		// The first delta: the text is the end of soFar that is the delta.
		// (The producer's text may have begun in an earlier item, one the
		// writer closed before this one opened.)
		t.soFar, t.base, t.credit = soFar, len(soFar)-len(delta), compareCredit+creditPerByte*len(delta)
		return true
	}
	n := len(t.soFar)
	if len(soFar) != n+len(delta) {
		return false
	}
	if unsafe.StringData(soFar) != unsafe.StringData(t.soFar) {
		// Another address: compare the text so far, once, if the credit
		// allows it.
		m := n - t.base
		if m > t.credit || soFar[t.base:n] != t.soFar[t.base:] {
			return false
		}
		t.credit -= m
	}
	t.soFar = soFar
	t.credit += creditPerByte * len(delta)
	return true
}

// String returns the text.
func (t *deltaText) String() string {
	if t.copied {
		return t.b.String()
	}
	return t.soFar[t.base:]
}

// findPart returns the part of kind that arrived with index src, nil when
// none was opened.
func (it *item) findPart(kind byte, src int) *part {
	for _, p := range it.parts {
		if p.kind == kind && p.src == src {
			return p
		}
	}
	return nil
}

// partText is the text of a part: the done item's (r) for its index when
// it has one and the part is the only one of that index, else what the
// deltas brought.
func partText(p *part, r *protocol.Reasoning) string {
	if r != nil && !p.split {
		switch {
		case p.kind == 's' && p.src >= 0 && p.src < len(r.Summary):
			return r.Summary[p.src].Text
		case p.kind == 'c' && p.src >= 0 && p.src < len(r.Content):
			return r.Content[p.src].Text
		}
	}
	return p.text.String()
}

// NewWriter returns a writer of Responses events to w (nil: none; see
// [Writer]). A request whose parameters do not encode is echoed with the
// defaults; that is not an error of the stream.
func NewWriter(w io.Writer, opts Options) *Writer {
	s := &Writer{w: w, flush: opts.Flush, id: opts.ResponseID, model: opts.Model, createdAt: opts.CreatedAt,
		store: opts.Store, keep: opts.Keep, keepIDs: opts.KeepItemIDs, status: StatusInProgress}
	if s.id == "" {
		s.id = NewResponseID()
	}
	if s.createdAt == 0 {
		s.createdAt = time.Now().Unix()
	}
	s.idBase = strings.TrimPrefix(s.id, "resp_")
	s.echo, _ = newEcho(opts.Request) // an unencodable parameter is echoed as its default
	s.echoSize = len(s.echo.beforeModel) + len(s.echo.beforeStore) + len(s.echo.beforeUsage) + len(s.echo.afterUsage)
	if s.flush == nil && w != nil {
		switch f := w.(type) {
		case interface{ Flush() error }:
			s.flush = f.Flush
		case http.Flusher:
			s.flush = func() error { f.Flush(); return nil }
		}
	}
	return s
}

// ResponseID returns the id of the response object.
func (s *Writer) ResponseID() string { return s.id }

// Events returns how many events were written (with a nil io.Writer: how
// many would have been).
func (s *Writer) Events() int { return s.events }

// Ended reports whether the terminal event (response.completed,
// response.incomplete or response.failed) was written.
func (s *Writer) Ended() bool { return s.ended }

// Terminal returns the type of the terminal event written
// ("response.completed", "response.incomplete" or "response.failed"), or ""
// while the stream has not ended.
func (s *Writer) Terminal() string { return s.terminal }

// Failure returns the error of a response.failed stream, nil otherwise.
func (s *Writer) Failure() *protocol.StreamError { return s.failure }

// Started reports whether any event was written.
func (s *Writer) Started() bool { return s.events > 0 }

// Err returns the write error that stopped the sink, if any.
func (s *Writer) Err() error { return s.err }

// Output returns the items done so far, in output order, as the client
// received them (with their ids). The items must not be modified.
func (s *Writer) Output() []protocol.ResponseItem {
	out := make([]protocol.ResponseItem, 0, len(s.items))
	for _, it := range s.items {
		if it.final != nil {
			out = append(out, it.final)
		}
	}
	return out
}

// AppendResponse appends the current Response object: after the terminal
// event the one it carried (the JSON body of a non-streaming request).
func (s *Writer) AppendResponse(b []byte) []byte {
	if n := s.responseSize(); n >= reserveMin {
		b = slices.Grow(b, n)
	}
	// The done items encoded once already (finish), so they encode again.
	b, _ = s.appendResponse(b, s.status)
	return b
}

// Fail ends the stream with response.failed for e, unless it already ended
// (then it does nothing). Use it when the run producing the events fails.
func (s *Writer) Fail(e *protocol.StreamError) error {
	if s.ended {
		return s.err
	}
	return s.Accept(protocol.Failed(e))
}

// Accept writes the events of one ResponseEvent.
func (s *Writer) Accept(ev protocol.ResponseEvent) error {
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
	case protocol.EventOutputItemAdded:
		if nilItem(ev.Item) {
			return nil
		}
		if err := s.closeCurrent(); err != nil {
			return err
		}
		_, err := s.open(ev.Item, false)
		return err
	case protocol.EventOutputItemDone:
		if nilItem(ev.Item) {
			return nil
		}
		return s.done(ev.Item)
	case protocol.EventOutputTextDelta:
		return s.textDelta(ev.Delta, ev.SoFar)
	case protocol.EventReasoningContentDelta:
		return s.reasoningDelta(ev.Delta, ev.SoFar, 'c', ev.ContentIndex)
	case protocol.EventReasoningSummaryDelta:
		return s.reasoningDelta(ev.Delta, ev.SoFar, 's', ev.SummaryIndex)
	case protocol.EventReasoningSummaryPartAdded:
		it, err := s.openReasoning()
		if err != nil {
			return err
		}
		_, err = s.openPart(it, 's', ev.SummaryIndex)
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

// ---------------------------------------------------------------------------
// deltas

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

// ---------------------------------------------------------------------------
// terminal events

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
		s.store = s.keep(s.Output())
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

// ---------------------------------------------------------------------------
// encoding

// begin starts an event: the SSE event line and the payload's type and
// sequence number.
func (s *Writer) begin(typ string) []byte {
	b := append(s.buf[:0], "event: "...)
	b = append(b, typ...)
	b = append(b, "\ndata: {\"type\":"...)
	b = protocol.AppendString(b, typ)
	b = append(b, `,"sequence_number":`...)
	return strconv.AppendInt(b, s.seq, 10)
}

// end closes the payload, writes the event and flushes it.
func (s *Writer) end(typ string, b []byte) error {
	b = append(b, "}\n\n"...)
	s.buf = b
	s.seq++
	if s.w == nil {
		s.events++
		return nil
	}
	if _, err := s.w.Write(b); err != nil {
		s.err = fmt.Errorf("responses: write event %d (%s): %w", s.seq-1, typ, err)
		return s.err
	}
	s.events++
	if s.flush != nil {
		if err := s.flush(); err != nil {
			s.err = fmt.Errorf("responses: flush event %d (%s): %w", s.seq-1, typ, err)
			return s.err
		}
	}
	return nil
}

// reserveMin is the event size from which reserve allocates the event
// buffer up front; smaller events grow it as they are built.
const reserveMin = 64 << 10

// keepJSONMax is the size up to which a done item's JSON is kept for the
// response objects (copying it is cheaper than encoding it again, and it
// is small); a longer item is encoded again.
const keepJSONMax = 16 << 10

// reserve makes the event buffer hold, without growing, an event that
// carries items of about items bytes of JSON (itemSize) in a response
// object. Appending a long text to a short buffer grows it in steps, each
// a copy of the whole that is garbage until the next collection, and the
// closing events of a long item and the terminal one are each a little
// longer than the one before; so the buffer is allocated once, for the
// largest, before the first — exactly that size when it is much bigger
// than the buffer was (a long text), else twice the old size, so that
// many items adding up little by little do not each cost a new buffer.
// It is called between events only (the buffer's contents are dropped).
func (s *Writer) reserve(items int) {
	need := s.responseSizeFor(items)
	if need >= reserveMin && cap(s.buf) < need {
		s.buf = make([]byte, 0, max(need, 2*cap(s.buf)))
	}
}

// responseSize estimates the bytes of the response object with the done
// items.
func (s *Writer) responseSize() int { return s.responseSizeFor(s.outSize) }

// responseSizeFor estimates the bytes of an event carrying a response
// object with items of about items bytes: the items, the echoed request
// parameters and room for the rest (ids, model, usage, the event's own
// fields).
func (s *Writer) responseSizeFor(items int) int {
	return items + s.echoSize + len(s.id) + len(s.model) + 2048
}

// itemSize estimates the bytes of an item's JSON: its texts (what can be
// long) as JSON strings and room for its other fields.
func itemSize(item protocol.ResponseItem) int {
	n := 512
	switch v := item.(type) {
	case *protocol.Message:
		for _, c := range v.Content {
			n += 256 + quotedSize(c.Text)
		}
	case *protocol.Reasoning:
		for _, p := range v.Summary {
			n += 64 + quotedSize(p.Text)
		}
		for _, p := range v.Content {
			n += 64 + quotedSize(p.Text)
		}
		if v.EncryptedContent != nil {
			n += quotedSize(*v.EncryptedContent)
		}
	case *protocol.FunctionCall:
		n += quotedSize(v.Arguments) + quotedSize(v.EncryptedFunctionArgs)
	case *protocol.CustomToolCall:
		n += quotedSize(v.Input)
	}
	return n
}

// quotedSize estimates the bytes of s as a JSON string: its bytes, the
// quotes, and for a long one a byte more for each of the escapes texts are
// full of (newline, tab, carriage return, quote, backslash), counted.
// Rarer escapes are longer; a text made of them makes the buffer grow once
// more. A short one (too short to make an event reserve a buffer alone) is
// not counted: an eighth more is room enough.
func quotedSize(s string) int {
	n := len(s) + 2
	if len(s) < reserveMin/2 {
		return n + len(s)/8
	}
	const escaped = "\n\t\r\"\\"
	for i := range len(escaped) {
		n += strings.Count(s, escaped[i:i+1])
	}
	return n + len(s)/1024
}

func (s *Writer) encodeErr(typ string, err error) error {
	s.err = fmt.Errorf("responses: encode %s: %w", typ, err)
	return s.err
}

// appendIndex appends item_id (when withID) and output_index.
func (s *Writer) appendIndex(b []byte, it *item, withID bool) []byte {
	if withID {
		b = appendStrField(b, "item_id", it.id)
	}
	return appendIntField(b, "output_index", it.index)
}

// appendResponse appends the Response object in status: the output (the
// done items; [] while in progress), the terminal state and the echoed
// request parameters, in the order the API writes them. An item that does
// not encode (it did when it was done, so only one modified since) is left
// out and reported.
func (s *Writer) appendResponse(b []byte, status string) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = protocol.AppendString(b, s.id)
	b = append(b, `,"object":"response","created_at":`...)
	b = strconv.AppendInt(b, s.createdAt, 10)
	b = appendStrField(b, "status", status)
	b = append(b, `,"background":false,"error":`...)
	if f := s.failure; f != nil && status == StatusFailed {
		b = append(b, `{"code":`...)
		b = protocol.AppendString(b, f.Code)
		b = appendStrField(b, "message", f.Message)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"incomplete_details":`...)
	if s.reason != "" && status == StatusIncomplete {
		b = append(b, `{"reason":`...)
		b = protocol.AppendString(b, s.reason)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, s.echo.beforeModel...)
	b = appendStrField(b, "model", s.model)
	b = append(b, `,"output":[`...)
	n := 0
	var err error
	if status != StatusInProgress {
		for _, it := range s.items {
			if it.final == nil {
				continue
			}
			mark := len(b)
			if n > 0 {
				b = append(b, ',')
			}
			if it.doneJSON != nil {
				b = append(b, it.doneJSON...)
				n++
				continue
			}
			// A long item encoded once (finish) and is not modified, so it
			// encodes again, to the same bytes; should it not, it is left
			// out and the object stays valid JSON.
			var e error
			if b, e = protocol.AppendItem(b, it.final); e != nil {
				b = b[:mark]
				if err == nil {
					err = fmt.Errorf("output item %d: %w", it.index, e)
				}
				continue
			}
			n++
		}
	}
	b = append(b, ']')
	b = append(b, s.echo.beforeStore...)
	b = append(b, `,"store":`...)
	b = strconv.AppendBool(b, s.store)
	b = append(b, s.echo.beforeUsage...)
	b = append(b, `,"usage":`...)
	if status == StatusCompleted || status == StatusIncomplete {
		b = appendUsage(b, s.usage)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, s.echo.afterUsage...)
	if s.endTurn != nil && status != StatusInProgress {
		b = append(b, `,"end_turn":`...)
		b = strconv.AppendBool(b, *s.endTurn)
	}
	return append(b, '}'), err
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

// ---------------------------------------------------------------------------
// item copies (the caller's items are never modified)

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

var emptyAnnotations = []byte(`[]`)

// announced returns the item of an output_item.added event: a copy with
// the client's id and status in_progress; an assistant message with no
// content (its part is announced by content_part.added), a reasoning item
// with no summary or content (announced part by part), tool calls with
// empty arguments/input.
func announced(item protocol.ResponseItem, id string) protocol.ResponseItem {
	item = protocol.WithItemID(item, id)
	switch v := item.(type) {
	case *protocol.Message:
		if v.Role == protocol.RoleAssistant {
			v.Content = []protocol.ContentItem{}
		}
	case *protocol.Reasoning:
		v.Summary, v.Content = []protocol.SummaryText{}, []protocol.ReasoningContent{}
	case *protocol.FunctionCall:
		v.Arguments = ""
	case *protocol.CustomToolCall:
		v.Input = ""
	}
	return protocol.WithStatus(item, protocol.StatusInProgress, false)
}

// nilItem reports whether an event's item is missing (nil, or a nil
// pointer of an item type): such an event is ignored.
func nilItem(it protocol.ResponseItem) bool {
	switch v := it.(type) {
	case nil:
		return true
	case *protocol.Message:
		return v == nil
	case *protocol.Reasoning:
		return v == nil
	case *protocol.FunctionCall:
		return v == nil
	case *protocol.CustomToolCall:
		return v == nil
	case *protocol.LocalShellCall:
		return v == nil
	case *protocol.FunctionCallOutput:
		return v == nil
	case *protocol.CustomToolCallOutput:
		return v == nil
	case *protocol.ToolSearchCall:
		return v == nil
	case *protocol.ToolSearchOutput:
		return v == nil
	case *protocol.WebSearchCall:
		return v == nil
	case *protocol.OtherItem:
		return v == nil
	}
	return false
}

// completedItem returns the item of an output_item.done event: a copy with
// the client's id, annotations on output_text parts and status completed
// where the Responses API has one.
func completedItem(item protocol.ResponseItem, id string) protocol.ResponseItem {
	item = protocol.WithItemID(item, id)
	if m, ok := item.(*protocol.Message); ok {
		m.Content = withAnnotations(m.Content)
	}
	return protocol.WithStatus(item, protocol.StatusCompleted, true)
}
