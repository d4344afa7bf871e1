package sse

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/tools/txtar"
)

// chatCorpus returns n realistic chat-completion chunks (~300 bytes each,
// text, reasoning and tool-argument deltas) with the given line ending.
func chatCorpus(n int, eol string) [][]byte {
	chunks := make([][]byte, n)
	for i := range chunks {
		var delta string
		switch i % 3 {
		case 0:
			delta = fmt.Sprintf(`{"content":" token%d"}`, i)
		case 1:
			delta = fmt.Sprintf(`{"reasoning_content":" thinking about step %d"}`, i)
		default:
			delta = fmt.Sprintf(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"src/%d"}}]}`, i)
		}
		chunks[i] = fmt.Appendf(nil, `data: {"id":"chatcmpl-CHxHh5Ab7Cd9Ef1Gh3Ij5Kl7Mn9Op","object":"chat.completion.chunk","created":1767312800,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_b3f1157249","choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":null}]}%s%s`, delta, eol, eol)
	}
	return chunks
}

// BenchmarkDecode measures framing cost. Sub-benchmarks that push one event
// per chunk report ns/op = ns per event; the others report ns/event as a
// metric. All must show 0 allocs/op.
func BenchmarkDecode(b *testing.B) {
	ctx := context.Background()
	perChunk := func(b *testing.B, chunks [][]byte) {
		d := New(Options{})
		events := 0
		emit := func(Event) { events++ }
		var total int
		for _, c := range chunks {
			total += len(c)
		}
		b.SetBytes(int64(total / len(chunks)))
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; b.Loop(); i++ {
			if err := d.Push(ctx, chunks[i%len(chunks)], emit); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(max(events, 1)), "ns/event")
	}
	b.Run("chat-chunk-LF", func(b *testing.B) { perChunk(b, chatCorpus(1024, "\n")) })
	b.Run("chat-chunk-CRLF", func(b *testing.B) { perChunk(b, chatCorpus(1024, "\r\n")) })
	b.Run("chat-chunk-CR", func(b *testing.B) { perChunk(b, chatCorpus(1024, "\r")) })
	b.Run("chat-split-in-2", func(b *testing.B) {
		var chunks [][]byte
		for _, c := range chatCorpus(1024, "\n") {
			chunks = append(chunks, c[:len(c)/2], c[len(c)/2:])
		}
		perChunk(b, chunks)
	})
	b.Run("anthropic-named", func(b *testing.B) {
		chunks := make([][]byte, 1024)
		for i := range chunks {
			chunks[i] = fmt.Appendf(nil, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" word%d\"}}\n\n", i)
		}
		perChunk(b, chunks)
	})
	streams := func(b *testing.B, stream []byte, readSize int) {
		d := New(Options{})
		events := 0
		emit := func(Event) { events++ }
		b.SetBytes(int64(len(stream)))
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			d.Reset()
			for p := stream; len(p) > 0; {
				n := min(readSize, len(p))
				if err := d.Push(ctx, p[:n], emit); err != nil {
					b.Fatal(err)
				}
				p = p[n:]
			}
			if err := d.Finish(ctx, emit); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(max(events, 1)), "ns/event")
	}
	corpus := bytes.Join(chatCorpus(10000, "\n"), nil)
	b.Run("chat-corpus-32KiB-reads", func(b *testing.B) { streams(b, corpus, 32<<10) })
	b.Run("chat-corpus-1KiB-reads", func(b *testing.B) { streams(b, corpus, 1<<10) })
	if data, err := os.ReadFile(filepath.Join("testdata", "c13_huge_single_line_200kb.txtar")); err == nil {
		arc := txtar.Parse(data)
		b.Run("huge-line-276KB-4KiB-reads", func(b *testing.B) { streams(b, arc.Files[0].Data, 4<<10) })
	}
}
