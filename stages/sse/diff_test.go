package sse

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDifferential compares the incremental decoder, fed random chunk sizes,
// with the line-based reference over whole inputs, on random streams that mix
// LF/CR/CRLF, comments, known, unknown and mis-cased fields, NULs and BOMs,
// some cut at a random byte, some with a small MaxEventBytes.
func TestDifferential(t *testing.T) {
	n := 5000
	if testing.Short() {
		n = 500
	}
	for seed := uint64(0); seed < uint64(n); seed++ {
		rng := newRand(seed)
		in := genStream(rng)
		var opts Options
		if rng.IntN(4) == 0 {
			opts.MaxEventBytes = 1 + rng.IntN(40)
		}
		want := refDecode(in, opts.MaxEventBytes)
		for _, maxChunk := range []int{1, 3, 16, len(in) + 1} {
			got := decodeChunks(t, opts, in, randomSizes(rng, len(in), maxChunk))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("seed %d, chunks <= %d, max %d, input %q:\n(-reference +decoder)\n%s",
					seed, maxChunk, opts.MaxEventBytes, in, diff)
			}
		}
	}
}
