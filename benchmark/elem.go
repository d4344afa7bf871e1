package benchmark

import (
	"context"
	"fmt"
	"reflect"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/anthropicstream"
	"github.com/harnessflow/harnessflow/stages/chatstream"
	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/stages/sse"
)

// ElemType is an element type that flows between two nodes of a graph.
// [Graph] measures a stage on its own by cutting the graph at its joints,
// which needs a typed sink (and, for a replay, a typed source) for the
// type at each joint; Go cannot make those from a reflect.Type, so each
// type is declared once with [Type]. The types of harnessflow's own graphs
// are built in; a graph with stages of its own types passes them in
// Options.Types.
type ElemType interface {
	// Type is the element type.
	Type() reflect.Type

	// run runs g from src (a pipeline.Source of one of the supported input
	// types) into a sink of this type: counting, keeping an owned copy of
	// every element (keep), or summarizing engine events (summary).
	run(ctx context.Context, g *pipeline.Graph, src any, sink sinkKind, opts ...pipeline.RunOption) (runOut, error)
	// replayNode returns a node that ignores what its single trigger input
	// says and emits values (a []T kept by run) in order.
	replayNode(values any) pipeline.Node
	// drain streams src (a pipeline.Source[T]) without any graph; with
	// keep it returns an owned copy of every element (a []T).
	drain(ctx context.Context, src any, keep bool) (any, error)
}

// Type declares T as an element type for [Graph] (see [ElemType]).
func Type[T any]() ElemType { return elem[T]{own: pipeline.OwnFunc[T]()} }

// builtinTypes returns the element types of harnessflow's graphs.
func builtinTypes() []ElemType {
	return []ElemType{
		Type[[]byte](),
		Type[sse.Event](),
		Type[chatstream.Chunk](),
		Type[chatstream.Step](),
		Type[anthropicstream.Event](),
		Type[protocol.ResponseEvent](),
		Type[*request.Shaping](),
		Type[*protocol.ResponsesRequest](),
		Type[request.Shaped](),
	}
}

// sinkKind selects what run does with the graph's output.
type sinkKind int

const (
	sinkCount   sinkKind = iota // count the elements
	sinkKeep                    // keep an owned copy of each
	sinkSummary                 // summarize engine events (protocol.ResponseEvent only)
)

// runOut is what one run produced.
type runOut struct {
	n       int
	kept    any // []T, for sinkKeep
	summary *Summary
}

type elem[T any] struct{ own func(T) T }

// Type returns T.
func (elem[T]) Type() reflect.Type { return reflect.TypeFor[T]() }

// countSink counts what it accepts.
type countSink[T any] struct{ n int }

// Accept counts one element.
func (s *countSink[T]) Accept(T) error { s.n++; return nil }

// keepSink keeps an owned copy of everything it accepts.
type keepSink[T any] struct {
	own  func(T) T
	kept []T
}

// Accept keeps an owned copy of v.
func (s *keepSink[T]) Accept(v T) error {
	if s.own != nil {
		v = s.own(v)
	}
	s.kept = append(s.kept, v)
	return nil
}

func (e elem[T]) run(ctx context.Context, g *pipeline.Graph, src any, kind sinkKind, opts ...pipeline.RunOption) (runOut, error) {
	var (
		sink  pipeline.Sink[T]
		count *countSink[T]
		keep  *keepSink[T]
		sum   *summarySink
	)
	switch kind {
	case sinkKeep:
		keep = &keepSink[T]{own: e.own}
		sink = keep
	case sinkSummary:
		sum = &summarySink{}
		s, ok := any(sum).(pipeline.Sink[T])
		if !ok {
			return runOut{}, fmt.Errorf("benchmark: summary of %v elements: want protocol.ResponseEvent", e.Type())
		}
		sink = s
	default:
		count = &countSink[T]{}
		sink = count
	}
	var err error
	switch s := src.(type) {
	case pipeline.Source[[]byte]:
		err = pipeline.Run(ctx, g, s, sink, opts...)
	case pipeline.Source[*request.Shaping]:
		err = pipeline.Run(ctx, g, s, sink, opts...)
	case pipeline.Source[*protocol.ResponsesRequest]:
		err = pipeline.Run(ctx, g, s, sink, opts...)
	default:
		return runOut{}, fmt.Errorf("benchmark: unsupported source %T", src)
	}
	switch {
	case keep != nil:
		return runOut{n: len(keep.kept), kept: keep.kept}, err
	case sum != nil:
		return runOut{n: sum.s.Outputs, summary: &sum.s}, err
	}
	return runOut{n: count.n}, err
}

// replayStage emits the recorded values on its trigger.
type replayStage[T any] struct{ values []T }

// Push emits every recorded value.
func (r replayStage[T]) Push(_ context.Context, _ []byte, emit func(T)) error {
	for _, v := range r.values {
		emit(v)
	}
	return nil
}

// replayName is the name of the node that replays recorded elements.
const replayName = "benchmark.replay"

func (e elem[T]) replayNode(values any) pipeline.Node {
	vs, _ := values.([]T)
	return pipeline.NewNode(replayName, func() pipeline.Stage[[]byte, T] { return replayStage[T]{values: vs} },
		pipeline.Describe("replays recorded elements"))
}

func (e elem[T]) drain(ctx context.Context, src any, keep bool) (any, error) {
	s, ok := src.(pipeline.Source[T])
	if !ok {
		return nil, fmt.Errorf("benchmark: drain: source %T does not give %v", src, e.Type())
	}
	if !keep {
		return nil, s.Stream(ctx, func(T) error { return nil })
	}
	k := &keepSink[T]{own: e.own}
	err := s.Stream(ctx, k.Accept)
	return k.kept, err
}

// typeTable finds the ElemType of a reflect.Type.
type typeTable map[reflect.Type]ElemType

func newTypeTable(extra []ElemType) typeTable {
	t := typeTable{}
	for _, e := range builtinTypes() {
		t[e.Type()] = e
	}
	for _, e := range extra {
		if e != nil {
			t[e.Type()] = e
		}
	}
	return t
}

func (t typeTable) lookup(rt reflect.Type, where string) (ElemType, error) {
	if e, ok := t[rt]; ok {
		return e, nil
	}
	return nil, fmt.Errorf("benchmark: %s: element type %v is not declared; pass benchmark.Type[%v]() in Options.Types", where, rt, rt)
}
