package prompts

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

// Data files: <harness>/<name>.json beside the templates, valid JSON,
// overlaid file by file; markers.json is not a data file.
func TestData(t *testing.T) {
	base := fstest.MapFS{
		"alpha/system.tmpl":  {Data: []byte("s")},
		"alpha/tools.json":   {Data: []byte(`[{"name":"a"}]`)},
		"alpha/markers.json": {Data: []byte(`{"m":"x"}`)},
	}
	p, err := build(base, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := p.Data("alpha", "tools.json"); err != nil || string(got) != `[{"name":"a"}]` {
		t.Errorf("Data = %s, %v", got, err)
	}
	if _, err := p.Data("alpha", "markers.json"); !errors.Is(err, ErrNotFound) {
		t.Errorf("markers.json as data: %v", err)
	}
	if _, err := p.Data("alpha", "nope.json"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "tools.json") {
		t.Errorf("missing data file: %v", err)
	}
	if _, err := p.Data("zeta", "tools.json"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown harness: %v", err)
	}

	dir := writeTree(t, map[string]string{"alpha/tools.json": `[{"name":"b"}]`, "beta/extra.json": `{}`})
	q, err := build(base, dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := q.Data("alpha", "tools.json"); string(got) != `[{"name":"b"}]` {
		t.Errorf("overlaid Data = %s", got)
	}
	if got, _ := q.Data("beta", "extra.json"); string(got) != `{}` {
		t.Errorf("added Data = %s", got)
	}

	bad := writeTree(t, map[string]string{"alpha/tools.json": `[{"name":`})
	if _, err := build(base, bad); err == nil || !strings.Contains(err.Error(), "tools.json") || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("invalid data file: %v", err)
	}
}
