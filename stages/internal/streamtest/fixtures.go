package streamtest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/pipeline"
)

// Fixture is a recorded upstream stream (NAME.sse) with its expectation
// (NAME.expect.json), copied from the shared wire corpus.
type Fixture struct {
	// Name is the file name without ".sse".
	Name string
	// Data is the recorded stream.
	Data []byte
	// Expected is the "expected" object of the expect.json.
	Expected map[string]any
	// Expect is the whole expect.json, for the keys a package reads itself.
	Expect json.RawMessage
}

// LoadFixtures reads dir/*.sse with their expect.json; there must be at
// least one, and the byte count and sha256 each expect.json records guard
// against edits of the stream.
func LoadFixtures(t testing.TB, dir string) []Fixture {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.sse"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures in %s (err %v)", dir, err)
	}
	var fs []Fixture
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(strings.TrimSuffix(p, ".sse") + ".expect.json")
		if err != nil {
			t.Fatal(err)
		}
		var exp struct {
			Expected map[string]any `json:"expected"`
			SHA256   string         `json:"sha256"`
			Bytes    int            `json:"bytes"`
		}
		if err := json.Unmarshal(raw, &exp); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		sum := sha256.Sum256(data)
		if hex.EncodeToString(sum[:]) != exp.SHA256 || len(data) != exp.Bytes {
			t.Fatalf("%s: bytes or sha256 differ from its expect.json", p)
		}
		fs = append(fs, Fixture{Name: strings.TrimSuffix(filepath.Base(p), ".sse"), Data: data, Expected: exp.Expected, Expect: raw})
	}
	return fs
}

// RunFixtures runs a subtest per fixture: the stream is replayed through g
// (see Replay), must not fail the run, and must meet its expectation (see
// CheckExpected).
func RunFixtures(t *testing.T, g *pipeline.Graph, fs []Fixture) {
	for _, f := range fs {
		t.Run(f.Name, func(t *testing.T) { checkFixture(t, g, f) })
	}
}

func checkFixture(t testing.TB, g *pipeline.Graph, f Fixture) {
	t.Helper()
	o := Replay(t, g, f.Data)
	if o.Err != nil {
		t.Fatalf("run error: %s", o.Err)
	}
	for _, e := range CheckExpected(f.Expected, o.Events) {
		t.Error(e)
	}
}

// Tampers are edits of fixtures' expectations that CheckExpected must
// report, by fixture: the key is the start of the fixture's name (e.g.
// "a01"), and every edit gets its own deep copy of the expected object.
type Tampers map[string][]func(expected map[string]any)

// CheckTampers makes sure the expectation check is not vacuous: for every
// fixture named in tampers, its untampered expectation must hold for a fused
// run of g, and each tampered copy must be reported.
func CheckTampers(t testing.TB, g *pipeline.Graph, fs []Fixture, tampers Tampers) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(tampers)) {
		var f *Fixture
		for k := range fs {
			if strings.HasPrefix(fs[k].Name, name) {
				if f != nil {
					t.Fatalf("fixture %q is ambiguous", name)
				}
				f = &fs[k]
			}
		}
		if f == nil {
			t.Fatalf("no fixture %s", name)
		}
		o := Run(t, g, f.Data, pipeline.Fused, nil)
		if errs := CheckExpected(f.Expected, o.Events); len(errs) != 0 {
			t.Fatalf("%s: untampered expectation fails: %v", name, errs)
		}
		for i, edit := range tampers[name] {
			exp := deepCopy(t, f.Expected)
			edit(exp)
			if errs := CheckExpected(exp, o.Events); len(errs) == 0 {
				t.Errorf("tamper %d on %s went unnoticed", i, name)
			}
		}
	}
}

// ToolCall returns entry i of an expectation's "tool_calls", for tampers.
func ToolCall(expected map[string]any, i int) map[string]any {
	return expected["tool_calls"].([]any)[i].(map[string]any)
}

func deepCopy(t testing.TB, m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
