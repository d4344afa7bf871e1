package pipeline

import (
	"context"
	"errors"
	"reflect"
	"runtime/debug"
	"time"

	"github.com/harnessflow/harnessflow/pipeline/internal/gs"
)

// asyncRun is the shared state of one async run.
type asyncRun struct {
	obs      Observer
	maxBatch int
}

// processor is what an async node hands to the runtime.
type processor = gs.Processor

// edge is the free list of batches travelling over one connection, so that
// a steady stream reuses its batches instead of allocating new ones.
type edge[T any] struct {
	free chan *[]T
	own  func(T) T // non-nil when T is Borrowed
}

func newEdgeOf[T any](buffer int) *edge[T] {
	e := &edge[T]{free: make(chan *[]T, buffer+4)}
	e.own = OwnFunc[T]()
	return e
}

// OwnFunc returns T's Own method as a function when T implements
// Borrowed[T], and nil otherwise. Calling it does not box the value.
func OwnFunc[T any]() func(T) T {
	var zero T
	if _, ok := any(zero).(Borrowed[T]); !ok {
		return nil
	}
	if m, ok := reflect.TypeFor[T]().MethodByName("Own"); ok {
		if f, ok := m.Func.Interface().(func(T) T); ok {
			return f
		}
	}
	return func(v T) T { return any(v).(Borrowed[T]).Own() }
}

func (e *edge[T]) get(capacity int) *[]T {
	select {
	case b := <-e.free:
		return b
	default:
		s := make([]T, 0, capacity)
		return &s
	}
}

func (e *edge[T]) put(b *[]T) {
	clear(*b)
	*b = (*b)[:0]
	select {
	case e.free <- b:
	default:
	}
}

func (n *inst[In, Out]) newEdge(buffer int) any { return newEdgeOf[Out](buffer) }

func runAsync[In, Out any](ctx context.Context, g *Graph, insts []instance, src Source[In], sink Sink[Out], cfg *runConfig) error {
	rt := &asyncRun{obs: cfg.observer, maxBatch: cfg.maxBatch}
	r := gs.NewRuntime(cfg.buffer)
	// edges[0] is the source's output; edges[i+1] is node i's output.
	edges := make([]any, len(insts)+1)
	edges[0] = newEdgeOf[In](cfg.buffer)
	for i, in := range insts {
		edges[i+1] = in.newEdge(cfg.buffer)
	}
	source := r.NewSource(produce(src, edges[0].(*edge[In]), cfg.maxBatch))
	last := source.Via(r.NewFlow(insts[0].asyncProc(rt, 0, g.nodes[0].info.Name, edges[0], edges[1])))
	for i := 1; i < len(insts); i++ {
		last = last.Via(r.NewFlow(insts[i].asyncProc(rt, i, g.nodes[i].info.Name, edges[i], edges[i+1])))
	}
	out := edges[len(insts)].(*edge[Out])
	var sinkSeq uint64
	last.To(r.NewSink(func(_ context.Context, batch any) (err error) {
		b := batch.(*[]Out)
		defer func() {
			if v := recover(); v != nil {
				err = &StageError{Stage: SinkName, Seq: sinkSeq, Err: &PanicError{Value: v, Stack: debug.Stack()}}
			}
		}()
		for _, v := range *b {
			sinkSeq++
			if e := sink.Accept(v); e != nil {
				return &StageError{Stage: SinkName, Seq: sinkSeq, Err: e}
			}
		}
		out.put(b)
		return nil
	}))
	err := r.Run(ctx)
	var pe *gs.PanicError
	if errors.As(err, &pe) {
		return &StageError{Stage: "async runtime", Err: &PanicError{Value: pe.Value, Stack: pe.Stack}}
	}
	return err
}

// produce adapts a Source to the runtime. Elements are sent as soon as they
// are produced, so a slow source never leaves elements waiting in a
// half-full batch; a BatchSource sends whole batches.
func produce[T any](src Source[T], e *edge[T], maxBatch int) gs.Producer {
	return func(ctx context.Context, send gs.Sender) (err error) {
		defer func() {
			if v := recover(); v != nil {
				err = &StageError{Stage: SourceName, Err: &PanicError{Value: v, Stack: debug.Stack()}}
			}
		}()
		if bs, ok := src.(BatchSource[T]); ok {
			err = bs.StreamBatches(ctx, func(vs []T) error {
				for len(vs) > 0 {
					k := min(len(vs), maxBatch)
					b := e.get(k)
					for _, v := range vs[:k] {
						if e.own != nil {
							v = e.own(v)
						}
						*b = append(*b, v)
					}
					if err := send(b); err != nil {
						return err
					}
					vs = vs[k:]
				}
				return nil
			})
		} else {
			err = src.Stream(ctx, func(v T) error {
				if e.own != nil {
					v = e.own(v)
				}
				b := e.get(1)
				*b = append(*b, v)
				return send(b)
			})
		}
		if err != nil && !errors.Is(err, ctx.Err()) {
			var se *StageError
			if !errors.As(err, &se) {
				err = &StageError{Stage: SourceName, Err: err}
			}
		}
		return err
	}
}

// asyncNode runs one typed stage inside a gs.Flow.
type asyncNode[In, Out any] struct {
	n       *inst[In, Out]
	rt      *asyncRun
	in      *edge[In]
	out     *edge[Out]
	pending *[]Out
	ctx     context.Context
	send    gs.Sender
	sendErr error
	emit    func(Out)
	blocked time.Duration // time emit spent waiting on send (observed runs only)
}

func (n *inst[In, Out]) asyncProc(rt *asyncRun, idx int, name string, in, out any) processor {
	n.idx, n.name = idx, name
	a := &asyncNode[In, Out]{n: n, rt: rt, in: in.(*edge[In]), out: out.(*edge[Out])}
	a.emit = func(v Out) {
		if a.sendErr != nil {
			return
		}
		n.outs++
		if a.out.own != nil {
			v = a.out.own(v)
		}
		if a.pending == nil {
			a.pending = a.out.get(16)
		}
		*a.pending = append(*a.pending, v)
		if len(*a.pending) >= a.rt.maxBatch {
			b := a.pending
			a.pending = nil
			if a.rt.obs == nil {
				a.sendErr = a.send(b)
				return
			}
			// Waiting for downstream is not this node's time.
			start := time.Now()
			a.sendErr = a.send(b)
			a.blocked += time.Since(start)
		}
	}
	return a
}

func (a *asyncNode[In, Out]) Process(ctx context.Context, batch any, send gs.Sender) (err error) {
	n := a.n
	a.ctx, a.send = ctx, send
	b := batch.(*[]In)
	defer func() {
		if v := recover(); v != nil {
			err = &StageError{Stage: n.name, Seq: n.seq, Err: &PanicError{Value: v, Stack: debug.Stack()}}
		}
	}()
	for _, v := range *b {
		n.seq++
		var start time.Time
		outs := n.outs
		if a.rt.obs != nil {
			start, a.blocked = time.Now(), 0
		}
		perr := n.stage.Push(ctx, v, a.emit)
		if a.rt.obs != nil {
			a.rt.obs.Observe(Observation{Node: n.name, Index: n.idx, Seq: n.seq, Outputs: int(n.outs - outs), Elapsed: time.Since(start) - a.blocked, Err: perr})
		}
		if perr != nil {
			return &StageError{Stage: n.name, Seq: n.seq, Err: perr}
		}
		if a.sendErr != nil {
			return a.sendErr
		}
	}
	a.in.put(b)
	return nil
}

func (a *asyncNode[In, Out]) Pending() any {
	if a.pending == nil || len(*a.pending) == 0 {
		return nil
	}
	b := a.pending
	a.pending = nil
	return b
}

func (a *asyncNode[In, Out]) Finish(ctx context.Context, send gs.Sender) (err error) {
	n := a.n
	f := n.finisher()
	if f == nil {
		return nil
	}
	a.ctx, a.send = ctx, send
	defer func() {
		if v := recover(); v != nil {
			err = &StageError{Stage: n.name, Seq: n.seq, Finish: true, Err: &PanicError{Value: v, Stack: debug.Stack()}}
		}
	}()
	outs := n.outs
	start := time.Now()
	a.blocked = 0
	ferr := f.Finish(ctx, a.emit)
	if a.rt.obs != nil {
		a.rt.obs.Observe(Observation{Node: n.name, Index: n.idx, Seq: n.seq, Finish: true, Outputs: int(n.outs - outs), Elapsed: time.Since(start) - a.blocked, Err: ferr})
	}
	if ferr != nil {
		return &StageError{Stage: n.name, Seq: n.seq, Finish: true, Err: ferr}
	}
	return a.sendErr
}
