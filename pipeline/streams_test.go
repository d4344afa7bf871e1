package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reugn/go-streams/extension"
	"github.com/reugn/go-streams/flow"

	"github.com/harnessflow/harnessflow/pipeline"
)

// The go-streams interop is tested here with go-streams' own connectors
// and operators (its extension and flow packages); only the tests import
// go-streams, the package itself does so through pipeline/internal/gs.

// feed returns a go-streams channel source of xs (the channel is closed
// after the last one, as go-streams expects of a finished source).
func feed[T any](xs ...T) *extension.ChanSource {
	ch := make(chan any, len(xs))
	for _, x := range xs {
		ch <- x
	}
	close(ch)
	return extension.NewChanSource(ch)
}

// drain collects what arrives on ch until it is closed.
func drain(ch <-chan any) <-chan []any {
	res := make(chan []any, 1)
	go func() {
		var got []any
		for v := range ch {
			got = append(got, v)
		}
		res <- got
	}()
	return res
}

// A go-streams channel source feeds a graph and a go-streams channel sink
// drains it, in both modes.
func TestStreamsChannels(t *testing.T) {
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			out := make(chan any)
			got := drain(out)
			err := pipeline.Run(context.Background(), wordsGraph(t, 2), pipeline.FromStreams[string](feed("a b c", "d e")),
				pipeline.ToStreams[string](extension.NewChanSink(out)), pipeline.WithMode(m))
			if err != nil {
				t.Fatal(err)
			}
			// ToStreams closed the go-streams sink's input at the end of the run.
			if diff := cmp.Diff([]any{"A+B", "C+D", "E"}, <-got); diff != "" {
				t.Fatal(diff)
			}
		})
	}
}

// go-streams' file source feeds a graph (one element per line) and its
// file sink writes the graph's output, in both modes.
func TestStreamsFiles(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(in, []byte("go is fun\nstreams of typed stages\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lines := pipeline.Must(pipeline.New("lines",
		pipeline.NewNode("split", splitter),
		pipeline.StageNode("upper", pipeline.Map(strings.ToUpper)),
		pipeline.StageNode("newline", pipeline.Map(func(w string) string { return w + "\n" })),
	))
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			out := filepath.Join(dir, "out-"+m.String()+".txt")
			err := pipeline.Run(context.Background(), lines, pipeline.FromStreams[string](extension.NewFileSource(in)),
				pipeline.ToStreams[string](extension.NewFileSink(out)), pipeline.WithMode(m))
			if err != nil {
				t.Fatal(err)
			}
			// Run waited for the file sink to complete.
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if want := "GO\nIS\nFUN\nSTREAMS\nOF\nTYPED\nSTAGES\n"; string(b) != want {
				t.Fatalf("file sink wrote %q, want %q", b, want)
			}
		})
	}
}

// A graph runs as a streams.Flow inside a go-streams pipeline, between
// go-streams operators, in both modes.
func TestGraphAsFlow(t *testing.T) {
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			f, err := wordsGraph(t, 2).AsFlow(context.Background(), pipeline.WithMode(m))
			if err != nil {
				t.Fatal(err)
			}
			var _ pipeline.StreamsFlow = f
			out := make(chan any)
			got := drain(out)
			feed("a b c", "skip me", "d e f").
				Via(flow.NewFilter(func(s string) bool { return !strings.HasPrefix(s, "skip") }, 1)).
				Via(f).
				Via(flow.NewMap(func(s string) string { return "<" + s + ">" }, 1)).
				To(extension.NewChanSink(out)) // closes out at the end
			if err := f.Wait(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]any{"<A+B>", "<C+D>", "<E+F>"}, <-got); diff != "" {
				t.Fatal(diff)
			}
		})
	}
}

// A graph used directly through the flow's In and Out channels.
func TestGraphAsFlowChannels(t *testing.T) {
	f, err := wordsGraph(t, 1).AsFlow(context.Background(), pipeline.WithMode(pipeline.Async))
	if err != nil {
		t.Fatal(err)
	}
	got := drain(f.Out())
	go func() {
		f.In() <- "x y"
		close(f.In())
	}()
	if diff := cmp.Diff([]any{"X", "Y"}, <-got); diff != "" {
		t.Fatal(diff)
	}
	if err := f.Wait(); err != nil {
		t.Fatal(err)
	}
}

// Elements of the wrong type, from a go-streams source or into a graph
// flow, are run errors wrapping ErrTypeMismatch, never panics; the flow's
// upstream is not left blocked.
func TestStreamsWrongTypes(t *testing.T) {
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			err := pipeline.Run(context.Background(), wordsGraph(t, 2), pipeline.FromStreams[string](feed[any]("a", 42)),
				pipeline.SinkFunc[string](func(string) error { return nil }), pipeline.WithMode(m))
			var se *pipeline.StageError
			if !errors.Is(err, pipeline.ErrTypeMismatch) || !errors.As(err, &se) || se.Stage != pipeline.SourceName {
				t.Fatalf("FromStreams: %v", err)
			}

			f, err := wordsGraph(t, 2).AsFlow(context.Background(), pipeline.WithMode(m))
			if err != nil {
				t.Fatal(err)
			}
			out := make(chan any)
			got := drain(out)
			many := make([]any, 100)
			for i := range many {
				many[i] = "w"
			}
			many[1] = 42
			feed(many...).Via(f).To(extension.NewChanSink(out))
			<-got
			err = f.Wait()
			if !errors.Is(err, pipeline.ErrTypeMismatch) || !errors.As(err, &se) || se.Stage != pipeline.StreamsInName || se.Seq != 2 {
				t.Fatalf("AsFlow: %v", err)
			}
			if !strings.Contains(err.Error(), "element of type int, the graph takes string") {
				t.Errorf("error text %q", err)
			}
		})
	}
}

// Cancelling a graph flow's context ends its run with the context's error;
// the upstream's rest is read and dropped so that it ends too (goleak).
func TestGraphAsFlowCancel(t *testing.T) {
	for _, m := range modes {
		ctx, cancel := context.WithCancel(context.Background())
		f, err := wordsGraph(t, 1).AsFlow(ctx, pipeline.WithMode(m))
		if err != nil {
			t.Fatal(err)
		}
		many := make([]any, 1000)
		for i := range many {
			many[i] = "w"
		}
		out := make(chan any)
		n := 0
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range out {
				if n++; n == 10 {
					cancel()
				}
			}
		}()
		feed(many...).Via(f).To(extension.NewChanSink(out))
		<-done
		if err := f.Wait(); !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: %v", m, err)
		}
		cancel()
	}
}

// Connecting a graph flow's output twice is reported by Wait; the second
// inlet gets an empty stream.
func TestGraphAsFlowWiredTwice(t *testing.T) {
	f, err := wordsGraph(t, 1).AsFlow(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	first, second := flow.NewPassThrough(), flow.NewPassThrough()
	got1, got2 := drain(first.Out()), drain(second.Out())
	f.Via(first)
	f.Via(second)
	feed("a").Via(f)
	if diff := cmp.Diff([]any{"A"}, <-got1); diff != "" {
		t.Fatal(diff)
	}
	if got := <-got2; len(got) != 0 {
		t.Fatalf("second inlet got %v", got)
	}
	if err := f.Wait(); err == nil || !strings.Contains(err.Error(), "already connected") {
		t.Fatalf("Wait: %v", err)
	}
}

// A ToStreams sink serves one run; a second run fails when it opens it.
func TestToStreamsOneRun(t *testing.T) {
	out := make(chan any, 10)
	sink := pipeline.ToStreams[string](extension.NewChanSink(out))
	g := wordsGraph(t, 1)
	if err := pipeline.Run(context.Background(), g, sliceSource([]string{"a"}), sink); err != nil {
		t.Fatal(err)
	}
	err := pipeline.Run(context.Background(), g, sliceSource([]string{"b"}), sink)
	var se *pipeline.StageError
	if !errors.As(err, &se) || se.Stage != pipeline.SinkName || se.Lifecycle != pipeline.LifecycleOpen {
		t.Fatalf("second run: %v", err)
	}
	if err := sink.Accept("direct"); err == nil {
		t.Fatal("Accept outside a run accepted")
	}
}

// A failing run still closes the go-streams sink's input, so that the sink
// completes and its goroutine ends (goleak, TestMain).
func TestToStreamsClosesOnFailure(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.txt")
	boom := errors.New("boom")
	g := pipeline.Must(pipeline.New("fail", pipeline.StageNode("fail", pipeline.Func[string, string](func(_ context.Context, s string, emit func(string)) error {
		if s == "stop" {
			return boom
		}
		emit(s + "\n")
		return nil
	}))))
	for _, m := range modes {
		err := pipeline.Run(context.Background(), g, sliceSource([]string{"one", "two", "stop", "three"}),
			pipeline.ToStreams[string](extension.NewFileSink(out)), pipeline.WithMode(m))
		if !errors.Is(err, boom) {
			t.Fatalf("%s: %v", m, err)
		}
		b, _ := os.ReadFile(out)
		if string(b) != "one\ntwo\n" {
			t.Fatalf("%s: file sink wrote %q", m, b)
		}
	}
}

// ExampleFromStreams feeds a graph from a go-streams source and drains it
// into a go-streams sink.
func ExampleFromStreams() {
	g := pipeline.Must(pipeline.New("shout",
		pipeline.StageNode("upper", pipeline.Map(strings.ToUpper)),
		pipeline.StageNode("exclaim", pipeline.Map(func(s string) string { return s + "!" })),
	))
	in := make(chan any, 2)
	in <- "hello"
	in <- "streams"
	close(in)
	err := pipeline.Run(context.Background(), g,
		pipeline.FromStreams[string](extension.NewChanSource(in)),
		pipeline.ToStreams[string](extension.NewStdoutSink()))
	fmt.Println("run:", err)
	// Output:
	// HELLO!
	// STREAMS!
	// run: <nil>
}

// ExampleGraph_AsFlow puts a graph between go-streams operators.
func ExampleGraph_AsFlow() {
	g := pipeline.Must(pipeline.New("length",
		pipeline.StageNode("len", pipeline.Map(func(s string) int { return len(s) })),
	))
	f, err := g.AsFlow(context.Background(), pipeline.WithMode(pipeline.Async))
	if err != nil {
		fmt.Println(err)
		return
	}
	in := make(chan any, 3)
	for _, s := range []string{"a", "bb", "ccc"} {
		in <- s
	}
	close(in)
	extension.NewChanSource(in).
		Via(f).
		Via(flow.NewMap(func(n int) string { return strings.Repeat("*", n) }, 1)).
		To(extension.NewStdoutSink())
	fmt.Println("run:", f.Wait())
	// Output:
	// *
	// **
	// ***
	// run: <nil>
}
