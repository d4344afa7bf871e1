package chatstream

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/stages/streamtest"
)

// TestGolden replays the golden archives (see streamtest.Golden; -update
// rewrites them from the current output); the replays must also agree on
// the End step chat.finalize gets. An archive
// (testdata/golden/NAME.txtar) holds:
//
//	comment              what the case pins down, plus optional directives on
//	                     lines of their own:
//	                       unary                  run UnaryGraph on upstream.json
//	                       cumulative-arguments   Options.CumulativeArguments
//	-- upstream.sse --   the streamed body (or -- upstream.json -- with unary)
//	-- tool_kinds.json -- optional protocol.ToolKinds
//	-- want.events.jsonl --
//	                     one protocol.ResponseEvent JSON per line; a run error
//	                     is a last line {"run_error":"..."}
func TestGolden(t *testing.T) {
	gs := streamtest.LoadGoldens(t, goldenLayout)
	if len(gs) < 10 {
		t.Fatalf("want the golden archives in %s, found %d", goldenLayout.Dir, len(gs))
	}
	streamtest.RunGoldens(t, gs, func(gd streamtest.Golden) (*pipeline.Graph, error) {
		opts := Options{CumulativeArguments: gd.Has("cumulative-arguments")}
		if kinds := gd.File("tool_kinds.json"); kinds != nil {
			if err := json.Unmarshal(kinds, &opts.ToolKinds); err != nil {
				return nil, fmt.Errorf("tool_kinds.json: %w", err)
			}
		}
		newGraph := Graph
		if gd.Has("unary") {
			newGraph = UnaryGraph
		}
		g, err := newGraph(opts)
		if err != nil {
			return nil, err
		}
		return spyEnd(g)
	})
}
