package prompts

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
)

// writeTree writes files (slash paths relative to the returned directory)
// into a fresh temporary directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// testBase stands in for the embedded pack where a test needs embedded
// markers or several harnesses.
func testBase() fstest.MapFS {
	return fstest.MapFS{
		"alpha/system.tmpl":   {Data: []byte("alpha system\n")},
		"alpha/reminder.tmpl": {Data: []byte("remember {{.what}}")},
		"alpha/markers.json":  {Data: []byte(`{"done": "ALL DONE", "plan": "PLAN:"}`)},
		"beta/system.tmpl":    {Data: []byte("beta system")},
	}
}

func TestDefault(t *testing.T) {
	p := Default()
	if p != Default() {
		t.Error("Default returned different packs")
	}
	if !p.Has("minimal", "system") {
		t.Fatalf("Default has no minimal/system; harnesses %v", p.Harnesses())
	}
	got, err := p.Render("minimal", "system", nil)
	if err != nil {
		t.Fatal(err)
	}
	text, err := p.Text("minimal", "system")
	if err != nil {
		t.Fatal(err)
	}
	if got != text {
		t.Errorf("render %q differs from text %q (the system prompt has no actions)", got, text)
	}
	for _, want := range []string{"software engineer", "current directory", "tools", "conventions", "verify"} {
		if !strings.Contains(got, want) {
			t.Errorf("minimal system prompt lacks %q:\n%s", want, got)
		}
	}
	if lines := strings.Count(strings.TrimSpace(got), "\n") + 1; lines < 2 || lines > 4 {
		t.Errorf("minimal system prompt has %d lines, want 2 to 4", lines)
	}
	if src := p.Source("minimal", "system"); src != SourceEmbedded {
		t.Errorf("Source = %q, want %q", src, SourceEmbedded)
	}
	if q, err := Load(""); err != nil || q != p {
		t.Errorf(`Load("") = %p, %v; want Default()`, q, err)
	}
}

// TestEmbeddedLayout keeps the embedded pack to its conventions: only
// <harness>/<name>.tmpl, <harness>/markers.json and <harness>/<name>.json
// data files, all valid.
func TestEmbeddedLayout(t *testing.T) {
	err := fs.WalkDir(embedded, "pack", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		depth := strings.Count(path, "/")
		switch {
		case d.IsDir() && depth <= 1:
		case !d.IsDir() && depth == 2 && !strings.HasPrefix(d.Name(), ".") &&
			(d.Name() == markersFile || strings.HasSuffix(d.Name(), tmplExt) && d.Name() != tmplExt ||
				strings.HasSuffix(d.Name(), dataExt) && d.Name() != dataExt):
		default:
			t.Errorf("%s does not belong in the pack (want pack/<harness>/<name>.tmpl, pack/<harness>/markers.json or pack/<harness>/<name>.json)", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := build(embeddedRoot(), ""); err != nil {
		t.Fatalf("embedded pack: %v", err)
	}
}

func TestRender(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"minimal/greet.tmpl": "working in {{.cwd}}",
	})
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	type cwdData struct{ Cwd string }
	tests := []struct {
		name    string
		tmpl    string
		data    any
		want    string
		wantErr []string
	}{
		{name: "map", tmpl: "greet", data: map[string]any{"cwd": "/src/app"}, want: "working in /src/app"},
		{name: "extra keys", tmpl: "greet", data: map[string]any{"cwd": "/x", "other": 1}, want: "working in /x"},
		{name: "missing key", tmpl: "greet", data: map[string]any{"dir": "/x"},
			wantErr: []string{filepath.Join(dir, "minimal", "greet.tmpl"), `"cwd"`}},
		{name: "nil data", tmpl: "greet", data: nil, wantErr: []string{"greet.tmpl"}},
		{name: "struct without field", tmpl: "greet", data: cwdData{Cwd: "/x"}, wantErr: []string{"cwd"}},
		{name: "embedded beside overlay", tmpl: "system", data: nil, want: mustText(t, Default(), "minimal", "system")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := p.Render("minimal", tt.tmpl, tt.data)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("Render = %q, want an error", got)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not mention %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Render = %q, want %q", got, tt.want)
			}
		})
	}
}

func mustText(t *testing.T, p *Pack, harness, name string) string {
	t.Helper()
	s, err := p.Text(harness, name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLoadOverlay(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"alpha/system.tmpl":  "alpha system, overlaid for {{.user}}",
		"alpha/markers.json": `{"done": "FINISHED", "new": "NEW PHRASE"}`,
		"alpha/extra.tmpl":   "an added text",
		"gamma/system.tmpl":  "a whole new harness",
		"alpha/notes.txt":    "ignored",
		"README.md":          "ignored",
		".git/config":        "ignored",
		"alpha/.hidden.tmpl": "{{ignored",
	})
	p, err := build(testBase(), dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		harness, name string
		text, source  string
	}{
		{"alpha", "system", "alpha system, overlaid for {{.user}}", filepath.Join(dir, "alpha", "system.tmpl")},
		{"alpha", "reminder", "remember {{.what}}", SourceEmbedded},
		{"alpha", "extra", "an added text", filepath.Join(dir, "alpha", "extra.tmpl")},
		{"beta", "system", "beta system", SourceEmbedded},
		{"gamma", "system", "a whole new harness", filepath.Join(dir, "gamma", "system.tmpl")},
	}
	for _, tt := range tests {
		t.Run(tt.harness+"/"+tt.name, func(t *testing.T) {
			if got := mustText(t, p, tt.harness, tt.name); got != tt.text {
				t.Errorf("Text = %q, want %q", got, tt.text)
			}
			if got := p.Source(tt.harness, tt.name); got != tt.source {
				t.Errorf("Source = %q, want %q", got, tt.source)
			}
		})
	}
	got, err := p.Render("alpha", "system", map[string]any{"user": "ana"})
	if err != nil || got != "alpha system, overlaid for ana" {
		t.Errorf("Render = %q, %v", got, err)
	}

	wantMarkers := map[string]string{"done": "FINISHED", "plan": "PLAN:", "new": "NEW PHRASE"}
	markers := p.Markers("alpha")
	if !mapsEqual(markers, wantMarkers) {
		t.Errorf("Markers(alpha) = %v, want %v", markers, wantMarkers)
	}
	markers["done"] = "mutated"
	if s, err := p.Marker("alpha", "done"); err != nil || s != "FINISHED" {
		t.Errorf("Marker(alpha, done) = %q, %v after mutating the copy", s, err)
	}
	if m := p.Markers("beta"); m == nil || len(m) != 0 {
		t.Errorf("Markers(beta) = %#v, want empty non-nil", m)
	}

	if got, want := p.Harnesses(), []string{"alpha", "beta", "gamma"}; !slices.Equal(got, want) {
		t.Errorf("Harnesses = %v, want %v", got, want)
	}
	if got, want := p.Names("alpha"), []string{"extra", "reminder", "system"}; !slices.Equal(got, want) {
		t.Errorf("Names(alpha) = %v, want %v", got, want)
	}

	// The embedded pack is unaffected by an overlay.
	q, err := Load(writeTree(t, map[string]string{"minimal/system.tmpl": "replaced"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := mustText(t, q, "minimal", "system"); got != "replaced" {
		t.Errorf("overlaid minimal/system = %q", got)
	}
	if got := mustText(t, Default(), "minimal", "system"); got == "replaced" {
		t.Error("Load changed the Default pack")
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string // substrings of the error; paths are relative to the overlay dir
	}{
		{"broken template", map[string]string{"minimal/system.tmpl": "hello {{.cwd"},
			[]string{"@minimal/system.tmpl"}},
		{"broken new template", map[string]string{"other/x.tmpl": "{{end}}"},
			[]string{"@other/x.tmpl"}},
		{"two broken files", map[string]string{"a/x.tmpl": "{{if}}", "b/y.tmpl": "{{range}}"},
			[]string{"@a/x.tmpl", "@b/y.tmpl"}},
		{"markers array", map[string]string{"minimal/markers.json": `["a", "b"]`},
			[]string{"@minimal/markers.json", "JSON object of strings"}},
		{"markers null", map[string]string{"minimal/markers.json": `null`},
			[]string{"@minimal/markers.json"}},
		{"markers number value", map[string]string{"minimal/markers.json": `{"done": 3}`},
			[]string{"@minimal/markers.json", `"done"`, "not a string"}},
		{"markers nested", map[string]string{"minimal/markers.json": `{"done": {"x": "y"}}`},
			[]string{"@minimal/markers.json", `"done"`}},
		{"markers empty phrase", map[string]string{"minimal/markers.json": `{"done": ""}`},
			[]string{"@minimal/markers.json", "empty phrase"}},
		{"markers bad json", map[string]string{"minimal/markers.json": `{"done": "x",}`},
			[]string{"@minimal/markers.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, tt.files)
			p, err := Load(dir)
			if err == nil {
				t.Fatalf("Load succeeded with harnesses %v, want an error", p.Harnesses())
			}
			for _, w := range tt.want {
				if rel, ok := strings.CutPrefix(w, "@"); ok {
					w = filepath.Join(dir, filepath.FromSlash(rel))
				}
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if !strings.HasPrefix(err.Error(), "prompts: ") {
				t.Errorf("error %q lacks the prompts: prefix", err)
			}
		})
	}

	t.Run("missing dir", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "nope")
		if _, err := Load(missing); err == nil || !strings.Contains(err.Error(), missing) {
			t.Errorf("Load(missing) error = %v", err)
		}
	})
	t.Run("dir is a file", func(t *testing.T) {
		dir := writeTree(t, map[string]string{"f": "x"})
		f := filepath.Join(dir, "f")
		if _, err := Load(f); err == nil || !strings.Contains(err.Error(), "not a directory") {
			t.Errorf("Load(file) error = %v", err)
		}
	})
	t.Run("overlay fixes a broken base", func(t *testing.T) {
		base := fstest.MapFS{"h/x.tmpl": {Data: []byte("{{broken")}}
		if _, err := build(base, ""); err == nil || !strings.Contains(err.Error(), "prompts: h/x.tmpl: ") {
			t.Errorf("broken base error = %v", err)
		}
		if _, err := build(base, writeTree(t, map[string]string{"h/x.tmpl": "fixed"})); err != nil {
			t.Errorf("overlaid base: %v", err)
		}
	})
}

func TestNotFound(t *testing.T) {
	p, err := build(testBase(), "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		call func() error
		want []string
	}{
		{"text unknown harness", func() error { _, err := p.Text("nope", "system"); return err },
			[]string{`unknown harness "nope"`, "have: alpha, beta"}},
		{"render unknown harness", func() error { _, err := p.Render("nope", "system", nil); return err },
			[]string{`unknown harness "nope"`}},
		{"unknown template", func() error { _, err := p.Text("alpha", "missing"); return err },
			[]string{`"alpha"`, `template "missing"`, "have: reminder, system"}},
		{"render unknown template", func() error { _, err := p.Render("beta", "missing", nil); return err },
			[]string{`template "missing"`, "have: system"}},
		{"unknown marker", func() error { _, err := p.Marker("alpha", "missing"); return err },
			[]string{`marker "missing"`, "have: done, plan"}},
		{"marker of harness without markers", func() error { _, err := p.Marker("beta", "done"); return err },
			[]string{`marker "done"`, "have: none"}},
		{"marker unknown harness", func() error { _, err := p.Marker("nope", "done"); return err },
			[]string{`unknown harness "nope"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("error %q is not ErrNotFound", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}

	if p.Has("alpha", "missing") || p.Has("nope", "system") || !p.Has("alpha", "reminder") {
		t.Error("Has is wrong")
	}
	if got := p.Source("nope", "system"); got != "" {
		t.Errorf("Source of unknown = %q", got)
	}
	if got := p.Names("nope"); got != nil {
		t.Errorf("Names(nope) = %v", got)
	}
	if got, err := p.Marker("alpha", "done"); err != nil || got != "ALL DONE" {
		t.Errorf("Marker(alpha, done) = %q, %v", got, err)
	}
}

func TestSorted(t *testing.T) {
	base := fstest.MapFS{}
	for _, h := range []string{"zeta", "alpha", "mid"} {
		for _, n := range []string{"c", "a", "b"} {
			base[h+"/"+n+".tmpl"] = &fstest.MapFile{Data: []byte(n)}
		}
	}
	p, err := build(base, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Harnesses(), []string{"alpha", "mid", "zeta"}; !slices.Equal(got, want) {
		t.Errorf("Harnesses = %v, want %v", got, want)
	}
	for _, h := range p.Harnesses() {
		names := p.Names(h)
		if want := []string{"a", "b", "c"}; !slices.Equal(names, want) {
			t.Errorf("Names(%s) = %v, want %v", h, names, want)
		}
		names[0] = "mutated"
		if p.Names(h)[0] != "a" {
			t.Errorf("Names(%s) returned shared storage", h)
		}
	}
	hs := p.Harnesses()
	hs[0] = "mutated"
	if p.Harnesses()[0] != "alpha" {
		t.Error("Harnesses returned shared storage")
	}
	if !slices.IsSorted(Default().Harnesses()) || !slices.IsSorted(Default().Names("minimal")) {
		t.Error("Default lists are not sorted")
	}
}

func TestConcurrentRender(t *testing.T) {
	dir := writeTree(t, map[string]string{"minimal/greet.tmpl": "working in {{.cwd}}"})
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	const workers, rounds = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				cwd := fmt.Sprintf("/w%d/r%d", w, i)
				got, err := p.Render("minimal", "greet", map[string]any{"cwd": cwd})
				if err == nil && got != "working in "+cwd {
					err = fmt.Errorf("got %q", got)
				}
				if err == nil {
					_, err = Default().Render("minimal", "system", nil)
				}
				if err != nil {
					errs <- err
					return
				}
				_ = p.Markers("minimal")
				_ = p.Names("minimal")
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
