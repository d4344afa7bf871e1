package chatstream

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

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
)

var update = flag.Bool("update", false, "rewrite want.events.jsonl in testdata/golden/*.txtar")

// A golden archive (testdata/golden/NAME.txtar) holds:
//
//	comment              what the case pins down, plus optional directives on
//	                     lines of their own:
//	                       unary                  run UnaryGraph on upstream.json
//	                       cumulative-arguments   Options.CumulativeArguments
//	-- upstream.sse --   the streamed body (or -- upstream.json -- with unary)
//	-- tool_kinds.json -- optional protocol.ToolKinds
//	-- want.events.jsonl --
//	                     one protocol.ResponseEvent JSON per line; a run error
//	                     is a last line {"run_error":"..."}
//
// Every archive is replayed whole, one byte at a time and in random chunks,
// in fused and async mode; all replays must give want.events.jsonl.
func TestGolden(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "golden", "*.txtar"))
	if err != nil || len(paths) < 10 {
		t.Fatalf("want golden archives in testdata/golden, found %d (%v)", len(paths), err)
	}
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".txtar"), func(t *testing.T) {
			arc, err := txtar.ParseFile(p)
			if err != nil {
				t.Fatal(err)
			}
			var opts Options
			unary := false
			for _, line := range strings.Split(string(arc.Comment), "\n") {
				switch strings.TrimSpace(line) {
				case "unary":
					unary = true
				case "cumulative-arguments":
					opts.CumulativeArguments = true
				}
			}
			var input, want []byte
			wantAt := -1
			for i, f := range arc.Files {
				switch f.Name {
				case "upstream.sse", "upstream.json":
					input = f.Data
				case "tool_kinds.json":
					if err := json.Unmarshal(f.Data, &opts.ToolKinds); err != nil {
						t.Fatalf("tool_kinds.json: %v", err)
					}
				case "want.events.jsonl":
					want, wantAt = f.Data, i
				default:
					t.Fatalf("unexpected file %q", f.Name)
				}
			}
			var g *pipeline.Graph
			if unary {
				g = mustUnaryGraph(t, opts)
			} else {
				g = mustGraph(t, opts)
			}
			o := replayAll(t, g, input, nil)
			got := goldenLines(o)
			if *update {
				if wantAt < 0 {
					arc.Files = append(arc.Files, txtar.File{Name: "want.events.jsonl"})
					wantAt = len(arc.Files) - 1
				}
				arc.Files[wantAt].Data = got
				if err := os.WriteFile(p, txtar.Format(arc), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if d := cmp.Diff(string(want), string(got)); d != "" {
				t.Errorf("events differ (-want +got); rerun with -update if intended:\n%s", d)
			}
			// The JSON must round-trip through protocol's decoder.
			for _, ev := range o.Events {
				b, _ := ev.MarshalJSON()
				var back protocol.ResponseEvent
				if err := json.Unmarshal(b, &back); err != nil {
					t.Errorf("event %s does not decode: %v", b, err)
				}
			}
		})
	}
}

func goldenLines(o outcome) []byte {
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
