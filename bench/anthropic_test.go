package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/anthropicstream"
)

// The Anthropic corpus: one message of exactly anthEvents SSE events — a
// thinking block (anthThinking deltas, then a signature), a text block
// (anthText deltas), anthTools tool_use blocks whose input arrives in
// anthFragments small input_json_delta pieces each, and usage in
// message_start and message_delta.
const (
	anthEvents    = 10_000
	anthThinking  = 3000
	anthTools     = 6
	anthFragments = 400
	// message_start, message_delta, message_stop; start, signature and
	// stop of the thinking block; start and stop of the text block.
	anthText = anthEvents - 3 - (anthThinking + 3) - 2 - anthTools*(anthFragments+2)
)

// anthResult is what a run must produce; every implementation is checked
// against it so that none can skip work.
type anthResult struct {
	thinking, signature, text string
	inputs                    []string
}

var anthWords = []string{"the", "stream", "decoder", "reads", "é", "naïve", "“quoted”", "\"q\"", "tab\t", "line\n",
	"back\\slash", "😀", "<tag>", "&amp;", "0.5", "json", "{brace}", "go", "test", "…"}

// anthCorpus builds the corpus the way Anthropic writes it: keys in the
// API's order ("type" first), no HTML escaping.
func anthCorpus() ([]byte, anthResult) {
	rng := rand.New(rand.NewPCG(7, 11))
	var b bytes.Buffer
	n := 0
	jstr := func(s string) string {
		var sb strings.Builder
		enc := json.NewEncoder(&sb)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			panic(err)
		}
		return strings.TrimSuffix(sb.String(), "\n")
	}
	event := func(typ, data string) {
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", typ, data)
		n++
	}
	word := func() string { return anthWords[rng.IntN(len(anthWords))] }
	delta := func(i int, typ, key, val string) {
		event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":%q,%q:%s}}`, i, typ, key, jstr(val)))
	}
	start := func(i int, block string) {
		event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":%s}`, i, block))
	}
	stop := func(i int) { event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i)) }
	var want anthResult
	event("message_start", `{"type":"message_start","message":{"id":"msg_bench","type":"message","role":"assistant","model":"claude-bench","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1200,"cache_creation_input_tokens":0,"cache_read_input_tokens":4096,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":2,"service_tier":"standard"}}}`)
	// Thinking.
	start(0, `{"type":"thinking","thinking":"","signature":""}`)
	var sb strings.Builder
	for range anthThinking {
		piece := " " + word()
		sb.WriteString(piece)
		delta(0, "thinking_delta", "thinking", piece)
	}
	want.thinking, want.signature = sb.String(), "EqQBCkYIBxgCKkBXf3m1PqNcZ8yT2wLr0vJ4sK6hG9dF5aQ3eR7tY1uI0oP8lK2jH4gF6dS9aZ7xC5vB3nM1qW0eR8tY6uI4oP2=="
	delta(0, "signature_delta", "signature", want.signature)
	stop(0)
	// Text.
	start(1, `{"type":"text","text":""}`)
	sb.Reset()
	for range anthText {
		piece := " " + word()
		sb.WriteString(piece)
		delta(1, "text_delta", "text", piece)
	}
	want.text = sb.String()
	stop(1)
	// Tools.
	for k := range anthTools {
		idx := 2 + k
		var content strings.Builder
		for content.Len() < anthFragments*4 {
			content.WriteString(word() + " ")
		}
		args := fmt.Sprintf(`{"path": "pkg/file_%d.go", "content": %s, "mode": 420}`, k, jstr(content.String()))
		want.inputs = append(want.inputs, args)
		start(idx, fmt.Sprintf(`{"type":"tool_use","id":"toolu_bench_%d","name":"write_file","input":{}}`, k))
		// anthFragments pieces at pseudo-random cut points (inside escapes too).
		cuts := make([]int, 0, anthFragments+1)
		cuts = append(cuts, 0)
		for i := 1; i < anthFragments; i++ {
			c := max(i*len(args)/anthFragments+rng.IntN(2), cuts[len(cuts)-1])
			for c < len(args) && !utf8.RuneStart(args[c]) {
				c++ // fragments are whole UTF-8 strings, cut anywhere else
			}
			cuts = append(cuts, c)
		}
		cuts = append(cuts, len(args))
		for i := range anthFragments {
			delta(idx, "input_json_delta", "partial_json", args[cuts[i]:cuts[i+1]])
		}
		stop(idx)
	}
	event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"input_tokens":1200,"cache_creation_input_tokens":0,"cache_read_input_tokens":4096,"output_tokens":9000}}`)
	event("message_stop", `{"type":"message_stop"}`)
	if n != anthEvents {
		panic(fmt.Sprintf("corpus has %d events, want %d", n, anthEvents))
	}
	return b.Bytes(), want
}

// anthSink counts events and keeps the done items' payloads.
type anthSink struct {
	events    int
	completed bool
	got       anthResult
}

func (s *anthSink) Accept(e protocol.ResponseEvent) error {
	s.events++
	switch e.Type {
	case protocol.EventOutputItemDone:
		switch it := e.Item.(type) {
		case *protocol.Message:
			s.got.text = it.Content[0].Text
		case *protocol.Reasoning:
			s.got.thinking = it.Content[0].Text
			s.got.signature = *it.EncryptedContent
		case *protocol.FunctionCall:
			s.got.inputs = append(s.got.inputs, it.Arguments)
		}
	case protocol.EventCompleted:
		s.completed = true
	}
	return nil
}

func anthCheck(b *testing.B, impl string, got, want anthResult) {
	b.Helper()
	if got.text != want.text || got.thinking != want.thinking || got.signature != want.signature || len(got.inputs) != len(want.inputs) {
		b.Fatalf("%s: result differs (text %d/%d bytes, thinking %d/%d, signature %v, %d/%d tools)", impl,
			len(got.text), len(want.text), len(got.thinking), len(want.thinking), got.signature == want.signature, len(got.inputs), len(want.inputs))
	}
	for i := range got.inputs {
		if got.inputs[i] != want.inputs[i] {
			b.Fatalf("%s: tool %d input differs", impl, i)
		}
	}
}

// anthPerEvent reports ns and allocations per upstream event.
func anthPerEvent(b *testing.B, mallocs uint64) {
	events := float64(b.N) * anthEvents
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/events, "ns/event")
	b.ReportMetric(float64(mallocs)/events, "allocs/event")
}

func anthMallocs() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Mallocs
}

// anthSDK runs anthropic-sdk-go's own stream decoder over an HTTP response
// carrying the corpus and accumulates every event into a Message.
func anthSDK(corpus []byte) (anthResult, error) {
	res := &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": []string{"text/event-stream"}},
		Body:       io.NopCloser(bytes.NewReader(corpus)),
	}
	stream := ssestream.NewStream[anthropic.MessageStreamEventUnion](ssestream.NewDecoder(res), nil)
	defer stream.Close()
	var msg anthropic.Message
	for stream.Next() {
		if err := msg.Accumulate(stream.Current()); err != nil {
			return anthResult{}, err
		}
	}
	if err := stream.Err(); err != nil {
		return anthResult{}, err
	}
	var r anthResult
	for _, c := range msg.Content {
		switch c.Type {
		case "thinking":
			r.thinking, r.signature = c.Thinking, c.Signature
		case "text":
			r.text = c.Text
		case "tool_use":
			r.inputs = append(r.inputs, string(c.Input))
		}
	}
	return r, nil
}

// BenchmarkAnthropicStream measures a 10,000-event Messages stream (text,
// thinking with a signature, tool input in small fragments, usage) turned
// into a complete result: our graph in both modes (bytes read with
// sources.Reader, a counting sink) and anthropic-sdk-go's stream decoder
// plus Message.Accumulate, checked to produce the same text, thinking,
// signature and tool inputs.
//
//	go test ./bench -run '^$' -bench BenchmarkAnthropicStream -benchmem
func BenchmarkAnthropicStream(b *testing.B) {
	corpus, want := anthCorpus()
	g, err := anthropicstream.Graph(anthropicstream.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []pipeline.Mode{pipeline.Fused, pipeline.Async} {
		b.Run(mode.String(), func(b *testing.B) {
			b.SetBytes(int64(len(corpus)))
			b.ReportAllocs()
			var s *anthSink
			m0 := anthMallocs()
			for b.Loop() {
				s = &anthSink{}
				if err := pipeline.Run(context.Background(), g, sources.Reader(bytes.NewReader(corpus)), s, pipeline.WithMode(mode)); err != nil {
					b.Fatal(err)
				}
			}
			anthPerEvent(b, anthMallocs()-m0)
			if !s.completed {
				b.Fatal("no completed event")
			}
			anthCheck(b, mode.String(), s.got, want)
		})
	}
	b.Run("anthropic-sdk-go", func(b *testing.B) {
		b.SetBytes(int64(len(corpus)))
		b.ReportAllocs()
		var got anthResult
		m0 := anthMallocs()
		for b.Loop() {
			var err error
			if got, err = anthSDK(corpus); err != nil {
				b.Fatal(err)
			}
		}
		anthPerEvent(b, anthMallocs()-m0)
		anthCheck(b, "anthropic-sdk-go", got, want)
	})
}
