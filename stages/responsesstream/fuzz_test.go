package responsesstream

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/harnessflow/harnessflow/pipeline"
)

// FuzzResponsesStream runs arbitrary bytes through the whole graph. No input
// may panic; either the run fails and no terminal event was emitted, or
// exactly one terminal event is emitted, last. Splitting the input into
// other reads and running it async must not change the result.
func FuzzResponsesStream(f *testing.F) {
	for _, fx := range loadFixtures(f) {
		f.Add(fx.data, uint64(1))
	}
	for _, g := range loadGoldens(f) {
		f.Add(g.in, uint64(len(g.in)))
	}
	g, err := Graph(Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		whole := runGraph(t, g, data, pipeline.Fused, nil)
		checkTerminal(t, whole, pipeline.Fused)
		rng := rand.New(rand.NewPCG(seed, seed>>3))
		mode := pipeline.Fused
		if seed%4 == 0 {
			mode = pipeline.Async
		}
		split := runGraph(t, g, data, mode, randomSizes(rng, len(data), 1+int(seed%64)))
		checkTerminal(t, split, mode)
		// In async mode two stages failing on different events race: the
		// run may report either error, so only failure itself must agree.
		if split.Err != whole.Err && (mode == pipeline.Fused || (split.Err == "") != (whole.Err == "")) {
			t.Fatalf("split/%s run error %q, whole: %q", mode, split.Err, whole.Err)
		}
		if whole.Err == "" && !slices.Equal(split.Lines, whole.Lines) ||
			whole.Err != "" && (len(split.Lines) > len(whole.Lines) || !slices.Equal(whole.Lines[:len(split.Lines)], split.Lines)) {
			t.Fatalf("split/%s run differs:\n%s\n---\n%s", mode, split, whole)
		}
	})
}
