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
	clock    clock
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

// runAsync runs the graph on the gs runtime: the source, every node (or,
// with AsyncBoundary marks, every segment of nodes) and the sink in
// goroutines of their own. fail, when not nil, is called with the first
// error of a part.
func runAsync[In, Out any](ctx context.Context, fail context.CancelFunc, g *Graph, insts []instance, src Source[In], sink Sink[Out], cfg *runConfig) error {
	rt := &asyncRun{obs: cfg.observer, clock: clock{on: cfg.observer != nil && !cfg.untimed}, maxBatch: cfg.maxBatch}
	r := gs.NewRuntime(cfg.buffer)
	if fail != nil {
		r.OnError = func(error) { fail() }
	}
	// edges[0] is the source's output; edges[i+1] is node i's output.
	edges := make([]any, len(insts)+1)
	edges[0] = newEdgeOf[In](cfg.buffer)
	for i, in := range insts {
		edges[i+1] = in.newEdge(cfg.buffer)
	}
	source := r.NewSource(produce(src, edges[0].(*edge[In]), cfg.maxBatch))
	segs := segments(g)
	proc := func(k int) processor {
		lo, hi := segs[k], segs[k+1]
		if hi-lo == 1 {
			return insts[lo].asyncProc(rt, lo, g.nodes[lo].info.Name, edges[lo], edges[hi])
		}
		return newSegment(g, insts, lo, hi, edges, cfg)
	}
	last := source.Via(r.NewFlow(proc(0)))
	for k := 1; k < len(segs)-1; k++ {
		last = last.Via(r.NewFlow(proc(k)))
	}
	out := edges[len(insts)].(*edge[Out])
	var sinkSeq uint64
	last.To(r.NewSink(func(_ context.Context, batch any) (err error) {
		b, ok := batch.(*[]Out)
		if !ok {
			return &StageError{Stage: SinkName, Err: gs.ForeignBatch(batch)}
		}
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
			start := a.rt.clock.now()
			a.sendErr = a.send(b)
			a.blocked += a.rt.clock.now() - start
		}
	}
	return a
}

func (a *asyncNode[In, Out]) Process(ctx context.Context, batch any, send gs.Sender) (err error) {
	n := a.n
	a.ctx, a.send = ctx, send
	b, ok := batch.(*[]In)
	if !ok {
		return &StageError{Stage: n.name, Seq: n.seq, Err: gs.ForeignBatch(batch)}
	}
	defer func() {
		if v := recover(); v != nil {
			err = &StageError{Stage: n.name, Seq: n.seq, Err: &PanicError{Value: v, Stack: debug.Stack()}}
		}
	}()
	for _, v := range *b {
		n.seq++
		var start time.Duration
		outs := n.outs
		if a.rt.obs != nil {
			start, a.blocked = a.rt.clock.now(), 0
		}
		perr := n.stage.Push(ctx, v, a.emit)
		if a.rt.obs != nil {
			a.rt.obs.Observe(Observation{Node: n.name, Index: n.idx, Seq: n.seq, Outputs: int(n.outs - outs), Elapsed: a.rt.clock.now() - start - a.blocked, Err: perr})
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
	start := a.rt.clock.now()
	a.blocked = 0
	ferr := f.Finish(ctx, a.emit)
	if a.rt.obs != nil {
		a.rt.obs.Observe(Observation{Node: n.name, Index: n.idx, Seq: n.seq, Finish: true, Outputs: int(n.outs - outs), Elapsed: a.rt.clock.now() - start - a.blocked, Err: ferr})
	}
	if ferr != nil {
		return &StageError{Stage: n.name, Seq: n.seq, Finish: true, Err: ferr}
	}
	return a.sendErr
}

// segments returns where the async segments of g start, plus len(g.nodes)
// at the end: every node when no node is marked with AsyncBoundary, else
// the first node and every marked one (so marking only the first node runs
// all nodes fused in one goroutine).
func segments(g *Graph) []int {
	marked := false
	for _, n := range g.nodes {
		marked = marked || n.info.AsyncBoundary
	}
	starts := make([]int, 0, len(g.nodes)+1)
	for i, n := range g.nodes {
		if i == 0 || !marked || n.info.AsyncBoundary {
			starts = append(starts, i)
		}
	}
	return append(starts, len(g.nodes))
}

// segment runs the nodes lo..hi-1 of a graph fused (as direct calls, with
// the fused mode's error and observation rules) inside one gs.Flow.
type segment struct {
	g      *Graph
	insts  []instance
	lo, hi int
	rt     *fusedRun
	// feed pushes a batch of the first node's inputs through the chain.
	feed func(batch any) error
	// pending hands over the last node's output gathered so far.
	pending  func() any
	send     gs.Sender
	maxBatch int
}

func newSegment(g *Graph, insts []instance, lo, hi int, edges []any, cfg *runConfig) *segment {
	sg := &segment{g: g, insts: insts, lo: lo, hi: hi, maxBatch: cfg.maxBatch,
		rt: &fusedRun{cur: -1, fin: -1, obs: cfg.observer, clock: clock{on: cfg.observer != nil && !cfg.untimed}}}
	next := insts[hi-1].segmentTail(sg, edges[hi])
	for i := hi - 1; i >= lo; i-- {
		next = insts[i].fusedLink(sg.rt, i, next, g.nodes[i].info.Name)
	}
	sg.feed = insts[lo].feed(next, edges[lo], sg.rt)
	return sg
}

// recovered turns a panic inside the segment into the StageError of the
// node that was running, as runFused does.
func (sg *segment) recovered(err *error) {
	v := recover()
	if v == nil {
		return
	}
	i := sg.rt.cur
	if i < sg.lo || i >= sg.hi {
		i = sg.lo
	}
	*err = &StageError{Stage: sg.g.nodes[i].info.Name, Seq: sg.insts[i].seqNo(), Finish: i == sg.rt.fin,
		Err: &PanicError{Value: v, Stack: debug.Stack()}}
}

func (sg *segment) Process(ctx context.Context, batch any, send gs.Sender) (err error) {
	sg.rt.ctx, sg.send = ctx, send
	defer sg.recovered(&err)
	return sg.feed(batch)
}

func (sg *segment) Pending() any { return sg.pending() }

func (sg *segment) Finish(ctx context.Context, send gs.Sender) (err error) {
	sg.rt.ctx, sg.send = ctx, send
	defer sg.recovered(&err)
	for i := sg.lo; i < sg.hi; i++ {
		if err := sg.insts[i].fusedFinish(sg.rt); err != nil {
			return err
		}
	}
	return sg.rt.err
}

// feed returns the function that pushes a batch of this node's inputs
// through head, the fused chain of a segment starting with this node.
func (n *inst[In, Out]) feed(head, in any, rt *fusedRun) func(batch any) error {
	h, e := head.(func(In)), in.(*edge[In])
	return func(batch any) error {
		b, ok := batch.(*[]In)
		if !ok {
			return &StageError{Stage: n.name, Seq: n.seq, Err: gs.ForeignBatch(batch)}
		}
		for _, v := range *b {
			h(v)
			if rt.err != nil {
				return rt.err
			}
		}
		e.put(b)
		return nil
	}
}

// segmentTail returns the emit function of this node when it ends a
// segment: it gathers the outputs into batches for the next segment (owning
// borrowed values) and sends a batch when it is full.
func (n *inst[In, Out]) segmentTail(sg *segment, out any) any {
	e := out.(*edge[Out])
	var pending *[]Out
	sg.pending = func() any {
		if pending == nil || len(*pending) == 0 {
			return nil
		}
		b := pending
		pending = nil
		return b
	}
	rt := sg.rt
	return func(v Out) {
		if rt.err != nil {
			return
		}
		if e.own != nil {
			v = e.own(v)
		}
		if pending == nil {
			pending = e.get(16)
		}
		*pending = append(*pending, v)
		if len(*pending) < sg.maxBatch {
			return
		}
		b := pending
		pending = nil
		start := rt.clock.now()
		if err := sg.send(b); err != nil {
			rt.fail(err)
		}
		// Waiting for the next segment is not this node's time.
		rt.child += rt.clock.now() - start
	}
}
