package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/harnessflow/harnessflow/benchmark"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/chatstream"
	"github.com/harnessflow/harnessflow/stages/metrics"
	"github.com/harnessflow/harnessflow/stages/textcall"
)

// chatResult is what one implementation assembled from the corpus.
type chatResult struct {
	Text, Reasoning string
	Calls           []chatCall
	Prompt, Output  int64
	Total           int64
	Events          int
}

func (r chatResult) check(want chatWant, withReasoning bool) error {
	switch {
	case r.Text != want.Text:
		return fmt.Errorf("text differs: %d bytes, want %d", len(r.Text), len(want.Text))
	case withReasoning && r.Reasoning != want.Reasoning:
		return fmt.Errorf("reasoning differs: %d bytes, want %d", len(r.Reasoning), len(want.Reasoning))
	case len(r.Calls) != len(want.Calls):
		return fmt.Errorf("%d tool calls, want %d", len(r.Calls), len(want.Calls))
	case r.Prompt != want.Prompt || r.Output != want.Output || r.Total != want.Total:
		return fmt.Errorf("usage %d/%d/%d, want %d/%d/%d", r.Prompt, r.Output, r.Total, want.Prompt, want.Output, want.Total)
	}
	for i, c := range r.Calls {
		if c != want.Calls[i] {
			return fmt.Errorf("tool call %d differs: %s %s (%d bytes of arguments), want %s %s (%d)",
				i, c.ID, c.Name, len(c.Arguments), want.Calls[i].ID, want.Calls[i].Name, len(want.Calls[i].Arguments))
		}
	}
	return nil
}

// eventSink counts events and keeps what the done items and the completed
// event say, so the result can be checked without keeping every delta.
type eventSink struct{ res chatResult }

func (s *eventSink) Accept(ev protocol.ResponseEvent) error {
	s.res.Events++
	switch ev.Type {
	case protocol.EventOutputItemDone:
		switch it := ev.Item.(type) {
		case *protocol.Message:
			s.res.Text = it.Content[0].Text
		case *protocol.Reasoning:
			s.res.Reasoning = it.Content[0].Text
		case *protocol.FunctionCall:
			s.res.Calls = append(s.res.Calls, chatCall{ID: it.CallID, Name: it.Name, Arguments: it.Arguments})
		}
	case protocol.EventCompleted:
		if u := ev.TokenUsage; u != nil {
			s.res.Prompt, s.res.Output, s.res.Total = u.InputTokens, u.OutputTokens, u.TotalTokens
		}
	case protocol.EventFailed:
		return fmt.Errorf("failed event: %v", ev.Error)
	}
	return nil
}

func chatRunOurs(g *pipeline.Graph, corpus []byte, mode pipeline.Mode, opts ...pipeline.RunOption) (chatResult, error) {
	s := &eventSink{}
	err := pipeline.Run(context.Background(), g, sources.Reader(bytes.NewReader(corpus)), s, append([]pipeline.RunOption{pipeline.WithMode(mode)}, opts...)...)
	return s.res, err
}

// chatRunOpenAI is the peer: openai-go's SSE stream decoder over an
// http.Response carrying the corpus, and ChatCompletionAccumulator.AddChunk
// for every chunk. openai-go does not surface reasoning_content, so the
// reasoning is not compared for it.
func chatRunOpenAI(corpus []byte) (chatResult, error) {
	res := &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": []string{"text/event-stream"}},
		Body:       io.NopCloser(bytes.NewReader(corpus)),
	}
	stream := ssestream.NewStream[openai.ChatCompletionChunk](ssestream.NewDecoder(res), nil)
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	var r chatResult
	for stream.Next() {
		r.Events++
		if !acc.AddChunk(stream.Current()) {
			return r, fmt.Errorf("AddChunk rejected chunk %d", r.Events)
		}
	}
	if err := stream.Err(); err != nil {
		return r, err
	}
	if len(acc.Choices) != 1 {
		return r, fmt.Errorf("%d choices", len(acc.Choices))
	}
	m := acc.Choices[0].Message
	r.Text = m.Content
	for _, tc := range m.ToolCalls {
		r.Calls = append(r.Calls, chatCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	r.Prompt, r.Output, r.Total = acc.Usage.PromptTokens, acc.Usage.CompletionTokens, acc.Usage.TotalTokens
	return r, nil
}

// BenchmarkChatStream measures a whole chat SSE response (10,000 chunks of
// text, reasoning and interleaved tool-call fragments, ~3 MB) turned into
// its final result, per chunk, by our Graph in both modes and by openai-go:
//
//	go test ./bench -run '^$' -bench BenchmarkChatStream -benchmem
//
// Every iteration's result is checked against the corpus's expected text,
// tool calls and usage (and reasoning for ours), so no implementation can
// skip work.
func BenchmarkChatStream(b *testing.B) {
	corpus, want := chatCorpus()
	g, err := chatstream.Graph(chatstream.Options{})
	if err != nil {
		b.Fatal(err)
	}
	// The same graph with text tool-call recovery on (serve's default,
	// auto): the corpus has no markup, so what it costs is the look.
	tn, err := textcall.Node(textcall.Options{Format: textcall.Auto})
	if err != nil {
		b.Fatal(err)
	}
	gAuto, err := g.InsertBefore(chatstream.AccumulateName, tn)
	if err != nil {
		b.Fatal(err)
	}
	m := metrics.New()
	impls := []struct {
		name          string
		run           func() (chatResult, error)
		withReasoning bool
	}{
		{"fused", func() (chatResult, error) { return chatRunOurs(g, corpus, pipeline.Fused) }, true},
		{"async", func() (chatResult, error) { return chatRunOurs(g, corpus, pipeline.Async) }, true},
		{"fused-textcalls-auto", func() (chatResult, error) { return chatRunOurs(gAuto, corpus, pipeline.Fused) }, true},
		// What serve's per-node metrics cost: counted only (serve's
		// default), and counted and timed (serve --stage-timing).
		{"fused-counted", func() (chatResult, error) {
			return chatRunOurs(g, corpus, pipeline.Fused, pipeline.WithObserver(m.RunObserver(g)), pipeline.WithoutTiming())
		}, true},
		{"fused-counted-timed", func() (chatResult, error) {
			return chatRunOurs(g, corpus, pipeline.Fused, pipeline.WithObserver(m.RunObserver(g)))
		}, true},
		{"openai-go", func() (chatResult, error) { return chatRunOpenAI(corpus) }, false},
	}
	for _, impl := range impls {
		b.Run(impl.name, func(b *testing.B) {
			b.SetBytes(int64(len(corpus)))
			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			cpu0, cpuOK := benchmark.ProcessCPU()
			for b.Loop() {
				r, err := impl.run()
				if err != nil {
					b.Fatal(err)
				}
				if err := r.check(want, impl.withReasoning); err != nil {
					b.Fatal(err)
				}
			}
			cpu1, _ := benchmark.ProcessCPU()
			runtime.ReadMemStats(&after)
			chunks := float64(b.N) * chatCorpusChunks
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/chunks, "ns/chunk")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/chunks, "allocs/chunk")
			if cpuOK {
				// CPU time of the whole process (all threads, GC included):
				// steadier than wall time on a shared machine.
				b.ReportMetric(float64(cpu1-cpu0)/chunks, "cpu-ns/chunk")
			}
		})
	}
}

// TestChatCorpusAgreement runs each implementation once and checks it
// against the corpus's expected result, so a broken corpus or impl fails
// in `go test ./bench` without running the benchmark.
func TestChatCorpusAgreement(t *testing.T) {
	corpus, want := chatCorpus()
	g, err := chatstream.Graph(chatstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []pipeline.Mode{pipeline.Fused, pipeline.Async} {
		r, err := chatRunOurs(g, corpus, mode)
		if err == nil {
			err = r.check(want, true)
		}
		if err != nil {
			t.Errorf("%s: %v", mode, err)
		}
	}
	r, err := chatRunOpenAI(corpus)
	if err == nil {
		err = r.check(want, false)
	}
	if err != nil {
		t.Errorf("openai-go: %v", err)
	}
	if r.Events != chatCorpusChunks {
		t.Errorf("openai-go saw %d chunks, want %d", r.Events, chatCorpusChunks)
	}
}
