// Package tap records the raw upstream bytes of a response stream, verbatim,
// while they flow on unchanged: a recording replays through the same graph
// (harnessflow translate --wire W FILE) to the same events as the live run.
//
//	in : |data: {"a"|:1}\n\n|      (chunks of []byte)
//	out: |data: {"a"|:1}\n\n|      the same chunks, after each is written to w
//
// Put the tap first in a response graph (before sse.decode, or before
// chat.unary for a unary body). Record gives every run of the graph a
// recording of its own, which the run creates when it starts and closes
// when it is over (the node's stage is a pipeline.Resource):
//
//	g, err = g.Prepend(tap.Record(dir, "chat", func(path string) { log.Print("recording to ", path) }))
//
// Node records into a writer of the caller's, who opens and closes it:
//
//	f, path, err := tap.RecordFile(dir, "chat")
//	...
//	defer f.Close()
//	g, err = g.Prepend(tap.Node(f))
//
// A failed write is fatal to the run; the error names the file and offset.
// Recordings hold whatever the upstream sent, secrets included: RecordFile
// creates them readable by the owner only.
package tap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/harnessflow/harnessflow/pipeline"
)

// Name is the node name of the tap stage.
const Name = "tap.record"

// Stage is a pipeline.Stage[[]byte, []byte] that writes every chunk to a
// writer, then passes it on unchanged (the same slice, not a copy).
type Stage struct {
	w    io.Writer
	name string
	off  int64
}

var (
	_ pipeline.Stage[[]byte, []byte] = (*Stage)(nil)
	_ pipeline.Finisher[[]byte]      = (*Stage)(nil)
)

// New returns a tap writing to w. Errors name w by its Name method (an
// *os.File's path) when it has one.
func New(w io.Writer) *Stage {
	name := "writer"
	if n, ok := w.(interface{ Name() string }); ok {
		name = n.Name()
	}
	return &Stage{w: w, name: name}
}

// Node returns a tap node (Name) writing to w. Every run of a graph that
// holds the node writes to the same w, so give each recorded run a graph of
// its own (as the CLI and the proxy do: one graph per request).
func Node(w io.Writer) pipeline.Node {
	return pipeline.NewNode(Name, func() pipeline.Stage[[]byte, []byte] { return New(w) },
		pipeline.Describe("record the upstream bytes verbatim"))
}

// Record returns a tap node (Name) that records each run of its graph into
// a new file in dir, named by RecordFile(dir, prefix): the run creates the
// file when it opens the node, before the first chunk, and closes it when
// the run is over, whatever its outcome (see pipeline.Resource). A graph
// holding the node may run any number of times, each run recorded apart,
// and a graph that never runs creates no file. created, when not nil, is
// called with the path of every new recording. Failing to create the file
// fails the run before it starts; failing to close it is the run's error.
func Record(dir, prefix string, created func(path string)) pipeline.Node {
	return pipeline.NewNode(Name, func() pipeline.Stage[[]byte, []byte] {
		return &recorder{dir: dir, prefix: prefix, created: created}
	}, pipeline.Describe("record the upstream bytes verbatim, one new file per run"))
}

// recorder is the stage of Record: a Stage on a file of its own run.
type recorder struct {
	dir, prefix string
	created     func(path string)
	f           io.WriteCloser
	path        string
	st          *Stage
}

var (
	_ pipeline.Stage[[]byte, []byte] = (*recorder)(nil)
	_ pipeline.Finisher[[]byte]      = (*recorder)(nil)
	_ pipeline.Resource              = (*recorder)(nil)
)

var errNotOpen = errors.New("tap: the recording is not open (a Record node's file is opened by pipeline.Run)")

// Open creates the run's recording.
func (r *recorder) Open(context.Context) error {
	f, path, err := RecordFile(r.dir, r.prefix)
	if err != nil {
		return err
	}
	r.f, r.path, r.st = f, path, New(f)
	r.st.name = path
	if r.created != nil {
		r.created(path)
	}
	return nil
}

// Push records chunk and emits it.
func (r *recorder) Push(ctx context.Context, chunk []byte, emit func([]byte)) error {
	if r.st == nil {
		return errNotOpen
	}
	return r.st.Push(ctx, chunk, emit)
}

// Finish flushes the recording (a no-op for a file).
func (r *recorder) Finish(ctx context.Context, emit func([]byte)) error {
	if r.st == nil {
		return errNotOpen
	}
	return r.st.Finish(ctx, emit)
}

// Close closes the run's recording.
func (r *recorder) Close() error {
	if r.f == nil {
		return nil
	}
	f := r.f
	r.f, r.st = nil, nil
	if err := f.Close(); err != nil {
		return fmt.Errorf("tap: close recording %s: %w", r.path, err)
	}
	return nil
}

// Push writes chunk to the writer and emits it.
func (s *Stage) Push(_ context.Context, chunk []byte, emit func([]byte)) error {
	n, err := s.w.Write(chunk)
	if err == nil && n < len(chunk) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return fmt.Errorf("tap: record %s at byte %d: %w", s.name, s.off+int64(n), err)
	}
	s.off += int64(n)
	emit(chunk)
	return nil
}

// Finish flushes the writer if it buffers (has a Flush() error method).
func (s *Stage) Finish(context.Context, func([]byte)) error {
	if f, ok := s.w.(interface{ Flush() error }); ok {
		if err := f.Flush(); err != nil {
			return fmt.Errorf("tap: flush %s: %w", s.name, err)
		}
	}
	return nil
}

// Written returns how many bytes were recorded.
func (s *Stage) Written() int64 { return s.off }

var seq atomic.Uint64

// RecordFile creates a new recording file in dir (created if needed, mode
// 0700) named <prefix>-<UTC time>-<sequence>.sse, e.g.
// chat-20260102T150405.123456789Z-000001.sse: names sort in creation order
// and never collide within a process (the sequence is process-wide; the
// file is created exclusively). The file is readable by its owner only. It
// returns the open file and its path; the caller closes it.
func RecordFile(dir, prefix string) (io.WriteCloser, string, error) {
	if prefix == "" || strings.ContainsAny(prefix, `/\`) || prefix == "." || prefix == ".." {
		return nil, "", fmt.Errorf("tap: bad recording prefix %q", prefix)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", fmt.Errorf("tap: recording directory: %w", err)
	}
	stamp := time.Now().UTC().Format("20060102T150405.000000000Z")
	for range 1000 {
		path := filepath.Join(dir, fmt.Sprintf("%s-%s-%06d.sse", prefix, stamp, seq.Add(1)))
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue // another process recorded under the same name
		}
		if err != nil {
			return nil, "", fmt.Errorf("tap: create recording: %w", err)
		}
		return f, path, nil
	}
	return nil, "", fmt.Errorf("tap: create recording in %s: no free name", dir)
}
