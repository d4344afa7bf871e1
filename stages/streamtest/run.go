// Package streamtest is the test harness shared by the stream packages
// (stages/chatstream, stages/anthropicstream, stages/responsesstream):
// graphs that turn the raw bytes of an upstream body into
// protocol.ResponseEvents (pipeline.Graph []byte → protocol.ResponseEvent).
//
// It runs such a graph over bytes delivered whole, one byte at a time, in
// seeded random chunks and at given offsets, in fused and async mode (Run,
// Replay, CheckSplit), observing what reaches a node on the way (Spy);
// checks the terminal-event contract (CheckTerminal); replays golden txtar
// archives (LoadGoldens, RunGoldens); and checks recorded fixtures against
// their expect.json with subset semantics (LoadFixtures, RunFixtures,
// CheckFixture, CheckExpected, CheckTampers). It is imported by tests only.
package streamtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
)

// Outcome is the result of one run.
type Outcome struct {
	// Events are the events the sink received, in order.
	Events []protocol.ResponseEvent
	// Lines are Events as JSON (ResponseEvent.MarshalJSON), which covers
	// every field.
	Lines []string
	// Spied are the values the graph's spies kept (see Spy), in order.
	Spied []any
	// Err is the run error (a *pipeline.StageError), nil on success.
	Err error
}

// ErrText returns the run error's text, or "" on success.
func (o Outcome) ErrText() string {
	if o.Err == nil {
		return ""
	}
	return o.Err.Error()
}

// String renders the events one per line, then the run error if any.
func (o Outcome) String() string {
	s := strings.Join(o.Lines, "\n")
	if o.Err != nil {
		s += "\nrun error: " + o.Err.Error()
	}
	return s
}

// chunkSource streams data in reads of the given sizes (the last size
// repeats; none means one read). In fused mode it scribbles over every
// chunk once the pipeline has handled it, so that a stage keeping a
// reference into input it was only lent is caught.
type chunkSource struct {
	data     []byte
	sizes    []int
	scribble bool
}

// Stream implements pipeline.Source.
func (c *chunkSource) Stream(_ context.Context, emit func([]byte) error) error {
	data := c.data
	for i := 0; len(data) > 0; i++ {
		n := len(data)
		if len(c.sizes) > 0 {
			n = min(max(c.sizes[min(i, len(c.sizes)-1)], 1), len(data))
		}
		chunk := append([]byte(nil), data[:n]...)
		if err := emit(chunk); err != nil {
			return err
		}
		if c.scribble {
			for k := range chunk {
				chunk[k] = 0xA5
			}
		}
		data = data[n:]
	}
	return nil
}

// collector keeps events; ResponseEvents own their memory, so no copy is needed.
type collector struct{ events []protocol.ResponseEvent }

// Accept implements pipeline.Sink.
func (c *collector) Accept(e protocol.ResponseEvent) error {
	c.events = append(c.events, e)
	return nil
}

// spyLog collects what the spies of one run keep; Run hands it to them in
// the run's context.
type spyLog struct {
	mu     sync.Mutex
	values []any
}

type spyLogKey struct{}

// spy is the middleware stage Spy puts on a node.
type spy struct {
	next   pipeline.AnyStage
	record func(in any) (any, bool)
}

func (s *spy) Push(ctx context.Context, in any, emit func(any)) error {
	if log, ok := ctx.Value(spyLogKey{}).(*spyLog); ok {
		if v, keep := s.record(in); keep {
			log.mu.Lock()
			log.values = append(log.values, v)
			log.mu.Unlock()
		}
	}
	return s.next.Push(ctx, in, emit)
}

func (s *spy) Finish(ctx context.Context, emit func(any)) error { return s.next.Finish(ctx, emit) }

// Spy returns g with a spy on node: every input the node gets is first
// offered to record, and the values it keeps (ok) are added to the Spied of
// the run's Outcome, in order, so that Replay compares them across
// deliveries too. record must copy what the input only lends. Runs other
// than this package's record nothing. The error is g.Wrap's.
func Spy(g *pipeline.Graph, node string, record func(in any) (v any, ok bool)) (*pipeline.Graph, error) {
	return g.Wrap(node, func(_ pipeline.NodeInfo, next pipeline.AnyStage) pipeline.AnyStage {
		return &spy{next: next, record: record}
	})
}

// Run runs g over data in mode, delivered in reads of the given sizes (the
// last size repeats; nil means one read). A run error that is not a
// *pipeline.StageError fails the test.
func Run(t testing.TB, g *pipeline.Graph, data []byte, mode pipeline.Mode, sizes []int) Outcome {
	t.Helper()
	c := &collector{}
	log := &spyLog{}
	src := &chunkSource{data: data, sizes: sizes, scribble: mode == pipeline.Fused}
	err := pipeline.Run(context.WithValue(context.Background(), spyLogKey{}, log), g, src, c, pipeline.WithMode(mode))
	o := Outcome{Events: c.events, Spied: log.values, Err: err}
	for _, e := range c.events {
		b, merr := e.MarshalJSON()
		if merr != nil {
			t.Fatalf("marshal %s: %v", e.Type, merr)
		}
		o.Lines = append(o.Lines, string(b))
	}
	if err != nil {
		var se *pipeline.StageError
		if !errors.As(err, &se) {
			t.Fatalf("run error is not a *pipeline.StageError: %v", err)
		}
	}
	return o
}

// CheckTerminal asserts the terminal-event contract: a run error leaves no
// terminal event; otherwise exactly one terminal event, and it is last.
func CheckTerminal(t testing.TB, o Outcome) {
	t.Helper()
	if msg := terminalProblem(o); msg != "" {
		t.Fatal(msg)
	}
}

func terminalProblem(o Outcome) string {
	n := 0
	for _, e := range o.Events {
		if e.IsTerminal() {
			n++
		}
	}
	if o.Err != nil {
		if n != 0 {
			return fmt.Sprintf("run failed (%v) but %d terminal event(s) were emitted:\n%s", o.Err, n, o)
		}
		return ""
	}
	if n != 1 || !o.Events[len(o.Events)-1].IsTerminal() {
		return fmt.Sprintf("want exactly one terminal event, last; got %d:\n%s", n, o)
	}
	return ""
}

// RandomSizes returns read sizes between 1 and maxSize that add up to at
// least total.
func RandomSizes(rng *rand.Rand, total, maxSize int) []int {
	var sizes []int
	for total > 0 {
		n := 1 + rng.IntN(maxSize)
		sizes = append(sizes, n)
		total -= n
	}
	return sizes
}

// Split is a further way for Replay to deliver data: in reads of Sizes (see
// Run).
type Split struct {
	Name  string
	Sizes []int
}

// SplitAt returns the Split that cuts data of length total at the given
// byte offsets (a fixture's replay.split_at_byte_offsets); offsets that are
// not increasing or not inside the data are skipped.
func SplitAt(offsets []int, total int) Split {
	sp := Split{Name: "split-at"}
	prev := 0
	for _, o := range offsets {
		if o > prev && o < total {
			sp.Sizes = append(sp.Sizes, o-prev)
			prev = o
		}
	}
	sp.Sizes = append(sp.Sizes, total-prev)
	return sp
}

// randomMaxSizes are the largest read sizes of Replay's seeded random
// splits (seed i+1 for entry i).
var randomMaxSizes = []int{24, 47, 70, 1024, 4096}

// Replay runs data whole, one byte at a time, in seeded random chunks and
// split as each of extra says, in both modes; it checks the terminal
// contract of each run and that all runs agree (events and spied values,
// see Spy), and returns the whole fused run. When the run fails, the other
// runs must fail with the same error, and their events and spied values
// must be a prefix of the reference's (an async run may stop earlier).
func Replay(t testing.TB, g *pipeline.Graph, data []byte, extra ...Split) Outcome {
	t.Helper()
	ref := Run(t, g, data, pipeline.Fused, nil)
	CheckTerminal(t, ref)
	type variant struct {
		name  string
		mode  pipeline.Mode
		sizes []int
	}
	vs := []variant{{"async/whole", pipeline.Async, nil}}
	for _, m := range []pipeline.Mode{pipeline.Fused, pipeline.Async} {
		vs = append(vs, variant{m.String() + "/1-byte", m, []int{1}})
		for i, maxSize := range randomMaxSizes {
			seed := uint64(i + 1)
			rng := rand.New(rand.NewPCG(seed, 0x5eed))
			vs = append(vs, variant{fmt.Sprintf("%s/random-%d", m, seed), m, RandomSizes(rng, len(data), maxSize)})
		}
		for _, sp := range extra {
			vs = append(vs, variant{m.String() + "/" + sp.Name, m, sp.Sizes})
		}
	}
	for _, v := range vs {
		got := Run(t, g, data, v.mode, v.sizes)
		CheckTerminal(t, got)
		if ref.Err == nil {
			if diff := cmp.Diff(ref.Lines, got.Lines); diff != "" || got.Err != nil {
				t.Fatalf("%s differs from fused/whole (err %q) (-want +got):\n%s", v.name, got.ErrText(), diff)
			}
			if len(got.Spied) != len(ref.Spied) || !isSpiedPrefix(got.Spied, ref.Spied) {
				t.Fatalf("%s: spied %+v, fused/whole: %+v", v.name, got.Spied, ref.Spied)
			}
			continue
		}
		if got.ErrText() != ref.ErrText() {
			t.Fatalf("%s: error %q, fused/whole: %q", v.name, got.ErrText(), ref.ErrText())
		}
		if !isPrefix(got.Lines, ref.Lines) {
			t.Fatalf("%s: events are not a prefix of fused/whole's:\n%s\n---\n%s", v.name, got, ref)
		}
		if !isSpiedPrefix(got.Spied, ref.Spied) {
			t.Fatalf("%s: spied %+v, not a prefix of fused/whole's %+v", v.name, got.Spied, ref.Spied)
		}
	}
	return ref
}

// isPrefix reports whether p is a prefix of s.
func isPrefix(p, s []string) bool {
	return len(p) <= len(s) && slices.Equal(s[:len(p)], p)
}

// isSpiedPrefix reports whether p is a prefix of s, comparing values deeply.
func isSpiedPrefix(p, s []any) bool {
	return len(p) <= len(s) && slices.EqualFunc(p, s[:len(p)], func(a, b any) bool { return reflect.DeepEqual(a, b) })
}

// CheckSplit checks one fuzz input (see Fuzz): no input may panic; the
// whole fused run and a run split into reads chosen by seed (async when
// seed%4 == 0) must each keep the terminal contract; they must agree on
// success, and on failure the split run's events must be a prefix of the
// whole run's.
func CheckSplit(t testing.TB, g *pipeline.Graph, data []byte, seed uint64) {
	t.Helper()
	whole := Run(t, g, data, pipeline.Fused, nil)
	CheckTerminal(t, whole)
	rng := rand.New(rand.NewPCG(seed, seed>>3))
	mode := pipeline.Fused
	if seed%4 == 0 {
		mode = pipeline.Async
	}
	split := Run(t, g, data, mode, RandomSizes(rng, len(data), 1+int(seed%64)))
	CheckTerminal(t, split)
	// In async mode two stages failing on different events race: the
	// run may report either error, so only failure itself must agree.
	if split.ErrText() != whole.ErrText() && (mode == pipeline.Fused || (split.Err == nil) != (whole.Err == nil)) {
		t.Fatalf("split/%s run error %q, whole: %q", mode, split.ErrText(), whole.ErrText())
	}
	if whole.Err == nil && !slices.Equal(split.Lines, whole.Lines) ||
		whole.Err != nil && !isPrefix(split.Lines, whole.Lines) {
		t.Fatalf("split/%s run differs:\n%s\n---\n%s", mode, split, whole)
	}
}

// AsyncFailures runs data through g in async mode the given number of
// times; every run must fail, and no terminal event may reach the sink
// after a failure (the engine must not finish the stages downstream of a
// failed one).
func AsyncFailures(t testing.TB, g *pipeline.Graph, data []byte, runs int) {
	t.Helper()
	for i := range runs {
		o := Run(t, g, data, pipeline.Async, nil)
		if o.Err == nil {
			t.Fatal("want a run error")
		}
		for _, e := range o.Events {
			if e.IsTerminal() {
				t.Fatalf("run %d: terminal event after a run error:\n%s", i, o)
			}
		}
	}
}

// Fuzz is the body of a stream fuzz target: it seeds the corpus with the
// streams of fixtures and goldens and checks every input with CheckSplit.
func Fuzz(f *testing.F, g *pipeline.Graph, fs []Fixture, gs []Golden) {
	for _, fx := range fs {
		f.Add(fx.Data, uint64(1))
	}
	for _, gd := range gs {
		f.Add(gd.Input, uint64(len(gd.Input)))
	}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) { CheckSplit(t, g, data, seed) })
}
