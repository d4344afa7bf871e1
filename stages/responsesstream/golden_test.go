package responsesstream

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite want.events.jsonl in testdata/golden/*.txtar from the current output")

// A golden archive (testdata/golden/NAME.txtar) holds:
//
//	comment              what the case pins, plus optional directives:
//	                       strip-final-newline  drop the stream's last "\n" (txtar ends files with one)
//	                       skip-tool-input-deltas  run with Options{SkipToolInputDeltas: true}
//	-- upstream.sse --   the raw upstream stream
//	-- want.events.jsonl --
//	                     one ResponseEvent per line (protocol.ResponseEvent JSON), then
//	                     {"run_error": "..."} if the run fails
type golden struct {
	path string
	arc  *txtar.Archive
	in   []byte
	opts Options
	want []byte
}

func loadGoldens(t testing.TB) []golden {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "golden", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden archives (err %v)", err)
	}
	var gs []golden
	for _, p := range paths {
		arc, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		g := golden{path: p, arc: arc}
		comment := string(arc.Comment)
		g.opts.SkipToolInputDeltas = strings.Contains(comment, "skip-tool-input-deltas")
		for _, f := range arc.Files {
			switch f.Name {
			case "upstream.sse":
				g.in = f.Data
				if strings.Contains(comment, "strip-final-newline") {
					g.in = bytes.TrimSuffix(g.in, []byte("\n"))
				}
			case "want.events.jsonl":
				g.want = f.Data
			default:
				t.Fatalf("%s: unexpected file %q", p, f.Name)
			}
		}
		if g.in == nil {
			t.Fatalf("%s: no upstream.sse", p)
		}
		gs = append(gs, g)
	}
	return gs
}

func goldenOutput(o outcome) []byte {
	var b bytes.Buffer
	for _, l := range o.Lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if o.Err != "" {
		line, _ := json.Marshal(map[string]string{"run_error": o.Err})
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	for _, gd := range loadGoldens(t) {
		t.Run(strings.TrimSuffix(filepath.Base(gd.path), ".txtar"), func(t *testing.T) {
			g, err := Graph(gd.opts)
			if err != nil {
				t.Fatal(err)
			}
			got := goldenOutput(replay(t, g, gd.in))
			if *update {
				replaced := false
				for i := range gd.arc.Files {
					if gd.arc.Files[i].Name == "want.events.jsonl" {
						gd.arc.Files[i].Data, replaced = got, true
					}
				}
				if !replaced {
					gd.arc.Files = append(gd.arc.Files, txtar.File{Name: "want.events.jsonl", Data: got})
				}
				if err := os.WriteFile(gd.path, txtar.Format(gd.arc), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if diff := cmp.Diff(string(gd.want), string(got)); diff != "" {
				t.Errorf("events differ (-want +got); rerun with -update if intended:\n%s", diff)
			}
		})
	}
}
