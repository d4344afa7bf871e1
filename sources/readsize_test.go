package sources_test

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/harnessflow/harnessflow/sources"
)

// sizeRecorder fills every read completely and records the buffer sizes it
// was given.
type sizeRecorder struct {
	data  []byte
	sizes []int
}

func (r *sizeRecorder) Read(p []byte) (int, error) {
	r.sizes = append(r.sizes, len(p))
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestReaderGrowsItsBuffer checks that the read buffer starts small and
// doubles, up to the read size, each time a read fills it, and that the
// bytes come through intact.
func TestReaderGrowsItsBuffer(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 10000) // 160,000 bytes
	for _, size := range []int{sources.DefaultReadSize, 5000, 100} {
		rec := &sizeRecorder{data: data}
		var got []byte
		err := sources.Reader(rec, sources.WithReadSize(size)).Stream(context.Background(), func(b []byte) error {
			got = append(got, b...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("size %d: got %d bytes, want the %d written", size, len(got), len(data))
		}
		want := min(2048, size)
		for i, n := range rec.sizes {
			if n != want {
				t.Fatalf("size %d: read %d got a %d-byte buffer, want %d (reads: %v)", size, i, n, want, rec.sizes)
			}
			want = min(2*want, size)
		}
		if last := rec.sizes[len(rec.sizes)-1]; last != size {
			t.Errorf("size %d: the buffer grew to %d, want %d", size, last, size)
		}
	}
}

// TestReaderKeepsASmallBufferForSmallReads checks that reads that do not
// fill the buffer leave it as it is.
func TestReaderKeepsASmallBufferForSmallReads(t *testing.T) {
	rec := &sizeRecorder{}
	chunks := [][]byte{[]byte("data: one\n\n"), []byte("data: two\n\n"), []byte("data: three\n\n")}
	r := &chunkReader{chunks: chunks, rec: rec}
	n := 0
	err := sources.Reader(r).Stream(context.Background(), func(b []byte) error {
		if !bytes.Equal(b, chunks[n]) {
			t.Errorf("chunk %d: got %q, want %q", n, b, chunks[n])
		}
		n++
		return nil
	})
	if err != nil || n != len(chunks) {
		t.Fatalf("got %d chunks, err %v", n, err)
	}
	for i, size := range rec.sizes {
		if size != 2048 {
			t.Errorf("read %d: %d-byte buffer, want 2048", i, size)
		}
	}
}

// chunkReader returns one chunk per read.
type chunkReader struct {
	chunks [][]byte
	i      int
	rec    *sizeRecorder
}

func (r *chunkReader) Read(p []byte) (int, error) {
	r.rec.sizes = append(r.rec.sizes, len(p))
	if r.i == len(r.chunks) {
		return 0, io.EOF
	}
	n := copy(p, r.chunks[r.i])
	r.i++
	return n, nil
}

// A lending source emits the bytes of every read in its own buffer (one
// backing array while the buffer does not grow), each valid until emit
// returns; a copying source emits a fresh slice each time. Both emit the
// same bytes.
func TestReaderLending(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 64)
	for _, lend := range []bool{false, true} {
		opts := []sources.Option{sources.WithReadSize(100)}
		if lend {
			opts = append(opts, sources.Lending())
		}
		var got []byte
		arrays := map[*byte]bool{}
		err := sources.Reader(bytes.NewReader(data), opts...).Stream(context.Background(), func(b []byte) error {
			got = append(got, b...)
			arrays[&b[:1][0]] = true
			return nil
		})
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("lend %v: %v, %d bytes, want %d", lend, err, len(got), len(data))
		}
		// 1,024 bytes in reads of at most 100: 11 reads.
		if lend && len(arrays) != 1 {
			t.Errorf("lending: the reads came in %d arrays, want the source's one buffer", len(arrays))
		}
		if !lend && len(arrays) != 11 {
			t.Errorf("copying: the reads came in %d arrays, want one per read (11)", len(arrays))
		}
	}
}
