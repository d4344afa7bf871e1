package bridge

import (
	"bytes"
	"encoding/json"
	"testing"
)

// parseArgs reads what encoding/json reads into a map of raw values: the
// same keys (escapes decoded, the last of duplicates), the same value
// texts, and an error for the same inputs.
func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{``, `{}`, ` {"a":1} `, `{"cmd":"ls -la","timeout":120}`, `{"a":{"b":[1,2,{"c":null}]},"d":"x"}`,
		`{"\u0061b":true}`, `{"a":1,"a":2}`, `{"a":"\ud800"}`, `{"a":1`, `{"a":1}x`, `[1]`, `"s"`, `{"a":01}`, "{\"a\":\"\xff\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parseArgs(data)
		trimmed := bytes.TrimSpace(data)
		if len(trimmed) == 0 {
			if err != nil || len(got) != 0 {
				t.Fatalf("empty input: %v %v", got, err)
			}
			return
		}
		var want map[string]json.RawMessage
		wantErr := json.Unmarshal(trimmed, &want)
		if trimmed[0] != '{' {
			wantErr = errNotObject
		}
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("%q: parseArgs error %v, encoding/json %v", data, err, wantErr)
		}
		if err != nil {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d keys, want %d", data, len(got), len(want))
		}
		for k, v := range want {
			if !bytes.Equal(got[k], v) {
				t.Fatalf("%q: key %q = %s, want %s", data, k, got[k], v)
			}
		}
	})
}
