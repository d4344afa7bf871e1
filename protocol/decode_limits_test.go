package protocol_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/protocol"
)

// DecodeRequestWithin refuses a top-level input or tools array over its
// bound with an *ArrayLimitError naming it, before decoding, and is
// DecodeRequest otherwise — errors included.
func TestDecodeRequestWithin(t *testing.T) {
	items := func(n int) string {
		return strings.TrimSuffix(strings.Repeat(`{"role":"user","content":"hi"},`, n), ",")
	}
	tools := func(n int) string {
		return strings.TrimSuffix(strings.Repeat(`{"type":"function","name":"f","parameters":{}},`, n), ",")
	}
	lim := protocol.RequestLimits{InputItems: 3, Tools: 2}
	for _, tt := range []struct {
		name, body string
		over       string // the path refused, "" for none
	}{
		{"within", `{"model":"m","input":[` + items(3) + `],"tools":[` + tools(2) + `]}`, ""},
		{"input over", `{"model":"m","input":[` + items(4) + `]}`, "input"},
		{"tools over", `{"tools":[` + tools(3) + `],"model":"m","input":"hi"}`, "tools"},
		{"input as a string", `{"model":"m","input":"hi"}`, ""},
		{"nested arrays do not count", `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"},{"type":"input_text","text":"c"},{"type":"input_text","text":"d"}]}]}`, ""},
		{"not JSON", `{"model":`, ""},
		{"not an object", `[1,2,3,4,5]`, ""},
		{"bad input item", `{"model":"m","input":[1]}`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := protocol.DecodeRequestWithin([]byte(tt.body), lim)
			if tt.over != "" {
				var le *protocol.ArrayLimitError
				if !errors.As(err, &le) || le.Path != tt.over {
					t.Fatalf("err %v, want an *ArrayLimitError for %s", err, tt.over)
				}
				if ce := protocol.CheckArrays([]byte(tt.body), protocol.ArrayBound{Key: "input", Limit: 3}, protocol.ArrayBound{Key: "tools", Limit: 2}); ce == nil || ce.Path != tt.over {
					t.Errorf("CheckArrays = %v", ce)
				}
				return
			}
			want, wantErr := protocol.DecodeRequest([]byte(tt.body))
			if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
				t.Fatalf("err %v, DecodeRequest's %v", err, wantErr)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("differs from DecodeRequest:\n%s", d)
			}
		})
	}
}
