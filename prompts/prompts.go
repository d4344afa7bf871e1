package prompts

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/template"
)

//go:embed all:pack
var embedded embed.FS

// SourceEmbedded is what Pack.Source returns for a template of the embedded
// pack.
const SourceEmbedded = "embedded"

// ErrNotFound is matched (with errors.Is) by the errors Pack returns for an
// unknown harness, template or marker.
var ErrNotFound = errors.New("prompts: not found")

const (
	tmplExt     = ".tmpl"
	markersFile = "markers.json"
	dataExt     = ".json"
)

// Pack is a set of prompt templates and marker phrases, grouped by harness.
// It is immutable after construction and safe for concurrent use.
type Pack struct {
	harnesses map[string]*harnessTexts
	names     []string // sorted keys of harnesses
}

type harnessTexts struct {
	templates map[string]*entry
	names     []string // sorted keys of templates
	markers   map[string]string
	data      map[string]*entry // data files by file name (see Data)
}

type entry struct {
	text   string
	source string // SourceEmbedded or the overlay file path
	label  string // how errors name the file
	tmpl   *template.Template
}

var (
	defaultOnce sync.Once
	defaultPack *Pack
)

// Default returns the embedded pack. It is parsed on first use and shared
// afterwards. The embedded pack is checked by the package tests, so a
// template of it that does not parse is a build defect and makes Default
// panic.
func Default() *Pack {
	defaultOnce.Do(func() {
		p, err := build(embeddedRoot(), "")
		if err != nil {
			panic(fmt.Sprintf("prompts: embedded pack is invalid: %v", err))
		}
		defaultPack = p
	})
	return defaultPack
}

func embeddedRoot() fs.FS {
	sub, err := fs.Sub(embedded, "pack")
	if err != nil {
		panic(err) // "pack" is a valid path; fs.Sub cannot fail
	}
	return sub
}

// Load returns the embedded pack overlaid by dir: a file
// dir/<harness>/<name>.tmpl replaces (or adds) the template of the same path,
// a dir/<harness>/markers.json merges over that harness's embedded
// markers key by key, and a dir/<harness>/<name>.json replaces (or adds) the
// data file of the same path. Other files, and entries whose names start with
// ".", are ignored. Every template of the result must parse, every
// markers.json must be a JSON object of non-empty strings and every data file
// valid JSON; otherwise the error names the offending files. An empty dir
// returns Default().
func Load(dir string) (*Pack, error) {
	if dir == "" {
		return Default(), nil
	}
	return build(embeddedRoot(), dir)
}

// rawHarness is a harness while the pack is being assembled, before parsing.
type rawHarness struct {
	templates map[string]*entry
	markers   map[string]string
	data      map[string]*entry
}

// build reads base (labelled as embedded) and then, if dir is not empty, the
// overlay directory dir, and parses the result.
func build(base fs.FS, dir string) (*Pack, error) {
	raw := map[string]*rawHarness{}
	var errs []error
	errs = append(errs, readTree(raw, base, func(rel string) (source, label string) {
		return SourceEmbedded, rel
	})...)
	if dir != "" {
		info, err := os.Stat(dir)
		if err != nil {
			return nil, fmt.Errorf("prompts: overlay: %w", err)
		}
		if !info.IsDir() {
			return nil, fmt.Errorf("prompts: overlay %s: not a directory", dir)
		}
		errs = append(errs, readTree(raw, os.DirFS(dir), func(rel string) (source, label string) {
			p := filepath.Join(dir, filepath.FromSlash(rel))
			return p, p
		})...)
	}

	p := &Pack{harnesses: make(map[string]*harnessTexts, len(raw))}
	for _, h := range slices.Sorted(maps.Keys(raw)) {
		r := raw[h]
		ht := &harnessTexts{templates: r.templates, markers: r.markers, data: r.data}
		if ht.templates == nil {
			ht.templates = map[string]*entry{}
		}
		if ht.markers == nil {
			ht.markers = map[string]string{}
		}
		ht.names = slices.Sorted(maps.Keys(ht.templates))
		for _, name := range ht.names {
			e := ht.templates[name]
			t, err := template.New(h + "/" + name).Option("missingkey=error").Parse(e.text)
			if err != nil {
				errs = append(errs, fmt.Errorf("prompts: %s: %w", e.label, err))
				continue
			}
			e.tmpl = t
		}
		p.harnesses[h] = ht
		p.names = append(p.names, h)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p, nil
}

// readTree adds the templates and markers found in fsys (laid out as
// <harness>/<name>.tmpl and <harness>/markers.json) to raw, later files
// replacing earlier ones. where maps a slash path inside fsys to the
// entry's source and to the name errors use for it.
func readTree(raw map[string]*rawHarness, fsys fs.FS, where func(rel string) (source, label string)) []error {
	var errs []error
	fail := func(rel string, err error) {
		_, label := where(rel)
		errs = append(errs, fmt.Errorf("prompts: %s: %w", label, err))
	}
	top, err := fs.ReadDir(fsys, ".")
	if err != nil {
		fail(".", err)
		return errs
	}
	for _, hd := range top {
		h := hd.Name()
		if strings.HasPrefix(h, ".") {
			continue
		}
		info, err := fs.Stat(fsys, h) // follows symlinks in a directory overlay
		if err != nil {
			fail(h, err)
			continue
		}
		if !info.IsDir() {
			continue // loose files beside the harness directories are ignored
		}
		files, err := fs.ReadDir(fsys, h)
		if err != nil {
			fail(h, err)
			continue
		}
		for _, fd := range files {
			fname := fd.Name()
			isMarkers := fname == markersFile
			isTmpl := strings.HasSuffix(fname, tmplExt) && len(fname) > len(tmplExt)
			isData := !isMarkers && strings.HasSuffix(fname, dataExt) && len(fname) > len(dataExt)
			if strings.HasPrefix(fname, ".") || (!isMarkers && !isTmpl && !isData) {
				continue
			}
			rel := h + "/" + fname
			data, err := readRegular(fsys, rel)
			if err != nil {
				fail(rel, err)
				continue
			}
			r := raw[h]
			if r == nil {
				r = &rawHarness{}
				raw[h] = r
			}
			source, label := where(rel)
			if isMarkers {
				m, err := parseMarkers(data)
				if err != nil {
					fail(rel, err)
					continue
				}
				if r.markers == nil {
					r.markers = map[string]string{}
				}
				maps.Copy(r.markers, m)
				continue
			}
			if isData {
				if !json.Valid(data) {
					fail(rel, errors.New("not valid JSON"))
					continue
				}
				if r.data == nil {
					r.data = map[string]*entry{}
				}
				r.data[fname] = &entry{text: string(data), source: source, label: label}
				continue
			}
			if r.templates == nil {
				r.templates = map[string]*entry{}
			}
			name := strings.TrimSuffix(fname, tmplExt)
			r.templates[name] = &entry{text: string(data), source: source, label: label}
		}
	}
	return errs
}

func readRegular(fsys fs.FS, rel string) ([]byte, error) {
	info, err := fs.Stat(fsys, rel)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	return fs.ReadFile(fsys, rel)
}

// parseMarkers decodes a markers.json: a JSON object whose values are all
// non-empty strings.
func parseMarkers(data []byte) (map[string]string, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, errors.New(`want a JSON object of strings, like {"name": "exact phrase"}`)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &raw); err != nil {
		return nil, err
	}
	m := make(map[string]string, len(raw))
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if k == "" {
			return nil, errors.New("empty marker name")
		}
		v := bytes.TrimSpace(raw[k])
		var s string
		if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
			return nil, fmt.Errorf("marker %q: value %s is not a string", k, v)
		}
		if s == "" {
			return nil, fmt.Errorf("marker %q: empty phrase", k)
		}
		m[k] = s
	}
	return m, nil
}

// notFound is the error for an unknown harness, template or marker.
type notFound struct {
	kind    string // "harness", "template" or "marker"
	harness string
	name    string
	have    []string
}

func (e *notFound) Error() string {
	have := "none"
	if len(e.have) > 0 {
		have = strings.Join(e.have, ", ")
	}
	if e.kind == "harness" {
		return fmt.Sprintf("prompts: unknown harness %q (have: %s)", e.harness, have)
	}
	return fmt.Sprintf("prompts: harness %q has no %s %q (have: %s)", e.harness, e.kind, e.name, have)
}

func (e *notFound) Is(target error) bool { return target == ErrNotFound }

func (p *Pack) harness(harness string) (*harnessTexts, error) {
	if h, ok := p.harnesses[harness]; ok {
		return h, nil
	}
	return nil, &notFound{kind: "harness", harness: harness, have: slices.Clone(p.names)}
}

func (p *Pack) entry(harness, name string) (*entry, error) {
	h, err := p.harness(harness)
	if err != nil {
		return nil, err
	}
	if e, ok := h.templates[name]; ok {
		return e, nil
	}
	return nil, &notFound{kind: "template", harness: harness, name: name, have: slices.Clone(h.names)}
}

// Has reports whether the pack has the template name of harness.
func (p *Pack) Has(harness, name string) bool {
	_, err := p.entry(harness, name)
	return err == nil
}

// Text returns the raw, unexecuted text of the template name of harness.
func (p *Pack) Text(harness, name string) (string, error) {
	e, err := p.entry(harness, name)
	if err != nil {
		return "", err
	}
	return e.text, nil
}

// Render executes the template name of harness with data (usually a
// map[string]any or a struct). A key the template uses but data lacks is an
// error.
func (p *Pack) Render(harness, name string, data any) (string, error) {
	e, err := p.entry(harness, name)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := e.tmpl.Execute(&b, data); err != nil {
		return "", fmt.Errorf("prompts: %s: %w", e.label, err)
	}
	return b.String(), nil
}

// Marker returns the exact phrase of the marker name of harness.
func (p *Pack) Marker(harness, name string) (string, error) {
	h, err := p.harness(harness)
	if err != nil {
		return "", err
	}
	if s, ok := h.markers[name]; ok {
		return s, nil
	}
	return "", &notFound{kind: "marker", harness: harness, name: name, have: slices.Sorted(maps.Keys(h.markers))}
}

// Markers returns a copy of the markers of harness, name to phrase. It is
// never nil; it is empty for a harness without markers or an unknown one.
func (p *Pack) Markers(harness string) map[string]string {
	m := map[string]string{}
	if h, ok := p.harnesses[harness]; ok {
		maps.Copy(m, h.markers)
	}
	return m
}

// Names returns the sorted template names of harness, nil for an unknown
// harness.
func (p *Pack) Names(harness string) []string {
	if h, ok := p.harnesses[harness]; ok {
		return slices.Clone(h.names)
	}
	return nil
}

// Harnesses returns the sorted names of the harnesses that have templates or
// markers.
func (p *Pack) Harnesses() []string { return slices.Clone(p.names) }

// Source tells where the template name of harness came from: SourceEmbedded
// ("embedded") or the path of the overlay file. It is "" for an unknown
// template.
func (p *Pack) Source(harness, name string) string {
	e, err := p.entry(harness, name)
	if err != nil {
		return ""
	}
	return e.source
}

// Data returns the content of the data file name (a file name ending in
// ".json", e.g. "tools.json") of harness: structured data that goes with the
// prompts, such as a harness's fixed tool definitions with descriptions in
// our wording. The file is valid JSON (Load checks it); the bytes are
// returned as the file has them, and must not be modified.
func (p *Pack) Data(harness, name string) ([]byte, error) {
	h, err := p.harness(harness)
	if err != nil {
		return nil, err
	}
	if e, ok := h.data[name]; ok {
		return []byte(e.text), nil
	}
	return nil, &notFound{kind: "data file", harness: harness, name: name, have: slices.Sorted(maps.Keys(h.data))}
}
