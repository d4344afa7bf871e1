package pipeline_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/harnessflow/harnessflow/pipeline"
)

// A custom three-stage pipeline composed in code, then a stage inserted by name.
func Example() {
	words := pipeline.NewNode("words", func() pipeline.Stage[string, string] {
		return pipeline.Func[string, string](func(_ context.Context, line string, emit func(string)) error {
			for _, w := range strings.Fields(line) {
				emit(w)
			}
			return nil
		})
	})
	upper := pipeline.StageNode("upper", pipeline.Map(strings.ToUpper))
	long := pipeline.StageNode("long", pipeline.Filter(func(w string) bool { return len(w) > 2 }))

	g, err := pipeline.New("shout", words, upper, long)
	if err != nil {
		fmt.Println(err)
		return
	}
	// Insert a stage by name; the original graph is unchanged.
	g2, err := g.InsertAfter("upper", pipeline.StageNode("exclaim", pipeline.Map(func(w string) string { return w + "!" })))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Join(g2.Names(), " → "))

	src := pipeline.SourceFunc[string](func(ctx context.Context, emit func(string) error) error {
		for _, line := range []string{"go is fun", "streams of typed stages"} {
			if err := emit(line); err != nil {
				return err
			}
		}
		return nil
	})
	for _, mode := range []pipeline.Mode{pipeline.Fused, pipeline.Async} {
		var out []string
		err := pipeline.Run(context.Background(), g2, src, pipeline.SinkFunc[string](func(w string) error {
			out = append(out, w)
			return nil
		}), pipeline.WithMode(mode))
		fmt.Println(mode, out, err)
	}
	// Output:
	// words → upper → exclaim → long
	// fused [GO! IS! FUN! STREAMS! OF! TYPED! STAGES!] <nil>
	// async [GO! IS! FUN! STREAMS! OF! TYPED! STAGES!] <nil>
}

// Type errors at a joint are reported when the graph is built.
func ExampleGraph_InsertAfter_typeMismatch() {
	g := pipeline.Must(pipeline.New("lengths",
		pipeline.StageNode("len", pipeline.Map(func(s string) int { return len(s) })),
		pipeline.StageNode("double", pipeline.Map(func(n int) int { return 2 * n })),
	))
	_, err := g.InsertAfter("len", pipeline.StageNode("upper", pipeline.Map(strings.ToUpper)))
	fmt.Println(err)
	// Output:
	// pipeline: insert-after "upper": type mismatch at joint: len emits int, upper takes string
}
