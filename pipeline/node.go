package pipeline

import (
	"context"
	"errors"
	"fmt"
	"reflect"
)

// Node is one named step of a Graph: a stage factory plus its declared input
// and output types. Nodes are values; a Graph never shares stage state
// between runs because it calls the factory on every Run.
type Node struct {
	info    NodeInfo
	factory func() instance
	wraps   []wrapper
	// fromAny and toAny build the adapter nodes that let a graph starting
	// (or ending) with this node run on untyped elements (Graph.AsFlow).
	fromAny, toAny func(name string) Node
}

// NodeInfo describes a node.
type NodeInfo struct {
	Name        string
	Description string
	In, Out     reflect.Type
	// AsyncBoundary marks the node as the start of an asynchronous segment
	// (see the AsyncBoundary option).
	AsyncBoundary bool
	// KeepsNoInput marks a stage that keeps no reference to an input once
	// Push returns (see the KeepsNoInput option).
	KeepsNoInput bool
}

// NodeOption configures a node.
type NodeOption func(*NodeInfo)

// Describe sets the one-line description shown by Graph.Describe and the exports.
func Describe(text string) NodeOption { return func(i *NodeInfo) { i.Description = text } }

// AsyncBoundary marks the node as an asynchronous boundary: in Async mode a
// graph with at least one marked node runs as segments, each starting at a
// marked node (or at the first node) and running fused — as direct calls,
// in one goroutine of its own — up to the next marked node; segments are
// connected by channels carrying batches, as the nodes of an unmarked graph
// are. Mark the nodes whose work should overlap with the rest of the graph
// (a slow post-processor, say) and leave cheap nodes fused with their
// neighbours. A graph without marked nodes runs in Async mode as before,
// every node in its own goroutine. Fused mode ignores the marks.
func AsyncBoundary() NodeOption { return func(i *NodeInfo) { i.AsyncBoundary = true } }

// KeepsNoInput declares that the node's stage keeps no reference to an
// input once its Push returns — it copies what it keeps — so that whoever
// pushed the input may reuse its memory (see Graph.InputReusable). Declare
// it only for stages that hold to it; the graph cannot check it.
func KeepsNoInput() NodeOption { return func(i *NodeInfo) { i.KeepsNoInput = true } }

// NewNode declares a node named name whose stages come from factory.
// factory is called once per Run. A nil factory makes a node that New and
// the graph edits reject with ErrNilFactory.
func NewNode[In, Out any](name string, factory func() Stage[In, Out], opts ...NodeOption) Node {
	info := NodeInfo{Name: name, In: reflect.TypeFor[In](), Out: reflect.TypeFor[Out]()}
	for _, o := range opts {
		o(&info)
	}
	n := Node{info: info, fromAny: fromAnyNode[In], toAny: toAnyNode[Out]}
	if factory != nil {
		n.factory = func() instance {
			s := factory()
			if s == nil {
				return nil
			}
			return newInst(s)
		}
	}
	return n
}

// StageNode declares a node for a stateless stage value, shared by all runs.
// Use it only for stages without per-run state (Map, Filter, pure funcs).
// A nil s makes a node that New rejects with ErrNilFactory.
func StageNode[In, Out any](name string, s Stage[In, Out], opts ...NodeOption) Node {
	if s == nil {
		return NewNode[In, Out](name, nil, opts...)
	}
	return NewNode(name, func() Stage[In, Out] { return s }, opts...)
}

// Info describes the node.
func (n Node) Info() NodeInfo { return n.info }

// Name returns the node's name.
func (n Node) Name() string { return n.info.Name }

// Renamed returns a copy of n under another name.
func (n Node) Renamed(name string) Node { n.info.Name = name; return n }

// With returns a copy of n with opts applied (Describe, AsyncBoundary).
func (n Node) With(opts ...NodeOption) Node {
	for _, o := range opts {
		o(&n.info)
	}
	return n
}

// AnyStage is the untyped view of a stage that middleware sees. Values keep
// their dynamic types; a middleware must pass on values of the node's types.
type AnyStage interface {
	Push(ctx context.Context, in any, emit func(any)) error
	Finish(ctx context.Context, emit func(any)) error
}

// Middleware decorates the stage of a node (logging, timing, redaction of
// what passes). It is applied per run, to the fresh stage instance. It sees
// every element boxed in an any; WrapStage decorates one node without that
// cost.
type Middleware func(node NodeInfo, next AnyStage) AnyStage

// wrapper is one decoration of a node: a Middleware, or the typed wrap of
// WrapStage (which takes and returns the node's Stage[In, Out] as an any).
type wrapper struct {
	mw    Middleware
	typed func(node NodeInfo, s any) (any, error)
}

// WrapStage returns a graph where wrap decorates the stage of the node
// called name, typed: wrap gets the run's fresh Stage[In, Out] of the node
// (after the decorations added before, which it wraps around) and returns
// the stage to run in its place, so elements pass without being boxed into
// any. The node's types must be In and Out (ErrTypeMismatch otherwise). A
// wrapping stage should implement Finisher when the stage it wraps may (and
// call its Finish); the node's Resource, if any, is opened and closed by the
// run whatever wraps it.
func WrapStage[In, Out any](g *Graph, name string, wrap func(node NodeInfo, next Stage[In, Out]) Stage[In, Out]) (*Graph, error) {
	if wrap == nil {
		return nil, &GraphError{Op: "wrap", Node: name, Err: ErrNilMiddleware}
	}
	typed := func(info NodeInfo, s any) (any, error) {
		out := wrap(info, s.(Stage[In, Out]))
		if out == nil {
			return nil, errNilWrap
		}
		return out, nil
	}
	if name == "" {
		return nil, &GraphError{Op: "wrap", Err: ErrUnknownNode}
	}
	return g.edit("wrap", name, func(ns []Node, i int) ([]Node, error) {
		in, out := reflect.TypeFor[In](), reflect.TypeFor[Out]()
		if ns[i].info.In != in || ns[i].info.Out != out {
			return nil, fmt.Errorf("%w: %s is %v → %v, the wrap takes %v → %v",
				ErrTypeMismatch, name, ns[i].info.In, ns[i].info.Out, in, out)
		}
		ns[i].wraps = append(ns[i].wraps[:len(ns[i].wraps):len(ns[i].wraps)], wrapper{typed: typed})
		return ns, nil
	})
}

var errNilWrap = errors.New("wrap returned a nil stage")

// instance is one run's erased view of a node.
type instance interface {
	wrap(info NodeInfo, ws []wrapper) error
	resource() Resource
	fusedLink(rt *fusedRun, idx int, next any, name string) any
	fusedFinish(rt *fusedRun) error
	seqNo() uint64
	asyncProc(rt *asyncRun, idx int, name string, in, out any) processor
	newEdge(buffer int) any
	feed(head, in any, rt *fusedRun) func(batch any) error
	segmentTail(sg *segment, out any) any
}

type inst[In, Out any] struct {
	stage Stage[In, Out]
	orig  Stage[In, Out] // the factory's stage, before any wrap
	seq   uint64
	next  func(Out)
	outs  uint64
	idx   int
	name  string
}

func newInst[In, Out any](s Stage[In, Out]) *inst[In, Out] { return &inst[In, Out]{stage: s, orig: s} }

func (n *inst[In, Out]) seqNo() uint64 { return n.seq }

// resource returns the factory's stage as a Resource, if it is one.
func (n *inst[In, Out]) resource() Resource {
	r, _ := n.orig.(Resource)
	return r
}

// wrap applies the node's decorations in order. Consecutive middleware
// share one erased chain; a typed wrap gets the stage as it stands.
func (n *inst[In, Out]) wrap(info NodeInfo, ws []wrapper) error {
	var orig, chain AnyStage // the erased view of stage, and what wraps it
	closeChain := func() {
		if chain != nil && chain != orig {
			// An untouched chain (every middleware passed the stage
			// through: logging at a disabled level, say) keeps the typed
			// fast path.
			n.stage = &typedAgain[In, Out]{a: chain, node: info.Name}
		}
		orig, chain = nil, nil
	}
	for _, w := range ws {
		if w.mw != nil {
			if chain == nil {
				orig = &erased[In, Out]{s: n.stage}
				chain = orig
			}
			if chain = w.mw(info, chain); chain == nil {
				return fmt.Errorf("middleware returned a nil stage")
			}
			continue
		}
		closeChain()
		s, err := w.typed(info, n.stage)
		if err != nil {
			return err
		}
		n.stage = s.(Stage[In, Out])
	}
	closeChain()
	return nil
}

func (n *inst[In, Out]) finisher() Finisher[Out] {
	f, _ := n.stage.(Finisher[Out])
	return f
}

// erased adapts a typed stage to AnyStage.
type erased[In, Out any] struct {
	s    Stage[In, Out]
	emit func(any)
	push func(Out)
}

func (e *erased[In, Out]) bind(emit func(any)) {
	e.emit = emit
	if e.push == nil {
		e.push = func(v Out) { e.emit(v) }
	}
}

func (e *erased[In, Out]) Push(ctx context.Context, in any, emit func(any)) error {
	v, ok := in.(In)
	if !ok {
		return fmt.Errorf("%w: middleware passed %T, stage wants %v", ErrTypeMismatch, in, reflect.TypeFor[In]())
	}
	e.bind(emit)
	return e.s.Push(ctx, v, e.push)
}

func (e *erased[In, Out]) Finish(ctx context.Context, emit func(any)) error {
	f, ok := e.s.(Finisher[Out])
	if !ok {
		return nil
	}
	e.bind(emit)
	return f.Finish(ctx, e.push)
}

// typedAgain adapts a middleware chain back to the node's typed contract.
type typedAgain[In, Out any] struct {
	a       AnyStage
	node    string
	emit    func(Out)
	emitAny func(any)
	err     error
}

func (t *typedAgain[In, Out]) bind(emit func(Out)) {
	t.emit = emit
	if t.emitAny == nil {
		t.emitAny = func(x any) {
			v, ok := x.(Out)
			if !ok {
				if t.err == nil {
					t.err = fmt.Errorf("%w: middleware on %s emitted %T, want %v", ErrTypeMismatch, t.node, x, reflect.TypeFor[Out]())
				}
				return
			}
			t.emit(v)
		}
	}
}

func (t *typedAgain[In, Out]) Push(ctx context.Context, in In, emit func(Out)) error {
	t.bind(emit)
	err := t.a.Push(ctx, in, t.emitAny)
	if err == nil {
		err, t.err = t.err, nil
	}
	return err
}

func (t *typedAgain[In, Out]) Finish(ctx context.Context, emit func(Out)) error {
	t.bind(emit)
	err := t.a.Finish(ctx, t.emitAny)
	if err == nil {
		err, t.err = t.err, nil
	}
	return err
}

// fromAnyNode returns a node that passes on its untyped inputs as T, and
// fails on any other type; toAnyNode one that passes on T values untyped.
func fromAnyNode[T any](name string) Node {
	want := reflect.TypeFor[T]()
	return StageNode(name, Func[any, T](func(_ context.Context, in any, emit func(T)) error {
		v, ok := in.(T)
		if !ok {
			return fmt.Errorf("%w: element of type %T, the graph takes %v", ErrTypeMismatch, in, want)
		}
		emit(v)
		return nil
	}))
}

func toAnyNode[T any](name string) Node {
	own := OwnFunc[T]()
	return StageNode(name, Map(func(v T) any {
		if own != nil {
			v = own(v) // the untyped value leaves the run
		}
		return v
	}))
}
