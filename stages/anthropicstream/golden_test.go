package anthropicstream

import (
	"testing"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/stages/streamtest"
)

// TestGolden replays the golden archives (see streamtest.Golden; -update
// rewrites them from the current output). An archive
// (testdata/golden/NAME.txtar) holds:
//
//	comment              what the case pins, plus optional directives:
//	                       strip-final-newline  drop the stream's last "\n" (txtar ends files with one)
//	                       compact-arguments    run with Options{CompactArguments: true}
//	-- upstream.sse --   the raw upstream stream
//	-- want.events.jsonl --
//	                     one ResponseEvent per line (protocol.ResponseEvent JSON), then
//	                     {"run_error": "..."} if the run fails
func TestGolden(t *testing.T) {
	streamtest.RunGoldens(t, streamtest.LoadGoldens(t, goldenLayout), func(g streamtest.Golden) (*pipeline.Graph, error) {
		return Graph(Options{CompactArguments: g.Has("compact-arguments")})
	})
}
