package chatstream

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sinks"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/sse"
	"github.com/harnessflow/harnessflow/stages/streamtest"
)

func TestGraphShape(t *testing.T) {
	g := pipeline.Must(Graph(Options{}))
	if got, want := g.Names(), []string{sse.Name, DecodeName, AccumulateName, FinalizeName}; !slices.Equal(got, want) {
		t.Errorf("Graph nodes %q, want %q", got, want)
	}
	u := pipeline.Must(UnaryGraph(Options{}))
	if got, want := u.Names(), []string{UnaryName, AccumulateName, FinalizeName}; !slices.Equal(got, want) {
		t.Errorf("UnaryGraph nodes %q, want %q", got, want)
	}
	// The exported nodes recompose: a harness stage after chat.finalize.
	post := pipeline.StageNode("harness.post", pipeline.Map(func(e protocol.ResponseEvent) protocol.ResponseEvent { return e }))
	if _, err := g.InsertAfter(FinalizeName, post); err != nil {
		t.Errorf("insert after %s: %v", FinalizeName, err)
	}
	if _, err := pipeline.New("custom", SSENode(Options{MaxEventBytes: 1 << 10}), DecodeNode(), AccumulateNode(), FinalizeNode(Options{})); err != nil {
		t.Error(err)
	}
}

// TestMaxEventBytes: an event over the cap is a fatal error, no terminal event.
func TestMaxEventBytes(t *testing.T) {
	g := pipeline.Must(Graph(Options{MaxEventBytes: 64}))
	in := []byte(`data: {"choices":[{"delta":{"content":"` + strings.Repeat("x", 100) + `"}}]}` + "\n\n")
	for _, mode := range modes {
		o := streamtest.Run(t, g, in, mode, nil)
		streamtest.CheckTerminal(t, o)
		if !errors.Is(o.Err, sse.ErrTooLarge) {
			t.Errorf("%s: error %v, want sse.ErrTooLarge", mode, o.Err)
		}
	}
	u := pipeline.Must(UnaryGraph(Options{MaxEventBytes: 64}))
	o := streamtest.Run(t, u, []byte(`{"choices":[{"message":{"content":"`+strings.Repeat("x", 100)+`"}}]}`), pipeline.Fused, []int{1})
	streamtest.CheckTerminal(t, o)
	if o.Err == nil || !strings.Contains(o.Err.Error(), "exceeds 64 bytes") {
		t.Errorf("unary: error %v, want a size error", o.Err)
	}
}

// TestNoEndMarker: chunks that end without an end marker (a recomposed
// graph fed from a slice) fail the run and emit no terminal event.
func TestNoEndMarker(t *testing.T) {
	g, err := pipeline.New("chunks", AccumulateNode(), FinalizeNode(Options{}))
	if err != nil {
		t.Fatal(err)
	}
	chunks := []Chunk{{Kind: ChunkData, Choices: []Choice{{Content: [][]byte{[]byte("hi")}, FinishReason: []byte("stop")}}}}
	for _, mode := range modes {
		c := sinks.Collect[protocol.ResponseEvent]()
		err := pipeline.Run(context.Background(), g, sources.Slice(chunks), c, pipeline.WithMode(mode))
		if !errors.Is(err, ErrNoEndMarker) {
			t.Errorf("%s: error %v, want ErrNoEndMarker", mode, err)
		}
		for _, ev := range c.Items() {
			if ev.IsTerminal() {
				t.Errorf("%s: terminal event %s emitted", mode, ev.Type)
			}
		}
		// With the marker the same chunks complete.
		c.Reset()
		if err := pipeline.Run(context.Background(), g, sources.Slice(append(slices.Clone(chunks), Chunk{Kind: ChunkEOF})), c, pipeline.WithMode(mode)); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if items := c.Items(); len(items) == 0 || items[len(items)-1].Type != protocol.EventCompleted {
			t.Errorf("%s: want completed last, got %v", mode, items)
		}
	}
}

// TestCancel: a cancelled run returns the context error and emits no
// terminal event.
func TestCancel(t *testing.T) {
	g := pipeline.Must(Graph(Options{}))
	for _, mode := range modes {
		ctx, cancel := context.WithCancel(context.Background())
		var terminal bool
		src := pipeline.SourceFunc[[]byte](func(ctx context.Context, emit func([]byte) error) error {
			if err := emit([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}]}\n\n")); err != nil {
				return err
			}
			cancel()
			<-ctx.Done()
			return ctx.Err()
		})
		err := pipeline.Run(ctx, g, src, pipeline.SinkFunc[protocol.ResponseEvent](func(ev protocol.ResponseEvent) error {
			terminal = terminal || ev.IsTerminal()
			return nil
		}), pipeline.WithMode(mode))
		if !errors.Is(err, context.Canceled) || terminal {
			t.Errorf("%s: err %v, terminal %v; want context.Canceled and no terminal event", mode, err, terminal)
		}
	}
}

// TestConcurrentRuns: one Graph value serves concurrent runs (state is per
// run); run with -race.
func TestConcurrentRuns(t *testing.T) {
	g := pipeline.Must(Graph(Options{ToolKinds: protocol.ToolKinds{"x": {Kind: protocol.KindCustom}}}))
	fs := loadFixtures(t)
	want := make([]string, len(fs))
	for i, f := range fs {
		o := streamtest.Run(t, g, f.Data, pipeline.Fused, nil)
		streamtest.CheckTerminal(t, o)
		want[i] = o.String()
	}
	done := make(chan struct{})
	for w := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			rng := rand.New(rand.NewPCG(uint64(w), 0))
			for i, f := range fs {
				sizes := streamtest.RandomSizes(rng, len(f.Data), 512)
				if got := streamtest.Run(t, g, f.Data, modes[(i+w)%2], sizes).String(); got != want[i] {
					t.Errorf("%s: concurrent run differs", f.Name)
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
}

// FuzzChatStream: arbitrary bytes through the whole Graph never panic, and
// either the run fails with no terminal event or it emits exactly one
// terminal event, last; other reads and async mode must not change that
// (see streamtest.CheckSplit). The seeds are the fixtures under 16 KiB and
// the golden inputs.
func FuzzChatStream(f *testing.F) {
	fs := slices.DeleteFunc(loadFixtures(f), func(fx streamtest.Fixture) bool { return len(fx.Data) >= 1<<14 })
	g := pipeline.Must(Graph(Options{ToolKinds: protocol.ToolKinds{"apply_patch": {Kind: protocol.KindCustom}}, CumulativeArguments: true}))
	streamtest.Fuzz(f, g, fs, streamtest.LoadGoldens(f, goldenLayout))
}
