package chatstream

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/internal/jsonx"
	"github.com/harnessflow/harnessflow/protocol"
)

// Linear cost (docs/streams.md#cost): a huge unfinished call interleaved with a parallel call whose
// every fragment repeats its id and name (docs/streams.md#tool-call-slots) must not re-validate
// the huge arguments on every fragment. The cost per fragment is shown by
// this benchmark (ns/fragment stays flat as -n grows); correctness of the
// incremental check is TestSlotCompleteIncremental's job.
func BenchmarkFinalizeInterleavedHugeArguments(b *testing.B) {
	frag := []byte(`"` + strings.Repeat("abcdefgh", 128) + `",`) // 1 KiB
	const n = 2000                                               // 2 MiB of arguments
	ctx := context.Background()
	emit := func(protocol.ResponseEvent) {}
	for b.Loop() {
		f := NewFinalizeStage(Options{})
		push := func(tc ToolCall, chunk int) {
			if err := f.Push(ctx, Step{Kind: StepToolCall, ToolCall: &tc, Chunk: chunk}, emit); err != nil {
				b.Fatal(err)
			}
		}
		push(ToolCall{HasIndex: true, Index: 0, ID: []byte("a"), Name: []byte("write"), Arguments: []byte(`{"c":[`)}, 1)
		chunk := 2
		for range n {
			push(ToolCall{HasIndex: true, Index: 0, Arguments: frag}, chunk)
			chunk++
			push(ToolCall{HasIndex: true, Index: 1, ID: []byte("b"), Name: []byte("read"), Arguments: []byte(" ")}, chunk)
			chunk++
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*2*n), "ns/fragment")
}

func TestSlotCompleteIncremental(t *testing.T) {
	for _, s := range []string{`{}`, ` {"a":"}"} `, `{"a":"\"}"}`, `[1,{"b":[]}]`, `{]`, `{}}`, `{} x`, `"s"`, `1`,
		`{"a":1`, `{"a":"\\"}`, `{"a":"\\\"}`, `[]  `, `{"a":tru}`, `{}{}`, "\n{\"k\":\"v\"}\n"} {
		want := func(b string) bool {
			tb := jsonx.TrimSpace([]byte(b))
			return len(tb) > 0 && (tb[0] == '{' || tb[0] == '[') && json.Valid(tb)
		}
		for cut := 0; cut <= len(s); cut++ {
			var sl slot
			sl.args = []byte(s[:cut])
			if got := sl.complete(); got != want(s[:cut]) {
				t.Fatalf("%q: complete()=%v", s[:cut], got)
			}
			sl.args = append(sl.args, s[cut:]...)
			sl.checked = 0
			if got := sl.complete(); got != want(s) {
				t.Fatalf("%q after %q: complete()=%v, want %v", s, s[:cut], got, want(s))
			}
		}
	}
}
