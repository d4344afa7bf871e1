package bench

import (
	"context"
	"testing"

	"github.com/reugn/go-streams/extension"
	"github.com/reugn/go-streams/flow"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/sources"
)

const engineElements = 1_000_000

// The six trivial typed transforms every engine variant runs.
var transforms = [6]func(int) int{
	func(v int) int { return v + 1 },
	func(v int) int { return v * 3 },
	func(v int) int { return v - 2 },
	func(v int) int { return v ^ 0x5a5a },
	func(v int) int { return v >> 1 },
	func(v int) int { return v + 7 },
}

func expectedSum(n int) int {
	sum := 0
	for i := range n {
		v := i
		for _, f := range transforms {
			v = f(v)
		}
		sum += v
	}
	return sum
}

func sixStageGraph(b *testing.B) *pipeline.Graph {
	names := [6]string{"t1", "t2", "t3", "t4", "t5", "t6"}
	nodes := make([]pipeline.Node, 6)
	for i, f := range transforms {
		nodes[i] = pipeline.StageNode(names[i], pipeline.Map(f))
	}
	g, err := pipeline.New("six", nodes...)
	if err != nil {
		b.Fatal(err)
	}
	return g
}

func inputs(n int) []int {
	in := make([]int, n)
	for i := range in {
		in[i] = i
	}
	return in
}

// summer is the sink of every variant; the checksum proves all work was done.
type summer struct{ sum int }

func (s *summer) Accept(v int) error { s.sum += v; return nil }

func perElement(b *testing.B, n int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/element")
	b.ReportMetric(0, "ns/op")
}

func BenchmarkEngine(b *testing.B) {
	in := inputs(engineElements)
	want := expectedSum(engineElements)
	g := sixStageGraph(b)
	for _, mode := range []pipeline.Mode{pipeline.Fused, pipeline.Async} {
		b.Run(mode.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s := &summer{}
				if err := pipeline.Run(context.Background(), g, sources.Slice(in), s, pipeline.WithMode(mode)); err != nil {
					b.Fatal(err)
				}
				if s.sum != want {
					b.Fatalf("sum %d, want %d", s.sum, want)
				}
			}
			perElement(b, engineElements)
		})
	}
	b.Run("gostreams-raw", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if got := goStreamsRaw(in); got != want {
				b.Fatalf("sum %d, want %d", got, want)
			}
		}
		perElement(b, engineElements)
	})
	b.Run("channels-hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if got := handChannels(context.Background(), in); got != want {
				b.Fatalf("sum %d, want %d", got, want)
			}
		}
		perElement(b, engineElements)
	})
}

// BenchmarkEngineStart measures starting and tearing down a 6-stage
// pipeline that carries a single element.
func BenchmarkEngineStart(b *testing.B) {
	in := inputs(1)
	want := expectedSum(1)
	g := sixStageGraph(b)
	for _, mode := range []pipeline.Mode{pipeline.Fused, pipeline.Async} {
		b.Run(mode.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s := &summer{}
				if err := pipeline.Run(context.Background(), g, sources.Slice(in), s, pipeline.WithMode(mode)); err != nil || s.sum != want {
					b.Fatal(err, s.sum)
				}
			}
		})
	}
	b.Run("gostreams-raw", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if goStreamsRaw(in) != want {
				b.Fatal("bad sum")
			}
		}
	})
	b.Run("channels-hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if handChannels(context.Background(), in) != want {
				b.Fatal("bad sum")
			}
		}
	})
}

// goStreamsRaw is the same chain as plain go-streams Map operators.
func goStreamsRaw(in []int) int {
	src := make(chan any)
	out := make(chan any)
	source := extension.NewChanSource(src)
	chain := source.Via(flow.NewMap(transforms[0], 1))
	for _, t := range transforms[1:] {
		chain = chain.Via(flow.NewMap(t, 1))
	}
	go chain.To(extension.NewChanSink(out))
	go func() {
		for _, v := range in {
			src <- v
		}
		close(src)
	}()
	sum := 0
	for v := range out {
		sum += v.(int)
		if sum == -1 { // never; keeps the loop honest
			break
		}
	}
	return sum
}

// handChannels is the same chain written by hand: typed channels, buffered
// 64, a goroutine per stage, ctx checked on every send.
func handChannels(ctx context.Context, in []int) int {
	src := make(chan int, 64)
	go func() {
		defer close(src)
		for _, v := range in {
			select {
			case src <- v:
			case <-ctx.Done():
				return
			}
		}
	}()
	var prev <-chan int = src
	for _, f := range transforms {
		next := make(chan int, 64)
		go func(in <-chan int, out chan<- int) {
			defer close(out)
			for v := range in {
				select {
				case out <- f(v):
				case <-ctx.Done():
					return
				}
			}
		}(prev, next)
		prev = next
	}
	sum := 0
	for v := range prev {
		sum += v
	}
	return sum
}
