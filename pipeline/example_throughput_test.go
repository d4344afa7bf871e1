package pipeline_test

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/harnessflow/harnessflow/pipeline"
)

// nodeCounts is a pipeline.Counter that keeps the totals of the last run.
type nodeCounts []pipeline.NodeCount

func (c *nodeCounts) Count(counts []pipeline.NodeCount) { *c = counts }

// A stage's throughput, from the engine's own counters: WithCounter gives
// every node's totals once per run at no cost per element; Stats, an
// Observer, also times every node (its Elapsed excludes the nodes after it
// in fused mode). The counts are facts and are printed; the rates vary
// from run to run and are not.
func Example_throughput() {
	g := pipeline.Must(pipeline.New("shout",
		pipeline.NewNode("words", func() pipeline.Stage[string, string] {
			return pipeline.Func[string, string](func(_ context.Context, line string, emit func(string)) error {
				for _, w := range strings.Fields(line) {
					emit(w)
				}
				return nil
			})
		}),
		pipeline.StageNode("upper", pipeline.Map(strings.ToUpper)),
		pipeline.StageNode("long", pipeline.Filter(func(w string) bool { return len(w) > 2 })),
	))
	lines := make([]string, 1000)
	for i := range lines {
		lines[i] = "go is fun, streams of typed stages"
	}
	src := pipeline.SourceFunc[string](func(ctx context.Context, emit func(string) error) error {
		for _, l := range lines {
			if err := emit(l); err != nil {
				return err
			}
		}
		return nil
	})
	sink := pipeline.SinkFunc[string](func(string) error { return nil })

	var counts nodeCounts
	stats := pipeline.NewStats()
	for _, mode := range []pipeline.Mode{pipeline.Fused, pipeline.Async} {
		err := pipeline.Run(context.Background(), g, src, sink, pipeline.WithMode(mode),
			pipeline.WithCounter(&counts), pipeline.WithObserver(stats))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(mode)
		for _, c := range counts {
			fmt.Printf("  %-5s in %4d out %4d\n", c.Node, c.Inputs, c.Outputs)
		}
	}
	report := io.Discard // os.Stdout in a program: rates vary from run to run
	observed := map[string]pipeline.NodeStats{}
	for _, st := range stats.Snapshot() { // both runs together
		observed[st.Node] = st
		if st.Elapsed > 0 {
			fmt.Fprintf(report, "%s: %.0f inputs/s\n", st.Node, float64(st.In)/st.Elapsed.Seconds())
		}
	}
	for _, name := range g.Names() {
		st := observed[name]
		fmt.Printf("%-5s observed in %5d out %5d errors %d\n", name, st.In, st.Out, st.Errors)
	}
	// Output:
	// fused
	//   words in 1000 out 7000
	//   upper in 7000 out 7000
	//   long  in 7000 out 4000
	// async
	//   words in 1000 out 7000
	//   upper in 7000 out 7000
	//   long  in 7000 out 4000
	// words observed in  2000 out 14000 errors 0
	// upper observed in 14000 out 14000 errors 0
	// long  observed in 14000 out  8000 errors 0
}
