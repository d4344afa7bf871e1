package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/harnessflow/harnessflow/pipeline"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var modes = []pipeline.Mode{pipeline.Fused, pipeline.Async}

// sliceSource and collect keep these tests free of the sources/sinks packages.
func sliceSource[T any](xs []T) pipeline.Source[T] {
	return pipeline.SourceFunc[T](func(ctx context.Context, emit func(T) error) error {
		for _, x := range xs {
			if err := emit(x); err != nil {
				return err
			}
		}
		return nil
	})
}

func runCollect[In, Out any](t *testing.T, g *pipeline.Graph, in []In, opts ...pipeline.RunOption) ([]Out, error) {
	t.Helper()
	var out []Out
	err := pipeline.Run(context.Background(), g, sliceSource(in), pipeline.SinkFunc[Out](func(v Out) error {
		out = append(out, v)
		return nil
	}), opts...)
	return out, err
}

// splitter emits one output per word; chunker groups n inputs (stateful, flushes in Finish).
func splitter() pipeline.Stage[string, string] {
	return pipeline.Func[string, string](func(_ context.Context, s string, emit func(string)) error {
		for _, w := range strings.Fields(s) {
			emit(w)
		}
		return nil
	})
}

type chunker struct {
	n   int
	buf []string
}

func (c *chunker) Push(_ context.Context, s string, emit func([]string)) error {
	c.buf = append(c.buf, s)
	if len(c.buf) == c.n {
		emit(c.buf)
		c.buf = nil
	}
	return nil
}

func (c *chunker) Finish(_ context.Context, emit func([]string)) error {
	if len(c.buf) > 0 {
		emit(c.buf)
		c.buf = nil
	}
	return nil
}

func wordsGraph(t testing.TB, n int) *pipeline.Graph {
	g, err := pipeline.New("words",
		pipeline.NewNode("split", splitter),
		pipeline.StageNode("upper", pipeline.Map(strings.ToUpper)),
		pipeline.NewNode("chunk", func() pipeline.Stage[string, []string] { return &chunker{n: n} }),
		pipeline.StageNode("join", pipeline.Map(func(ws []string) string { return strings.Join(ws, "+") })),
	)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestRunBothModes(t *testing.T) {
	in := []string{"a b c", "", "d e", "f g h i"}
	want := []string{"A+B+C", "D+E+F", "G+H+I"}
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			got, err := runCollect[string, string](t, wordsGraph(t, 3), in, pipeline.WithMode(m))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("(-want +got)\n%s", diff)
			}
		})
	}
}

// TestFusedEqualsAsync is the property test: on random inputs, random chunk
// sizes and random batch limits, both modes give the same output.
func TestFusedEqualsAsync(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 200 {
		in := randomLines(r)
		n := 1 + r.IntN(5)
		fused, err := runCollect[string, string](t, wordsGraph(t, n), in)
		if err != nil {
			t.Fatal(err)
		}
		async, err := runCollect[string, string](t, wordsGraph(t, n), in,
			pipeline.WithMode(pipeline.Async), pipeline.WithMaxBatch(1+r.IntN(8)), pipeline.WithBuffer(r.IntN(3)))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(fused, async); diff != "" {
			t.Fatalf("iteration %d: fused vs async (-fused +async)\n%s", iter, diff)
		}
	}
}

// randomLines returns up to 60 lines of up to 5 random words.
func randomLines(r *rand.Rand) []string {
	var in []string
	for range r.IntN(60) {
		var words []string
		for range r.IntN(6) {
			words = append(words, fmt.Sprintf("w%d", r.IntN(1000)))
		}
		in = append(in, strings.Join(words, " "))
	}
	return in
}

func TestGraphEdits(t *testing.T) {
	g := wordsGraph(t, 2)
	exclaim := pipeline.StageNode("exclaim", pipeline.Map(func(s string) string { return s + "!" }))

	g2, err := g.InsertAfter("upper", exclaim)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"split", "upper", "exclaim", "chunk", "join"}, g2.Names()); diff != "" {
		t.Fatal(diff)
	}
	if diff := cmp.Diff([]string{"split", "upper", "chunk", "join"}, g.Names()); diff != "" {
		t.Fatalf("original graph changed: %s", diff)
	}
	got, err := runCollect[string, string](t, g2, []string{"a b c"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"A!+B!", "C!"}, got); diff != "" {
		t.Fatal(diff)
	}

	g3, err := g2.InsertBefore("split", pipeline.StageNode("trim", pipeline.Map(strings.TrimSpace)))
	if err != nil || g3.Names()[0] != "trim" {
		t.Fatalf("insert before: %v %v", g3, err)
	}
	g4, err := g3.Remove("exclaim")
	if err != nil || len(g4.Names()) != 5 {
		t.Fatalf("remove: %v", err)
	}
	g5, err := g4.Replace("upper", pipeline.StageNode("lower", pipeline.Map(strings.ToLower)))
	if err != nil || g5.Names()[2] != "lower" {
		t.Fatalf("replace: %v", err)
	}

	tests := []struct {
		name string
		edit func() (*pipeline.Graph, error)
		want error
	}{
		{"unknown anchor", func() (*pipeline.Graph, error) { return g.InsertAfter("nope", exclaim) }, pipeline.ErrUnknownNode},
		{"unknown before", func() (*pipeline.Graph, error) { return g.InsertBefore("nope", exclaim) }, pipeline.ErrUnknownNode},
		{"unknown replace", func() (*pipeline.Graph, error) { return g.Replace("nope", exclaim) }, pipeline.ErrUnknownNode},
		{"unknown remove", func() (*pipeline.Graph, error) { return g.Remove("nope") }, pipeline.ErrUnknownNode},
		{"unknown wrap", func() (*pipeline.Graph, error) { return g.Wrap("nope", passMiddleware(nil)) }, pipeline.ErrUnknownNode},
		{"duplicate", func() (*pipeline.Graph, error) { return g.InsertAfter("upper", exclaim.Renamed("split")) }, pipeline.ErrDuplicateNode},
		{"type mismatch after chunk", func() (*pipeline.Graph, error) { return g.InsertAfter("chunk", exclaim) }, pipeline.ErrTypeMismatch},
		{"type mismatch replace", func() (*pipeline.Graph, error) {
			return g.Replace("join", pipeline.StageNode("len", pipeline.Map(func(s string) int { return len(s) })))
		}, pipeline.ErrTypeMismatch},
		{"remove breaks joint", func() (*pipeline.Graph, error) { return g.Remove("chunk") }, pipeline.ErrTypeMismatch},
		{"empty name", func() (*pipeline.Graph, error) { return g.Append(exclaim.Renamed("")) }, pipeline.ErrBadName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.edit()
			if tt.want == nil {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			var ge *pipeline.GraphError
			if !errors.As(err, &ge) {
				t.Fatalf("%T is not a *GraphError", err)
			}
		})
	}

	// A graph that emits int cannot run into a string sink.
	gi, _ := g.Replace("join", pipeline.StageNode("len", pipeline.Map(func(ws []string) int { return len(ws) })))
	_, err = runCollect[string, string](t, gi, []string{"x"})
	if !errors.Is(err, pipeline.ErrTypeMismatch) {
		t.Fatalf("run with wrong sink type: %v", err)
	}
}

func passMiddleware(seen *atomic.Int64) pipeline.Middleware {
	return func(info pipeline.NodeInfo, next pipeline.AnyStage) pipeline.AnyStage {
		return anyFunc{push: func(ctx context.Context, in any, emit func(any)) error {
			if seen != nil {
				seen.Add(1)
			}
			return next.Push(ctx, in, emit)
		}, finish: next.Finish}
	}
}

type anyFunc struct {
	push   func(context.Context, any, func(any)) error
	finish func(context.Context, func(any)) error
}

func (a anyFunc) Push(ctx context.Context, in any, emit func(any)) error {
	return a.push(ctx, in, emit)
}
func (a anyFunc) Finish(ctx context.Context, emit func(any)) error { return a.finish(ctx, emit) }

func TestWrapMiddleware(t *testing.T) {
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			var seen atomic.Int64
			g, err := wordsGraph(t, 2).Wrap("upper", passMiddleware(&seen))
			if err != nil {
				t.Fatal(err)
			}
			got, err := runCollect[string, string](t, g, []string{"a b c"}, pipeline.WithMode(m))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"A+B", "C"}, got); diff != "" {
				t.Fatal(diff)
			}
			if seen.Load() != 3 {
				t.Fatalf("middleware saw %d inputs, want 3", seen.Load())
			}
			// A middleware that emits the wrong type is an error naming the node.
			bad, _ := wordsGraph(t, 2).Wrap("upper", func(info pipeline.NodeInfo, next pipeline.AnyStage) pipeline.AnyStage {
				return anyFunc{push: func(ctx context.Context, in any, emit func(any)) error { emit(42); return nil }, finish: next.Finish}
			})
			_, err = runCollect[string, string](t, bad, []string{"a"}, pipeline.WithMode(m))
			var se *pipeline.StageError
			if !errors.As(err, &se) || se.Stage != "upper" || !errors.Is(err, pipeline.ErrTypeMismatch) {
				t.Fatalf("got %v", err)
			}
		})
	}
}

// finishCounter counts Finish calls across runs of one graph.
type finishCounter struct{ finishes *atomic.Int64 }

func (f finishCounter) Push(_ context.Context, v int, emit func(int)) error { emit(v); return nil }
func (f finishCounter) Finish(_ context.Context, emit func(int)) error {
	f.finishes.Add(1)
	emit(-1)
	return nil
}

func TestFinishOncePerRun(t *testing.T) {
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			var finishes, created atomic.Int64
			g := pipeline.Must(pipeline.New("fin",
				pipeline.NewNode("a", func() pipeline.Stage[int, int] { created.Add(1); return finishCounter{&finishes} }),
				pipeline.NewNode("b", func() pipeline.Stage[int, int] { created.Add(1); return finishCounter{&finishes} }),
			))
			for run := 1; run <= 3; run++ {
				got, err := runCollect[int, int](t, g, []int{1, 2}, pipeline.WithMode(m))
				if err != nil {
					t.Fatal(err)
				}
				// a's -1 passes through b, then b's own -1.
				if diff := cmp.Diff([]int{1, 2, -1, -1}, got); diff != "" {
					t.Fatal(diff)
				}
				if finishes.Load() != int64(2*run) || created.Load() != int64(2*run) {
					t.Fatalf("run %d: %d finishes, %d instances", run, finishes.Load(), created.Load())
				}
			}
			// In a failing run no stage finishes twice; in fused mode none
			// finishes at all (async nodes upstream of the failure may
			// legitimately reach the end of their input first).
			failing, _ := g.Append(pipeline.StageNode("fail", pipeline.Func[int, int](func(context.Context, int, func(int)) error {
				return errors.New("boom")
			})))
			finishes.Store(0)
			_, err := runCollect[int, int](t, failing, []int{1}, pipeline.WithMode(m))
			if err == nil || finishes.Load() > 2 || (m == pipeline.Fused && finishes.Load() != 0) {
				t.Fatalf("err=%v finishes=%d", err, finishes.Load())
			}
		})
	}
}

func TestStageErrorAndPanic(t *testing.T) {
	boom := errors.New("boom")
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			g := pipeline.Must(pipeline.New("err",
				pipeline.StageNode("double", pipeline.Map(func(v int) int { return v * 2 })),
				pipeline.StageNode("check", pipeline.Func[int, int](func(_ context.Context, v int, emit func(int)) error {
					if v == 8 {
						return boom
					}
					if v == 12 {
						panic("twelve")
					}
					emit(v)
					return nil
				})),
			))
			_, err := runCollect[int, int](t, g, []int{1, 2, 3, 4, 5})
			if m == pipeline.Async {
				_, err = runCollect[int, int](t, g, []int{1, 2, 3, 4, 5}, pipeline.WithMode(m))
			}
			var se *pipeline.StageError
			if !errors.As(err, &se) || se.Stage != "check" || se.Seq != 4 || !errors.Is(err, boom) {
				t.Fatalf("got %v", err)
			}
			_, err = runCollect[int, int](t, g, []int{1, 2, 6, 7}, pipeline.WithMode(m))
			var pe *pipeline.PanicError
			if !errors.As(err, &se) || se.Stage != "check" || se.Seq != 3 || !errors.As(err, &pe) {
				t.Fatalf("panic: got %v", err)
			}
			if !strings.Contains(err.Error(), "check") || !strings.Contains(err.Error(), "twelve") {
				t.Fatalf("error text %q should name the stage and the panic", err)
			}
		})
	}
}

func TestSinkAndSourceErrors(t *testing.T) {
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			g := wordsGraph(t, 1)
			full := errors.New("disk full")
			err := pipeline.Run(context.Background(), g, sliceSource([]string{"a b", "c"}),
				pipeline.SinkFunc[string](func(string) error { return full }), pipeline.WithMode(m))
			var se *pipeline.StageError
			if !errors.As(err, &se) || se.Stage != pipeline.SinkName || !errors.Is(err, full) {
				t.Fatalf("sink: %v", err)
			}
			broken := errors.New("read failed")
			err = pipeline.Run(context.Background(), g, pipeline.SourceFunc[string](func(_ context.Context, emit func(string) error) error {
				_ = emit("x")
				return broken
			}), pipeline.SinkFunc[string](func(string) error { return nil }), pipeline.WithMode(m))
			if !errors.As(err, &se) || se.Stage != pipeline.SourceName || !errors.Is(err, broken) {
				t.Fatalf("source: %v", err)
			}
		})
	}
}

// TestCancelMidStream cancels while an endless source is producing; Run
// returns the context error and (goleak, TestMain) nothing is left running.
func TestCancelMidStream(t *testing.T) {
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			endless := pipeline.SourceFunc[string](func(ctx context.Context, emit func(string) error) error {
				for {
					if err := emit("a b c"); err != nil {
						return err
					}
				}
			})
			var n atomic.Int64
			errc := make(chan error, 1)
			go func() {
				errc <- pipeline.Run(ctx, wordsGraph(t, 2), endless, pipeline.SinkFunc[string](func(string) error {
					if n.Add(1) == 1000 {
						cancel()
					}
					return nil
				}), pipeline.WithMode(m))
			}()
			select {
			case err := <-errc:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("got %v, want context.Canceled", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Run did not return after cancel")
			}
		})
	}
}

// TestAsyncBlockedSinkCancel: the consumer stops taking output and the context
// is cancelled; all node goroutines must exit.
func TestAsyncBlockedSinkCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	in := make([]string, 10000)
	for i := range in {
		in[i] = "x y"
	}
	err := pipeline.Run(ctx, wordsGraph(t, 1), sliceSource(in), pipeline.SinkFunc[string](func(string) error {
		<-ctx.Done()
		return nil
	}), pipeline.WithMode(pipeline.Async), pipeline.WithBuffer(1))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
}

func TestObserver(t *testing.T) {
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			stats := pipeline.NewStats()
			_, err := runCollect[string, string](t, wordsGraph(t, 2), []string{"a b c", "d"}, pipeline.WithMode(m), pipeline.WithObserver(stats))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][2]uint64{}
			for _, s := range stats.Snapshot() {
				got[s.Node] = [2]uint64{s.In, s.Out}
			}
			want := map[string][2]uint64{"split": {2, 4}, "upper": {4, 4}, "chunk": {4, 2}, "join": {2, 2}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("(-want +got)\n%s", diff)
			}
		})
	}
}

// Timing is on by default (some node takes time) and WithoutTiming leaves
// every Elapsed at 0 with the same counts, in both modes.
func TestObserverTiming(t *testing.T) {
	slow := pipeline.Must(pipeline.New("slow", pipeline.StageNode("sleep", pipeline.Func[string, string](
		func(_ context.Context, s string, emit func(string)) error {
			time.Sleep(time.Millisecond)
			emit(s)
			return nil
		}))))
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			var timed, untimed []pipeline.Observation
			var mu sync.Mutex
			record := func(into *[]pipeline.Observation) pipeline.Observer {
				return pipeline.ObserverFunc(func(o pipeline.Observation) {
					mu.Lock()
					*into = append(*into, o)
					mu.Unlock()
				})
			}
			in := []string{"a", "b", "c"}
			if _, err := runCollect[string, string](t, slow, in, pipeline.WithMode(m), pipeline.WithObserver(record(&timed))); err != nil {
				t.Fatal(err)
			}
			if _, err := runCollect[string, string](t, slow, in, pipeline.WithMode(m), pipeline.WithObserver(record(&untimed)), pipeline.WithoutTiming()); err != nil {
				t.Fatal(err)
			}
			if len(timed) != len(in) || len(untimed) != len(in) {
				t.Fatalf("%d and %d observations, want %d", len(timed), len(untimed), len(in))
			}
			for i := range timed {
				if timed[i].Elapsed < time.Millisecond || untimed[i].Elapsed != 0 {
					t.Errorf("elapsed %v timed, %v untimed", timed[i].Elapsed, untimed[i].Elapsed)
				}
				timed[i].Elapsed = 0
			}
			if diff := cmp.Diff(timed, untimed); diff != "" {
				t.Errorf("observations differ beyond Elapsed (-timed +untimed):\n%s", diff)
			}
		})
	}
}

func TestThen(t *testing.T) {
	s := pipeline.Then(pipeline.Then(splitter(), pipeline.Map(strings.ToUpper)), pipeline.Stage[string, []string](&chunker{n: 2}))
	g := pipeline.Must(pipeline.New("then", pipeline.StageNode("all", s)))
	got, err := runCollect[string, []string](t, g, []string{"a b c"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]string{{"A", "B"}, {"C"}}, got); diff != "" {
		t.Fatal(diff)
	}
}

func TestExports(t *testing.T) {
	g := wordsGraph(t, 2)
	for _, f := range []string{"text", "mermaid", "dot"} {
		out, err := g.Format(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range g.Names() {
			if !strings.Contains(out, name) {
				t.Fatalf("%s export lacks %q:\n%s", f, name, out)
			}
		}
	}
	if _, err := g.Format("png"); err == nil {
		t.Fatal("unknown format accepted")
	}
	if !strings.HasPrefix(g.Mermaid(), "flowchart LR") || !strings.HasPrefix(g.DOT(), "digraph") {
		t.Fatal("bad export headers")
	}
}

// borrowed mimics a decoder event pointing into a reused buffer.
type borrowed struct{ b []byte }

func (b borrowed) Own() borrowed { return borrowed{append([]byte(nil), b.b...)} }

func TestAsyncOwnsBorrowedValues(t *testing.T) {
	g := pipeline.Must(pipeline.New("borrow",
		pipeline.NewNode("reuse", func() pipeline.Stage[string, borrowed] {
			buf := make([]byte, 0, 8)
			return pipeline.Func[string, borrowed](func(_ context.Context, s string, emit func(borrowed)) error {
				buf = append(buf[:0], s...)
				emit(borrowed{buf})
				return nil
			})
		}),
		pipeline.StageNode("str", pipeline.Map(func(b borrowed) string { return string(b.b) })),
	))
	in := []string{"one", "two", "three", "four"}
	got, err := runCollect[string, string](t, g, in, pipeline.WithMode(pipeline.Async))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, got); diff != "" {
		t.Fatal(diff)
	}
}

// A middleware that hands the stage back untouched must not cost the typed
// fast path anything.
func TestIdentityMiddlewareKeepsFastPath(t *testing.T) {
	identity := func(_ pipeline.NodeInfo, next pipeline.AnyStage) pipeline.AnyStage { return next }
	in := make([]string, 1000)
	for i := range in {
		in[i] = "a b"
	}
	allocs := func(g *pipeline.Graph) float64 {
		return testing.AllocsPerRun(20, func() {
			_ = pipeline.Run(context.Background(), g, sliceSource(in), pipeline.SinkFunc[string](func(string) error { return nil }))
		})
	}
	g := wordsGraph(t, 2)
	wrapped, err := g.WrapAll(identity)
	if err != nil {
		t.Fatal(err)
	}
	// One adapter per node per run is allowed; nothing per element.
	if a, b := allocs(g), allocs(wrapped); b > a+float64(g.Len()) {
		t.Fatalf("identity middleware: %v allocs per run, unwrapped %v", b, a)
	}
}

// After a node fails, nodes downstream of it must never see a normal end of
// input (and so never Finish) — in async mode too.
func TestNoFinishDownstreamOfFailure(t *testing.T) {
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			var finishes atomic.Int64
			g := pipeline.Must(pipeline.New("fail-then-finish",
				pipeline.StageNode("fail", pipeline.Func[int, int](func(_ context.Context, v int, emit func(int)) error {
					if v == 3 {
						return errors.New("boom")
					}
					emit(v)
					return nil
				})),
				pipeline.NewNode("after", func() pipeline.Stage[int, int] { return finishCounter{&finishes} }),
			))
			for range 300 {
				if _, err := runCollect[int, int](t, g, []int{1, 2, 3, 4}, pipeline.WithMode(m)); err == nil {
					t.Fatal("no error")
				}
			}
			if n := finishes.Load(); n != 0 {
				t.Fatalf("downstream stage finished %d times after an upstream failure", n)
			}
		})
	}
}

func TestOwnFuncDoesNotBox(t *testing.T) {
	own := pipeline.OwnFunc[borrowed]()
	if own == nil || pipeline.OwnFunc[int]() != nil {
		t.Fatal("OwnFunc: wrong detection")
	}
	v := borrowed{b: nil}
	if n := testing.AllocsPerRun(100, func() { v = own(v) }); n != 0 {
		t.Fatalf("OwnFunc allocates %v per call", n)
	}
}

// An error stops the run only after everything produced before it was
// delivered, in both modes: a source that fails after its last element (an
// upstream connection that breaks after "[DONE]") or a stage that fails at
// input k gives the sink exactly what a fused run gives it.
func TestErrorsArriveInOrder(t *testing.T) {
	broken := errors.New("connection reset")
	in := make([]int, 500)
	for i := range in {
		in[i] = i
	}
	failingSource := pipeline.SourceFunc[int](func(_ context.Context, emit func(int) error) error {
		for _, v := range in {
			if err := emit(v); err != nil {
				return err
			}
		}
		return broken
	})
	g := pipeline.Must(pipeline.New("order",
		pipeline.StageNode("inc", pipeline.Map(func(v int) int { return v + 1 })),
		pipeline.StageNode("double", pipeline.Map(func(v int) int { return 2 * v })),
	))
	failAt := pipeline.Must(pipeline.New("order-stage",
		pipeline.StageNode("inc", pipeline.Map(func(v int) int { return v + 1 })),
		pipeline.StageNode("fail-at-400", pipeline.Func[int, int](func(_ context.Context, v int, emit func(int)) error {
			emit(v)
			if v == 400 {
				return broken
			}
			return nil
		})),
		pipeline.StageNode("double", pipeline.Map(func(v int) int { return 2 * v })),
	))
	for _, tc := range []struct {
		name string
		g    *pipeline.Graph
		src  pipeline.Source[int]
		want int // elements the sink must see
	}{
		{"source fails after its last element", g, failingSource, 500},
		{"stage fails at input 400", failAt, sliceSource(in), 400},
	} {
		for _, m := range modes {
			t.Run(tc.name+"/"+m.String(), func(t *testing.T) {
				for range 50 {
					var got []int
					err := pipeline.Run(context.Background(), tc.g, tc.src, pipeline.SinkFunc[int](func(v int) error {
						got = append(got, v)
						return nil
					}), pipeline.WithMode(m), pipeline.WithMaxBatch(7))
					if !errors.Is(err, broken) {
						t.Fatalf("err = %v", err)
					}
					if len(got) != tc.want || got[len(got)-1] != 2*tc.want {
						t.Fatalf("sink saw %d elements (last %v), want %d", len(got), got[len(got)-1:], tc.want)
					}
				}
			})
		}
	}
}
