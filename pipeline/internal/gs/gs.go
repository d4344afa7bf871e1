// Package gs is the async runtime of the pipeline engine. Its components
// implement github.com/reugn/go-streams' Source, Flow and Sink interfaces, and
// add what go-streams itself lacks: a context on every send and receive,
// batches instead of single elements, errors that stop the run, panics turned
// into errors, and no goroutine that outlives Run.
//
// This is the only package of harnessflow that imports go-streams. Besides
// the runtime it holds what lets the pipeline package work with go-streams'
// own components (see streams.go): receiving from any streams.Outlet,
// sending to any streams.Inlet, and GraphFlow, a pipeline run behind the
// streams.Flow interface.
//
// Elements travel as opaque batches (any); the typed pipeline package decides
// what a batch is. Components are wired with Via and To, which only connect
// channels: nothing starts until Runtime.Run. Connecting a component of
// another runtime (one of go-streams' own, say) is an error that Run
// returns before starting anything; a batch that did not come from this
// runtime is an error of the component that receives it.
package gs

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/reugn/go-streams"
	"golang.org/x/sync/errgroup"
)

// Sender delivers one batch downstream. It blocks until the batch is taken
// or the run's context is done, in which case it returns the context error.
type Sender func(batch any) error

// Producer feeds a Source: it sends batches until its input ends.
type Producer func(ctx context.Context, send Sender) error

// Processor is the work of one Flow.
type Processor interface {
	// Process handles one input batch. Outputs accumulate inside the
	// processor; it may call send itself when its pending output grows.
	Process(ctx context.Context, batch any, send Sender) error
	// Pending hands over the output accumulated so far, or nil.
	Pending() any
	// Finish runs once after the input ended without error.
	Finish(ctx context.Context, send Sender) error
}

// Consumer handles the batches that reach a Sink.
type Consumer func(ctx context.Context, batch any) error

// PanicError is a panic recovered inside a component.
type PanicError struct {
	Value any
	Stack []byte
}

func (p *PanicError) Error() string { return fmt.Sprintf("panic: %v", p.Value) }

// Runtime owns the components of one run and their goroutines.
type Runtime struct {
	buffer int
	parts  []func(ctx context.Context) error
	err    error // a wiring error (see connect)
	// OnError, when set, is called once, from the failing component's
	// goroutine, with the first error of a component (which is the run's
	// error), after the others are told to stop.
	OnError func(err error)
}

// NewRuntime returns a runtime whose channels hold up to buffer batches.
func NewRuntime(buffer int) *Runtime {
	if buffer < 0 {
		buffer = 0
	}
	return &Runtime{buffer: buffer}
}

// Run starts every component, waits for all of them and returns the first
// error. When one fails, the others see a cancelled context; no goroutine
// started by Run is alive after it returns. The components run in an
// errgroup.Group; what Run adds is OnError and the rule that the first
// failure is the run's error (see fail).
func (r *Runtime) Run(ctx context.Context) error {
	if r.err != nil {
		return r.err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	var (
		once  sync.Once
		first error
	)
	// fail keeps the first error, stops the others and tells OnError; it
	// returns that first error, so the group's error is the first failure
	// whichever failing goroutine reaches the group first (once.Do returns
	// only after first is set).
	fail := func(err error) error {
		once.Do(func() {
			first = err
			cancel()
			if r.OnError != nil {
				r.OnError(err)
			}
		})
		return first
	}
	for _, part := range r.parts {
		g.Go(func() error {
			if err := runPart(gctx, part); err != nil {
				return fail(err)
			}
			return nil
		})
	}
	return g.Wait()
}

// runPart runs one component, turning a panic into a *PanicError.
func runPart(ctx context.Context, part func(ctx context.Context) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return part(ctx)
}

// Source emits the batches of a Producer.
type Source struct {
	rt      *Runtime
	out     chan any
	produce Producer
}

var _ streams.Source = (*Source)(nil)

// NewSource registers a source with the runtime. It starts with Runtime.Run.
func (r *Runtime) NewSource(produce Producer) *Source {
	s := &Source{rt: r, out: make(chan any, r.buffer), produce: produce}
	r.parts = append(r.parts, s.run)
	return s
}

// Out returns the channel the source's batches are sent on.
func (s *Source) Out() <-chan any { return s.out }

// Via connects the source to a Flow and returns that Flow.
func (s *Source) Via(next streams.Flow) streams.Flow { return s.rt.connect(s.out, next) }

func (s *Source) run(ctx context.Context) error {
	send := sender(ctx, s.out)
	if err := s.produce(ctx, send); err != nil {
		return deliverFailure(ctx, send, err)
	}
	close(s.out)
	return nil
}

// Flow runs a Processor over the batches it receives.
type Flow struct {
	rt   *Runtime
	in   chan any
	out  chan any
	proc Processor
	// maxDrain bounds how many ready input batches are processed before
	// the pending output is sent.
	maxDrain int
}

var _ streams.Flow = (*Flow)(nil)

// NewFlow registers a flow with the runtime. It starts with Runtime.Run.
func (r *Runtime) NewFlow(proc Processor) *Flow {
	f := &Flow{rt: r, in: make(chan any, r.buffer), out: make(chan any, r.buffer), proc: proc, maxDrain: 16}
	r.parts = append(r.parts, f.run)
	return f
}

// In returns the channel the flow receives batches on.
func (f *Flow) In() chan<- any { return f.in }

// Out returns the channel the flow sends batches on.
func (f *Flow) Out() <-chan any { return f.out }

// Via connects the flow's output to the next Flow and returns it.
func (f *Flow) Via(next streams.Flow) streams.Flow { return f.rt.connect(f.out, next) }

// To connects the flow's output to a Sink. Unlike go-streams operators it does
// not block: Runtime.Run runs the whole graph.
func (f *Flow) To(sink streams.Sink) { f.rt.connect(f.out, sink) }

// failure carries an error downstream in band, behind the batches produced
// before it, so that an error of a source or flow stops the run only after
// everything upstream of it was delivered — as in a fused run, where
// earlier elements have passed every stage before the error happens. The
// sink returns it as the run's error.
type failure struct{ err error }

// deliverFailure sends err downstream behind what was already sent; if the
// run is already cancelled it returns err itself.
func deliverFailure(ctx context.Context, send Sender, err error) error {
	if ctx.Err() != nil {
		return err
	}
	if serr := send(failure{err}); serr != nil {
		return err
	}
	return nil
}

// run closes the output only when the flow succeeded: a closed channel
// means "end of input" downstream and leads to Finish, which must not
// happen after a failure. A failure of this flow or one upstream travels
// on in band (see failure); the output is then left open and the run's
// context is cancelled once the sink reports the failure.
func (f *Flow) run(ctx context.Context) error {
	send := sender(ctx, f.out)
	finished, err := f.loop(ctx, send)
	switch {
	case err != nil:
		if flushErr := flush(f.proc, send); flushErr != nil {
			return err
		}
		return deliverFailure(ctx, send, err)
	case finished:
		close(f.out)
	}
	return nil
}

// loop processes input until it ends (finished), an upstream failure was
// passed on (not finished, no error), or this flow fails (err).
func (f *Flow) loop(ctx context.Context, send Sender) (finished bool, err error) {
	done := ctx.Done()
	// handle processes one receive; stop reports that the loop is over.
	handle := func(batch any, ok bool) (stop, finished bool, err error) {
		if !ok {
			// Both cases of the select may be ready: never Finish once the
			// run is cancelled.
			if err := ctx.Err(); err != nil {
				return true, false, err
			}
			if err := f.proc.Finish(ctx, send); err != nil {
				return true, false, err
			}
			return true, true, flush(f.proc, send)
		}
		if fl, isFailure := batch.(failure); isFailure {
			if err := flush(f.proc, send); err != nil {
				return true, false, err
			}
			if err := send(fl); err != nil {
				return true, false, err
			}
			return true, false, nil
		}
		return false, false, f.proc.Process(ctx, batch, send)
	}
	for {
		var batch any
		var ok bool
		select {
		case batch, ok = <-f.in:
		case <-done:
			return false, ctx.Err()
		}
		if stop, fin, err := handle(batch, ok); stop || err != nil {
			return fin, err
		}
		// Take what is already waiting before handing output on: batches grow
		// under load and stay small (low latency) when the input is slow.
	drain:
		for i := 1; i < f.maxDrain; i++ {
			select {
			case batch, ok = <-f.in:
				if stop, fin, err := handle(batch, ok); stop || err != nil {
					return fin, err
				}
			default:
				break drain
			}
		}
		if err := flush(f.proc, send); err != nil {
			return false, err
		}
	}
}

func flush(p Processor, send Sender) error {
	if b := p.Pending(); b != nil {
		return send(b)
	}
	return nil
}

// Sink hands the batches it receives to a Consumer.
type Sink struct {
	rt      *Runtime
	in      chan any
	consume Consumer
	done    chan struct{}
}

var _ streams.Sink = (*Sink)(nil)

// NewSink registers a sink with the runtime. It starts with Runtime.Run.
func (r *Runtime) NewSink(consume Consumer) *Sink {
	s := &Sink{rt: r, in: make(chan any, r.buffer), consume: consume, done: make(chan struct{})}
	r.parts = append(r.parts, s.run)
	return s
}

// In returns the channel the sink receives batches on.
func (s *Sink) In() chan<- any { return s.in }

// AwaitCompletion blocks until the sink has stopped.
func (s *Sink) AwaitCompletion() { <-s.done }

func (s *Sink) run(ctx context.Context) error {
	defer close(s.done)
	done := ctx.Done()
	for {
		select {
		case batch, ok := <-s.in:
			if !ok {
				return nil
			}
			if fl, isFailure := batch.(failure); isFailure {
				return fl.err
			}
			if err := s.consume(ctx, batch); err != nil {
				return err
			}
		case <-done:
			return ctx.Err()
		}
	}
}

// ErrForeignInlet is the cause of the error Runtime.Run returns when Via or
// To was given a component that this runtime did not create (one of
// go-streams' own, or one of another Runtime), and of a component's error
// when it receives something that is not a batch of this runtime.
var ErrForeignInlet = errors.New("gs: can only connect components of the same runtime")

// connect makes out the input channel of next. Components of this package
// share channels directly, so a connection costs no goroutine and no copy.
// A foreign inlet would need a transmit goroutine that cannot honour the
// run's context: it is refused, as an error Run returns before starting.
func (r *Runtime) connect(out chan any, next streams.Inlet) (flow streams.Flow) {
	flow, _ = next.(streams.Flow)
	switch n := next.(type) {
	case *Flow:
		if n.rt == r {
			n.in = out
			return flow
		}
	case *Sink:
		if n.rt == r {
			n.in = out
			return flow
		}
	}
	if r.err == nil {
		r.err = fmt.Errorf("%w: connected a %T", ErrForeignInlet, next)
	}
	return flow
}

// ForeignBatch returns the error of a component that received batch, which
// is not one of this runtime's batches.
func ForeignBatch(batch any) error {
	return fmt.Errorf("%w: received a %T, not a batch", ErrForeignInlet, batch)
}

// sender returns a Sender that honours ctx.
func sender(ctx context.Context, out chan<- any) Sender {
	done := ctx.Done()
	return func(batch any) error {
		select {
		case out <- batch:
			return nil
		case <-done:
			return ctx.Err()
		}
	}
}
