package sse

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// rec is a comparable, fully owned view of an Event, used to compare runs.
type rec struct {
	Type      string
	Data      string
	NilData   bool
	ID        string
	Retry     time.Duration
	RetrySet  bool
	Offset    int64
	Truncated bool
}

func toRec(e Event) rec {
	return rec{
		Type:      e.Type,
		Data:      string(e.Data),
		NilData:   e.Data == nil,
		ID:        string(e.ID),
		Retry:     e.Retry,
		RetrySet:  e.RetrySet,
		Offset:    e.Offset,
		Truncated: e.Truncated,
	}
}

// result is the outcome of decoding a whole stream.
type result struct {
	Events []rec
	Err    string
}

func (r result) String() string {
	var b strings.Builder
	for _, e := range r.Events {
		fmt.Fprintf(&b, "%+v\n", e)
	}
	if r.Err != "" {
		fmt.Fprintf(&b, "error: %s\n", r.Err)
	}
	return b.String()
}

// decodeReader feeds every Read of r to a fresh Decoder through one reused
// read buffer, scribbling over the buffer after every Push so that a decoder
// that keeps references into a chunk is caught. Finish is called on success.
func decodeReader(t testing.TB, opts Options, r io.Reader, bufSize int) result {
	t.Helper()
	d := New(opts)
	var res result
	emit := func(e Event) { res.Events = append(res.Events, toRec(e)) }
	buf := make([]byte, bufSize)
	ctx := context.Background()
	for {
		n, rerr := r.Read(buf)
		if n > 0 {
			err := d.Push(ctx, buf[:n], emit)
			for i := range buf[:n] {
				buf[i] = 0xA5
			}
			if err != nil {
				res.Err = err.Error()
				return res
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			t.Fatalf("read: %v", rerr)
		}
	}
	if err := d.Finish(ctx, emit); err != nil {
		res.Err = err.Error()
		return res
	}
	var sawTrunc bool
	if n := len(res.Events); n > 0 && res.Events[n-1].Truncated {
		sawTrunc = true
	}
	if d.Truncated() != sawTrunc {
		t.Errorf("Truncated() = %v, but truncation marker emitted = %v", d.Truncated(), sawTrunc)
	}
	return res
}

// decodeChunks decodes in as the given consecutive chunk sizes (the last one
// absorbs any rest).
func decodeChunks(t testing.TB, opts Options, in []byte, sizes []int) result {
	t.Helper()
	return decodeReader(t, opts, &sizedReader{data: in, sizes: sizes}, len(in)+1)
}

// decodeWhole decodes in as a single chunk.
func decodeWhole(t testing.TB, opts Options, in []byte) result {
	t.Helper()
	return decodeChunks(t, opts, in, []int{len(in)})
}

// sizedReader returns its data in reads of the given sizes, then of any size.
type sizedReader struct {
	data  []byte
	sizes []int
}

func (r *sizedReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := len(r.data)
	if len(r.sizes) > 0 {
		n = min(n, max(r.sizes[0], 1))
		r.sizes = r.sizes[1:]
	}
	n = copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// randomSizes returns chunk sizes in [1, maxChunk] covering n bytes.
func randomSizes(rng *rand.Rand, n, maxChunk int) []int {
	var sizes []int
	for n > 0 {
		s := 1 + rng.IntN(maxChunk)
		sizes = append(sizes, s)
		n -= s
	}
	return sizes
}

// refDecode is the reference implementation: the WHATWG algorithm applied
// literally to the whole input, line by line, with strings. It also applies
// the MaxEventBytes rule the way the Decoder documents it.
func refDecode(in []byte, maxBytes int) result {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxEventBytes
	}
	var res result
	s := string(in)
	pos := 0
	if strings.HasPrefix(s, "\uFEFF") {
		pos = 3
	}
	var (
		dataBuf  []byte // spec data buffer: each value followed by "\n"
		hasData  bool
		typeBuf  string
		lastID   string
		retry    time.Duration
		retrySet bool
		evStart  int64 = -1
	)
	tooLarge := func(lineStart int) result {
		off := evStart
		if off < 0 {
			off = int64(lineStart)
		}
		res.Err = fmt.Sprintf("sse: event starting at byte %d exceeds %d bytes", off, maxBytes)
		return res
	}
	start := pos
	for i := pos; i < len(s); i++ {
		c := s[i]
		if c != '\n' && c != '\r' {
			continue
		}
		line := s[start:i]
		lineStart := start
		if c == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		start = i + 1
		if len(line) > maxBytes {
			return tooLarge(lineStart)
		}
		switch {
		case line == "":
			if hasData {
				typ := typeBuf
				if typ == "" {
					typ = "message"
				}
				res.Events = append(res.Events, rec{
					Type: typ, Data: strings.TrimSuffix(string(dataBuf), "\n"), ID: lastID,
					Retry: retry, RetrySet: retrySet, Offset: evStart,
				})
			}
			dataBuf, hasData, typeBuf, evStart = dataBuf[:0], false, "", -1
			continue
		case strings.HasPrefix(line, ":"):
			continue
		}
		if evStart < 0 {
			evStart = int64(lineStart)
		}
		name, value, found := strings.Cut(line, ":")
		if found {
			value = strings.TrimPrefix(value, " ")
		}
		switch name {
		case "data":
			dataBuf = append(append(dataBuf, value...), '\n')
			hasData = true
			if len(dataBuf)-1 > maxBytes {
				return tooLarge(lineStart)
			}
		case "event":
			typeBuf = value
		case "id":
			if !strings.Contains(value, "\x00") {
				lastID = value
			}
		case "retry":
			if value != "" && strings.Trim(value, "0123456789") == "" {
				var ms int64
				const limit = math.MaxInt64 / int64(time.Millisecond)
				for _, d := range []byte(value) {
					if ms <= limit {
						ms = ms*10 + int64(d-'0')
					}
				}
				retry, retrySet = time.Duration(min(ms, limit))*time.Millisecond, true
			}
		}
	}
	if start < len(s) && len(s)-start > maxBytes {
		return tooLarge(start)
	}
	if start < len(s) || evStart >= 0 {
		off := evStart
		if off < 0 {
			off = int64(start)
		}
		res.Events = append(res.Events, rec{
			NilData: true, ID: lastID, Retry: retry, RetrySet: retrySet, Offset: off, Truncated: true,
		})
	}
	return res
}

// genStream builds a random event stream from SSE-relevant pieces: fields with
// and without spaces, comments, unknown and mis-cased fields, NULs, BOMs,
// multi-byte runes, and random mixes of LF, CR and CRLF.
func genStream(rng *rand.Rand) []byte {
	var b bytes.Buffer
	switch rng.IntN(6) {
	case 0:
		b.WriteString("\uFEFF")
	case 1:
		b.WriteString("\uFEFF"[:1+rng.IntN(2)])
	}
	pieces := []string{
		"data: x", "data:y", "data", "data:", "data: ", "data:  two", "data: {\"a\":1}", "data: héllo 世界 🎉",
		"data: a:b", "data: \uFEFFbom", "data: nul\x00", "event: add", "event:", "event", "event: message_start",
		"event: response.output_text.delta", "id: 7", "id:", "id", "id: a\x00b", "id: 42",
		"retry: 100", "retry: 10x", "retry:", "retry: 99999999999999999999", ": ping", ":", ": OPENROUTER PROCESSING",
		"DATA: up", "Data: mixed", "foo: bar", "unknown", " data: leading", "\uFEFFdata: z",
		"", "", "", "", "",
	}
	eols := []string{"\n", "\r", "\r\n"}
	n := rng.IntN(40)
	eol := eols[rng.IntN(3)]
	for range n {
		if rng.IntN(4) == 0 {
			eol = eols[rng.IntN(3)]
		}
		if rng.IntN(30) == 0 {
			// raw noise, including stray line-ending bytes
			for range rng.IntN(8) {
				const noise = "ab:\r\n \x00\xEF\xBB"
				b.WriteByte(noise[rng.IntN(len(noise))])
			}
		}
		b.WriteString(pieces[rng.IntN(len(pieces))])
		b.WriteString(eol)
	}
	if rng.IntN(3) == 0 { // cut the stream anywhere
		return b.Bytes()[:rng.IntN(b.Len()+1)]
	}
	return b.Bytes()
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9E3779B97F4A7C15)) }
