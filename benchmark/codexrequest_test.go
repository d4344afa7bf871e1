package benchmark_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/harnessflow/harnessflow/benchmark"
	"github.com/harnessflow/harnessflow/loadtest"
	"github.com/harnessflow/harnessflow/protocol"
)

// The generated Codex-sized request has the shape (about 37 KB, 10
// tools, 50 items), decodes as a Responses request, and is the same on
// every call.
func TestCodexRequest(t *testing.T) {
	for _, tc := range []struct {
		model  string
		stream bool
	}{{"bench", true}, {loadtest.WarmupModel, false}} {
		b, err := benchmark.CodexRequest(tc.model, tc.stream)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(b); n < 34<<10 || n > 40<<10 {
			t.Errorf("%s: %d bytes, want about 37 KB (34–40 KiB)", tc.model, n)
		}
		req, err := protocol.DecodeRequest(b)
		if err != nil {
			t.Fatalf("%s: decode: %v", tc.model, err)
		}
		if req.Model != tc.model || req.Stream != tc.stream {
			t.Errorf("model %q stream %v, want %q %v", req.Model, req.Stream, tc.model, tc.stream)
		}
		var raw struct {
			Input []json.RawMessage `json:"input"`
			Tools []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(b, &raw); err != nil {
			t.Fatal(err)
		}
		if len(raw.Input) != benchmark.CodexRequestItems || len(raw.Tools) != benchmark.CodexRequestTools {
			t.Errorf("%d items and %d tools, want %d and %d", len(raw.Input), len(raw.Tools), benchmark.CodexRequestItems, benchmark.CodexRequestTools)
		}
		again, _ := benchmark.CodexRequest(tc.model, tc.stream)
		if !bytes.Equal(b, again) {
			t.Error("two calls differ")
		}
	}
}
