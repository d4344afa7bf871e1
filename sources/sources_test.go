package sources_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/harnessflow/harnessflow/sources"
)

func collect(t *testing.T, s interface {
	Stream(context.Context, func([]byte) error) error
}) ([][]byte, error) {
	t.Helper()
	var out [][]byte
	err := s.Stream(context.Background(), func(b []byte) error { out = append(out, b); return nil })
	return out, err
}

func TestReaderChunksAsTheyArrive(t *testing.T) {
	chunks, err := collect(t, sources.Reader(iotest.OneByteReader(strings.NewReader("abc"))))
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) != 3 || string(bytes.Join(chunks, nil)) != "abc" {
		t.Fatalf("got %q", chunks)
	}
	// Every chunk is its own copy.
	if &chunks[0][0] == &chunks[1][0] {
		t.Fatal("chunks share memory")
	}
}

func TestReaderErrorNamesOffset(t *testing.T) {
	r := io.MultiReader(strings.NewReader("hello"), iotest.ErrReader(errors.New("connection reset")))
	_, err := collect(t, sources.Reader(r, sources.WithName("upstream")))
	if err == nil || !strings.Contains(err.Error(), "upstream at byte 5") || !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("got %v", err)
	}
}

func TestReaderStopsOnEmitError(t *testing.T) {
	stop := errors.New("stop")
	err := sources.Reader(strings.NewReader("abcdef"), sources.WithReadSize(2)).Stream(context.Background(), func([]byte) error { return stop })
	if !errors.Is(err, stop) {
		t.Fatalf("got %v", err)
	}
}

func TestFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.sse")
	if err := os.WriteFile(p, []byte("data: 1\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	chunks, err := collect(t, sources.File(p))
	if err != nil || string(bytes.Join(chunks, nil)) != "data: 1\n\n" {
		t.Fatalf("%q %v", chunks, err)
	}
	_, err = collect(t, sources.File(filepath.Join(t.TempDir(), "missing.sse")))
	if err == nil || !strings.Contains(err.Error(), "missing.sse") {
		t.Fatalf("got %v", err)
	}
}

func TestSliceBatches(t *testing.T) {
	in := make([]int, 600)
	var sizes []int
	err := sources.Slice(in).StreamBatches(context.Background(), func(b []int) error { sizes = append(sizes, len(b)); return nil })
	if err != nil || len(sizes) != 3 || sizes[0] != 256 || sizes[2] != 88 {
		t.Fatalf("%v %v", sizes, err)
	}
}

func TestChanSource(t *testing.T) {
	ch := make(chan int, 3)
	ch <- 1
	ch <- 2
	close(ch)
	var got []int
	err := sources.Chan(ch).Stream(context.Background(), func(v int) error { got = append(got, v); return nil })
	if err != nil || len(got) != 2 {
		t.Fatalf("%v %v", got, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := sources.Chan(make(chan int)).Stream(ctx, func(int) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}
