package pipeline_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/pipeline"
)

// suffix is a typed wrap: it appends tag to everything the node emits.
func suffix(tag string, seen *[]string) func(pipeline.NodeInfo, pipeline.Stage[string, string]) pipeline.Stage[string, string] {
	return func(info pipeline.NodeInfo, next pipeline.Stage[string, string]) pipeline.Stage[string, string] {
		return pipeline.Func[string, string](func(ctx context.Context, in string, emit func(string)) error {
			if seen != nil {
				*seen = append(*seen, info.Name+":"+in)
			}
			return next.Push(ctx, in, func(out string) { emit(out + tag) })
		})
	}
}

// WrapStage decorates one node with typed values, in order with
// middleware, in both modes.
func TestWrapStage(t *testing.T) {
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			var seen []string
			g, err := pipeline.WrapStage(wordsGraph(t, 2), "upper", suffix("1", &seen))
			if err != nil {
				t.Fatal(err)
			}
			// Middleware added later wraps around the typed wrap, and a
			// typed wrap added after it around both.
			g, err = g.Wrap("upper", func(_ pipeline.NodeInfo, next pipeline.AnyStage) pipeline.AnyStage {
				return anyFunc{push: func(ctx context.Context, in any, emit func(any)) error {
					return next.Push(ctx, in, func(v any) { emit(v.(string) + "2") })
				}, finish: next.Finish}
			})
			if err != nil {
				t.Fatal(err)
			}
			if g, err = pipeline.WrapStage(g, "upper", suffix("3", nil)); err != nil {
				t.Fatal(err)
			}
			got, err := runCollect[string, string](t, g, []string{"a b c"}, pipeline.WithMode(m))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"A123+B123", "C123"}, got); diff != "" {
				t.Fatal(diff)
			}
			if diff := cmp.Diff([]string{"upper:a", "upper:b", "upper:c"}, seen); diff != "" {
				t.Fatal(diff)
			}
			if !strings.Contains(g.Describe(), "[+3 middleware]") {
				t.Errorf("Describe:\n%s", g.Describe())
			}
		})
	}
}

// A typed wrap costs nothing per element: no value is boxed into an any.
func TestWrapStageDoesNotBox(t *testing.T) {
	in := make([]string, 1000)
	for i := range in {
		in[i] = "a b"
	}
	allocs := func(g *pipeline.Graph) float64 {
		return testing.AllocsPerRun(20, func() {
			_ = pipeline.Run(context.Background(), g, sliceSource(in), pipeline.SinkFunc[string](func(string) error { return nil }))
		})
	}
	g := wordsGraph(t, 2)
	passThrough := func(_ pipeline.NodeInfo, next pipeline.Stage[string, string]) pipeline.Stage[string, string] {
		return pipeline.Func[string, string](func(ctx context.Context, in string, emit func(string)) error {
			return next.Push(ctx, in, emit)
		})
	}
	wrapped, err := pipeline.WrapStage(g, "upper", passThrough)
	if err != nil {
		t.Fatal(err)
	}
	// A few allocations per run (the wrapper) are allowed; none per element.
	if a, b := allocs(g), allocs(wrapped); b > a+4 {
		t.Fatalf("typed wrap: %v allocs per run, unwrapped %v", b, a)
	}
	// Middleware, by contrast, boxes every element.
	boxed, err := g.Wrap("upper", passMiddleware(nil))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := allocs(g), allocs(boxed); b < a+float64(len(in)) {
		t.Fatalf("the middleware baseline does not box (%v vs %v allocs): the test proves nothing", b, a)
	}
}

func TestWrapStageErrors(t *testing.T) {
	g := wordsGraph(t, 2)
	ident := func(_ pipeline.NodeInfo, next pipeline.Stage[string, string]) pipeline.Stage[string, string] {
		return next
	}
	for name, tc := range map[string]struct {
		edit func() (*pipeline.Graph, error)
		want error
	}{
		"unknown node": {func() (*pipeline.Graph, error) { return pipeline.WrapStage(g, "nope", ident) }, pipeline.ErrUnknownNode},
		"empty name":   {func() (*pipeline.Graph, error) { return pipeline.WrapStage(g, "", ident) }, pipeline.ErrUnknownNode},
		"nil wrap": {func() (*pipeline.Graph, error) {
			return pipeline.WrapStage[string, string](g, "upper", nil)
		}, pipeline.ErrNilMiddleware},
		"wrong types": {func() (*pipeline.Graph, error) { return pipeline.WrapStage(g, "chunk", ident) }, pipeline.ErrTypeMismatch},
	} {
		_, err := tc.edit()
		var ge *pipeline.GraphError
		if !errors.Is(err, tc.want) || !errors.As(err, &ge) {
			t.Errorf("%s: error %v, want a GraphError wrapping %v", name, err, tc.want)
		}
	}
	// A wrap that returns no stage fails the run, naming the node.
	nilWrap, err := pipeline.WrapStage(g, "upper", func(pipeline.NodeInfo, pipeline.Stage[string, string]) pipeline.Stage[string, string] { return nil })
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range modes {
		_, err := runCollect[string, string](t, nilWrap, []string{"a"}, pipeline.WithMode(m))
		var se *pipeline.StageError
		if !errors.As(err, &se) || se.Stage != "upper" {
			t.Errorf("%s: nil wrap: %v", m, err)
		}
	}
}
