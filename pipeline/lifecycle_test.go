package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/pipeline"
)

// journal records the lifecycle calls of one run's resources, in order.
type journal struct {
	mu     sync.Mutex
	events []string
}

func (j *journal) add(format string, args ...any) {
	j.mu.Lock()
	j.events = append(j.events, fmt.Sprintf(format, args...))
	j.mu.Unlock()
}

func (j *journal) take() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	e := j.events
	j.events = nil
	return e
}

// resStage is a pass-through stage with a resource: it may fail to open,
// to close, or at input failAt, and it checks that it is open when used.
type resStage struct {
	name     string
	j        *journal
	openErr  error
	closeErr error
	failAt   int
	open     bool
	ctx      context.Context
	ctxOut   *context.Context // where the test wants the Open ctx
}

func (s *resStage) Open(ctx context.Context) error {
	s.j.add("open %s", s.name)
	if s.ctxOut != nil {
		*s.ctxOut = ctx
	}
	if s.openErr != nil {
		return s.openErr
	}
	s.open, s.ctx = true, ctx
	return nil
}

func (s *resStage) Close() error {
	s.j.add("close %s", s.name)
	s.open = false
	return s.closeErr
}

func (s *resStage) Push(_ context.Context, v int, emit func(int)) error {
	if !s.open {
		return fmt.Errorf("%s used while not open", s.name)
	}
	if v == s.failAt {
		return errors.New("boom")
	}
	emit(v)
	return nil
}

// resSource and resSink are a source and a sink with resources.
type resSource struct {
	j  *journal
	in []int
}

func (s *resSource) Open(context.Context) error { s.j.add("open source"); return nil }
func (s *resSource) Close() error               { s.j.add("close source"); return nil }
func (s *resSource) Stream(ctx context.Context, emit func(int) error) error {
	for _, v := range s.in {
		if err := emit(v); err != nil {
			return err
		}
	}
	return nil
}

type resSink struct {
	j   *journal
	got []int
}

func (s *resSink) Open(context.Context) error { s.j.add("open sink"); return nil }
func (s *resSink) Close() error               { s.j.add("close sink"); return nil }
func (s *resSink) Accept(v int) error         { s.got = append(s.got, v); return nil }

func resNode(name string, j *journal, edit func(*resStage)) pipeline.Node {
	return pipeline.NewNode(name, func() pipeline.Stage[int, int] {
		s := &resStage{name: name, j: j}
		if edit != nil {
			edit(s)
		}
		return s
	})
}

// Run opens the source, the stages in order and the sink before the first
// element, and closes them in reverse order when the run is over — after a
// success, a stage error, a panic or a cancellation — in both modes; each
// run has fresh stages.
func TestResourceLifecycle(t *testing.T) {
	openAll := []string{"open source", "open a", "open b", "open sink"}
	closeAll := []string{"close sink", "close b", "close a", "close source"}
	all := append(append([]string(nil), openAll...), closeAll...)
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			j := &journal{}
			cases := []struct {
				name    string
				b       func(*resStage)
				ctx     func() context.Context
				wantErr func(error) bool
			}{
				{"success", nil, context.Background, func(err error) bool { return err == nil }},
				{"stage error", func(s *resStage) { s.failAt = 2 }, context.Background, func(err error) bool {
					var se *pipeline.StageError
					return errors.As(err, &se) && se.Stage == "b" && se.Seq == 2 && se.Lifecycle == ""
				}},
				{"cancelled", nil, func() context.Context {
					ctx, cancel := context.WithCancel(context.Background())
					cancel()
					return ctx
				}, func(err error) bool { return errors.Is(err, context.Canceled) }},
			}
			for _, tc := range cases {
				for run := range 2 {
					src, sink := &resSource{j: j, in: []int{1, 2, 3}}, &resSink{j: j}
					g := pipeline.Must(pipeline.New("res", resNode("a", j, nil), resNode("b", j, tc.b)))
					err := pipeline.Run(tc.ctx(), g, src, sink, pipeline.WithMode(m))
					if !tc.wantErr(err) {
						t.Fatalf("%s run %d: error %v", tc.name, run, err)
					}
					if diff := cmp.Diff(all, j.take()); diff != "" {
						t.Fatalf("%s run %d: lifecycle (-want +got)\n%s", tc.name, run, diff)
					}
					if tc.name == "success" && !cmp.Equal(sink.got, []int{1, 2, 3}) {
						t.Fatalf("sink got %v", sink.got)
					}
				}
			}
		})
	}
}

// An Open error ends the run before it starts: nothing flows, the
// resources opened before are closed, and the error names the stage.
func TestResourceOpenError(t *testing.T) {
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			j := &journal{}
			refused := errors.New("no such file")
			g := pipeline.Must(pipeline.New("res", resNode("a", j, nil), resNode("b", j, func(s *resStage) { s.openErr = refused }), resNode("c", j, nil)))
			sink := &resSink{j: j}
			err := pipeline.Run(context.Background(), g, &resSource{j: j, in: []int{1}}, sink, pipeline.WithMode(m))
			var se *pipeline.StageError
			if !errors.As(err, &se) || se.Stage != "b" || se.Lifecycle != pipeline.LifecycleOpen || !errors.Is(err, refused) {
				t.Fatalf("error %v", err)
			}
			if want := "stage b: open: no such file"; err.Error() != want {
				t.Errorf("error text %q, want %q", err, want)
			}
			want := []string{"open source", "open a", "open b", "close a", "close source"}
			if diff := cmp.Diff(want, j.take()); diff != "" {
				t.Fatalf("lifecycle (-want +got)\n%s", diff)
			}
			if len(sink.got) != 0 {
				t.Fatalf("elements flowed: %v", sink.got)
			}
		})
	}
}

// Close errors are the run's error after a success, and are joined to the
// run's error after a failure.
func TestResourceCloseError(t *testing.T) {
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			j := &journal{}
			flushFailed := errors.New("flush failed")
			closeFails := func(s *resStage) { s.closeErr = flushFailed }
			g := pipeline.Must(pipeline.New("res", resNode("a", j, closeFails)))
			err := pipeline.Run(context.Background(), g, &resSource{j: j, in: []int{1}}, &resSink{j: j}, pipeline.WithMode(m))
			var se *pipeline.StageError
			if !errors.As(err, &se) || se.Stage != "a" || se.Lifecycle != pipeline.LifecycleClose || !errors.Is(err, flushFailed) {
				t.Fatalf("after success: error %v", err)
			}
			g = pipeline.Must(pipeline.New("res", resNode("a", j, closeFails), resNode("b", j, func(s *resStage) { s.failAt = 1 })))
			err = pipeline.Run(context.Background(), g, &resSource{j: j, in: []int{1}}, &resSink{j: j}, pipeline.WithMode(m))
			if !errors.Is(err, flushFailed) || !strings.Contains(err.Error(), "stage b: input 1: boom") || !strings.Contains(err.Error(), "stage a: close: flush failed") {
				t.Fatalf("after failure: error %v", err)
			}
		})
	}
}

// The context Open gets is done once Run returned; in async mode as soon as
// the run fails, so that a resource blocked on it lets the run end.
func TestResourceContext(t *testing.T) {
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			var ctx context.Context
			j := &journal{}
			g := pipeline.Must(pipeline.New("res", resNode("a", j, func(s *resStage) { s.ctxOut = &ctx })))
			if err := pipeline.Run(context.Background(), g, &resSource{j: j}, &resSink{j: j}, pipeline.WithMode(m)); err != nil {
				t.Fatal(err)
			}
			if ctx == nil || ctx.Err() == nil {
				t.Fatalf("Open's context %v not done after Run", ctx)
			}
		})
	}
	// Async: a stage that blocks on its resource's context until the run
	// stops; the sink fails, which must release it.
	j := &journal{}
	waits := pipeline.NewNode("wait", func() pipeline.Stage[int, int] { return &waitStage{resStage{name: "wait", j: j}} })
	g := pipeline.Must(pipeline.New("wait", waits))
	failing := pipeline.SinkFunc[int](func(int) error { return errors.New("sink full") })
	done := make(chan error, 1)
	go func() {
		done <- pipeline.Run(context.Background(), g, sliceSource([]int{1, 2}), failing, pipeline.WithMode(pipeline.Async), pipeline.WithMaxBatch(1))
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "sink full") {
			t.Fatalf("error %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a stage blocked on its resource's context kept the failed run alive")
	}
}

// waitStage passes 1 on and then blocks on the context its resource got.
type waitStage struct{ resStage }

func (s *waitStage) Push(_ context.Context, v int, emit func(int)) error {
	if v == 1 {
		emit(v)
		return nil
	}
	<-s.ctx.Done()
	return s.ctx.Err()
}

// Panics in Open and Close are errors of the resource, like panics of a
// stage.
func TestResourcePanics(t *testing.T) {
	for _, m := range modes {
		panicky := pipeline.NewNode("p", func() pipeline.Stage[int, int] { return &panicRes{} })
		g := pipeline.Must(pipeline.New("p", panicky))
		err := pipeline.Run(context.Background(), g, sliceSource([]int{1}), pipeline.SinkFunc[int](func(int) error { return nil }), pipeline.WithMode(m))
		var pe *pipeline.PanicError
		var se *pipeline.StageError
		if !errors.As(err, &se) || se.Lifecycle != pipeline.LifecycleClose || !errors.As(err, &pe) || pe.Value != "in close" {
			t.Fatalf("%s: error %v", m, err)
		}
	}
}

type panicRes struct{}

func (*panicRes) Open(context.Context) error                       { return nil }
func (*panicRes) Close() error                                     { panic("in close") }
func (*panicRes) Push(_ context.Context, v int, e func(int)) error { e(v); return nil }

// Middleware around a stage does not hide its resource from the run, and a
// stage composed with Then opens and closes both parts.
func TestResourceThroughWrapsAndThen(t *testing.T) {
	j := &journal{}
	g := pipeline.Must(pipeline.New("res",
		pipeline.NewNode("ab", func() pipeline.Stage[int, int] {
			return pipeline.Then[int, int, int](&resStage{name: "a", j: j}, &resStage{name: "b", j: j})
		}),
		resNode("c", j, nil),
	))
	g, err := g.WrapAll(passMiddleware(nil))
	if err != nil {
		t.Fatal(err)
	}
	g, err = pipeline.WrapStage(g, "c", func(_ pipeline.NodeInfo, next pipeline.Stage[int, int]) pipeline.Stage[int, int] {
		return pipeline.Func[int, int](next.Push)
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := runCollect[int, int](t, g, []int{1, 2})
	if err != nil || !cmp.Equal(got, []int{1, 2}) {
		t.Fatalf("%v, %v", got, err)
	}
	want := []string{"open a", "open b", "open c", "close c", "close b", "close a"}
	if diff := cmp.Diff(want, j.take()); diff != "" {
		t.Fatalf("lifecycle (-want +got)\n%s", diff)
	}
}
