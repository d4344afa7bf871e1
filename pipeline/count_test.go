package pipeline_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/pipeline"
)

// countsOf is a Counter that keeps what it was given.
type countsOf struct {
	calls  int
	counts []pipeline.NodeCount
}

func (c *countsOf) Count(counts []pipeline.NodeCount) {
	c.calls++
	c.counts = append([]pipeline.NodeCount(nil), counts...)
}

// A counted run reports once per run the totals an observer sums from every
// element (Finish outputs included), in graph order, in both modes, alone
// or beside an observer.
func TestCounterMatchesObserver(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		in := randomLines(r)
		size := 1 + r.IntN(4)
		for _, m := range modes {
			stats := pipeline.NewStats()
			alone, both := &countsOf{}, &countsOf{}
			g := wordsGraph(t, size)
			if _, err := runCollect[string, string](t, g, in, pipeline.WithMode(m), pipeline.WithCounter(alone)); err != nil {
				t.Fatal(err)
			}
			if _, err := runCollect[string, string](t, g, in, pipeline.WithMode(m), pipeline.WithCounter(both), pipeline.WithObserver(stats)); err != nil {
				t.Fatal(err)
			}
			byName := map[string]pipeline.NodeStats{}
			for _, s := range stats.Snapshot() {
				byName[s.Node] = s
			}
			var want []pipeline.NodeCount
			for i, info := range g.Nodes() {
				s := byName[info.Name]
				want = append(want, pipeline.NodeCount{Node: info.Name, Index: i, Inputs: s.In, Outputs: s.Out})
			}
			if alone.calls != 1 || both.calls != 1 {
				t.Fatalf("%v: Count called %d and %d times, want once per run", m, alone.calls, both.calls)
			}
			if diff := cmp.Diff(want, alone.counts); diff != "" {
				t.Fatalf("%v, %d lines, chunks of %d: counter alone (-observer +counter)\n%s", m, len(in), size, diff)
			}
			if diff := cmp.Diff(want, both.counts); diff != "" {
				t.Fatalf("%v: counter beside an observer (-observer +counter)\n%s", m, diff)
			}
		}
	}
}

// A failed run still reports its totals, the failing node marked.
func TestCounterMarksTheFailedNode(t *testing.T) {
	boom := errors.New("boom")
	g := pipeline.Must(pipeline.New("err",
		pipeline.StageNode("double", pipeline.Map(func(v int) int { return v * 2 })),
		pipeline.StageNode("check", pipeline.Func[int, int](func(_ context.Context, v int, emit func(int)) error {
			if v == 8 {
				return boom
			}
			emit(v)
			return nil
		})),
	))
	for _, m := range modes {
		c := &countsOf{}
		_, err := runCollect[int, int](t, g, []int{1, 2, 3, 4, 5}, pipeline.WithMode(m), pipeline.WithCounter(c))
		if !errors.Is(err, boom) {
			t.Fatalf("%v: got %v", m, err)
		}
		if c.calls != 1 || len(c.counts) != 2 {
			t.Fatalf("%v: Count called %d times with %d nodes", m, c.calls, len(c.counts))
		}
		check := c.counts[1]
		if c.counts[0].Failed || !check.Failed || check.Node != "check" || check.Inputs != 4 || check.Outputs != 3 {
			t.Fatalf("%v: counts %+v, want check failed on its 4th input after passing 3 on", m, c.counts)
		}
	}
}

// A graph's input is reusable when its first node keeps no input and is
// not wrapped by middleware.
func TestInputReusable(t *testing.T) {
	keeps := pipeline.StageNode("first", pipeline.Map(strings.ToUpper))
	lends := pipeline.NewNode("first", func() pipeline.Stage[string, string] { return pipeline.Map(strings.ToUpper) }, pipeline.KeepsNoInput())
	rest := pipeline.StageNode("rest", pipeline.Map(strings.ToLower))
	if g := pipeline.Must(pipeline.New("g", keeps, rest)); g.InputReusable() {
		t.Error("an unmarked first node: reusable")
	}
	g := pipeline.Must(pipeline.New("g", lends, rest))
	if !g.InputReusable() {
		t.Error("a KeepsNoInput first node: not reusable")
	}
	front, err := g.InsertBefore("first", pipeline.StageNode("front", pipeline.Map(strings.TrimSpace)))
	if err != nil {
		t.Fatal(err)
	}
	if front.InputReusable() {
		t.Error("a node inserted before the KeepsNoInput one: still reusable")
	}
	wrapped, err := g.Wrap("first", passMiddleware(new(atomic.Int64)))
	if err != nil {
		t.Fatal(err)
	}
	if wrapped.InputReusable() {
		t.Error("a wrapped first node: still reusable")
	}
}
