package responses

import (
	"io"
	"net/http"
	"slices"
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
	// soon as it has read it finds it kept. A non-nil fail ends the
	// response with response.failed carrying it instead (the items done so
	// far stay done): for a response the client expects kept that could
	// not be.
	Keep func(output []protocol.ResponseItem) (kept bool, fail *protocol.StreamError)
	// KeepItemIDs keeps the id an item arrives with when it is not empty
	// and not yet used in this response (for an upstream whose ids are
	// unique already: the Responses wire). Otherwise every item gets an id
	// of its own: the id it arrived with (the decoders' fixed ids, such as
	// "chat-message-1") or the Responses prefix of its type ("msg", "rs",
	// "fc", …), followed by the response id's random part and the item's
	// output index.
	KeepItemIDs bool
	// MaxText bounds the text one response may hold: message text, tool
	// call arguments and reasoning, counted as the deltas arrive, and the
	// done items' JSON (0: no bound). Past it the writer ends the stream
	// with response.failed (code CodeAnswerTooLarge) and Accept returns a
	// *TextLimitError, so that the run feeding it stops and its upstream is
	// closed: memory stays bounded by the limit, not by the answer.
	MaxText int
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
	keep      func([]protocol.ResponseItem) (bool, *protocol.StreamError)
	keepIDs   bool
	maxText   int // Options.MaxText
	held      int // bytes of the deltas accepted (for maxText)

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
		store: opts.Store, keep: opts.Keep, keepIDs: opts.KeepItemIDs, maxText: opts.MaxText, status: StatusInProgress}
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
	if s.maxText > 0 {
		switch ev.Type {
		case protocol.EventOutputTextDelta, protocol.EventReasoningContentDelta, protocol.EventReasoningSummaryDelta, protocol.EventToolCallInputDelta:
			if s.held += len(ev.Delta); s.held > s.maxText {
				return s.overLimit()
			}
		}
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
		if err := s.done(ev.Item); err != nil || s.maxText == 0 || s.outSize <= s.maxText {
			return err
		}
		return s.overLimit() // a done item bigger than its deltas, or with none
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
