package redact

import (
	"context"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
)

// Name is the node name of the response-direction redaction stage.
const Name = "redact.response"

// Node returns the response-direction redaction node (Name), a
// Stage[protocol.ResponseEvent, protocol.ResponseEvent] with fresh state per
// run. Insert it after the last protocol node, e.g.
//
//	g, err = g.InsertAfter("chat.finalize", redact.Node(r))  // or g.Append
func Node(r *Redactor) pipeline.Node {
	return pipeline.NewNode(Name, func() pipeline.Stage[protocol.ResponseEvent, protocol.ResponseEvent] {
		return NewResponseStage(r)
	}, pipeline.Describe("redact secrets in deltas and items (hold back only a possible secret's start)"))
}

// ResponseStage redacts a stream of ResponseEvents.
//
// Text deltas (output_text, reasoning_content, reasoning_summary,
// tool_call_input) go through one Stream per delta channel (type, index,
// item): a secret split over several deltas is caught, only the shortest
// tail that could begin a secret is held back, and held text leaves in a
// later delta of the same channel. A delta whose text is entirely held back
// is dropped. A channel is flushed (its held text emitted, redacted as the
// end of its text) just before the event that ends its item: the
// output_item.done of that item, or the output_item.added of the next item
// of the same kind (text deltas belong to the open message, reasoning deltas
// to the open reasoning item, tool_call_input deltas to the item with their
// id), and every channel before completed, failed, an unknown event type and
// at Finish. So no delta ever follows its item's done event, and deltas of
// another item (reasoning interleaved with text) do not cut a secret in two.
// Items of added/done events are redacted whole (Redactor.Item), as is a
// failed event's error message; a done item's text thus equals the
// concatenation of its redacted deltas.
//
//	in : delta "key sk-pro"  delta "j-abc…123 ok"  done(message)
//	out: delta "key "        delta "[REDACTED:api_key] ok"  done(message, redacted)
type ResponseStage struct {
	r     *Redactor
	chans []channel
}

type channel struct {
	tmpl protocol.ResponseEvent // the delta event, without its text
	st   Stream
	used bool
}

// NewResponseStage returns a fresh stage (one per stream) using r.
func NewResponseStage(r *Redactor) *ResponseStage { return &ResponseStage{r: r} }

var (
	_ pipeline.Stage[protocol.ResponseEvent, protocol.ResponseEvent] = (*ResponseStage)(nil)
	_ pipeline.Finisher[protocol.ResponseEvent]                      = (*ResponseStage)(nil)
)

func isDelta(t protocol.EventType) bool {
	switch t {
	case protocol.EventOutputTextDelta, protocol.EventReasoningContentDelta,
		protocol.EventReasoningSummaryDelta, protocol.EventToolCallInputDelta:
		return true
	}
	return false
}

func sameChannel(a, b *protocol.ResponseEvent) bool {
	return a.Type == b.Type && a.ContentIndex == b.ContentIndex && a.SummaryIndex == b.SummaryIndex &&
		a.ItemID == b.ItemID && a.CallID == b.CallID
}

// Push redacts one event; see ResponseStage.
func (s *ResponseStage) Push(_ context.Context, ev protocol.ResponseEvent, emit func(protocol.ResponseEvent)) error {
	if s.r == nil || len(s.r.dets) == 0 {
		emit(ev)
		return nil
	}
	if isDelta(ev.Type) {
		// What goes out is not what came in: the producer's text so far
		// (SoFar) no longer describes it.
		ev.SoFar = ""
		ch := s.channel(&ev)
		if out := ch.st.Push(ev.Delta); out != "" {
			ev.Delta = out
			emit(ev)
		}
		return nil
	}
	switch ev.Type {
	case protocol.EventCreated, protocol.EventServerModel, protocol.EventReasoningSummaryPartAdded:
		// Order-neutral: held text may follow them.
	case protocol.EventOutputItemAdded, protocol.EventOutputItemDone:
		s.flushItem(ev.Item, emit)
	default: // completed, failed, anything unknown
		s.flush(emit, func(*protocol.ResponseEvent) bool { return true })
	}
	emit(s.r.Event(ev))
	return nil
}

// Finish flushes every channel.
func (s *ResponseStage) Finish(_ context.Context, emit func(protocol.ResponseEvent)) error {
	s.flush(emit, func(*protocol.ResponseEvent) bool { return true })
	return nil
}

// flushItem flushes the channels whose deltas belong to item (or to the
// previous item of its kind, when a new one is added).
func (s *ResponseStage) flushItem(item protocol.ResponseItem, emit func(protocol.ResponseEvent)) {
	switch it := item.(type) {
	case *protocol.Message:
		s.flush(emit, func(e *protocol.ResponseEvent) bool { return e.Type == protocol.EventOutputTextDelta })
	case *protocol.Reasoning:
		s.flush(emit, func(e *protocol.ResponseEvent) bool {
			return e.Type == protocol.EventReasoningContentDelta || e.Type == protocol.EventReasoningSummaryDelta
		})
	case *protocol.CustomToolCall:
		s.flush(emit, func(e *protocol.ResponseEvent) bool {
			return e.Type == protocol.EventToolCallInputDelta &&
				((e.ItemID != "" && e.ItemID == it.ID) || (e.CallID != "" && e.CallID == it.CallID))
		})
	case nil:
		s.flush(emit, func(*protocol.ResponseEvent) bool { return true })
	default:
		s.flush(emit, func(e *protocol.ResponseEvent) bool { return e.Type == protocol.EventToolCallInputDelta })
	}
}

func (s *ResponseStage) channel(ev *protocol.ResponseEvent) *channel {
	for i := range s.chans {
		if c := &s.chans[i]; c.used && sameChannel(&c.tmpl, ev) {
			return c
		}
	}
	for i := range s.chans {
		if c := &s.chans[i]; !c.used {
			c.used, c.tmpl = true, *ev
			c.st = Stream{r: s.r, prev: noPrev}
			return c
		}
	}
	s.chans = append(s.chans, channel{tmpl: *ev, st: Stream{r: s.r, prev: noPrev}, used: true})
	return &s.chans[len(s.chans)-1]
}

// flush ends the channels selected by which, emitting their held text.
func (s *ResponseStage) flush(emit func(protocol.ResponseEvent), which func(*protocol.ResponseEvent) bool) {
	for i := range s.chans {
		c := &s.chans[i]
		if !c.used || !which(&c.tmpl) {
			continue
		}
		c.used = false
		if out := c.st.Flush(); out != "" {
			ev := c.tmpl
			ev.Delta = out
			emit(ev)
		}
	}
}

// Event returns ev with its item and error message redacted (deltas are
// redacted as whole texts: use a ResponseStage for streams).
func (r *Redactor) Event(ev protocol.ResponseEvent) protocol.ResponseEvent {
	if r == nil || len(r.dets) == 0 {
		return ev
	}
	if ev.Item != nil {
		ev.Item = r.Item(ev.Item)
	}
	if isDelta(ev.Type) {
		ev.Delta, ev.SoFar = r.String(ev.Delta), ""
	}
	if ev.Error != nil {
		if m := r.String(ev.Error.Message); m != ev.Error.Message {
			e := *ev.Error
			e.Message = m
			ev.Error = &e
		}
	}
	return ev
}
