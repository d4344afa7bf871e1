package pipeline

import (
	"context"
	"fmt"
	"reflect"
)

// Node is one named step of a Graph: a stage factory plus its declared input
// and output types. Nodes are values; a Graph never shares stage state
// between runs because it calls the factory on every Run.
type Node struct {
	info    NodeInfo
	factory func() instance
	mws     []Middleware
}

// NodeInfo describes a node.
type NodeInfo struct {
	Name        string
	Description string
	In, Out     reflect.Type
}

// NodeOption configures a node.
type NodeOption func(*NodeInfo)

// Describe sets the one-line description shown by Graph.Describe and the exports.
func Describe(text string) NodeOption { return func(i *NodeInfo) { i.Description = text } }

// NewNode declares a node named name whose stages come from factory.
// factory is called once per Run.
func NewNode[In, Out any](name string, factory func() Stage[In, Out], opts ...NodeOption) Node {
	info := NodeInfo{Name: name, In: reflect.TypeFor[In](), Out: reflect.TypeFor[Out]()}
	for _, o := range opts {
		o(&info)
	}
	n := Node{info: info}
	n.factory = func() instance { return newInst(factory()) }
	return n
}

// StageNode declares a node for a stateless stage value, shared by all runs.
// Use it only for stages without per-run state (Map, Filter, pure funcs).
func StageNode[In, Out any](name string, s Stage[In, Out], opts ...NodeOption) Node {
	return NewNode(name, func() Stage[In, Out] { return s }, opts...)
}

// Info describes the node.
func (n Node) Info() NodeInfo { return n.info }

// Name returns the node's name.
func (n Node) Name() string { return n.info.Name }

// Renamed returns a copy of n under another name.
func (n Node) Renamed(name string) Node { n.info.Name = name; return n }

// AnyStage is the untyped view of a stage that middleware sees. Values keep
// their dynamic types; a middleware must pass on values of the node's types.
type AnyStage interface {
	Push(ctx context.Context, in any, emit func(any)) error
	Finish(ctx context.Context, emit func(any)) error
}

// Middleware decorates the stage of a node (logging, timing, redaction of
// what passes). It is applied per run, to the fresh stage instance.
type Middleware func(node NodeInfo, next AnyStage) AnyStage

// instance is one run's erased view of a node.
type instance interface {
	wrap(info NodeInfo, mws []Middleware)
	fusedLink(rt *fusedRun, idx int, next any, name string) any
	fusedFinish(rt *fusedRun) error
	seqNo() uint64
	asyncProc(rt *asyncRun, idx int, name string, in, out any) processor
	newEdge(buffer int) any
}

type inst[In, Out any] struct {
	stage Stage[In, Out]
	seq   uint64
	next  func(Out)
	outs  uint64
	idx   int
	name  string
}

func newInst[In, Out any](s Stage[In, Out]) *inst[In, Out] { return &inst[In, Out]{stage: s} }

func (n *inst[In, Out]) seqNo() uint64 { return n.seq }

func (n *inst[In, Out]) wrap(info NodeInfo, mws []Middleware) {
	if len(mws) == 0 {
		return
	}
	orig := AnyStage(&erased[In, Out]{s: n.stage})
	a := orig
	for _, mw := range mws {
		a = mw(info, a)
	}
	if a == orig {
		// Every middleware passed the stage through untouched (logging
		// at a disabled level, say): keep the typed fast path.
		return
	}
	n.stage = &typedAgain[In, Out]{a: a, node: info.Name}
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
