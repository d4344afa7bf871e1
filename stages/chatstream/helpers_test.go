package chatstream

import (
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/harnessflow/harnessflow/internal/jsonx"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/stages/streamtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var modes = []pipeline.Mode{pipeline.Fused, pipeline.Async}

// fixtureDir and goldenLayout locate this package's recorded streams and
// golden archives.
var (
	fixtureDir   = filepath.Join("testdata", "fixtures")
	goldenLayout = streamtest.GoldenLayout{
		Dir:    filepath.Join("testdata", "golden"),
		Inputs: []string{"upstream.sse", "upstream.json"},
		Extras: []string{"tool_kinds.json"},
	}
)

// spyEnd returns g with a spy on chat.finalize that keeps the End step it
// receives (see streamtest.Spy): the replays of a stream must agree on it,
// and endOf reads it back.
func spyEnd(g *pipeline.Graph) (*pipeline.Graph, error) {
	return streamtest.Spy(g, FinalizeName, func(in any) (any, bool) {
		if st, ok := in.(Step); ok && st.Kind == StepEnd && st.End != nil {
			return *st.End, true
		}
		return nil, false
	})
}

// endOf returns the End step that reached chat.finalize in o.
func endOf(t testing.TB, o streamtest.Outcome) End {
	t.Helper()
	if len(o.Spied) != 1 {
		t.Fatalf("%d end steps reached %s, want 1:\n%s", len(o.Spied), FinalizeName, o)
	}
	return o.Spied[0].(End)
}

// decodeMsg decodes data and returns the problem as text with the offset of
// a syntax error (-1 for another problem), for table tests.
func (d *chunkDecoder) decodeMsg(data []byte) (*Chunk, string, int) {
	c, err := d.decode(data)
	if err != nil {
		return nil, err.Error(), jsonx.DataOffset(err)
	}
	return c, "", 0
}
