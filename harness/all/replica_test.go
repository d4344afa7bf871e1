package all_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/harnesstest"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/prompts"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/streamtest"
)

// goldenOwner names the harness whose goldens a testdata directory holds
// (rel is relative to harness/, e.g. "claudecode/testdata/bare/chat"),
// from the registry: the harness registered by the package the directory
// belongs to (the package of its spec's request graph); of a package that
// registers several, the one whose name ends in "-" and a segment of the
// path ("bare"), else the shortest name. "" when no registered harness
// lives there.
func goldenOwner(rel string) string {
	pkg, _, _ := strings.Cut(rel, "/testdata")
	var names []string
	for _, s := range harness.All() {
		fn := runtime.FuncForPC(reflect.ValueOf(s.Request).Pointer()).Name()
		if strings.HasPrefix(fn, "github.com/harnessflow/harnessflow/harness/"+pkg+".") {
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	slices.SortFunc(names, func(a, b string) int { return len(a) - len(b) })
	for _, seg := range strings.Split(rel, "/") {
		for _, n := range names {
			if strings.HasSuffix(n, "-"+seg) {
				return n
			}
		}
	}
	return names[0]
}

// replicaCase is one request of the golden archives.
type replicaCase struct {
	c      *harnesstest.Case
	dir    string // relative to harness/
	req    []byte
	owner  string
	shared bool // a request of the shared set
}

// replicaCases loads the request of every golden archive under harness/.
func replicaCases(t *testing.T) []replicaCase {
	t.Helper()
	dirs := map[string]bool{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".txtar") && strings.Contains(path, "testdata") {
			dirs[filepath.Dir(path)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []replicaCase
	for _, dir := range slices.Sorted(func(yield func(string) bool) {
		for d := range dirs {
			if !yield(d) {
				return
			}
		}
	}) {
		rel := filepath.ToSlash(strings.TrimPrefix(dir, ".."+string(filepath.Separator)))
		for _, c := range harnesstest.Load(t, dir) {
			data, shared := c.File("request.json"), false
			if data == nil {
				data, _ = harnesstest.SharedRequest(strings.TrimSuffix(filepath.Base(c.Path), ".txtar"))
				shared = true
			}
			if data == nil {
				continue
			}
			owner := goldenOwner(rel)
			if owner == "" {
				t.Errorf("%s: no registered harness owns this golden directory, so its answers would not be replayed", rel)
			}
			out = append(out, replicaCase{c: c, dir: rel, req: data, owner: owner, shared: shared})
		}
	}
	if len(out) < 50 {
		t.Fatalf("found %d golden requests under harness/, want the whole set", len(out))
	}
	return out
}

// planned is what one planning of a request gave: the shaped request (path,
// query, headers, body, title request, tool kinds) or the error, and the
// events of the case's upstream answer.
type planned struct {
	shaped, err, events string
}

// planOnce plans one request from scratch on cfg, as a replica would: a
// freshly decoded request, its own env.
func planOnce(t *testing.T, cfg harness.Config, name string, rc replicaCase, replay bool) planned {
	t.Helper()
	req, err := protocol.DecodeRequest(rc.req)
	if err != nil {
		t.Fatalf("%s: %v", rc.c.Path, err)
	}
	hdr := http.Header{"Session_id": {"conversation-7"}, "Originator": {"codex_exec"}}
	ex, err := harness.Open(context.Background(), cfg, harness.Opening{Harness: name, Request: req, Header: hdr})
	if err != nil {
		return planned{err: err.Error()}
	}
	b, err := json.Marshal(ex.Turn.Shaped)
	if err != nil {
		t.Fatal(err)
	}
	p := planned{shaped: string(b)}
	if up := rc.c.File("upstream.sse"); replay && up != nil {
		g, err := ex.Graph()
		if err != nil {
			p.events = "response graph: " + err.Error()
			return p
		}
		o := streamtest.Run(t, g, up, pipeline.Fused, nil)
		p.events = strings.Join(o.Lines, "\n")
		if o.Err != nil {
			p.events += "\nrun error: " + o.Err.Error()
		}
	}
	return p
}

// Every decision a harness makes — the shaped body, the title request
// (opencode, claude-code), terminus-2's request kind, swe-agent's submit
// review, the follow-ups of its post node — comes from the request alone:
// two replicas with configurations of their own (a prompt pack and model
// table each), one planning every golden request in order and the other in
// reverse order and each twice, shape identical requests and make
// identical events of the same upstream answers, for every registered
// harness on each of its wires.
func TestPlanDependsOnTheRequestAlone(t *testing.T) {
	all := replicaCases(t)
	packB, err := prompts.Load(t.TempDir()) // an empty overlay: a pack of its own
	if err != nil {
		t.Fatal(err)
	}
	if packB == prompts.Default() {
		t.Fatal("the second replica shares the first one's prompt pack")
	}
	var mu sync.Mutex
	titles, kinds := 0, map[string]bool{}
	t.Cleanup(func() {
		if titles == 0 {
			t.Error("no golden request made a title request: the title decision went untested")
		}
		for _, name := range []string{harness.NameTerminus2, harness.NameSWEAgent, harness.NameMiniSWEAgent, harness.NameOpenCode} {
			if !kinds[name] {
				t.Errorf("no upstream answer of %s was replayed: its post node went untested", name)
			}
		}
	})
	for _, spec := range harness.All() {
		for _, wire := range spec.Wires {
			t.Run(spec.Name+"/"+string(wire), func(t *testing.T) {
				t.Parallel() // replicas plan at the same time, too
				config := func(rc replicaCase, pack *prompts.Pack) (harness.Config, bool) {
					cfg := rc.c.PlanConfig(t) // a model table of its own when the case has one
					golden := cfg.Wire
					if golden == "" {
						golden = harness.WireChat
					}
					own := rc.owner == spec.Name && golden == wire
					cfg.Wire, cfg.Prompts = wire, pack
					return cfg, own
				}
				// The harness's own goldens and the shared request set.
				var cases []replicaCase
				seen := map[string]bool{}
				for _, rc := range all {
					if rc.owner == spec.Name || rc.shared && !seen[string(rc.req)] {
						cases = append(cases, rc)
						seen[string(rc.req)] = true
					}
				}
				a := make([]planned, len(cases))
				for i, rc := range cases {
					cfg, own := config(rc, nil)
					a[i] = planOnce(t, cfg, spec.Name, rc, own)
				}
				for i := len(cases) - 1; i >= 0; i-- {
					rc := cases[i]
					cfg, own := config(rc, packB)
					b := planOnce(t, cfg, spec.Name, rc, own)
					again := planOnce(t, cfg, spec.Name, rc, own)
					if b != a[i] || again != b {
						t.Errorf("%s: the replicas disagree (-planned in order +planned in reverse order on a replica of its own):\n%s"+
							"planned again right after (-first +again):\n%s", rc.c.Path, cmp.Diff(a[i], b, cmp.AllowUnexported(planned{})),
							cmp.Diff(b, again, cmp.AllowUnexported(planned{})))
					}
					mu.Lock()
					if strings.Contains(b.shaped, `"title_request":{`) {
						titles++
					}
					if own && b.events != "" {
						kinds[spec.Name] = true
					}
					mu.Unlock()
				}
			})
		}
	}
}
