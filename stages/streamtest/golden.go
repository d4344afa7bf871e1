package streamtest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
)

// WantFile is the name of the expected events in a golden archive: one
// protocol.ResponseEvent JSON per line, then {"run_error": "..."} if the
// run fails.
const WantFile = "want.events.jsonl"

// update is the -update flag of every test binary that imports this
// package: RunGoldens rewrites WantFile instead of comparing with it.
var update = flag.Bool("update", false, "rewrite "+WantFile+" in the golden archives from the current output")

// GoldenLayout says where golden archives are and which files they hold.
type GoldenLayout struct {
	// Dir holds the archives, NAME.txtar.
	Dir string
	// Inputs are the names the upstream input file may have (e.g.
	// "upstream.sse"); every archive holds exactly one of them.
	Inputs []string
	// Extras are the names of further files an archive may hold, for the
	// package's graph function to read from Golden.Archive.
	Extras []string
}

// Golden is one golden archive. Its comment says what the case pins, plus
// directives, each on a line of its own, that the package's graph function
// reads with Has; the directive strip-final-newline drops the input's last
// "\n" (txtar ends every file with one).
type Golden struct {
	// Name is the archive's file name without ".txtar".
	Name string
	// Path is the archive's path.
	Path string
	// Archive is the parsed archive.
	Archive *txtar.Archive
	// Input is the upstream input, as the graph gets it.
	Input []byte
	// Want is the content of WantFile, nil without one.
	Want []byte
}

// Has reports whether a line of the archive's comment is directive.
func (g Golden) Has(directive string) bool {
	for line := range strings.Lines(string(g.Archive.Comment)) {
		if strings.TrimSpace(line) == directive {
			return true
		}
	}
	return false
}

// File returns the content of the archive's file name (an extra), or nil
// when it has none.
func (g Golden) File(name string) []byte {
	for _, f := range g.Archive.Files {
		if f.Name == name {
			return f.Data
		}
	}
	return nil
}

// LoadGoldens reads the archives of l.Dir; there must be at least one, and
// each must hold one input, optionally WantFile and nothing but extras.
func LoadGoldens(t testing.TB, l GoldenLayout) []Golden {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(l.Dir, "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden archives in %s (err %v)", l.Dir, err)
	}
	var gs []Golden
	for _, p := range paths {
		arc, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		g := Golden{Name: strings.TrimSuffix(filepath.Base(p), ".txtar"), Path: p, Archive: arc}
		inputs := 0
		for _, f := range arc.Files {
			switch {
			case slices.Contains(l.Inputs, f.Name):
				g.Input = f.Data
				inputs++
			case f.Name == WantFile:
				g.Want = f.Data
			case !slices.Contains(l.Extras, f.Name):
				t.Fatalf("%s: unexpected file %q", p, f.Name)
			}
		}
		if inputs != 1 {
			t.Fatalf("%s: %d input files, want one of %q", p, inputs, l.Inputs)
		}
		if g.Has("strip-final-newline") {
			g.Input = bytes.TrimSuffix(g.Input, []byte("\n"))
		}
		gs = append(gs, g)
	}
	return gs
}

// RunGoldens runs a subtest per archive: it replays the input through the
// graph graphFor returns (see Replay) and compares the outcome with
// WantFile; every event must also decode again (protocol.ResponseEvent's
// UnmarshalJSON). With -update (go test ./stages/PKG -run TestGolden
// -update) it rewrites WantFile from the outcome instead.
func RunGoldens(t *testing.T, gs []Golden, graphFor func(Golden) (*pipeline.Graph, error)) {
	runGoldens(t, gs, *update, graphFor)
}

func runGoldens(t *testing.T, gs []Golden, update bool, graphFor func(Golden) (*pipeline.Graph, error)) {
	for _, gd := range gs {
		t.Run(gd.Name, func(t *testing.T) { checkGolden(t, gd, update, graphFor) })
	}
}

func checkGolden(t testing.TB, gd Golden, update bool, graphFor func(Golden) (*pipeline.Graph, error)) {
	t.Helper()
	g, err := graphFor(gd)
	if err != nil {
		t.Fatal(err)
	}
	o := Replay(t, g, gd.Input)
	for _, l := range o.Lines {
		var back protocol.ResponseEvent
		if err := json.Unmarshal([]byte(l), &back); err != nil {
			t.Errorf("event %s does not decode: %v", l, err)
		}
	}
	got := GoldenOutput(o)
	if update {
		replaced := false
		for i := range gd.Archive.Files {
			if gd.Archive.Files[i].Name == WantFile {
				gd.Archive.Files[i].Data, replaced = got, true
			}
		}
		if !replaced {
			gd.Archive.Files = append(gd.Archive.Files, txtar.File{Name: WantFile, Data: got})
		}
		if err := os.WriteFile(gd.Path, txtar.Format(gd.Archive), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(string(gd.Want), string(got)); diff != "" {
		t.Errorf("events differ (-want +got); rerun with -update if intended:\n%s", diff)
	}
}

// GoldenOutput renders o as WantFile holds it: the event lines, then a
// {"run_error": …} line when the run failed.
func GoldenOutput(o Outcome) []byte {
	var b bytes.Buffer
	for _, l := range o.Lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if o.Err != nil {
		line, _ := json.Marshal(map[string]string{"run_error": o.Err.Error()})
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}
