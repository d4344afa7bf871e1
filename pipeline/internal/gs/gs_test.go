package gs

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reugn/go-streams/extension"
	"github.com/reugn/go-streams/flow"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// proc passes []int batches on; it fails on failAt and counts Finish calls.
type proc struct {
	failAt   int
	pending  []int
	finishes atomic.Int64
}

func (p *proc) Process(_ context.Context, batch any, _ Sender) error {
	b, ok := batch.([]int)
	if !ok {
		return ForeignBatch(batch)
	}
	for _, v := range b {
		if p.failAt != 0 && v == p.failAt {
			return errBoom
		}
		p.pending = append(p.pending, v)
	}
	return nil
}

func (p *proc) Pending() any {
	if len(p.pending) == 0 {
		return nil
	}
	b := p.pending
	p.pending = nil
	return b
}

func (p *proc) Finish(context.Context, Sender) error {
	p.finishes.Add(1)
	p.pending = append(p.pending, -1)
	return nil
}

var errBoom = errors.New("boom")

func count(n int) Producer {
	return func(_ context.Context, send Sender) error {
		for i := 1; i <= n; i++ {
			if err := send([]int{i}); err != nil {
				return err
			}
		}
		return nil
	}
}

// outClosed drains what is buffered on ch and reports whether it is closed.
func outClosed(ch <-chan any) bool {
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return true
			}
		default:
			return false
		}
	}
}

func TestSuccessFinishesAndClosesOutput(t *testing.T) {
	r := NewRuntime(2)
	p := &proc{}
	var got []int
	f := r.NewFlow(p)
	r.NewSource(count(5)).Via(f).To(r.NewSink(func(_ context.Context, b any) error {
		got = append(got, b.([]int)...)
		return nil
	}))
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p.finishes.Load() != 1 || len(got) != 6 || got[5] != -1 {
		t.Fatalf("finishes=%d got=%v", p.finishes.Load(), got)
	}
	if !outClosed(f.Out()) {
		t.Fatal("output of a successful flow not closed")
	}
}

// A failing flow returns its error, never finishes, and leaves its output
// open, so the next flow never finishes either.
func TestErrorPropagatesAndOutputStaysOpen(t *testing.T) {
	for range 50 {
		r := NewRuntime(1)
		first, second := &proc{failAt: 3}, &proc{}
		f1, f2 := r.NewFlow(first), r.NewFlow(second)
		r.NewSource(count(1000)).Via(f1).Via(f2).To(r.NewSink(func(context.Context, any) error { return nil }))
		err := r.Run(context.Background())
		if !errors.Is(err, errBoom) {
			t.Fatalf("got %v, want boom", err)
		}
		if first.finishes.Load() != 0 || second.finishes.Load() != 0 {
			t.Fatalf("finish after failure: %d, %d", first.finishes.Load(), second.finishes.Load())
		}
		if outClosed(f1.Out()) || outClosed(f2.Out()) {
			t.Fatal("output of a failed run closed")
		}
	}
}

func TestSinkErrorStopsEverything(t *testing.T) {
	r := NewRuntime(0)
	endless := func(_ context.Context, send Sender) error {
		for {
			if err := send([]int{1}); err != nil {
				return err
			}
		}
	}
	r.NewSource(endless).Via(r.NewFlow(&proc{})).To(r.NewSink(func(context.Context, any) error { return errBoom }))
	if err := r.Run(context.Background()); !errors.Is(err, errBoom) {
		t.Fatalf("got %v", err)
	}
}

// Cancelling the run unblocks a source blocked on send, a flow blocked on
// send or receive and a sink blocked on receive or in its consumer.
func TestCancelUnblocksEveryComponent(t *testing.T) {
	endless := func(_ context.Context, send Sender) error {
		for {
			if err := send([]int{1}); err != nil {
				return err
			}
		}
	}
	idle := func(ctx context.Context, _ Sender) error { <-ctx.Done(); return ctx.Err() }
	stuck := func(ctx context.Context, _ any) error { <-ctx.Done(); return ctx.Err() }
	none := func(context.Context, any) error { return nil }
	cases := map[string]struct {
		src  Producer
		sink Consumer
	}{
		"blocked sends":    {endless, stuck},
		"blocked receives": {idle, none},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			r := NewRuntime(1)
			r.NewSource(c.src).Via(r.NewFlow(&proc{})).Via(r.NewFlow(&proc{})).To(r.NewSink(c.sink))
			errc := make(chan error, 1)
			go func() { errc <- r.Run(ctx) }()
			time.Sleep(20 * time.Millisecond)
			cancel()
			select {
			case err := <-errc:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("got %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Run did not return after cancel")
			}
		})
	}
}

// When the context is done, a flow whose input has ended must not Finish,
// and the run must not report success.
func TestNoFinishOrSuccessAfterCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 200 {
		r := NewRuntime(4)
		p := &proc{}
		r.NewSource(count(0)).Via(r.NewFlow(p)).To(r.NewSink(func(context.Context, any) error { return nil }))
		if err := r.Run(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled run returned %v", err)
		}
		if p.finishes.Load() != 0 {
			t.Fatal("Finish ran after the run was cancelled")
		}
	}
}

type panicky struct{ proc }

func (p *panicky) Process(context.Context, any, Sender) error { panic("in flow") }

func TestPanicBecomesError(t *testing.T) {
	r := NewRuntime(0)
	r.NewSource(count(3)).Via(r.NewFlow(&panicky{})).To(r.NewSink(func(context.Context, any) error { return nil }))
	var pe *PanicError
	if err := r.Run(context.Background()); !errors.As(err, &pe) || pe.Value != "in flow" {
		t.Fatalf("got %v", err)
	}
}

// Connecting a component of another runtime — one of go-streams' own, or
// one of another Runtime — is an error Run returns before starting
// anything, not a panic.
func TestForeignInletIsAnError(t *testing.T) {
	r := NewRuntime(1)
	pt := flow.NewPassThrough() // go-streams' own flow (it runs a goroutine)
	defer close(pt.In())
	var next any = r.NewSource(count(3)).Via(pt)
	if next != pt {
		t.Fatal("Via did not return the flow it was given")
	}
	if err := r.Run(context.Background()); !errors.Is(err, ErrForeignInlet) {
		t.Fatalf("foreign flow: %v", err)
	}

	r1, r2 := NewRuntime(1), NewRuntime(1)
	f1 := r1.NewFlow(&proc{})
	r1.NewSource(count(3)).Via(f1)
	f1.To(r2.NewSink(func(context.Context, any) error { return nil }))
	if err := r1.Run(context.Background()); !errors.Is(err, ErrForeignInlet) {
		t.Fatalf("sink of another runtime: %v", err)
	}
}

// A go-streams component feeding one of this runtime's flows sends plain
// elements, not batches: the flow fails with an error, the run ends.
func TestForeignElementIsAnError(t *testing.T) {
	r := NewRuntime(0)
	f := r.NewFlow(&proc{})
	ch := make(chan any, 1)
	ch <- 42
	close(ch)
	extension.NewChanSource(ch).Via(f) // go-streams transmits into f.In()
	f.To(r.NewSink(func(context.Context, any) error { return nil }))
	// The runtime has no source of its own here: run the flow and sink.
	if err := r.Run(context.Background()); !errors.Is(err, ErrForeignInlet) {
		t.Fatalf("got %v", err)
	}
}

// OnError hears of the first failure of a component.
func TestOnError(t *testing.T) {
	r := NewRuntime(0)
	var heard []error
	r.OnError = func(err error) { heard = append(heard, err) }
	r.NewSource(count(3)).Via(r.NewFlow(&proc{})).To(r.NewSink(func(context.Context, any) error { return errBoom }))
	if err := r.Run(context.Background()); !errors.Is(err, errBoom) || len(heard) != 1 || !errors.Is(heard[0], errBoom) {
		t.Fatalf("run %v, heard %v", err, heard)
	}
}
