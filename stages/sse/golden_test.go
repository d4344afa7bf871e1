package sse

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite want.events in testdata/*.txtar from the decoder's output")

// A golden archive (testdata/NAME.txtar) holds:
//
//	comment lines    optional directives:
//	                   max-event-bytes: N    decode with Options{MaxEventBytes: N}
//	                   strip-final-newline   drop the input's last "\n" (txtar always ends a file with one)
//	-- input.sse --  the raw stream (CR, BOM and NUL bytes are kept as is)
//	-- want.events --
//	                 one JSON object per event; a final {"error": "..."} if decoding fails
type golden struct {
	path string
	arc  *txtar.Archive
	in   []byte // the stream to decode
	raw  []byte // input.sse exactly as stored
	opts Options
	want []byte
}

func loadGoldens(t testing.TB) []golden {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden archives in testdata (err %v)", err)
	}
	var gs []golden
	for _, p := range paths {
		arc, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		g := golden{path: p, arc: arc}
		for _, line := range strings.Split(string(arc.Comment), "\n") {
			switch k, v, _ := strings.Cut(strings.TrimSpace(line), ":"); k {
			case "max-event-bytes":
				n, err := strconv.Atoi(strings.TrimSpace(v))
				if err != nil {
					t.Fatalf("%s: bad max-event-bytes: %v", p, err)
				}
				g.opts.MaxEventBytes = n
			}
		}
		var haveIn bool
		for _, f := range arc.Files {
			switch f.Name {
			case "input.sse":
				g.in, g.raw, haveIn = f.Data, f.Data, true
				if bytes.Contains(arc.Comment, []byte("strip-final-newline")) {
					g.in = bytes.TrimSuffix(g.in, []byte("\n"))
				}
			case "want.events":
				g.want = f.Data
			default:
				t.Fatalf("%s: unexpected file %q", p, f.Name)
			}
		}
		if !haveIn {
			t.Fatalf("%s: no input.sse", p)
		}
		gs = append(gs, g)
	}
	return gs
}

// jsonEvent is the golden-file form of an event. Long data is recorded by
// length and SHA-256 to keep the files readable; invalid UTF-8 as hex.
type jsonEvent struct {
	Type       string  `json:"type,omitempty"`
	Data       *string `json:"data,omitempty"`
	DataHex    string  `json:"data_hex,omitempty"`
	DataLen    int     `json:"data_len,omitempty"`
	DataSHA256 string  `json:"data_sha256,omitempty"`
	ID         string  `json:"id,omitempty"`
	RetryMS    *int64  `json:"retry_ms,omitempty"`
	Offset     int64   `json:"offset"`
	Truncated  bool    `json:"truncated,omitempty"`
}

func encodeResult(r result) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, e := range r.Events {
		j := jsonEvent{Type: e.Type, ID: e.ID, Offset: e.Offset, Truncated: e.Truncated}
		switch {
		case e.NilData:
		case len(e.Data) > 2048:
			sum := sha256.Sum256([]byte(e.Data))
			j.DataLen, j.DataSHA256 = len(e.Data), hex.EncodeToString(sum[:])
		case !utf8.ValidString(e.Data):
			j.DataHex = hex.EncodeToString([]byte(e.Data))
		default:
			j.Data = &e.Data
		}
		if e.RetrySet {
			ms := e.Retry.Milliseconds()
			j.RetryMS = &ms
		}
		if err := enc.Encode(j); err != nil {
			panic(err)
		}
	}
	if r.Err != "" {
		_ = enc.Encode(struct {
			Error string `json:"error"`
		}{r.Err})
	}
	return b.Bytes()
}

// TestGolden decodes every archive whole and compares with want.events
// (rewritten with -update), then replays it one byte at a time, half reads,
// and random chunk sizes with fixed seeds: every replay must be identical,
// and the reference implementation must agree.
func TestGolden(t *testing.T) {
	for _, g := range loadGoldens(t) {
		t.Run(strings.TrimSuffix(filepath.Base(g.path), ".txtar"), func(t *testing.T) {
			whole := decodeWhole(t, g.opts, g.in)
			got := encodeResult(whole)
			if *update {
				g.arc.Files = []txtar.File{{Name: "input.sse", Data: g.raw}, {Name: "want.events", Data: got}}
				if err := os.WriteFile(g.path, txtar.Format(g.arc), 0o644); err != nil {
					t.Fatal(err)
				}
			} else if diff := cmp.Diff(string(g.want), string(got)); diff != "" {
				t.Errorf("want.events mismatch (-want +got; rerun with -update if intended):\n%s", diff)
			}
			if diff := cmp.Diff(refDecode(g.in, g.opts.MaxEventBytes), whole); diff != "" {
				t.Errorf("decoder disagrees with the reference (-ref +decoder):\n%s", diff)
			}
			replays := map[string]result{
				"one byte":   decodeReader(t, g.opts, iotest.OneByteReader(bytes.NewReader(g.in)), 4096),
				"half reads": decodeReader(t, g.opts, iotest.HalfReader(bytes.NewReader(g.in)), 4096),
				"64 KiB":     decodeReader(t, g.opts, bytes.NewReader(g.in), 64<<10),
			}
			for seed := uint64(1); seed <= 8; seed++ {
				rng := newRand(seed)
				maxChunk := []int{2, 7, 64, 300, 4096}[seed%5]
				replays[fmt.Sprintf("random seed %d max %d", seed, maxChunk)] =
					decodeChunks(t, g.opts, g.in, randomSizes(rng, len(g.in), maxChunk))
			}
			for how, r := range replays {
				if diff := cmp.Diff(whole, r); diff != "" {
					t.Errorf("%s replay differs from whole (-whole +replay):\n%s", how, diff)
				}
			}
		})
	}
}
