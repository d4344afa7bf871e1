package codec

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/wire"
)

// scribbler reads r in reads of at most size bytes, and fills the whole of
// the caller's buffer with junk before each read: a lending source's
// previous chunk is overwritten as soon as the next read starts.
type scribbler struct {
	r    io.Reader
	size int
}

func (s *scribbler) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '#'
	}
	return s.r.Read(p[:min(len(p), s.size)])
}

// Every protocol graph starts with a node that keeps nothing of its input,
// and a fused run fed by a lending source — its read buffer overwritten by
// the next read — gives the events a copying source gives, cut anywhere.
func TestGraphsTakeLentInput(t *testing.T) {
	graphs := []struct {
		wire   wire.Wire
		opts   Options
		stream string
	}{
		{wire.Chat, Options{}, "chat_parallel_tools.sse"},
		{wire.Chat, Options{}, "chat_reasoning.sse"},
		{wire.Chat, Options{ToolFormat: "hermes"}, "chat_reasoning.sse"},
		{wire.Messages, Options{}, "anthropic_tool_use.sse"},
		{wire.Responses, Options{}, "responses_tools.sse"},
	}
	for _, tt := range graphs {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "streams", tt.stream))
		if err != nil {
			t.Fatal(err)
		}
		g, err := Graph(tt.wire, tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		if !g.InputReusable() {
			t.Fatalf("%s: the graph's first node %s is not marked KeepsNoInput", tt.wire, g.Names()[0])
		}
		run := func(src pipeline.Source[[]byte]) []protocol.ResponseEvent {
			var evs []protocol.ResponseEvent
			err := pipeline.Run(context.Background(), g, src, pipeline.SinkFunc[protocol.ResponseEvent](func(ev protocol.ResponseEvent) error {
				evs = append(evs, ev)
				return nil
			}))
			if err != nil {
				t.Fatalf("%s %s: %v", tt.wire, tt.stream, err)
			}
			return evs
		}
		want := run(sources.Reader(bytes.NewReader(data)))
		if len(want) < 4 {
			t.Fatalf("%s %s: only %d events", tt.wire, tt.stream, len(want))
		}
		for _, size := range []int{1, 3, 7, 64, 1 << 20} {
			got := run(sources.Reader(&scribbler{r: bytes.NewReader(data), size: size}, sources.Lending()))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%s %s, reads of %d bytes: lent input changed the events (-copied +lent)\n%s", tt.wire, tt.stream, size, diff)
			}
		}
	}
}
