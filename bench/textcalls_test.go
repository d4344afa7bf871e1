package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/stages/chatstream"
	"github.com/harnessflow/harnessflow/stages/textcall"
)

// BenchmarkTextCalls measures the chat.textcalls stage alone, per content
// delta: plain prose (what auto costs on a stream with no markup, against
// the stage off) and a reply with Qwen3-Coder and Hermes calls in it:
//
//	go test ./bench -run '^$' -bench BenchmarkTextCalls -benchmem
func BenchmarkTextCalls(b *testing.B) {
	prose := strings.Fields(strings.Repeat("The function reads the file, checks each line and returns the count of matches. ", 40))
	var markup []string
	for i := 0; i < 20; i++ {
		reply := fmt.Sprintf("Step %d.\n<tool_call>\n<function=exec_command>\n<parameter=cmd>\nls -l dir%d\n</parameter>\n</function>\n</tool_call>\n", i, i)
		for len(reply) > 0 {
			n := min(6, len(reply))
			markup, reply = append(markup, reply[:n]), reply[n:]
		}
	}
	for _, c := range []struct {
		name, format string
		deltas       []string
	}{
		{"plain/off", textcall.Off, prose},
		{"plain/auto", textcall.Auto, prose},
		{"qwen3_coder/auto", textcall.Auto, markup},
		{"qwen3_coder/qwen3_coder", "qwen3_coder", markup},
	} {
		b.Run(c.name, func(b *testing.B) {
			if err := textcall.CheckName(c.format); err != nil {
				b.Skip(err)
			}
			chunks := make([]chatstream.Chunk, len(c.deltas))
			for i, d := range c.deltas {
				chunks[i] = chatstream.Chunk{Kind: chatstream.ChunkData, ID: []byte("chatcmpl-1"),
					Choices: []chatstream.Choice{{Content: [][]byte{[]byte(d + " ")}}}}
			}
			done := chatstream.Chunk{Kind: chatstream.ChunkDone}
			ctx := context.Background()
			var out int
			emit := func(c chatstream.Chunk) { out += len(c.Choices) }
			b.ReportAllocs()
			for b.Loop() {
				st := textcall.NewStage(textcall.Options{Format: c.format})
				for _, ch := range chunks {
					if err := st.Push(ctx, ch, emit); err != nil {
						b.Fatal(err)
					}
				}
				if err := st.Push(ctx, done, emit); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(chunks)), "ns/delta")
		})
	}
}
