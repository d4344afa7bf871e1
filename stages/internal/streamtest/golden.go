package streamtest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/harnessflow/harnessflow/pipeline"
)

// WantFile is the name of the expected events in a golden archive: one
// protocol.ResponseEvent JSON per line, then {"run_error": "..."} if the
// run fails.
const WantFile = "want.events.jsonl"

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
// directives the package's graph function reads with Has; the directive
// strip-final-newline drops the input's last "\n" (txtar ends every file
// with one).
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

// Has reports whether the archive's comment contains directive.
func (g Golden) Has(directive string) bool {
	return strings.Contains(string(g.Archive.Comment), directive)
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
// WantFile. With update (the package's -update flag) it rewrites WantFile
// from the outcome instead.
func RunGoldens(t *testing.T, gs []Golden, update bool, graphFor func(Golden) (*pipeline.Graph, error)) {
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
	got := goldenOutput(Replay(t, g, gd.Input))
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

// goldenOutput renders o as WantFile holds it.
func goldenOutput(o Outcome) []byte {
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
