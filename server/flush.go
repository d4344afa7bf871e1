package server

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/sources"
)

// readFlusher batches the flushes of a client's event stream: the events
// translated from one read of the upstream's body go out together, flushed
// once the read's bytes are consumed, instead of once per event. A read
// returns what the upstream connection has buffered, so the client gets
// every event as soon as the upstream has nothing more ready, in one write
// instead of one per event — fewer syscalls, the same latency.
//
// It wraps the client's ResponseWriter: the stream writer's flushes (one
// per event) only mark the stream dirty; the source (wrapped by source)
// flushes after each read it emitted. It is only for the fused mode, where
// the source, the stages and the sink run in the handler's goroutine, so the
// flush never races a write; the async mode flushes every event.
type readFlusher struct {
	http.ResponseWriter
	rc    *http.ResponseController
	dirty bool
	err   error // the first failed flush
}

// newReadFlusher wraps w.
func newReadFlusher(w http.ResponseWriter) *readFlusher {
	return &readFlusher{ResponseWriter: w, rc: http.NewResponseController(w)}
}

// FlushError marks the stream as having events to flush (the stream
// writer calls it after every event; http.ResponseController finds it). It
// returns the error of a flush that failed, so the writer stops as it does
// when its own flush fails (the client went away).
func (f *readFlusher) FlushError() error {
	f.dirty = true
	return f.err
}

// Unwrap returns the client's ResponseWriter, for http.ResponseController.
func (f *readFlusher) Unwrap() http.ResponseWriter { return f.ResponseWriter }

// flush flushes the events written since the last flush. A failure is
// kept for the stream writer (FlushError); the request's context ends the
// run when the client is gone.
func (f *readFlusher) flush() {
	if !f.dirty || f.err != nil {
		return
	}
	f.dirty = false
	if err := f.rc.Flush(); err != nil {
		f.err = fmt.Errorf("server: flush the client's stream: %w", err)
	}
}

// source returns src flushing after every element it emitted (a read of
// the upstream's body, translated and written), and once more when it
// ends. The events the run writes after that (at the end of the input) are
// flushed when the handler returns.
func (f *readFlusher) source(src pipeline.Source[[]byte]) pipeline.Source[[]byte] {
	return pipeline.SourceFunc[[]byte](func(ctx context.Context, emit func([]byte) error) error {
		err := src.Stream(ctx, func(b []byte) error {
			if err := emit(b); err != nil {
				return err
			}
			f.flush()
			return nil
		})
		f.flush()
		return err
	})
}

// sendHeaders sends a stream's status line and headers at once, before its
// first event: the client learns that its stream started as soon as the
// upstream answered, and net/http serializes the headers here, from the
// handler's shallow frames, rather than at the first event's write at the
// bottom of the fused chain — which would grow every stream's goroutine
// stack to twice the size for the rest of its life (docs/performance.md).
// A failed flush is left to the stream's first write to find.
func sendHeaders(w http.ResponseWriter) {
	if f, ok := w.(*readFlusher); ok {
		f.dirty = true
		f.flush()
		return
	}
	_ = http.NewResponseController(w).Flush()
}

// upstreamSource is the source of an upstream's body for a run of g: it
// lends its read buffer (no copy per read) when the run is fused and g's
// first node keeps nothing of its input (pipeline.Graph.InputReusable).
func (s *Server) upstreamSource(body io.Reader, g *pipeline.Graph) *sources.ReaderSource {
	if s.cfg.Mode == pipeline.Fused && g.InputReusable() {
		return sources.Reader(body, sources.WithName("upstream"), sources.Lending())
	}
	return sources.Reader(body, sources.WithName("upstream"))
}

// batchFlushes returns the writer of the client's events and the source of
// the upstream's body: in the fused mode both wrapped by a readFlusher (one
// flush per upstream read), in the async mode as they are (one flush per
// event).
func (s *Server) batchFlushes(w http.ResponseWriter, src pipeline.Source[[]byte]) (http.ResponseWriter, pipeline.Source[[]byte]) {
	if s.cfg.Mode != pipeline.Fused {
		return w, src
	}
	f := newReadFlusher(w)
	return f, f.source(src)
}
