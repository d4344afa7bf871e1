package pi

import (
	"bytes"
	"encoding/json"
	"testing"
)

// Reserialize never panics; JSON comes back compact (the same value, keys
// in their order), anything else unchanged; the fork's form of a known
// tool is JSON again and the form is stable.
func FuzzReserialize(f *testing.F) {
	for _, s := range []string{`{"command":"ls","timeout":5}`, `{"path":"a","edits":[{"newText":"b","oldText":"a","x":1}]}`,
		`{ "b": 1, "a": [1, 2] }`, `not json`, `[]`, `{"path":`, `{"edits":"x"}`, `null`} {
		for _, tool := range []string{"bash", "edit", "read", "write", "other"} {
			f.Add(tool, s)
		}
	}
	f.Fuzz(func(t *testing.T, tool, args string) {
		for _, fork := range []bool{false, true} {
			h := &History{Fork: fork}
			out := h.Reserialize(tool, args)
			if !json.Valid([]byte(args)) {
				if out != args && !fork {
					t.Fatalf("not JSON changed: %q → %q", args, out)
				}
				continue
			}
			if !json.Valid([]byte(out)) {
				t.Fatalf("fork=%v %s: %q → invalid %q", fork, tool, args, out)
			}
			if again := h.Reserialize(tool, out); again != out {
				t.Fatalf("fork=%v %s: not stable: %q → %q → %q", fork, tool, args, out, again)
			}
			if !fork {
				var b bytes.Buffer
				_ = json.Compact(&b, []byte(args))
				if out != b.String() {
					t.Fatalf("%q → %q, want the compact text %q", args, out, b.String())
				}
			}
		}
	})
}
