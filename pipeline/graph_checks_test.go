package pipeline_test

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/harnessflow/harnessflow/pipeline"
)

// Wrap with a nil middleware is ErrNilMiddleware, not an unknown node.
func TestWrapNilMiddleware(t *testing.T) {
	g := wordsGraph(t, 2)
	for name, edit := range map[string]func() (*pipeline.Graph, error){
		"Wrap":    func() (*pipeline.Graph, error) { return g.Wrap("upper", nil) },
		"WrapAll": func() (*pipeline.Graph, error) { return g.WrapAll(nil) },
	} {
		_, err := edit()
		if !errors.Is(err, pipeline.ErrNilMiddleware) || errors.Is(err, pipeline.ErrUnknownNode) {
			t.Errorf("%s(nil): %v, want ErrNilMiddleware", name, err)
		}
	}
}

// A node without a factory is ErrNilFactory, not a bad name; a factory
// that returns no stage, or panics, fails the run with an error naming the
// node instead of crashing it.
func TestNilFactory(t *testing.T) {
	for name, n := range map[string]pipeline.Node{
		"NewNode(nil)":   pipeline.NewNode[int, int]("x", nil),
		"StageNode(nil)": pipeline.StageNode[int, int]("x", nil),
		"zero Node":      pipeline.Node{}.Renamed("x"),
	} {
		_, err := pipeline.New("g", n)
		if !errors.Is(err, pipeline.ErrNilFactory) || errors.Is(err, pipeline.ErrBadName) {
			t.Errorf("%s: %v, want ErrNilFactory", name, err)
		}
	}
	if _, err := pipeline.New("g", pipeline.StageNode("", pipeline.Map(func(v int) int { return v }))); !errors.Is(err, pipeline.ErrBadName) {
		t.Errorf("empty name: %v, want ErrBadName", err)
	}
	for name, factory := range map[string]func() pipeline.Stage[int, int]{
		"returns nil": func() pipeline.Stage[int, int] { return nil },
		"panics":      func() pipeline.Stage[int, int] { panic("no stage today") },
	} {
		g := pipeline.Must(pipeline.New("g", pipeline.NewNode("x", factory)))
		for _, m := range modes {
			_, err := runCollect[int, int](t, g, []int{1}, pipeline.WithMode(m))
			var se *pipeline.StageError
			var pe *pipeline.PanicError
			if !errors.As(err, &se) || se.Stage != "x" || se.Lifecycle != pipeline.LifecycleOpen || (name == "returns nil") == errors.As(err, &pe) {
				t.Errorf("%s, %s: %v", name, m, err)
			}
		}
	}
}

// Every doc comment of the package that starts with an identifier names
// something the declaration declares (a comment that names what does not
// exist, like the former "ErrSourceStage and ErrSinkStage ...", fails).
func TestDocCommentsNameTheirDeclarations(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			var doc *ast.CommentGroup
			var names []string
			switch d := decl.(type) {
			case *ast.FuncDecl:
				doc, names = d.Doc, []string{d.Name.Name}
			case *ast.GenDecl:
				doc = d.Doc
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						names = append(names, s.Name.Name)
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names = append(names, n.Name)
						}
					}
				}
			}
			if doc == nil {
				continue
			}
			first, _, _ := strings.Cut(strings.TrimSpace(doc.Text()), " ")
			if !looksLikeIdent(first) {
				continue
			}
			found := false
			for _, n := range names {
				found = found || n == first
			}
			if !found {
				t.Errorf("%s: doc comment starts with %s, which the declaration of %v does not declare", fset.Position(decl.Pos()), first, names)
			}
		}
	}
}

// looksLikeIdent reports whether w is an exported Go name in CamelCase with
// at least two capitals (ErrBadName, NewNode), not a plain word (Sentinel).
func looksLikeIdent(w string) bool {
	caps := 0
	for i, r := range w {
		switch {
		case unicode.IsUpper(r):
			caps++
		case i == 0, !unicode.IsLetter(r) && !unicode.IsDigit(r):
			return false
		}
	}
	return caps >= 2
}

// The deprecated Format still renders the three formats.
func TestFormatShim(t *testing.T) {
	g := wordsGraph(t, 2)
	for format, want := range map[string]string{"text": g.Describe(), "": g.Describe(), "mermaid": g.Mermaid(), "dot": g.DOT()} {
		if got, err := g.Format(format); err != nil || got != want {
			t.Errorf("Format(%q) = %q, %v", format, got, err)
		}
	}
	if _, err := g.Format("png"); err == nil {
		t.Error("unknown format accepted")
	}
}
