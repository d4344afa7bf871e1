package layers

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		pkg, imp string
		ok       bool
	}{
		{"protocol", Module + "/internal/jsonx", true},
		{"stages/request", Module + "/wire/anthropic", true},
		{"stages/request", Module + "/stages/anthropicstream", true}, // same layer
		{"harness", Module + "/codec", true},
		{"codec", Module + "/stages/request", true},
		{"codec", Module + "/harness", false},
		{"server", Module + "/upstream", true},
		{"harness/sweagent", Module + "/harness", true},
		{"harness/harnesstest", Module + "/stages/streamtest", true},
		{"server", Module + "/harness/native", true},
		{"cmd/harnessflow", Module + "/harness/all", true},
		{"stages/request", "encoding/json", true},
		{"stages/request", Module + "/harness", false},
		{"stages/streamtest", Module + "/harness", false},
		{"wire/chat", Module + "/protocol", true},
		{"protocol", Module + "/wire/chat", false},
		{"internal/jsonx", Module + "/protocol", false},
		{"harness", Module + "/harness/sweagent", false},
		{"harness/harnesstest", Module + "/harness/all", false},
		{"harness/sweagent", Module + "/server", false},
		{"server", Module + "/cmd/harnessflow", false},
		{"nosuch", Module + "/protocol", false},
		{"protocol", Module + "/nosuch", false},
	}
	for _, tt := range tests {
		err := Check(tt.pkg, tt.imp)
		if (err == nil) != tt.ok {
			t.Errorf("Check(%s, %s) = %v, want ok=%v", tt.pkg, tt.imp, err, tt.ok)
		}
	}
}

// TestRepository checks every import of every non-test Go file of the
// repository against the layer order. Test files may reach up (an
// external test package runs a lower package together with higher ones).
func TestRepository(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	imports := map[string]map[string]bool{} // package → imports
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		if imports[pkg] == nil {
			imports[pkg] = map[string]bool{}
		}
		for _, is := range f.Imports {
			p, err := strconv.Unquote(is.Path.Value)
			if err != nil {
				return err
			}
			imports[pkg][p] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(imports) < 20 {
		t.Fatalf("found %d packages under %s; the walk is broken", len(imports), root)
	}
	pkgs := make([]string, 0, len(imports))
	for p := range imports {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		if Of(p) < 0 {
			t.Errorf("package %s has no layer (add it to layers.Order)", p)
			continue
		}
		for imp := range imports[p] {
			if err := Check(p, imp); err != nil {
				t.Error(err)
			}
		}
	}
}
