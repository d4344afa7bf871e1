package docscheck

import (
	"bufio"
	"bytes"
	"errors"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// docRef is a reference to a page of docs/ in a Go comment, with an
// optional heading anchor.
var docRef = regexp.MustCompile(`docs/([A-Za-z0-9_.-]+\.md)(#[A-Za-z0-9_-]+)?`)

// staleWords name the project's working notes: shared files kept outside
// the repository, which a reader of the code cannot follow. They are
// written in two halves so that a plain grep for them over the Go sources
// finds real citations only, not this checker.
var staleWords = []string{"SP" + "EC", "DES" + "IGN", "EDGE_" + "CASES", "FOR" + "MATS"}

// staleRef is a citation of the working notes in a comment. The words count
// only on their own: an identifier that merely contains one does not
// match. "EDGE n" is the short form the notes' case numbers were cited in.
var staleRef = regexp.MustCompile(`\b(?:` + strings.Join(staleWords, "|") + `)\b|\bEDGE [0-9]`)

// mdLink is a relative link of a page: (target.md)(#anchor)? or (#anchor).
var mdLink = regexp.MustCompile(`\]\(([A-Za-z0-9_.-]+\.md)?(#[A-Za-z0-9_-]+)?\)`)

// root returns the module root: the nearest directory above the test's
// working directory that holds go.mod.
func root(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = up
	}
}

// Slug returns the GitHub anchor of a heading text: lower case, every
// character that is not a letter, a digit, a space, '-' or '_' removed,
// spaces turned into '-'.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the heading anchors of a Markdown page, with GitHub's
// "-1", "-2" … suffixes for repeated headings. Lines inside fenced code
// blocks are not headings.
func anchors(page []byte) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fence := false
	sc := bufio.NewScanner(bytes.NewReader(page))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
			continue
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimLeft(line, "#")
		if level := len(line) - len(text); level > 6 || !strings.HasPrefix(text, " ") {
			continue
		}
		s := slug(text)
		if n := seen[s]; n > 0 {
			out[s+"-"+itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// pages reads docs/*.md: file name → anchors.
func pages(t *testing.T, dir string) (map[string]map[string]bool, map[string][]byte) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no pages in docs/")
	}
	out := map[string]map[string]bool{}
	text := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = anchors(b)
		text[filepath.Base(f)] = b
	}
	return out, text
}

// comment is one comment of a Go file.
type comment struct {
	pos  token.Position
	text string
}

// comments returns the comments of every Go file under dir (the .git
// directory and directories named testdata left out). Files are tokenized,
// not parsed, so a file that does not compile still has its comments read.
func comments(t *testing.T, dir string) []comment {
	t.Helper()
	var out []comment
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != dir && (name == ".git" || name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		file := fset.AddFile(rel, fset.Base(), len(src))
		var s scanner.Scanner
		s.Init(file, src, func(token.Position, string) {}, scanner.ScanComments)
		for {
			pos, tok, lit := s.Scan()
			if tok == token.EOF {
				break
			}
			if tok == token.COMMENT {
				out = append(out, comment{pos: fset.Position(pos), text: lit})
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

// lineOf returns the position of the i-th byte of a comment.
func lineOf(c comment, i int) token.Position {
	p := c.pos
	if n := strings.Count(c.text[:i], "\n"); n > 0 {
		p.Line += n
		p.Column = i - strings.LastIndexByte(c.text[:i], '\n')
	} else {
		p.Column += i
	}
	return p
}

// Every docs/<page>.md#<anchor> cited in a Go comment names an existing
// page and heading.
func TestCommentReferences(t *testing.T) {
	dir := root(t)
	docs, _ := pages(t, dir)
	refs := 0
	for _, c := range comments(t, dir) {
		for _, m := range docRef.FindAllStringSubmatchIndex(c.text, -1) {
			refs++
			page := c.text[m[2]:m[3]]
			anchors, ok := docs[page]
			if !ok {
				t.Errorf("%s: docs/%s: no such page", lineOf(c, m[0]), page)
				continue
			}
			if m[4] >= 0 {
				if a := c.text[m[4]+1 : m[5]]; !anchors[a] {
					t.Errorf("%s: docs/%s#%s: no such heading (have %s)", lineOf(c, m[0]), page, a, list(anchors))
				}
			}
		}
	}
	if refs == 0 {
		t.Error("no docs/ references found in any Go comment: is the walk reading the module?")
	}
}

// Go comments cite docs/ pages, not the working notes outside the
// repository.
func TestNoStaleReferences(t *testing.T) {
	for _, c := range comments(t, root(t)) {
		for _, m := range staleRef.FindAllStringIndex(c.text, -1) {
			line := c.text[m[0]:]
			if i := strings.IndexByte(line, '\n'); i >= 0 {
				line = line[:i]
			}
			t.Errorf("%s: %q cites a document that is not in the repository; cite docs/<page>.md#<anchor>",
				lineOf(c, m[0]), line)
		}
	}
}

// The pages' relative links resolve: to an existing page, and to one of
// its headings when they name one.
func TestPageLinks(t *testing.T) {
	docs, text := pages(t, root(t))
	for name, b := range text {
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				page, anchor := m[1], strings.TrimPrefix(m[2], "#")
				if page == "" {
					page = name
				}
				anchors, ok := docs[page]
				switch {
				case !ok:
					t.Errorf("docs/%s:%d: link to %s: no such page", name, i+1, page)
				case anchor != "" && !anchors[anchor]:
					t.Errorf("docs/%s:%d: link to %s#%s: no such heading", name, i+1, page, anchor)
				}
			}
		}
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Native chat conversion":           "native-chat-conversion",
		" harnessflow shape":               "harnessflow-shape",
		"The `harness.post` node":          "the-harnesspost-node",
		"Where we follow terminus-2":       "where-we-follow-terminus-2",
		"Tool kinds (ToolKinds)":           "tool-kinds-toolkinds",
		"snake_case & Ünïcode":             "snake_case--ünïcode",
		"Real-world stream edge cases":     "real-world-stream-edge-cases",
		"Follow-ups, title requests, more": "follow-ups-title-requests-more",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
	got := anchors([]byte("# A\n## B\n```\n## Not\n```\n## B\n### b\n#NoSpace\n"))
	for _, want := range []string{"a", "b", "b-1", "b-2"} {
		if !got[want] {
			t.Errorf("anchors: missing %q in %s", want, list(got))
		}
	}
	if got["not"] || got["nospace"] {
		t.Errorf("anchors: %s holds a heading of a code block or one without a space", list(got))
	}
}

// TestStaleRefPattern checks the pattern against the cases of
// testdata/stale_refs.txt: lines under "# match" must match, lines under
// "# no match" must not.
func TestStaleRefPattern(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "stale_refs.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want, cases := true, 0
	for _, line := range strings.Split(string(b), "\n") {
		switch line {
		case "":
			continue
		case "# match":
			want = true
			continue
		case "# no match":
			want = false
			continue
		}
		cases++
		if got := staleRef.MatchString(line); got != want {
			t.Errorf("staleRef.MatchString(%q) = %v, want %v", line, got, want)
		}
	}
	if cases < 10 {
		t.Fatalf("only %d cases in testdata/stale_refs.txt", cases)
	}
}

func list(m map[string]bool) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}
