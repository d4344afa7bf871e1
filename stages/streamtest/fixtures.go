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
	// Expected is the "expected" object of the expect.json, plus the
	// top-level "response_id" and "model" some expectations give beside it.
	Expected map[string]any
	// SplitAt are the byte offsets the expect.json's
	// replay.split_at_byte_offsets asks the stream to be cut at, if any.
	SplitAt []int
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
			Expected   map[string]any `json:"expected"`
			SHA256     string         `json:"sha256"`
			Bytes      int            `json:"bytes"`
			ResponseID *string        `json:"response_id"`
			Model      *string        `json:"model"`
			Replay     struct {
				SplitAt []int `json:"split_at_byte_offsets"`
			} `json:"replay"`
		}
		if err := json.Unmarshal(raw, &exp); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		sum := sha256.Sum256(data)
		if hex.EncodeToString(sum[:]) != exp.SHA256 || len(data) != exp.Bytes {
			t.Fatalf("%s: bytes or sha256 differ from its expect.json", p)
		}
		if exp.Expected == nil {
			exp.Expected = map[string]any{}
		}
		for k, v := range map[string]*string{"response_id": exp.ResponseID, "model": exp.Model} {
			if _, ok := exp.Expected[k]; !ok && v != nil {
				exp.Expected[k] = *v
			}
		}
		fs = append(fs, Fixture{Name: strings.TrimSuffix(filepath.Base(p), ".sse"), Data: data, Expected: exp.Expected, SplitAt: exp.Replay.SplitAt, Expect: raw})
	}
	return fs
}

// RunFixtures runs CheckFixture as a subtest per fixture.
func RunFixtures(t *testing.T, g *pipeline.Graph, fs []Fixture) {
	for _, f := range fs {
		t.Run(f.Name, func(t *testing.T) { CheckFixture(t, g, f) })
	}
}

// CheckFixture replays f's stream through g (see Replay; also cut at
// f.SplitAt when given), which must not fail the run, checks it against
// f.Expected (see CheckExpected) and returns the run, for a package's own
// checks.
func CheckFixture(t testing.TB, g *pipeline.Graph, f Fixture) Outcome {
	t.Helper()
	var extra []Split
	if len(f.SplitAt) > 0 {
		extra = append(extra, SplitAt(f.SplitAt, len(f.Data)))
	}
	o := Replay(t, g, f.Data, extra...)
	if o.Err != nil {
		t.Fatalf("run error: %s", o.Err)
	}
	for _, e := range CheckExpected(f.Expected, o.Events) {
		t.Error(e)
	}
	return o
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
