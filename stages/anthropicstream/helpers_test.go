package anthropicstream

import (
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/stages/streamtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixtureDir and goldenLayout locate this package's recorded streams and
// golden archives.
var (
	fixtureDir   = filepath.Join("testdata", "fixtures")
	goldenLayout = streamtest.GoldenLayout{Dir: filepath.Join("testdata", "golden"), Inputs: []string{"upstream.sse"}}
)

// TestAsyncErrorNoFinish pins the engine's side of the terminal-event
// contract (see streamtest.CheckTerminal): after anthropic.decode fails,
// anthropic.accumulate must not be finished, so no terminal event may reach
// the sink.
func TestAsyncErrorNoFinish(t *testing.T) {
	data := []byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}\n\nevent: ping\ndata: {bad\n\n")
	streamtest.AsyncFailures(t, pipeline.Must(Graph(Options{})), data, 2000)
}

// parseErr parses data into d.raw and returns the scanner's error.
func (d *Decoder) parseErr(data []byte) error { return d.sc.Check(d.parse(data)) }
