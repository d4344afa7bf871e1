package bench

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/harnessflow/harnessflow/protocol"
)

// BenchmarkDecodeRequest measures protocol.DecodeRequest, the first thing the
// proxy does with every request: a one-message request (what `harnessflow-load`
// sends) and Codex-shaped requests with a 20 KB base prompt and histories of
// 50 and 2,000 items. encoding-json is a peer for scale only: decoding the
// same body into a generic any.
//
//	go test ./bench -run '^$' -bench 'BenchmarkDecodeRequest' -benchmem
func BenchmarkDecodeRequest(b *testing.B) {
	tiny := []byte(`{"model":"bench","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Stream the benchmark text."}]}],"stream":true,"store":false}`)
	bodies := []struct {
		name string
		body []byte
	}{{"one-message", tiny}}
	for _, n := range []int{50, shapeItems} {
		body, err := json.Marshal(codexLikeRequest(n))
		if err != nil {
			b.Fatal(err)
		}
		bodies = append(bodies, struct {
			name string
			body []byte
		}{fmt.Sprintf("codex-%d-items", n), body})
	}
	for _, c := range bodies {
		want, err := protocol.DecodeRequest(c.body)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				got, err := protocol.DecodeRequest(c.body)
				if err != nil || len(got.Input) != len(want.Input) {
					b.Fatalf("%d items, %v; want %d", len(got.Input), err, len(want.Input))
				}
			}
		})
		b.Run(c.name+"/encoding-json-any", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				var v any
				if err := json.Unmarshal(c.body, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
