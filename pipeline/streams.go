package pipeline

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/harnessflow/harnessflow/pipeline/internal/gs"
)

// Working with go-streams (github.com/reugn/go-streams): its connectors —
// the channel, file, reader and writer sources and sinks of its extension
// package, or anyone's streams.Source and streams.Sink — can feed a run
// (FromStreams) and take its output (ToStreams), and a graph can stand as a
// streams.Flow inside a go-streams pipeline (Graph.AsFlow), in either
// execution mode. go-streams passes untyped elements (any); the adapters
// check that every element has the type the graph takes, and a wrong one
// is a run error wrapping ErrTypeMismatch, never a panic.

// StreamsSource, StreamsFlow and StreamsSink are go-streams' streams.Source,
// streams.Flow and streams.Sink (the very types, under names of this
// package).
type (
	StreamsSource = gs.StreamsSource
	StreamsFlow   = gs.StreamsFlow
	StreamsSink   = gs.StreamsSink
)

// FromStreams returns a Source of the elements src sends on its output
// channel (Out), in order, until src closes it: any go-streams
// streams.Source (or streams.Flow) can feed a run. An element that is not a
// T fails the run with an error wrapping ErrTypeMismatch.
//
// The source only reads src's output: do not also connect src to something
// with Via. go-streams cannot stop a connector that is blocked on sending,
// so when a run stops before the end of src's output (an error, a cancelled
// context), a connector whose goroutine sends the rest stays blocked until
// someone reads it: let runs on such connectors read to the end, or use
// connectors that honour a context of their own.
func FromStreams[T any](src StreamsSource) Source[T] { return streamsSource[T]{src} }

type streamsSource[T any] struct{ src StreamsSource }

// Stream emits what the go-streams source sends.
func (s streamsSource[T]) Stream(ctx context.Context, emit func(T) error) error {
	if s.src == nil {
		return errors.New("pipeline: FromStreams of a nil go-streams source")
	}
	return gs.Receive(ctx, s.src.Out(), func(x any) error {
		v, ok := x.(T)
		if !ok {
			return fmt.Errorf("%w: the go-streams source sent a %T, the run takes %v", ErrTypeMismatch, x, reflect.TypeFor[T]())
		}
		return emit(v)
	})
}

// ToStreams returns a Sink that sends every output of a run to sink's input
// channel (In), owning borrowed values first (see Borrowed): any go-streams
// streams.Sink can drain a run. It is a Resource: when the run is over,
// whatever its outcome, it closes sink's input — the go-streams way to say
// the stream ended — and waits until sink has processed everything
// (AwaitCompletion). A send blocked on a sink that stops reading ends when
// the run's context is done.
//
// One ToStreams sink serves one run (go-streams components are not
// restarted): a second run with it fails when it opens it.
func ToStreams[T any](sink StreamsSink) Sink[T] {
	return &streamsSink[T]{sink: sink, own: OwnFunc[T]()}
}

type streamsSink[T any] struct {
	sink  StreamsSink
	own   func(T) T
	ctx   context.Context
	in    chan<- any
	state int // sinkNew, sinkOpen, sinkClosed
}

const (
	sinkNew = iota
	sinkOpen
	sinkClosed
)

var errSinkUnopened = errors.New("pipeline: the go-streams sink was not opened by a run (ToStreams sinks are Resources: Run opens them)")

// Open takes sink's input channel for this run.
func (s *streamsSink[T]) Open(ctx context.Context) error {
	switch {
	case s.sink == nil:
		return errors.New("pipeline: ToStreams of a nil go-streams sink")
	case s.state != sinkNew:
		return errors.New("pipeline: the go-streams sink already served a run (use one ToStreams sink per run)")
	}
	s.ctx, s.in, s.state = ctx, s.sink.In(), sinkOpen
	return nil
}

// Accept sends v to the go-streams sink.
func (s *streamsSink[T]) Accept(v T) error {
	if s.state != sinkOpen {
		return errSinkUnopened
	}
	if s.own != nil {
		v = s.own(v)
	}
	return gs.Send(s.ctx, s.in, v)
}

// Close ends the go-streams sink's input and waits for it to complete.
func (s *streamsSink[T]) Close() error {
	if s.state == sinkOpen {
		close(s.in)
		s.sink.AwaitCompletion()
	}
	s.state = sinkClosed
	return nil
}

// GraphFlow is a graph running as a go-streams streams.Flow (Graph.AsFlow).
// Besides the streams.Flow methods In, Out, Via and To it has Wait, which
// returns the run's error.
type GraphFlow = gs.GraphFlow

// Names of the nodes Graph.AsFlow puts around the graph to take its input
// from go-streams' untyped elements and give its output back as such. They
// name the node in the errors of a wrong element type.
const (
	StreamsInName  = "go-streams.in"
	StreamsOutName = "go-streams.out"
)

// AsFlow returns g as a go-streams streams.Flow, for use inside a go-streams
// pipeline (source.Via(flow).Via(...).To(sink)): the elements sent to its
// input are the graph's input — each must be of type g.In(), or the run
// fails with an error wrapping ErrTypeMismatch — and the graph's outputs
// come out of it, owned (see Borrowed). The graph runs once, with opts (the
// execution mode, say), from the first use of the flow until the upstream
// closes the flow's input and the output is taken; ctx cancels it. Call the
// flow's Wait for the run's error: a go-streams pipeline has no place for
// it. See GraphFlow for how the flow's goroutines end.
func (g *Graph) AsFlow(ctx context.Context, opts ...RunOption) (*GraphFlow, error) {
	if g == nil || len(g.nodes) == 0 {
		return nil, &GraphError{Op: "as-flow", Err: ErrEmptyGraph}
	}
	first, last := g.nodes[0], g.nodes[len(g.nodes)-1]
	if first.fromAny == nil || last.toAny == nil {
		return nil, &GraphError{Op: "as-flow", Err: ErrNilFactory}
	}
	nodes := make([]Node, 0, len(g.nodes)+2)
	nodes = append(nodes, first.fromAny(StreamsInName))
	nodes = append(nodes, g.nodes...)
	nodes = append(nodes, last.toAny(StreamsOutName))
	untyped, err := build("as-flow", g.name, nodes)
	if err != nil {
		return nil, err
	}
	return gs.NewGraphFlow(ctx, func(ctx context.Context, in <-chan any, out chan<- any) error {
		src := SourceFunc[any](func(ctx context.Context, emit func(any) error) error {
			return gs.Receive(ctx, in, emit)
		})
		return Run(ctx, untyped, src, &chanSink{out: out}, opts...)
	}), nil
}

// chanSink sends a run's output on a channel, honouring the run's context
// (which it takes as a Resource).
type chanSink struct {
	out chan<- any
	ctx context.Context
}

func (c *chanSink) Open(ctx context.Context) error { c.ctx = ctx; return nil }
func (c *chanSink) Close() error                   { return nil }
func (c *chanSink) Accept(v any) error             { return gs.Send(c.ctx, c.out, v) }
