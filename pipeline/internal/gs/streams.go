package gs

import (
	"context"
	"errors"
	"sync"

	"github.com/reugn/go-streams"
)

// The go-streams interfaces under names of this package, so that package
// pipeline can offer them in its API without importing go-streams itself.
type (
	StreamsSource = streams.Source
	StreamsFlow   = streams.Flow
	StreamsSink   = streams.Sink
)

// Receive calls emit for every element sent on out, in order, until out is
// closed (nil), emit fails (its error) or ctx is done (ctx.Err()).
func Receive(ctx context.Context, out <-chan any, emit func(any) error) error {
	if out == nil {
		return errors.New("gs: the go-streams outlet has no output channel")
	}
	done := ctx.Done()
	for {
		select {
		case v, ok := <-out:
			if !ok {
				return nil
			}
			if err := emit(v); err != nil {
				return err
			}
		case <-done:
			return ctx.Err()
		}
	}
}

// Send sends v on in, or returns ctx.Err() if ctx is done first.
func Send(ctx context.Context, in chan<- any, v any) error {
	select {
	case in <- v:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RunFunc runs a graph: it reads its input from in until in is closed,
// sends its output on out (honouring ctx) and returns the run's error. It
// must not close out.
type RunFunc func(ctx context.Context, in <-chan any, out chan<- any) error

// GraphFlow is a pipeline run behind go-streams' streams.Flow interface, so
// that a graph can stand inside a go-streams pipeline. Elements sent to In
// are the run's input, which ends when In is closed (as go-streams closes
// a component's input when its upstream is done); the run's outputs come
// out of Out, which is closed when the run is over, or go on through Via or
// To as with any go-streams flow.
//
// Like go-streams' own components it runs goroutines, but it starts them
// only when it is first used (In, Out, Via, To or Wait), not when it is
// made. They end when the input is closed and the output taken, or when the
// flow's context is done. Wait returns the run's error: a go-streams
// pipeline has no other place for it. When the run fails or is cancelled,
// what it produced before has been delivered, Out is closed, and the rest
// of the input is read and dropped until the upstream closes it: go-streams
// components cannot be cancelled, and one left blocked on sending would
// never end.
type GraphFlow struct {
	ctx   context.Context
	run   RunFunc
	in    chan any
	out   chan any
	start sync.Once
	done  chan struct{}
	err   error

	mu    sync.Mutex
	wired bool // Via or To was called
	wrong error
}

var _ streams.Flow = (*GraphFlow)(nil)

// NewGraphFlow returns a flow that runs run under ctx once it is used.
func NewGraphFlow(ctx context.Context, run RunFunc) *GraphFlow {
	return &GraphFlow{ctx: ctx, run: run, in: make(chan any), out: make(chan any), done: make(chan struct{})}
}

func (f *GraphFlow) begin() { f.start.Do(func() { go f.loop() }) }

func (f *GraphFlow) loop() {
	err := f.run(f.ctx, f.in, f.out)
	f.err = err
	close(f.out)
	close(f.done)
	if err != nil {
		// Leave no upstream blocked on sending to a run that is over.
		for range f.in {
		}
	}
}

// In returns the channel the flow's input is sent on; the upstream closes
// it when its output ends.
func (f *GraphFlow) In() chan<- any {
	f.begin()
	return f.in
}

// Out returns the channel the flow's output comes out of; it is closed when
// the run is over.
func (f *GraphFlow) Out() <-chan any {
	f.begin()
	return f.out
}

// Via streams the flow's output to next, in a goroutine, closes next's
// input when the output ends, and returns next.
func (f *GraphFlow) Via(next streams.Flow) streams.Flow {
	if f.claim(next) {
		go f.transmit(next)
	}
	return next
}

// To streams the flow's output to sink and blocks until the sink has
// processed it (AwaitCompletion).
func (f *GraphFlow) To(sink streams.Sink) {
	if f.claim(sink) {
		f.transmit(sink)
	}
	sink.AwaitCompletion()
}

// errWiredTwice is the flow's error when its output is connected twice.
var errWiredTwice = errors.New("gs: the flow's output is already connected (Via or To was called before)")

// claim starts the flow and reports whether its output is still free for
// inlet; a second connection gets an empty stream (its input is closed at
// once) and the flow reports the mistake from Wait.
func (f *GraphFlow) claim(inlet streams.Inlet) bool {
	f.begin()
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.wired {
		f.wired = true
		return true
	}
	if f.wrong == nil {
		f.wrong = errWiredTwice
	}
	close(inlet.In())
	return false
}

// transmit sends the flow's output to inlet and closes inlet's input at the
// end, or when the flow's context is done.
func (f *GraphFlow) transmit(inlet streams.Inlet) {
	in := inlet.In()
	defer close(in)
	done := f.ctx.Done()
	for v := range f.out {
		select {
		case in <- v:
		case <-done:
			return
		}
	}
}

// Wait starts the flow if it was not used yet, waits for its run to end and
// returns the run's error (nil after a successful run).
func (f *GraphFlow) Wait() error {
	f.begin()
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	return errors.Join(f.err, f.wrong)
}
