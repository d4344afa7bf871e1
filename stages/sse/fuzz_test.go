package sse

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzDecode checks that no input panics, that chunked and whole decoding
// agree for a chunking derived from seed, and that both agree with the
// reference implementation. maxBytes 0 means the default limit; small values
// exercise the size cap.
func FuzzDecode(f *testing.F) {
	for _, g := range loadGoldens(f) {
		if len(g.in) < 8<<10 {
			f.Add(g.in, uint64(1), uint16(g.opts.MaxEventBytes))
		}
	}
	for _, tc := range ruleTests {
		f.Add([]byte(tc.in), uint64(len(tc.in)), uint16(tc.max))
	}
	f.Add([]byte("\xEF\xBB\xBFdata: a\r\n\r\n"), uint64(7), uint16(0))
	f.Add([]byte("data: a\r"), uint64(3), uint16(5))
	f.Fuzz(func(t *testing.T, in []byte, seed uint64, maxBytes uint16) {
		opts := Options{MaxEventBytes: int(maxBytes)}
		whole := decodeWhole(t, opts, in)
		rng := rand.New(rand.NewPCG(seed, seed>>7))
		chunked := decodeChunks(t, opts, in, randomSizes(rng, len(in), 1+int(seed%17)))
		if diff := cmp.Diff(whole, chunked); diff != "" {
			t.Fatalf("chunked decoding differs from whole (-whole +chunked):\n%s", diff)
		}
		if diff := cmp.Diff(refDecode(in, opts.MaxEventBytes), whole); diff != "" {
			t.Fatalf("decoder differs from the reference (-reference +decoder):\n%s", diff)
		}
	})
}
