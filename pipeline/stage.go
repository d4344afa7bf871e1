// Package pipeline is harnessflow's dataflow engine: typed stages, immutable
// named graphs built from stage factories, and two execution modes (fused and
// async) that produce identical output.
//
// A Stage[In, Out] turns a stream of In into a stream of Out. Stages hold
// per-run state, so a Graph stores factories and creates fresh stage values
// on every Run; a stage that holds a resource for the run (a file) is a
// Resource, which Run opens before the first element and closes at the end.
// In async mode every node runs in a goroutine of its own, unless nodes are
// marked with AsyncBoundary: then only the marked segments do, each fused.
// Graphs work with go-streams' connectors and pipelines (FromStreams,
// ToStreams, Graph.AsFlow). Nothing in this package starts a goroutine
// before Run, or before a Graph.AsFlow flow is first used.
package pipeline

import "context"

// Stage transforms a stream of In values into a stream of Out values.
//
// Push handles one input and may call emit zero or more times, synchronously,
// before it returns. emit must not be retained after Push returns. A non-nil
// error is fatal to the run.
type Stage[In, Out any] interface {
	Push(ctx context.Context, in In, emit func(Out)) error
}

// Finisher is implemented by stages that hold state across inputs (tool-call
// slots, buffered turns, hold-back windows). Finish is called at most once
// per run: exactly once when the node's input ended without error, never
// after the node itself failed or the run was cancelled. (In async mode a
// node upstream of a failing node may reach the end of its input, and
// finish, before the failure stops the run.)
type Finisher[Out any] interface {
	Finish(ctx context.Context, emit func(Out)) error
}

// Func adapts a function to a Stage.
type Func[In, Out any] func(ctx context.Context, in In, emit func(Out)) error

// Push calls f.
func (f Func[In, Out]) Push(ctx context.Context, in In, emit func(Out)) error {
	return f(ctx, in, emit)
}

// Map returns a stateless stage that emits fn(in) for every input.
func Map[In, Out any](fn func(In) Out) Stage[In, Out] { return mapStage[In, Out](fn) }

type mapStage[In, Out any] func(In) Out

func (m mapStage[In, Out]) Push(_ context.Context, in In, emit func(Out)) error {
	emit(m(in))
	return nil
}

// Filter returns a stateless stage that passes on the inputs for which keep is true.
func Filter[T any](keep func(T) bool) Stage[T, T] { return filterStage[T](keep) }

type filterStage[T any] func(T) bool

func (f filterStage[T]) Push(_ context.Context, in T, emit func(T)) error {
	if f(in) {
		emit(in)
	}
	return nil
}
