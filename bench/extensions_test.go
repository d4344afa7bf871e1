package bench

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/chatstream"
	"github.com/harnessflow/harnessflow/stages/logmw"
	"github.com/harnessflow/harnessflow/stages/metrics"
	"github.com/harnessflow/harnessflow/stages/redact"
	"github.com/harnessflow/harnessflow/stages/tap"
)

// BenchmarkExtensions measures the chat response graph bare and with each
// extension stage inserted, in the same run, on the chat corpus of
// BenchmarkChatStream (chatCorpus: 10,000 chunks, ~2.8 MB), read as
// runOurs reads it:
//
//	go test ./bench -run '^$' -bench BenchmarkExtensions -benchmem
//
//	bare              sse.decode → chat.decode → chat.accumulate → chat.finalize
//	logging-disabled  every node wrapped by logmw.Middleware, logger level above Error
//	redact            + redact.response after chat.finalize (all built-in detectors)
//	tap               + tap.record before sse.decode, writing to a file
//	metrics           + metrics.count after chat.finalize and the metrics observer
//	interleaved       all of the above taking turns in each iteration (see below)
func BenchmarkExtensions(b *testing.B) {
	corpus, want := chatCorpus()
	bare, err := chatstream.Graph(chatstream.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()

	quiet := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError + 1}))
	logged, err := bare.WrapAll(logmw.Middleware(quiet, logmw.Events))
	if err != nil {
		b.Fatal(err)
	}
	redacted, err := bare.InsertAfter("chat.finalize", redact.Node(redact.Default()))
	if err != nil {
		b.Fatal(err)
	}
	rec, err := os.CreateTemp(b.TempDir(), "tap-*.sse")
	if err != nil {
		b.Fatal(err)
	}
	defer rec.Close()
	tapped, err := bare.InsertBefore("sse.decode", tap.Node(rec))
	if err != nil {
		b.Fatal(err)
	}
	m := metrics.New()
	counted, err := bare.InsertAfter("chat.finalize", m.Node())
	if err != nil {
		b.Fatal(err)
	}

	variants := []struct {
		name   string
		g      *pipeline.Graph
		before func()
		opts   []pipeline.RunOption
	}{
		{name: "bare", g: bare},
		{name: "logging-disabled", g: logged},
		{name: "redact", g: redacted},
		{name: "tap", g: tapped, before: func() {
			if _, err := rec.Seek(0, io.SeekStart); err != nil {
				b.Fatal(err)
			}
		}},
		{name: "metrics", g: counted, opts: []pipeline.RunOption{pipeline.WithObserver(m.Observer(counted))}},
	}
	run := func(b *testing.B, i int) {
		v := variants[i]
		if v.before != nil {
			v.before()
		}
		s := &eventSink{}
		if err := pipeline.Run(ctx, v.g, sources.Reader(bytes.NewReader(corpus)), s, v.opts...); err != nil {
			b.Fatal(err)
		}
		if err := s.res.check(want, true); err != nil {
			b.Fatalf("%s: %v", v.name, err)
		}
	}
	for i, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			b.SetBytes(int64(len(corpus)))
			b.ReportAllocs()
			for b.Loop() {
				run(b, i)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/(float64(b.N)*chatCorpusChunks), "ns/chunk")
		})
	}
	// The same variants taking turns within each iteration (in rotating
	// order), so that they share the machine's conditions: on a busy
	// machine the separate sub-benchmarks above can differ by more than the
	// stages cost. Reports ns/chunk of each variant and its overhead over
	// bare in percent.
	b.Run("interleaved", func(b *testing.B) {
		spent := make([]time.Duration, len(variants))
		n := 0
		for b.Loop() {
			for k := range variants {
				i := (k + n) % len(variants)
				start := time.Now()
				run(b, i)
				spent[i] += time.Since(start)
			}
			n++
		}
		for i, v := range variants {
			b.ReportMetric(float64(spent[i].Nanoseconds())/(float64(n)*chatCorpusChunks), v.name+"-ns/chunk")
			if i > 0 {
				b.ReportMetric(100*float64(spent[i]-spent[0])/float64(spent[0]), v.name+"-overhead-%")
			}
		}
		b.ReportMetric(0, "ns/op")
	})
}
