// Package harnesstest runs the golden files of harness packages: one txtar
// archive per case, a Responses request in, the shaped upstream request out
// and — when the archive holds an upstream answer — the engine events the
// turn's response graph makes of it, replayed whole, one byte at a time and
// in random chunks, in both execution modes.
//
// Archive files:
//
//	request.json       the client's Responses request; absent in the cases of the shared
//	                   request set (requests/NAME.json), which every harness answers
//	config.json        optional planning settings: {"wire","base_url","now","models":[…],"variants":{…},"workspace"}
//	want.shaped.json   the Shaped JSON `harnessflow shape` prints (path, body, title_request, tool_kinds …)
//	want.error         instead of want.shaped.json: the planning error's text
//	upstream.sse       optional: the upstream's answer (SSE, or a JSON body for unary turns)
//	want.events.jsonl  the events of upstream.sse, one JSON object per line
//
// Run the tests with -update to rewrite the want files from what the code
// does now (then read the diff).
package harnesstest

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/stages/streamtest"
)

//go:embed requests/*.json
var shared embed.FS

// SharedRequests returns the names of the shared request set: Codex-shaped
// requests (plain; tool history; reasoning; an unanswered call; namespaced
// tools; a custom tool; images and content-item outputs; a local shell
// call) that every harness's goldens answer.
func SharedRequests() []string {
	ents, _ := shared.ReadDir("requests") // embedded: cannot fail
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, strings.TrimSuffix(e.Name(), ".json"))
	}
	return names
}

// SharedRequest returns the request of the shared set called name.
func SharedRequest(name string) ([]byte, error) { return shared.ReadFile("requests/" + name + ".json") }

// updating reports whether the test binary runs with -update (the flag
// stages/streamtest defines for every golden test).
func updating() bool {
	f := flag.Lookup("update")
	if f == nil {
		return false
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	b, _ := g.Get().(bool)
	return b
}

// DefaultNow is the clock of every golden case without "now" in config.json.
var DefaultNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Config is the content of config.json.
type Config struct {
	Wire    harness.Wire `json:"wire"`
	BaseURL string       `json:"base_url"`
	Now     *time.Time   `json:"now"`
	// Models is written to a model-capabilities file and loaded.
	Models json.RawMessage `json:"models"`
	// Variants picks harness variants (harness name → variant).
	Variants map[string]string `json:"variants"`
	// Workspace is the workspace policy ("" means local).
	Workspace harness.WorkspacePolicy `json:"workspace"`
}

// Case is one golden archive.
type Case struct {
	Path    string
	Archive *txtar.Archive
}

// File returns the archive file called name, or nil.
func (c *Case) File(name string) []byte {
	for _, f := range c.Archive.Files {
		if f.Name == name {
			return f.Data
		}
	}
	return nil
}

func (c *Case) set(name string, data []byte) {
	for i, f := range c.Archive.Files {
		if f.Name == name {
			c.Archive.Files[i].Data = data
			return
		}
	}
	c.Archive.Files = append(c.Archive.Files, txtar.File{Name: name, Data: data})
}

// Load reads every *.txtar of dir.
func Load(t testing.TB, dir string) []*Case {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	cases := make([]*Case, 0, len(paths))
	for _, p := range paths {
		a, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, &Case{Path: p, Archive: a})
	}
	return cases
}

// PlanConfig returns the harness.Config of a case.
func (c *Case) PlanConfig(t testing.TB) harness.Config {
	t.Helper()
	var cc Config
	if data := c.File("config.json"); len(bytes.TrimSpace(data)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cc); err != nil {
			t.Fatalf("%s: config.json: %v", c.Path, err)
		}
	}
	now := DefaultNow
	if cc.Now != nil {
		now = *cc.Now
	}
	cfg := harness.Config{Wire: cc.Wire, BaseURL: cc.BaseURL, Now: func() time.Time { return now },
		Variants: cc.Variants, Workspace: cc.Workspace}
	if len(cc.Models) > 0 {
		f := filepath.Join(t.TempDir(), "models.json")
		if err := os.WriteFile(f, cc.Models, 0o600); err != nil {
			t.Fatal(err)
		}
		m, err := harness.LoadModelTable(f)
		if err != nil {
			t.Fatalf("%s: config.json models: %v", c.Path, err)
		}
		cfg.Models = m
	}
	return cfg
}

// Run checks every case of dir for harness name: one per shared request
// (dir/NAME.txtar, made by -update when missing) and any case of its own.
func Run(t *testing.T, name, dir string) {
	cases := Load(t, dir)
	have := map[string]bool{}
	for _, c := range cases {
		have[strings.TrimSuffix(filepath.Base(c.Path), ".txtar")] = true
	}
	// A new golden of a shared request takes the planning settings of the
	// directory's "plain" golden (its wire, above all).
	var config []byte
	for _, c := range cases {
		if strings.TrimSuffix(filepath.Base(c.Path), ".txtar") == "plain" {
			config = c.File("config.json")
		}
	}
	for _, r := range SharedRequests() {
		if have[r] {
			continue
		}
		if !updating() {
			t.Errorf("%s: no golden for the shared request %q (run the test with -update)", dir, r)
			continue
		}
		a := &txtar.Archive{Comment: []byte("request: the shared request " + r + "\n")}
		if config != nil {
			a.Files = append(a.Files, txtar.File{Name: "config.json", Data: config})
		}
		cases = append(cases, &Case{Path: filepath.Join(dir, r+".txtar"), Archive: a})
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(filepath.Base(c.Path), ".txtar"), func(t *testing.T) {
			Check(t, name, c)
		})
	}
}

// Check checks one case: the shaped request (or the planning error), then
// the events of the upstream answer, if any.
func Check(t *testing.T, name string, c *Case) {
	t.Helper()
	data := c.File("request.json")
	if data == nil {
		var err error
		if data, err = SharedRequest(strings.TrimSuffix(filepath.Base(c.Path), ".txtar")); err != nil {
			t.Fatalf("no request.json and no shared request of that name: %v", err)
		}
	}
	req, err := protocol.DecodeRequest(data)
	if err != nil {
		t.Fatalf("request.json: %v", err)
	}
	ex, err := harness.Open(context.Background(), c.PlanConfig(t), harness.Opening{Harness: name, Request: req})
	if want := c.File("want.error"); want != nil {
		got := ""
		if err != nil {
			got = err.Error()
		}
		if updating() {
			c.set("want.error", []byte(got+"\n"))
			write(t, c)
			return
		}
		if got != strings.TrimSpace(string(want)) {
			t.Fatalf("error = %q, want %q", got, strings.TrimSpace(string(want)))
		}
		return
	}
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	turn := ex.Turn
	// The request graph gives the same bytes in the async execution mode.
	async, err := request.Shape(context.Background(), turn.RequestGraph, turn.Env.Request, pipeline.WithMode(pipeline.Async))
	if err != nil {
		t.Fatalf("shape (async): %v", err)
	}
	if !bytes.Equal(async.Body, turn.Shaped.Body) || !bytes.Equal(async.TitleRequest, turn.Shaped.TitleRequest) {
		t.Errorf("async shaping differs from fused:\n%s\n---\n%s", async.Body, turn.Shaped.Body)
	}
	shaped, err := marshalIndent(turn.Shaped)
	if err != nil {
		t.Fatal(err)
	}
	changed := false
	if want := c.File("want.shaped.json"); updating() {
		if !bytes.Equal(want, shaped) {
			c.set("want.shaped.json", shaped)
			changed = true
		}
	} else if d := cmp.Diff(jsonValue(t, "want.shaped.json", want), jsonValue(t, "shaped", shaped)); d != "" {
		t.Errorf("shaped request (-want +got); rerun with -update if intended:\n%s", d)
	}
	if up := c.File("upstream.sse"); up != nil {
		g, err := ex.Graph()
		if err != nil {
			t.Fatalf("response graph: %v", err)
		}
		o := streamtest.Replay(t, g, up)
		got := streamtest.GoldenOutput(o)
		if updating() {
			if !bytes.Equal(c.File("want.events.jsonl"), got) {
				c.set("want.events.jsonl", got)
				changed = true
			}
		} else if d := cmp.Diff(string(c.File("want.events.jsonl")), string(got)); d != "" {
			t.Errorf("events (-want +got); rerun with -update if intended:\n%s", d)
		}
	}
	if changed {
		write(t, c)
	}
}

func write(t testing.TB, c *Case) {
	if err := os.WriteFile(c.Path, txtar.Format(c.Archive), 0o644); err != nil {
		t.Fatal(err)
	}
}

// marshalIndent renders v as indented JSON without HTML escaping, with the
// body re-indented so that diffs of goldens are readable.
func marshalIndent(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func jsonValue(t testing.TB, what string, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, data)
	}
	return v
}
