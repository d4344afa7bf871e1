// Package layers encodes the import order of the repository's packages
// (docs/architecture.md#layout): every package belongs to one layer, and a
// package may import packages of its own layer or of a lower one, never of
// a higher one. The test of this package walks the repository's non-test
// Go files and fails on an upward import.
package layers

import (
	"fmt"
	"strings"
)

// Module is the module path.
const Module = "github.com/harnessflow/harnessflow"

// A Layer is one floor of the import order; higher layers may import lower
// ones.
type Layer struct {
	// Name is how failures name the layer.
	Name string
	// Packages are the package paths (relative to the module) of the
	// layer; a path ending in "/..." also covers everything below it.
	Packages []string
}

// Order returns the layers from the ground floor up. A package matches the
// most specific entry of all layers (the longest path).
func Order() []Layer {
	return []Layer{
		{"ground", []string{"internal/jsonx/...", "internal/inboundjson", "internal/docscheck", "internal/layers", "internal/promtext", "internal/procdebug", "internal/cliflag", "internal/httpserve", "pipeline/...", "prompts/..."}},
		{"protocol", []string{"protocol/..."}},
		{"wire", []string{"wire/..."}},
		{"stages", []string{"stages/...", "sources/...", "sinks/..."}},
		{"codecs", []string{"codec/..."}},
		{"harness core", []string{"harness", "harness/bridge/...", "harness/internal/...", "harness/harnesstest/..."}},
		{"harnesses", []string{"harness/..."}},
		{"harness set", []string{"harness/all/..."}},
		{"services", []string{"serveconfig/...", "upstream/...", "server/...", "calibrate/..."}},
		{"tooling", []string{"scripted/...", "benchmark/...", "loadtest/..."}},
		{"commands", []string{"cmd/...", "bench/...", "e2e/...", "scripts/...", "internal/codecgen/..."}},
	}
}

// Of returns the index in [Order] of the layer of pkg (a path relative to
// the module), or -1 when no layer names it.
func Of(pkg string) int {
	best, bestLen := -1, -1
	for i, l := range Order() {
		for _, p := range l.Packages {
			base, tree := strings.CutSuffix(p, "/...")
			if pkg == base || tree && strings.HasPrefix(pkg, base+"/") {
				if len(base) > bestLen {
					best, bestLen = i, len(base)
				}
			}
		}
	}
	return best
}

// Check returns an error when pkg may not import imp: imp is a package of
// this module in a higher layer than pkg, or either has no layer. Imports
// from outside the module are not checked.
func Check(pkg, imp string) error {
	rel, ok := strings.CutPrefix(imp, Module+"/")
	if !ok {
		if imp != Module {
			return nil
		}
		rel = ""
	}
	from, to := Of(pkg), Of(rel)
	switch {
	case from < 0:
		return fmt.Errorf("layers: package %s has no layer (add it to layers.Order)", pkg)
	case to < 0:
		return fmt.Errorf("layers: package %s imports %s, which has no layer (add it to layers.Order)", pkg, rel)
	case to > from:
		o := Order()
		return fmt.Errorf("layers: %s (layer %q) imports %s of the higher layer %q", pkg, o[from].Name, rel, o[to].Name)
	}
	return nil
}
