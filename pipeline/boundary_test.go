package pipeline_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/pipeline"
)

// goid returns the id of the calling goroutine (tests only: it parses the
// stack header "goroutine N [...]").
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	id, _ := strconv.ParseUint(string(b[:bytes.IndexByte(b, ' ')]), 10, 64)
	return id
}

// goroutines records which goroutine ran each node.
type goroutines struct {
	mu  sync.Mutex
	ran map[string]map[uint64]bool
}

func (g *goroutines) node(name string, opts ...pipeline.NodeOption) pipeline.Node {
	return pipeline.StageNode(name, pipeline.Func[int, int](func(_ context.Context, v int, emit func(int)) error {
		g.mu.Lock()
		if g.ran[name] == nil {
			g.ran[name] = map[uint64]bool{}
		}
		g.ran[name][goid()] = true
		g.mu.Unlock()
		emit(v + 1)
		return nil
	}), opts...)
}

// one returns the goroutine that ran name, failing when it was not one.
func (g *goroutines) one(t *testing.T, name string) uint64 {
	t.Helper()
	if len(g.ran[name]) != 1 {
		t.Fatalf("%s ran in %d goroutines", name, len(g.ran[name]))
	}
	for id := range g.ran[name] {
		return id
	}
	return 0
}

// With marks, an async run fuses the nodes of a segment in one goroutine
// and gives every segment its own; without marks every node has its own;
// fused mode ignores the marks.
func TestAsyncBoundaries(t *testing.T) {
	in := make([]int, 2000)
	want := make([]int, len(in))
	for i := range in {
		in[i], want[i] = i, i+5
	}
	run := func(mode pipeline.Mode, marks ...string) map[string]uint64 {
		t.Helper()
		g := &goroutines{ran: map[string]map[uint64]bool{}}
		var nodes []pipeline.Node
		for _, name := range []string{"a", "b", "c", "d", "e"} {
			var opts []pipeline.NodeOption
			for _, m := range marks {
				if m == name {
					opts = append(opts, pipeline.AsyncBoundary())
				}
			}
			nodes = append(nodes, g.node(name, opts...))
		}
		got, err := runCollect[int, int](t, pipeline.Must(pipeline.New("b", nodes...)), in, pipeline.WithMode(mode), pipeline.WithMaxBatch(7))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("output (-want +got)\n%s", diff)
		}
		ids := map[string]uint64{}
		for _, name := range []string{"a", "b", "c", "d", "e"} {
			ids[name] = g.one(t, name)
		}
		return ids
	}
	segmentsOf := func(ids map[string]uint64) string {
		var parts []string
		prev := uint64(0)
		for _, name := range []string{"a", "b", "c", "d", "e"} {
			if ids[name] != prev && prev != 0 {
				parts = append(parts, "|")
			}
			parts = append(parts, name)
			prev = ids[name]
		}
		return strings.Join(parts, "")
	}
	for _, tc := range []struct {
		mode  pipeline.Mode
		marks []string
		want  string
	}{
		{pipeline.Async, nil, "a|b|c|d|e"},
		{pipeline.Async, []string{"c"}, "ab|cde"},
		{pipeline.Async, []string{"b", "e"}, "a|bcd|e"},
		{pipeline.Async, []string{"a"}, "abcde"},
		{pipeline.Fused, []string{"c"}, "abcde"},
	} {
		ids := run(tc.mode, tc.marks...)
		if got := segmentsOf(ids); got != tc.want {
			t.Errorf("%s with marks %v: segments %s, want %s", tc.mode, tc.marks, got, tc.want)
		}
		if tc.mode == pipeline.Async && len(tc.marks) > 0 {
			// The segments must not run in the caller's goroutine either.
			for name, id := range ids {
				if id == goid() {
					t.Errorf("%s ran in the caller's goroutine", name)
				}
			}
		}
	}
}

// TestBoundariesEqualFused is the property test of segmented async runs:
// random marks, batch sizes and buffers give the fused output.
func TestBoundariesEqualFused(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for iter := range 200 {
		in := randomLines(r)
		n := 1 + r.IntN(5)
		g := wordsGraph(t, n)
		for _, name := range g.Names() {
			if r.IntN(2) == 0 {
				var err error
				if g, err = g.Configure(name, pipeline.AsyncBoundary()); err != nil {
					t.Fatal(err)
				}
			}
		}
		fused, err := runCollect[string, string](t, g, in)
		if err != nil {
			t.Fatal(err)
		}
		async, err := runCollect[string, string](t, g, in,
			pipeline.WithMode(pipeline.Async), pipeline.WithMaxBatch(1+r.IntN(8)), pipeline.WithBuffer(r.IntN(3)))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(fused, async); diff != "" {
			t.Fatalf("iteration %d (%s): fused vs async (-fused +async)\n%s", iter, g.Describe(), diff)
		}
	}
}

// Inside a segment, errors, panics, Finish and observations follow the
// fused mode's rules.
func TestSegmentErrorsAndObservations(t *testing.T) {
	boom := errors.New("boom")
	check := pipeline.StageNode("check", pipeline.Func[int, int](func(_ context.Context, v int, emit func(int)) error {
		switch v {
		case 8:
			return boom
		case 12:
			panic("twelve")
		}
		emit(v)
		return nil
	}))
	g := pipeline.Must(pipeline.New("seg",
		pipeline.StageNode("double", pipeline.Map(func(v int) int { return v * 2 }), pipeline.AsyncBoundary()),
		check,
		pipeline.NewNode("fin", func() pipeline.Stage[int, int] { return &countFinish{} }, pipeline.AsyncBoundary()),
	))
	async := []pipeline.RunOption{pipeline.WithMode(pipeline.Async), pipeline.WithMaxBatch(2)}
	_, err := runCollect[int, int](t, g, []int{1, 2, 3, 4, 5}, async...)
	var se *pipeline.StageError
	if !errors.As(err, &se) || se.Stage != "check" || se.Seq != 4 || !errors.Is(err, boom) {
		t.Fatalf("error: %v", err)
	}
	_, err = runCollect[int, int](t, g, []int{1, 2, 6, 7}, async...)
	var pe *pipeline.PanicError
	if !errors.As(err, &se) || se.Stage != "check" || se.Seq != 3 || !errors.As(err, &pe) {
		t.Fatalf("panic: %v", err)
	}
	got, err := runCollect[int, int](t, g, []int{1, 2, 3}, async...)
	if err != nil || !cmp.Equal(got, []int{2, 4, 6, -1}) {
		t.Fatalf("finish: %v, %v", got, err)
	}
	for _, m := range modes {
		stats := pipeline.NewStats()
		if _, err := runCollect[int, int](t, g, []int{1, 2, 3}, pipeline.WithMode(m), pipeline.WithObserver(stats)); err != nil {
			t.Fatal(err)
		}
		counts := map[string][2]uint64{}
		for _, s := range stats.Snapshot() {
			counts[s.Node] = [2]uint64{s.In, s.Out}
		}
		want := map[string][2]uint64{"double": {3, 3}, "check": {3, 3}, "fin": {3, 4}}
		if diff := cmp.Diff(want, counts); diff != "" {
			t.Errorf("%s observations (-want +got)\n%s", m, diff)
		}
	}
	if !strings.Contains(g.Describe(), "double") || !strings.Contains(g.Describe(), "[async boundary]") {
		t.Errorf("Describe does not show the boundary:\n%s", g.Describe())
	}
}

// countFinish passes inputs on and emits -1 when it finishes.
type countFinish struct{}

func (*countFinish) Push(_ context.Context, v int, emit func(int)) error { emit(v); return nil }
func (*countFinish) Finish(_ context.Context, emit func(int)) error      { emit(-1); return nil }
