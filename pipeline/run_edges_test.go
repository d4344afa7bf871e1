package pipeline_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/pipeline"
)

type flushCounter struct{ flushes *atomic.Int64 }

func (f flushCounter) Accept(int) error { return nil }
func (f flushCounter) Flush() error     { f.flushes.Add(1); return nil }

// A run whose context is already cancelled must fail with the context error
// in both modes, and no stage may Finish nor the sink be flushed.
func TestCancelledRunNeverSucceeds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			var finishes, flushes atomic.Int64
			g := pipeline.Must(pipeline.New("fin",
				pipeline.NewNode("a", func() pipeline.Stage[int, int] { return finishCounter{&finishes} }),
				pipeline.NewNode("b", func() pipeline.Stage[int, int] { return finishCounter{&finishes} }),
			))
			for range 200 {
				err := pipeline.Run(ctx, g, sliceSource([]int(nil)), flushCounter{&flushes}, pipeline.WithMode(m))
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("cancelled run returned %v", err)
				}
			}
			if finishes.Load() != 0 || flushes.Load() != 0 {
				t.Fatalf("cancelled runs: %d finishes, %d flushes", finishes.Load(), flushes.Load())
			}
		})
	}
}

type panicFinisher struct{}

func (panicFinisher) Push(_ context.Context, v int, emit func(int)) error { emit(v); return nil }
func (panicFinisher) Finish(context.Context, func(int)) error             { panic("at finish") }

// Both modes must report the same StageError for a panic in Finish and for a
// panic in the sink.
func TestPanicErrorsSameInBothModes(t *testing.T) {
	g := pipeline.Must(pipeline.New("p",
		pipeline.NewNode("pf", func() pipeline.Stage[int, int] { return panicFinisher{} }),
	))
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			_, err := runCollect[int, int](t, g, []int{1, 2}, pipeline.WithMode(m))
			var se *pipeline.StageError
			var pe *pipeline.PanicError
			if !errors.As(err, &se) || se.Stage != "pf" || !se.Finish || se.Seq != 2 || !errors.As(err, &pe) {
				t.Fatalf("finish panic: got %#v", se)
			}
			sinkPanics := pipeline.SinkFunc[int](func(v int) error {
				if v == 2 {
					panic("sink")
				}
				return nil
			})
			plain := pipeline.Must(pipeline.New("plain", pipeline.StageNode("id", pipeline.Map(func(v int) int { return v }))))
			err = pipeline.Run(context.Background(), plain, sliceSource([]int{1, 2, 3}), sinkPanics, pipeline.WithMode(m))
			if !errors.As(err, &se) || se.Stage != pipeline.SinkName || se.Seq != 2 || !errors.As(err, &pe) {
				t.Fatalf("sink panic: got %#v", se)
			}
		})
	}
}

// A negative WithBuffer must not panic outside Run's error handling.
func TestNegativeBuffer(t *testing.T) {
	got, err := runCollect[string, string](t, wordsGraph(t, 1), []string{"a b"}, pipeline.WithMode(pipeline.Async), pipeline.WithBuffer(-10))
	if err != nil || len(got) != 2 {
		t.Fatalf("got %v, %v", got, err)
	}
}

// In async mode a node's Elapsed must not include the time its emit waits
// for a slow consumer (backpressure), as fused mode excludes downstream time.
func TestAsyncElapsedExcludesBackpressure(t *testing.T) {
	stats := pipeline.NewStats()
	g := pipeline.Must(pipeline.New("bp", pipeline.StageNode("id", pipeline.Map(func(v int) int { return v }))))
	in := make([]int, 20)
	slow := pipeline.SinkFunc[int](func(int) error { time.Sleep(5 * time.Millisecond); return nil })
	err := pipeline.Run(context.Background(), g, sliceSource(in), slow,
		pipeline.WithMode(pipeline.Async), pipeline.WithBuffer(0), pipeline.WithMaxBatch(1), pipeline.WithObserver(stats))
	if err != nil {
		t.Fatal(err)
	}
	if e := stats.Snapshot()[0].Elapsed; e > 30*time.Millisecond {
		t.Fatalf("identity node charged %v for a slow sink", e)
	}
}
