package anthropicstream_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sinks"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/anthropicstream"
)

// Every text and thinking delta carries SoFar, its block's text so far (the
// deltas of its item, concatenated), and no SoFar handed out changes later.
func TestDeltasCarrySoFar(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "fixtures", "*.sse"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	g, err := anthropicstream.Graph(anthropicstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	withDeltas := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []pipeline.Mode{pipeline.Fused, pipeline.Async} {
			sink := sinks.Collect[protocol.ResponseEvent]()
			_ = pipeline.Run(context.Background(), g, sources.Reader(strings.NewReader(string(data)), sources.WithReadSize(7)), sink, pipeline.WithMode(mode))
			text := map[protocol.EventType]string{} // per kind of delta, since its item was added
			type handed struct{ view, copy string }
			var all []handed
			for _, ev := range sink.Items() {
				switch ev.Type {
				case protocol.EventOutputItemAdded:
					clear(text)
				case protocol.EventOutputTextDelta, protocol.EventReasoningContentDelta:
					text[ev.Type] += ev.Delta
					if ev.SoFar != text[ev.Type] {
						t.Fatalf("%s %s: SoFar %q, want the deltas so far %q", filepath.Base(f), mode, ev.SoFar, text[ev.Type])
					}
					all = append(all, handed{ev.SoFar, strings.Clone(ev.SoFar)})
					withDeltas++
				}
			}
			for _, h := range all {
				if h.view != h.copy {
					t.Fatalf("%s %s: a SoFar changed after it was handed out: %q, was %q", filepath.Base(f), mode, h.view, h.copy)
				}
			}
		}
	}
	if withDeltas == 0 {
		t.Fatal("no fixture has a text or thinking delta")
	}
}
