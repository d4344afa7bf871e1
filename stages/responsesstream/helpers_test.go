package responsesstream

import (
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/stages/sse"
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
// contract (see streamtest.CheckTerminal): after sse.decode fails (an event
// over the size cap), responses.decode must not be finished, so no terminal
// event may reach the sink.
func TestAsyncErrorNoFinish(t *testing.T) {
	data := []byte("event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\"}}\n\ndata: " + strings.Repeat("x", 100) + "\n\n")
	streamtest.AsyncFailures(t, pipeline.Must(Graph(Options{SSE: sse.Options{MaxEventBytes: 64}})), data, 2000)
}

// parseErr parses data into d.raw and returns the scanner's error.
func (d *Decoder) parseErr(data []byte) error { return d.sc.Check(d.parse(data)) }
