package terminus2

import (
	"encoding/json"
	"reflect"
	"testing"
)

// checkResult is what holds for every reply: exactly one of a usable
// reply and an error, durations inside 0..60, the same result twice, and
// a result that encodes.
func checkResult(t *testing.T, in string, r Result, again Result) {
	t.Helper()
	if r.Error != "" && (len(r.Commands) > 0 || r.TaskComplete) {
		t.Fatalf("%q: an error with an action: %#v", in, r)
	}
	for _, c := range r.Commands {
		if !(c.Duration >= 0 && c.Duration <= MaxDuration) {
			t.Fatalf("%q: duration %v out of range", in, c.Duration)
		}
	}
	if !reflect.DeepEqual(r, again) {
		t.Fatalf("%q: not deterministic:\n%#v\n%#v", in, r, again)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatalf("%q: marshal: %v", in, err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%q: %s: %v", in, b, err)
	}
	_, hasErr := m["error"]
	_, hasCmds := m["commands"]
	if hasErr == hasCmds {
		t.Fatalf("%q: want exactly one of error and commands: %s", in, b)
	}
}

func FuzzParseJSON(f *testing.F) {
	for _, c := range jsonCases {
		f.Add(c.in)
	}
	f.Add(`{"analysis":"a","plan":"p","commands":[{"keystrokes":"\ud800","duration":1e400}]}`)
	f.Add(`[[[[[[[[[[[[[[[[[[[[{"a":1}]]]]]]]]]]]]]]]]]]]`)
	f.Fuzz(func(t *testing.T, in string) {
		checkResult(t, in, ParseJSON(in), ParseJSON(in))
	})
}

func FuzzParseXML(f *testing.F) {
	for _, c := range xmlCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		checkResult(t, in, ParseXML(in), ParseXML(in))
	})
}

// The decoder never fails on what Go's decoder accepts (Python's is a
// superset: NaN, Infinity), and agrees on what it rejects outside those.
func FuzzPyLoads(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e3,"x\u00e9"]}`, `[1,]`, `{"a" 1}`, `"\ud83d\ude00"`, "\"a\x01\"", `NaN`, `-0`, `1.`, `01`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		_, err := pyLoads(in)
		if json.Valid([]byte(in)) && err != nil {
			t.Fatalf("%q: Go accepts it, pyLoads says %v", in, err)
		}
		if err != nil && err.Error() == "" {
			t.Fatalf("%q: empty error", in)
		}
	})
}
