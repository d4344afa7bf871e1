package sinks

import (
	"bufio"
	"fmt"
	"io"

	"github.com/harnessflow/harnessflow/protocol"
)

// JSONLinesSink writes one JSON object per line per ResponseEvent, in the
// event JSON of docs/architecture.md#event-json ("type" first).
type JSONLinesSink struct {
	w         *bufio.Writer
	buf       []byte
	flushEach bool
	n         int
}

// JSONLines returns a sink writing events to w. With flushEach every event
// is flushed as soon as it is written (for live streams); otherwise output
// is buffered until Flush, which Run calls at the end of a successful run.
func JSONLines(w io.Writer, flushEach bool) *JSONLinesSink {
	return &JSONLinesSink{w: bufio.NewWriterSize(w, 64<<10), flushEach: flushEach}
}

// Accept writes ev as one line.
func (s *JSONLinesSink) Accept(ev protocol.ResponseEvent) error {
	s.n++
	b, err := ev.AppendJSON(s.buf[:0])
	if err != nil {
		return fmt.Errorf("jsonl: event %d (%s): %w", s.n, ev.Type, err)
	}
	s.buf = append(b, '\n')
	if _, err := s.w.Write(s.buf); err != nil {
		return fmt.Errorf("jsonl: write event %d: %w", s.n, err)
	}
	if s.flushEach {
		return s.Flush()
	}
	return nil
}

// Flush writes out buffered lines.
func (s *JSONLinesSink) Flush() error {
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("jsonl: flush: %w", err)
	}
	return nil
}
