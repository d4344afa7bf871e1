package anthropicstream

import (
	"testing"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/stages/streamtest"
)

// FuzzAnthropicStream runs arbitrary bytes through the whole graph. No input
// may panic; either the run fails and no terminal event was emitted, or
// exactly one terminal event is emitted, last. Splitting the input into
// other reads and running it async must not change the result.
func FuzzAnthropicStream(f *testing.F) {
	streamtest.Fuzz(f, pipeline.Must(Graph(Options{})), streamtest.LoadFixtures(f, fixtureDir), streamtest.LoadGoldens(f, goldenLayout))
}
