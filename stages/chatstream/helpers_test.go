package chatstream

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var modes = []pipeline.Mode{pipeline.Fused, pipeline.Async}

// outcome is everything a run produced: the events (kept as values and as
// JSON lines), the End step chat.finalize received, and the run error.
type outcome struct {
	Events []protocol.ResponseEvent
	Lines  []string
	End    *End
	Err    error
}

// String renders the outcome for diffs.
func (o outcome) String() string {
	var b strings.Builder
	for _, l := range o.Lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if o.Err != nil {
		fmt.Fprintf(&b, "run error: %v\n", o.Err)
	}
	return b.String()
}

// splitter decides the sizes of the reads a stream is delivered in.
type splitter func(total int) []int

func whole(total int) []int { return []int{total} }

func bytewise(total int) []int {
	s := make([]int, total)
	for i := range s {
		s[i] = 1
	}
	return s
}

func randomSplit(seed uint64, maxLen int) splitter {
	return func(total int) []int {
		r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		var s []int
		for total > 0 {
			n := min(1+r.IntN(maxLen), total)
			s = append(s, n)
			total -= n
		}
		return s
	}
}

func atOffsets(offs []int) splitter {
	return func(total int) []int {
		var s []int
		prev := 0
		for _, o := range offs {
			if o > prev && o < total {
				s = append(s, o-prev)
				prev = o
			}
		}
		return append(s, total-prev)
	}
}

// chunkSource delivers input in the given read sizes. In fused mode it
// reuses one buffer and scribbles over it after every emit, so that a stage
// keeping a reference into a chunk is caught; in async mode every chunk is a
// fresh slice (elements cross goroutines).
func chunkSource(input []byte, sizes []int, reuse bool) pipeline.Source[[]byte] {
	return pipeline.SourceFunc[[]byte](func(ctx context.Context, emit func([]byte) error) error {
		var buf []byte
		off := 0
		for _, n := range sizes {
			var c []byte
			if reuse {
				buf = append(buf[:0], input[off:off+n]...)
				c = buf
			} else {
				c = append([]byte(nil), input[off:off+n]...)
			}
			off += n
			if err := emit(c); err != nil {
				return err
			}
			if reuse {
				for i := range c {
					c[i] = 'X'
				}
			}
		}
		return nil
	})
}

// run replays input through g (split as sp, in mode) and collects the outcome.
// The End step is observed through a middleware on chat.finalize.
func run(t testing.TB, g *pipeline.Graph, input []byte, sp splitter, mode pipeline.Mode) outcome {
	t.Helper()
	var out outcome
	if _, ok := g.Node(FinalizeName); ok {
		var err error
		g, err = g.Wrap(FinalizeName, func(_ pipeline.NodeInfo, next pipeline.AnyStage) pipeline.AnyStage {
			return &endSpy{next: next, end: &out.End}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	sink := pipeline.SinkFunc[protocol.ResponseEvent](func(ev protocol.ResponseEvent) error {
		b, err := ev.MarshalJSON()
		if err != nil {
			return err
		}
		out.Events = append(out.Events, ev)
		out.Lines = append(out.Lines, string(b))
		return nil
	})
	out.Err = pipeline.Run(context.Background(), g, chunkSource(input, sp(len(input)), mode == pipeline.Fused), sink, pipeline.WithMode(mode))
	checkTerminal(t, out)
	return out
}

// checkTerminal asserts the ending contract: after a run error no terminal
// event; otherwise exactly one terminal event, and it is the last.
func checkTerminal(t testing.TB, o outcome) {
	t.Helper()
	n := 0
	for i, ev := range o.Events {
		if ev.IsTerminal() {
			n++
			if o.Err == nil && i != len(o.Events)-1 {
				t.Errorf("terminal event %s at position %d of %d", ev.Type, i, len(o.Events))
			}
		}
	}
	switch {
	case o.Err != nil && n > 0:
		t.Errorf("run failed (%v) but %d terminal event(s) were emitted:\n%s", o.Err, n, o)
	case o.Err == nil && n != 1:
		t.Errorf("run succeeded with %d terminal events, want 1:\n%s", n, o)
	}
}

// endSpy records the End step that reaches chat.finalize.
type endSpy struct {
	next pipeline.AnyStage
	end  **End
}

func (s *endSpy) Push(ctx context.Context, in any, emit func(any)) error {
	if st, ok := in.(Step); ok && st.Kind == StepEnd && st.End != nil {
		e := *st.End
		*s.end = &e
	}
	return s.next.Push(ctx, in, emit)
}

func (s *endSpy) Finish(ctx context.Context, emit func(any)) error { return s.next.Finish(ctx, emit) }

func mustGraph(t testing.TB, opts Options) *pipeline.Graph {
	t.Helper()
	g, err := Graph(opts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func mustUnaryGraph(t testing.TB, opts Options) *pipeline.Graph {
	t.Helper()
	g, err := UnaryGraph(opts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// summary is what the fixtures' expectations describe, extracted from events.
type summary struct {
	Text, Reasoning string
	Calls           []protocol.ResponseItem
	Completed       *protocol.ResponseEvent
	Failed          *protocol.StreamError
	Models          []string
	DoneText        *string // text of the message's done item, if any
	DoneReasoning   *string
}

func summarize(evs []protocol.ResponseEvent) summary {
	var s summary
	for i := range evs {
		ev := evs[i]
		switch ev.Type {
		case protocol.EventOutputTextDelta:
			s.Text += ev.Delta
		case protocol.EventReasoningContentDelta:
			s.Reasoning += ev.Delta
		case protocol.EventServerModel:
			s.Models = append(s.Models, ev.Model)
		case protocol.EventOutputItemDone:
			switch it := ev.Item.(type) {
			case *protocol.FunctionCall, *protocol.CustomToolCall:
				s.Calls = append(s.Calls, it)
			case *protocol.Message:
				t := it.Content[0].Text
				s.DoneText = &t
			case *protocol.Reasoning:
				t := it.Content[0].Text
				s.DoneReasoning = &t
			}
		case protocol.EventCompleted:
			s.Completed = &evs[i]
		case protocol.EventFailed:
			s.Failed = ev.Error
		}
	}
	return s
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
