package anthropicstream

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// chunkSource streams data in reads of the given sizes (the last size
// repeats; none means one read). In fused mode it scribbles over every
// chunk once the pipeline has handled it, so that a stage keeping a
// reference into input it was only lent is caught.
type chunkSource struct {
	data     []byte
	sizes    []int
	scribble bool
}

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

// outcome is the result of one run: the events (as JSON Lines, which covers
// every field) and the run error.
type outcome struct {
	Events []protocol.ResponseEvent
	Lines  []string
	Err    string
}

func (o outcome) String() string {
	s := strings.Join(o.Lines, "\n")
	if o.Err != "" {
		s += "\nrun error: " + o.Err
	}
	return s
}

// collector keeps events; ResponseEvents own their memory, so no copy is needed.
type collector struct{ events []protocol.ResponseEvent }

func (c *collector) Accept(e protocol.ResponseEvent) error {
	c.events = append(c.events, e)
	return nil
}

func runGraph(t testing.TB, g *pipeline.Graph, data []byte, mode pipeline.Mode, sizes []int) outcome {
	t.Helper()
	c := &collector{}
	src := &chunkSource{data: data, sizes: sizes, scribble: mode == pipeline.Fused}
	err := pipeline.Run(context.Background(), g, src, c, pipeline.WithMode(mode))
	o := outcome{Events: c.events}
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
		o.Err = err.Error()
	}
	return o
}

// checkTerminal asserts the terminal-event contract: a run error leaves no
// terminal event; otherwise exactly one terminal event, and it is last.
func checkTerminal(t testing.TB, o outcome, mode pipeline.Mode) {
	t.Helper()
	n := 0
	for _, e := range o.Events {
		if e.IsTerminal() {
			n++
		}
	}
	if o.Err != "" {
		if n != 0 {
			t.Fatalf("run failed (%s) but %d terminal event(s) were emitted:\n%s", o.Err, n, o)
		}
		return
	}
	if n != 1 || !o.Events[len(o.Events)-1].IsTerminal() {
		t.Fatalf("want exactly one terminal event, last; got %d:\n%s", n, o)
	}
}

func randomSizes(rng *rand.Rand, total, maxSize int) []int {
	var sizes []int
	for total > 0 {
		n := 1 + rng.IntN(maxSize)
		sizes = append(sizes, n)
		total -= n
	}
	return sizes
}

// replay runs data whole, one byte at a time and in seeded random chunks,
// in both modes, checks the terminal contract of each run and that all runs
// agree, and returns the whole fused run. When the run fails, the other
// runs must fail with the same error, and their events must be a prefix of
// the reference's (an async run may stop earlier).
func replay(t testing.TB, g *pipeline.Graph, data []byte) outcome {
	t.Helper()
	ref := runGraph(t, g, data, pipeline.Fused, nil)
	checkTerminal(t, ref, pipeline.Fused)
	type variant struct {
		name  string
		mode  pipeline.Mode
		sizes []int
	}
	vs := []variant{{"async/whole", pipeline.Async, nil}}
	for _, m := range []pipeline.Mode{pipeline.Fused, pipeline.Async} {
		vs = append(vs, variant{m.String() + "/1-byte", m, []int{1}})
		for seed := uint64(1); seed <= 3; seed++ {
			rng := rand.New(rand.NewPCG(seed, 0x5eed))
			vs = append(vs, variant{fmt.Sprintf("%s/random-%d", m, seed), m, randomSizes(rng, len(data), 1+int(seed)*23)})
		}
	}
	for _, v := range vs {
		got := runGraph(t, g, data, v.mode, v.sizes)
		checkTerminal(t, got, v.mode)
		if ref.Err == "" {
			if diff := cmp.Diff(ref.Lines, got.Lines); diff != "" || got.Err != "" {
				t.Fatalf("%s differs from fused/whole (err %q) (-want +got):\n%s", v.name, got.Err, diff)
			}
			continue
		}
		if got.Err != ref.Err {
			t.Fatalf("%s: error %q, fused/whole: %q", v.name, got.Err, ref.Err)
		}
		if len(got.Lines) > len(ref.Lines) || !slices.Equal(ref.Lines[:len(got.Lines)], got.Lines) {
			t.Fatalf("%s: events are not a prefix of fused/whole's:\n%s\n---\n%s", v.name, got, ref)
		}
	}
	return ref
}

// TestAsyncErrorNoFinish reproduces the engine issue described at
// checkTerminal: after anthropic.decode fails, anthropic.accumulate must not
// be finished, so no terminal event may reach the sink.
func TestAsyncErrorNoFinish(t *testing.T) {
	g, err := Graph(Options{})
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}\n\nevent: ping\ndata: {bad\n\n")
	for i := range 2000 {
		o := runGraph(t, g, data, pipeline.Async, nil)
		if o.Err == "" {
			t.Fatal("want a run error")
		}
		for _, e := range o.Events {
			if e.IsTerminal() {
				t.Fatalf("run %d: terminal event after a run error:\n%s", i, o)
			}
		}
	}
}
