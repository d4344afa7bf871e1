package pipeline

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"time"
)

// Source produces the input of a run. Stream calls emit for every element,
// in order, and returns when the input ends (nil), or with the first error.
// When emit returns an error the source must stop and return that error.
type Source[T any] interface {
	Stream(ctx context.Context, emit func(T) error) error
}

// BatchSource is a Source that can also hand over many elements at once. The
// async mode uses it to move elements in batches from the start; emit must
// not retain the slice after it returns.
type BatchSource[T any] interface {
	Source[T]
	StreamBatches(ctx context.Context, emit func([]T) error) error
}

// SourceFunc adapts a function to a Source.
type SourceFunc[T any] func(ctx context.Context, emit func(T) error) error

// Stream calls f.
func (f SourceFunc[T]) Stream(ctx context.Context, emit func(T) error) error { return f(ctx, emit) }

// Sink receives the output of a run, in order, one element at a time, in a
// single goroutine. An error stops the run.
type Sink[T any] interface {
	Accept(v T) error
}

// SinkFunc adapts a function to a Sink.
type SinkFunc[T any] func(T) error

// Accept calls f.
func (f SinkFunc[T]) Accept(v T) error { return f(v) }

// Flusher is implemented by sinks that buffer; Flush is called once after a
// run that ended without error.
type Flusher interface{ Flush() error }

// Borrowed is implemented by element types that may point into memory owned
// by the stage that emitted them and valid only during the emit call (a
// decoder's line buffer, say). Own returns a copy that is safe to keep. The
// async mode calls Own before an element crosses a goroutine boundary; a
// sink that keeps elements must call it too.
type Borrowed[T any] interface {
	Own() T
}

// Resource is implemented by stages, sources and sinks that hold a
// resource for one run: a file, a connection, a go-streams connector. Run
// calls Open before the first element flows — on the source, then on every
// node's stage in graph order (the stage the node's factory made, whatever
// middleware wraps it), then on the sink — and Close once the run is over,
// whatever its outcome (success, failure, cancellation, panic), on each of
// them whose Open succeeded, in the reverse order. The run's goroutines have
// all stopped by then.
//
// ctx is done at the latest when Run returns, and in Async mode as soon as
// the run stops on an error, so a resource may keep it to end blocking work
// it does during the run. An Open error ends the run before it starts (the
// resources opened before it are closed); errors of Close are reported as
// the run's error when it has none, else joined to it (errors.Join), so
// that errors.Is and errors.As find both. Both come as *StageError with
// Lifecycle set. A stage with a resource holds per-run state: declare its
// node with NewNode (a fresh stage per run), not StageNode.
type Resource interface {
	Open(ctx context.Context) error
	Close() error
}

// Mode selects how a run executes.
type Mode int

const (
	// Fused runs every node as direct calls in the caller's goroutine.
	Fused Mode = iota
	// Async runs every node in its own goroutine, connected by channels
	// carrying batches — or, when nodes are marked with AsyncBoundary,
	// every segment of nodes from one mark to the next.
	Async
)

func (m Mode) String() string {
	switch m {
	case Fused:
		return "fused"
	case Async:
		return "async"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode parses "fused" or "async".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "fused", "":
		return Fused, nil
	case "async":
		return Async, nil
	}
	return 0, fmt.Errorf("pipeline: unknown mode %q (want fused or async)", s)
}

// Observation reports one Push or Finish of one node.
type Observation struct {
	Node    string
	Index   int    // position of the node in the graph
	Seq     uint64 // input sequence number (the last one when Finish)
	Finish  bool
	Outputs int           // elements emitted by this call
	Elapsed time.Duration // time spent in this node, excluding downstream nodes in fused mode
	Err     error
}

// Observer watches every node of a run uniformly; stages never count
// themselves. In async mode Observe is called from several goroutines.
type Observer interface {
	Observe(o Observation)
}

// ObserverFunc adapts a function to an Observer.
type ObserverFunc func(Observation)

// Observe calls f.
func (f ObserverFunc) Observe(o Observation) { f(o) }

type runConfig struct {
	mode     Mode
	observer Observer
	counter  Counter
	untimed  bool
	buffer   int
	maxBatch int
}

// RunOption configures Run.
type RunOption func(*runConfig)

// WithMode selects fused (the default) or async execution.
func WithMode(m Mode) RunOption { return func(c *runConfig) { c.mode = m } }

// WithObserver installs an observation hook on every node.
func WithObserver(o Observer) RunOption { return func(c *runConfig) { c.observer = o } }

// WithoutTiming makes the observations of the run carry no Elapsed (it is
// 0): the run reads no clock for them. Counting alone is what a proxy with
// thousands of streams wants; reading the clock twice per node per element
// is the larger part of what observing costs.
func WithoutTiming() RunOption { return func(c *runConfig) { c.untimed = true } }

// clockStart is the instant the node clocks count from, set once.
var clockStart = time.Now()

// clock times nodes for observations: one monotonic read per reading, none
// when it is off.
type clock struct{ on bool }

// now returns the time since clockStart, or 0 when the clock is off.
func (c clock) now() time.Duration {
	if !c.on {
		return 0
	}
	return time.Since(clockStart)
}

// WithBuffer sets how many batches each async channel holds (default 16).
func WithBuffer(n int) RunOption { return func(c *runConfig) { c.buffer = max(n, 0) } }

// WithMaxBatch caps the size of an async batch (default 256).
func WithMaxBatch(n int) RunOption {
	return func(c *runConfig) {
		if n > 0 {
			c.maxBatch = n
		}
	}
}

// Run streams src through g into sink and returns when the input is
// exhausted and every node has finished, or at the first error. Errors of a
// node come back as *StageError; a cancelled ctx comes back as ctx.Err().
// No goroutine started by Run is alive after it returns.
func Run[In, Out any](ctx context.Context, g *Graph, src Source[In], sink Sink[Out], opts ...RunOption) error {
	if g == nil || len(g.nodes) == 0 {
		return &GraphError{Op: "run", Err: ErrEmptyGraph}
	}
	if in := reflect.TypeFor[In](); g.In() != in {
		return &GraphError{Op: "run", Node: g.nodes[0].info.Name, Err: fmt.Errorf("%w: graph %s takes %v, source gives %v", ErrTypeMismatch, g.name, g.In(), in)}
	}
	if out := reflect.TypeFor[Out](); g.Out() != out {
		last := g.nodes[len(g.nodes)-1].info.Name
		return &GraphError{Op: "run", Node: last, Err: fmt.Errorf("%w: graph %s emits %v, sink takes %v", ErrTypeMismatch, g.name, g.Out(), out)}
	}
	cfg := runConfig{buffer: 16, maxBatch: 256}
	for _, o := range opts {
		o(&cfg)
	}
	insts, err := instantiate(g)
	if err != nil {
		return err
	}
	// The resources' context is done when the run is over (and in async
	// mode as soon as it fails); a run without resources needs none.
	rctx, cancel := ctx, context.CancelFunc(nil)
	res := resources(g, insts, src, sink)
	if res != nil {
		rctx, cancel = context.WithCancel(ctx)
		defer cancel()
		if err := res.open(rctx); err != nil {
			return err
		}
	}
	switch cfg.mode {
	case Async:
		var t *tally
		if cfg.counter != nil {
			t = newTally(g, cfg.observer)
			cfg.observer = t
		}
		err = runAsync(rctx, cancel, g, insts, src, sink, &cfg)
		if t != nil {
			markFailed(t.counts, err)
			cfg.counter.Count(t.counts)
		}
	default:
		err = runFused(rctx, g, insts, src, sink, &cfg)
	}
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		err = ctx.Err()
	}
	if err == nil {
		if f, ok := sink.(Flusher); ok {
			if ferr := f.Flush(); ferr != nil {
				err = &StageError{Stage: SinkName, Finish: true, Err: ferr}
			}
		}
	}
	return res.close(err)
}

// instantiate creates the stages of one run: every node's factory is
// called and its decorations applied. A panicking factory or one that
// returns no stage is an error of that node.
func instantiate(g *Graph) (insts []instance, err error) {
	insts = make([]instance, len(g.nodes))
	i := 0
	defer func() {
		if v := recover(); v != nil {
			insts, err = nil, &StageError{Stage: g.nodes[i].info.Name, Lifecycle: LifecycleOpen, Err: &PanicError{Value: v, Stack: debug.Stack()}}
		}
	}()
	for i = range g.nodes {
		n := g.nodes[i]
		in := n.factory()
		if in == nil {
			return nil, &StageError{Stage: n.info.Name, Lifecycle: LifecycleOpen, Err: errors.New("the node's factory returned a nil stage")}
		}
		if err := in.wrap(n.info, n.wraps); err != nil {
			return nil, &StageError{Stage: n.info.Name, Lifecycle: LifecycleOpen, Err: err}
		}
		insts[i] = in
	}
	return insts, nil
}

// runResources are the Resources of one run, in opening order.
type runResources struct {
	names  []string
	rs     []Resource
	opened int
}

// resources returns the Resources of a run, or nil when it has none.
func resources[In, Out any](g *Graph, insts []instance, src Source[In], sink Sink[Out]) *runResources {
	var res *runResources
	add := func(name string, v any) {
		if r, ok := v.(Resource); ok {
			if res == nil {
				res = &runResources{}
			}
			res.names, res.rs = append(res.names, name), append(res.rs, r)
		}
	}
	add(SourceName, src)
	for i, in := range insts {
		if r := in.resource(); r != nil {
			add(g.nodes[i].info.Name, r)
		}
	}
	add(SinkName, sink)
	return res
}

// open opens the resources in order; on an error it closes those it opened.
func (res *runResources) open(ctx context.Context) error {
	for i, r := range res.rs {
		if err := guard(func() error { return r.Open(ctx) }); err != nil {
			return res.close(&StageError{Stage: res.names[i], Lifecycle: LifecycleOpen, Err: err})
		}
		res.opened = i + 1
	}
	return nil
}

// close closes the opened resources in reverse order and returns runErr
// joined with their errors (a nil res has none).
func (res *runResources) close(runErr error) error {
	if res == nil {
		return runErr
	}
	errs := []error{runErr}
	for i := res.opened - 1; i >= 0; i-- {
		if err := guard(res.rs[i].Close); err != nil {
			errs = append(errs, &StageError{Stage: res.names[i], Lifecycle: LifecycleClose, Err: err})
		}
	}
	res.opened = 0
	if len(errs) == 1 {
		return runErr
	}
	if runErr == nil && len(errs) == 2 {
		return errs[1]
	}
	return errors.Join(errs...)
}

// guard calls f, turning a panic into a *PanicError.
func guard(f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return f()
}

// fusedRun is the shared state of one fused run.
type fusedRun struct {
	ctx   context.Context
	err   error
	cur   int // index of the node currently running; -1 source, len sink
	fin   int // index of the node whose Finish is running, or -1
	obs   Observer
	clock clock
	child time.Duration // time spent downstream of the running node
}

func (rt *fusedRun) fail(err error) {
	if rt.err == nil {
		rt.err = err
	}
}

func runFused[In, Out any](ctx context.Context, g *Graph, insts []instance, src Source[In], sink Sink[Out], cfg *runConfig) (err error) {
	rt := &fusedRun{ctx: ctx, cur: -1, fin: -1, obs: cfg.observer, clock: clock{on: cfg.observer != nil && !cfg.untimed}}
	n := len(insts)
	var sinkSeq uint64
	defer func() {
		if cfg.counter != nil {
			cfg.counter.Count(linkCounts(g, insts, sinkSeq, err))
		}
	}()
	defer func() {
		if v := recover(); v != nil {
			pe := &PanicError{Value: v, Stack: debug.Stack()}
			switch {
			case rt.cur < 0:
				err = &StageError{Stage: SourceName, Err: pe}
			case rt.cur >= n:
				err = &StageError{Stage: SinkName, Seq: sinkSeq, Err: pe}
			default:
				err = &StageError{Stage: g.nodes[rt.cur].info.Name, Seq: insts[rt.cur].seqNo(), Finish: rt.cur == rt.fin, Err: pe}
			}
		}
	}()
	var next any = func(v Out) {
		if rt.err != nil {
			return
		}
		sinkSeq++
		prev := rt.cur
		rt.cur = n
		if e := sink.Accept(v); e != nil {
			rt.fail(&StageError{Stage: SinkName, Seq: sinkSeq, Err: e})
		}
		rt.cur = prev
	}
	for i := n - 1; i >= 0; i-- {
		next = insts[i].fusedLink(rt, i, next, g.nodes[i].info.Name)
	}
	head := next.(func(In))
	done := ctx.Done()
	serr := src.Stream(ctx, func(v In) error {
		select {
		case <-done:
			return ctx.Err()
		default:
		}
		head(v)
		return rt.err
	})
	if rt.err != nil {
		return rt.err
	}
	if serr != nil {
		if errors.Is(serr, ctx.Err()) {
			return serr
		}
		return &StageError{Stage: SourceName, Err: serr}
	}
	if e := ctx.Err(); e != nil {
		return e
	}
	for i := range insts {
		if e := insts[i].fusedFinish(rt); e != nil {
			return e
		}
	}
	return rt.err
}

func (n *inst[In, Out]) fusedLink(rt *fusedRun, idx int, next any, name string) any {
	emit := next.(func(Out))
	n.next, n.idx, n.name = emit, idx, name
	if rt.obs != nil {
		counted := func(v Out) { n.outs++; emit(v) }
		n.next = counted
		return func(v In) {
			if rt.err != nil {
				return
			}
			n.seq++
			prev, saved, outs := rt.cur, rt.child, n.outs
			rt.cur, rt.child = idx, 0
			start := rt.clock.now()
			err := n.stage.Push(rt.ctx, v, counted)
			total := rt.clock.now() - start
			self := total - rt.child
			rt.cur, rt.child = prev, saved+total
			rt.obs.Observe(Observation{Node: name, Index: idx, Seq: n.seq, Outputs: int(n.outs - outs), Elapsed: self, Err: err})
			if err != nil {
				rt.fail(&StageError{Stage: name, Seq: n.seq, Err: err})
			}
		}
	}
	return func(v In) {
		if rt.err != nil {
			return
		}
		n.seq++
		prev := rt.cur
		rt.cur = idx
		if err := n.stage.Push(rt.ctx, v, emit); err != nil {
			rt.fail(&StageError{Stage: name, Seq: n.seq, Err: err})
		}
		rt.cur = prev
	}
}

func (n *inst[In, Out]) fusedFinish(rt *fusedRun) error {
	f := n.finisher()
	if f == nil || rt.err != nil {
		return rt.err
	}
	rt.cur, rt.child, rt.fin = n.idx, 0, n.idx
	outs := n.outs
	start := rt.clock.now()
	err := f.Finish(rt.ctx, n.next)
	rt.fin = -1
	if rt.obs != nil {
		self := rt.clock.now() - start - rt.child
		rt.obs.Observe(Observation{Node: n.name, Index: n.idx, Seq: n.seq, Finish: true, Outputs: int(n.outs - outs), Elapsed: self, Err: err})
	}
	rt.cur = -1
	if err != nil {
		rt.fail(&StageError{Stage: n.name, Seq: n.seq, Finish: true, Err: err})
	}
	return rt.err
}
