// Package sources provides the inputs of pipeline runs: byte streams read as
// they arrive (io.Reader, files) and in-memory slices.
package sources

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/harnessflow/harnessflow/pipeline"
)

// DefaultReadSize is the largest read of Reader.
const DefaultReadSize = 32 << 10

// firstReadSize is the size of a Reader's first read buffer: it doubles,
// up to the read size, each time a read fills it. A slow stream of small
// events (a model's deltas, for minutes) holds a small buffer while it
// waits; a fast one soon reads in large blocks.
const firstReadSize = 2 << 10

// ReaderSource streams the bytes of an io.Reader, one element per Read, as
// soon as each Read returns. Every emitted slice is a fresh copy owned by
// the receiver, so it is safe in both execution modes — unless the source
// is Lending.
type ReaderSource struct {
	r    io.Reader
	name string
	size int
	lend bool
}

// Option configures a ReaderSource.
type Option func(*ReaderSource)

// WithReadSize sets the size of the largest read (the read buffer grows
// to it from a small one as reads fill it).
func WithReadSize(n int) Option {
	return func(s *ReaderSource) {
		if n > 0 {
			s.size = n
		}
	}
}

// Lending makes the source emit its read buffer itself instead of a fresh
// copy of every read: an emitted slice is valid only until emit returns,
// and the next read overwrites it. It saves an allocation and a copy per
// read, for a consumer that keeps nothing of its input once emit returned:
// a fused run of a graph whose Graph.InputReusable reports true.
func Lending() Option { return func(s *ReaderSource) { s.lend = true } }

// WithName names the input in error messages (a file name, "stdin", a URL).
func WithName(name string) Option { return func(s *ReaderSource) { s.name = name } }

// Reader returns a source reading r.
func Reader(r io.Reader, opts ...Option) *ReaderSource {
	s := &ReaderSource{r: r, name: "input", size: DefaultReadSize}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Stream reads until EOF, emitting what every Read returns. It stops at the
// first read error (wrapped with the input's name and byte offset) or when
// ctx is done.
func (s *ReaderSource) Stream(ctx context.Context, emit func([]byte) error) error {
	buf := make([]byte, min(s.size, firstReadSize))
	var off int64
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := s.r.Read(buf)
		if n > 0 {
			chunk := buf[:n:n]
			if !s.lend {
				chunk = make([]byte, n)
				copy(chunk, buf[:n])
			}
			off += int64(n)
			if eerr := emit(chunk); eerr != nil {
				return eerr
			}
			if n == len(buf) && len(buf) < s.size {
				buf = make([]byte, min(2*len(buf), s.size))
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return ctxErr
			}
			return fmt.Errorf("read %s at byte %d: %w", s.name, off, err)
		}
	}
}

// File returns a source that opens path when the run starts and closes it
// when the run ends.
func File(path string, opts ...Option) pipeline.Source[[]byte] {
	return pipeline.SourceFunc[[]byte](func(ctx context.Context, emit func([]byte) error) error {
		f, err := os.Open(path)
		if err != nil {
			return err // *PathError already names the file
		}
		defer f.Close()
		return Reader(f, append([]Option{WithName(path)}, opts...)...).Stream(ctx, emit)
	})
}

// SliceSource streams the elements of a slice. It is a BatchSource, so the
// async mode moves it in whole batches.
type SliceSource[T any] struct{ items []T }

// Slice returns a source of items.
func Slice[T any](items []T) *SliceSource[T] { return &SliceSource[T]{items: items} }

// Stream emits every item in order.
func (s *SliceSource[T]) Stream(ctx context.Context, emit func(T) error) error {
	for _, v := range s.items {
		if err := emit(v); err != nil {
			return err
		}
	}
	return nil
}

// StreamBatches emits the items in batches of up to 256.
func (s *SliceSource[T]) StreamBatches(ctx context.Context, emit func([]T) error) error {
	items := s.items
	for len(items) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		k := min(len(items), 256)
		if err := emit(items[:k]); err != nil {
			return err
		}
		items = items[k:]
	}
	return nil
}

// Chan returns a source that emits what arrives on ch until it is closed.
func Chan[T any](ch <-chan T) pipeline.Source[T] {
	return pipeline.SourceFunc[T](func(ctx context.Context, emit func(T) error) error {
		for {
			select {
			case v, ok := <-ch:
				if !ok {
					return nil
				}
				if err := emit(v); err != nil {
					return err
				}
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	})
}
