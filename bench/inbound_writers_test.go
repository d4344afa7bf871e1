package bench

import (
	"bytes"
	"io"
	"testing"

	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/wire/chatin"
	"github.com/harnessflow/harnessflow/wire/messagesin"
	"github.com/harnessflow/harnessflow/wire/responses"
)

// clientWriter is what the three client writers share.
type clientWriter interface {
	Accept(protocol.ResponseEvent) error
}

// BenchmarkClientWriters writes the same reply — 200 reasoning deltas,
// 1000 text deltas, a tool call — with the writer of each client wire in
// one run: the Responses writer (Codex), the Messages writer (Claude
// Code) and the Chat Completions writer (include_usage on).
func BenchmarkClientWriters(b *testing.B) {
	evs := []protocol.ResponseEvent{protocol.Created(), protocol.Added(&protocol.Reasoning{ID: "r"})}
	for range 200 {
		evs = append(evs, protocol.ReasoningDelta("thinking ", 0))
	}
	evs = append(evs, protocol.Done(&protocol.Reasoning{ID: "r"}), protocol.Added(&protocol.Message{ID: "m", Role: protocol.RoleAssistant}))
	for range 1000 {
		evs = append(evs, protocol.TextDelta("some words "))
	}
	evs = append(evs, protocol.Done(&protocol.FunctionCall{Name: "exec_command", Arguments: `{"cmd":"ls -la"}`, CallID: "c1"}),
		protocol.Completed("resp_1", &protocol.TokenUsage{InputTokens: 100, OutputTokens: 1200}))
	for _, c := range []struct {
		name string
		make func(w io.Writer) clientWriter
	}{
		{"responses", func(w io.Writer) clientWriter {
			return responses.NewWriter(w, responses.Options{ResponseID: "resp_1", Model: "m", CreatedAt: 1})
		}},
		{"messages", func(w io.Writer) clientWriter {
			return messagesin.NewWriter(w, messagesin.Options{MessageID: "msg_1", Model: "m"})
		}},
		{"chat", func(w io.Writer) clientWriter {
			return chatin.NewWriter(w, chatin.Options{ID: "chatcmpl-1", Model: "m", Created: 1, IncludeUsage: true})
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var buf bytes.Buffer
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				w := c.make(&buf)
				for _, ev := range evs {
					if err := w.Accept(ev); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.SetBytes(int64(buf.Len()))
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(evs)), "ns/event")
		})
	}
}
