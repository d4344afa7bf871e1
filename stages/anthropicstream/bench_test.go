package anthropicstream

import (
	"context"
	"testing"

	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/sse"
)

// BenchmarkDecodeTextDelta measures anthropic.decode alone on the most
// common event.
func BenchmarkDecodeTextDelta(b *testing.B) {
	ctx := context.Background()
	d := NewDecoder()
	ev := sse.Event{Type: "content_block_delta", Data: []byte(`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":" the stream decoder reads"}}`)}
	var n int
	b.ReportAllocs()
	b.SetBytes(int64(len(ev.Data)))
	for b.Loop() {
		if err := d.Push(ctx, ev, func(e Event) { n += len(e.Text) }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAccumulateTextDelta measures anthropic.accumulate alone on a
// text delta.
func BenchmarkAccumulateTextDelta(b *testing.B) {
	ctx := context.Background()
	a := NewAccumulator(Options{})
	var n int
	sink := func(e protocol.ResponseEvent) { n += len(e.Delta) }
	if err := a.Push(ctx, Event{Type: TypeContentBlockStart, Block: &Block{Type: BlockText}}, sink); err != nil {
		b.Fatal(err)
	}
	ev := Event{Type: TypeContentBlockDelta, Delta: DeltaText, Text: []byte(" the stream decoder reads")}
	b.ReportAllocs()
	for b.Loop() {
		if err := a.Push(ctx, ev, sink); err != nil {
			b.Fatal(err)
		}
	}
}
