package bridge

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Names that break naive quoting, usable as file names.
var trickyNames = []string{
	"plain.txt",
	"with space.txt",
	"it's \"quoted\".txt",
	"$HOME `x` $(y).txt",
	`back\slash.txt`,
	"new\nline.txt",
	"-dash.txt",
	"a=b.txt",
	"EOF",
	"-",
}

func TestReadCommand(t *testing.T) {
	content := "one\ntwo\n" + tricky // no final newline
	all := []string{"one", "two"}
	all = append(all, strings.Split(tricky, "\n")...)
	numbered := func(from, to int) string {
		var b strings.Builder
		for i := from; i <= to && i <= len(all); i++ {
			b.WriteString(fmt.Sprintf("%6d", i) + "\t" + all[i-1] + "\n")
		}
		return b.String()
	}
	tests := map[string]struct {
		offset, limit int
		want          string
	}{
		"all":            {0, 0, numbered(1, len(all))},
		"from line 3":    {3, 0, numbered(3, len(all))},
		"two from 2":     {2, 2, numbered(2, 3)},
		"first only":     {1, 1, numbered(1, 1)},
		"negative":       {-5, -1, numbered(1, len(all))},
		"past the end":   {100, 5, ""},
		"limit past end": {len(all) - 1, 50, numbered(len(all)-1, len(all))},
	}
	for _, sh := range shells(t) {
		for _, name := range trickyNames {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, name), content, 0o644)
			for tn, tc := range tests {
				out, stderr, code := run(t, sh, dir, ReadCommand(name, tc.offset, tc.limit))
				if code != 0 || out != tc.want {
					t.Errorf("%s: read %q %s: code %d stderr %q\n%s", sh.name, name, tn, code, stderr, cmp.Diff(tc.want, out))
				}
			}
		}
		dir := t.TempDir()
		os.Mkdir(filepath.Join(dir, "d ir"), 0o755)
		for _, tc := range []struct{ path, msg string }{
			{"missing 'x'.txt", "read: missing 'x'.txt: no such file\n"},
			{"d ir", "read: d ir: is a directory\n"},
		} {
			out, stderr, code := run(t, sh, dir, ReadCommand(tc.path, 0, 0))
			if code != 1 || out != "" || stderr != tc.msg {
				t.Errorf("%s: read %q: code %d out %q stderr %q, want 1 and %q", sh.name, tc.path, code, out, stderr, tc.msg)
			}
		}
	}
}

func TestWriteCommand(t *testing.T) {
	contents := map[string]string{
		"tricky":         tricky,
		"empty":          "",
		"newline only":   "\n",
		"final newline":  tricky + "\n",
		"NUL bytes":      "a\x00b\x00\x00c\x00",
		"leading NUL":    "\x00x",
		"only quotes":    "''''",
		"heredoc marker": "cat <<'EOF'\nEOF\nHFEOF\n",
		"utf-8":          "héllo wörld ✓\n",
		"large":          strings.Repeat("line with 'quote' and $var\n", 2000),
	}
	for _, sh := range shells(t) {
		for _, name := range trickyNames {
			for cn, content := range contents {
				dir := t.TempDir()
				path := filepath.Join("new dir", "it's", "$x", name)
				if name == "-" {
					path = name
				}
				out, stderr, code := run(t, sh, dir, WriteCommand(path, content))
				if code != 0 {
					t.Errorf("%s: write %q %s: code %d stderr %q", sh.name, path, cn, code, stderr)
					continue
				}
				if got := readFile(t, filepath.Join(dir, path)); got != content {
					t.Errorf("%s: write %q %s:\n%s", sh.name, path, cn, cmp.Diff(content, got))
				}
				if want := "Wrote " + strconv.Itoa(len(content)) + " bytes to " + path + "\n"; out != want {
					t.Errorf("%s: write %q %s: stdout %q, want %q", sh.name, path, cn, out, want)
				}
			}
		}
		// Overwrites, and an absolute path.
		dir := t.TempDir()
		abs := filepath.Join(dir, "sub", "f.txt")
		writeFile(t, abs, "old content that is longer", 0o600)
		if _, stderr, code := run(t, sh, dir, WriteCommand(abs, "new")); code != 0 || readFile(t, abs) != "new" {
			t.Errorf("%s: overwrite: code %d stderr %q content %q", sh.name, code, stderr, readFile(t, abs))
		}
	}
}

func TestParentDir(t *testing.T) {
	for in, want := range map[string]string{
		"f": "", "/f": "", "a/f": "a", "a/b/f": "a/b", "a//f": "a", "a/f/": "a", "/a/f": "/a", "./f": ".", "": "", "/": "",
		"new\n/f": "new\n",
	} {
		if got := parentDir(in); got != want {
			t.Errorf("parentDir(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEditCommand(t *testing.T) {
	tests := map[string]struct {
		before   string
		old, new string
		all      bool
		after    string // "" with code != 0: unchanged
		code     int
		stdout   string // checked when set
		stderr   string // substring, checked when set
	}{
		"unique":                          {before: "a\nfoo\nb\n", old: "foo", new: "bar", after: "a\nbar\nb\n", stdout: "Edited F: 1 replacement\n"},
		"no final newline kept":           {before: "a\nfoo", old: "foo", new: "bar", after: "a\nbar"},
		"final newline kept":              {before: "foo\n", old: "foo", new: "bar", after: "bar\n"},
		"multi-line old":                  {before: "x\nline one\nline two\ny\n", old: "one\nline", new: "1\n2\n3", after: "x\nline 1\n2\n3 two\ny\n"},
		"old ends with the final newline": {before: "a\nb\n", old: "b\n", new: "c", after: "a\nc"},
		"new adds a final newline":        {before: "a\nb", old: "\nb", new: "\nb\n", after: "a\nb\n"},
		"remove everything":               {before: "only\n", old: "only\n", new: "", after: ""},
		"crlf":                            {before: "a\r\nfoo\r\n", old: "foo\r\n", new: "bar\r\n", after: "a\r\nbar\r\n"},
		"not regex, not sub()": {
			before: "x = a.*[b]$ & \\1 \\\\ %s\n", old: "a.*[b]$ & \\1", new: "&& \\0 $HOME `id` '\"' \\\\",
			after: "x = && \\0 $HOME `id` '\"' \\\\ \\\\ %s\n",
		},
		"EOF lines":             {before: "EOF\nEOF2\n", old: "EOF\n", new: "'EOF'\nEOF\n", after: "'EOF'\nEOF\nEOF2\n"},
		"tricky file":           {before: tricky, old: "$HOME", new: "${HOME}", after: strings.Replace(tricky, "$HOME", "${HOME}", 1)},
		"replace all":           {before: "a foo b foo\nfoo\n", old: "foo", new: "x", all: true, after: "a x b x\nx\n", stdout: "Edited F: 3 replacements\n"},
		"replace all multi":     {before: "ab\nab\nab", old: "b\na", new: "-", all: true, after: "a--b"},
		"non-overlapping":       {before: "aaa\n", old: "aa", new: "b", after: "ba\n"},
		"utf-8":                 {before: "héllo ✓\n", old: "é", new: "e", after: "hello ✓\n"},
		"not found":             {before: "abc\n", old: "abd", new: "x", code: 1, stderr: "edit: F: old string not found"},
		"twice":                 {before: "foo foo\n", old: "foo", new: "x", code: 1, stderr: "edit: F: old string found 2 times"},
		"twice across lines":    {before: "foo\nfoo\n", old: "foo", new: "x", code: 1, stderr: "found 2 times"},
		"same strings":          {before: "foo\n", old: "foo", new: "foo", code: 1, stderr: "old and new strings are the same"},
		"NUL in new":            {before: "foo\n", old: "foo", new: "a\x00b", code: 1, stderr: "NUL"},
		"empty file":            {before: "", old: "x", new: "y", code: 1, stderr: "not found"},
		"empty old, empty file": {before: "", old: "", new: "new\ncontent", after: "new\ncontent"},
		"empty old, content":    {before: "x", old: "", new: "y", code: 1, stderr: "old string is empty and the file is not"},
	}
	for _, sh := range shells(t) {
		for _, name := range trickyNames {
			for tn, tc := range tests {
				dir := t.TempDir()
				path := filepath.Join(dir, name)
				writeFile(t, path, tc.before, 0o751)
				out, stderr, code := run(t, sh, dir, EditCommand(name, tc.old, tc.new, tc.all))
				want := tc.after
				if tc.code != 0 {
					want = tc.before
				}
				if code != tc.code {
					t.Errorf("%s: edit %q %s: code %d, want %d (stderr %q)", sh.name, name, tn, code, tc.code, stderr)
				}
				if got := readFile(t, path); got != want {
					t.Errorf("%s: edit %q %s:\n%s", sh.name, name, tn, cmp.Diff(want, got))
				}
				if tc.stdout != "" && out != strings.ReplaceAll(tc.stdout, "F", name) {
					t.Errorf("%s: edit %q %s: stdout %q", sh.name, name, tn, out)
				}
				if tc.stderr != "" && !strings.Contains(stderr, strings.ReplaceAll(tc.stderr, "F", name)) {
					t.Errorf("%s: edit %q %s: stderr %q, want %q in it", sh.name, name, tn, stderr, tc.stderr)
				}
				if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o751 {
					t.Errorf("%s: edit %q %s: mode changed: %v %v", sh.name, name, tn, st.Mode(), err)
				}
			}
		}
		// A missing file: a clear message; an empty old creates it.
		dir := t.TempDir()
		_, stderr, code := run(t, sh, dir, EditCommand("no such.txt", "a", "b", false))
		if code != 1 || stderr != "edit: no such.txt: no such file\n" {
			t.Errorf("%s: edit missing: code %d stderr %q", sh.name, code, stderr)
		}
		if _, stderr, code := run(t, sh, dir, EditCommand("new/it's.txt", "", "made\n", false)); code != 0 || readFile(t, filepath.Join(dir, "new/it's.txt")) != "made\n" {
			t.Errorf("%s: edit create: code %d stderr %q", sh.name, code, stderr)
		}
	}
}

func TestEditCommandLargeFile(t *testing.T) {
	var b strings.Builder
	for i := range 20000 {
		b.WriteString("line " + strconv.Itoa(i) + " with some text\n")
	}
	before := b.String()
	for _, sh := range shells(t) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "big.txt"), before, 0o644)
		_, stderr, code := run(t, sh, dir, EditCommand("big.txt", "some", "other", true))
		if code != 0 {
			t.Fatalf("%s: code %d stderr %q", sh.name, code, stderr)
		}
		if got, want := readFile(t, filepath.Join(dir, "big.txt")), strings.ReplaceAll(before, "some", "other"); got != want {
			t.Errorf("%s: large replace-all differs", sh.name)
		}
		_, _, code = run(t, sh, dir, EditCommand("big.txt", "line 19999 with other text\n", "end\n", false))
		if got := readFile(t, filepath.Join(dir, "big.txt")); code != 0 || !strings.HasSuffix(got, "line 19998 with other text\nend\n") {
			t.Errorf("%s: multi-line edit at the end: code %d, tail %q", sh.name, code, got[len(got)-60:])
		}
	}
}

func globTree(t *testing.T) string {
	dir := t.TempDir()
	for _, f := range []string{
		"a.go", "b.txt", "x.md", "sub dir/c.go", "sub dir/deep/d.go", "sub dir/deep/er/e.md",
		"it's $x/f.go", "br[1]/g.go", ".git/h.go", "sub dir/.git/i.go", "subx.go", "deep/j.go",
	} {
		writeFile(t, filepath.Join(dir, f), "x\n", 0o644)
	}
	return dir
}

func TestGlobCommand(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          []string
	}{
		{"*.go", "", []string{"./a.go", "./br[1]/g.go", "./deep/j.go", "./it's $x/f.go", "./sub dir/c.go", "./sub dir/deep/d.go", "./subx.go"}},
		{"**/*.go", "", []string{"./a.go", "./br[1]/g.go", "./deep/j.go", "./it's $x/f.go", "./sub dir/c.go", "./sub dir/deep/d.go", "./subx.go"}},
		{"*.{md,txt}", ".", []string{"./b.txt", "./sub dir/deep/er/e.md", "./x.md"}},
		{"sub dir/*.go", "", []string{"./sub dir/c.go"}},
		{"sub dir/**/*.go", "", []string{"./sub dir/c.go", "./sub dir/deep/d.go"}},
		{"sub dir/**", "", []string{"./sub dir/c.go", "./sub dir/deep/d.go", "./sub dir/deep/er/e.md"}},
		{"**/deep/*.go", "", []string{"./deep/j.go", "./sub dir/deep/d.go"}},
		{"*/*.go", "", []string{"./br[1]/g.go", "./deep/j.go", "./it's $x/f.go", "./sub dir/c.go"}},
		{"./*.go", "", []string{"./a.go", "./subx.go"}},
		{"a.go", "", []string{"./a.go"}},
		{"sub?dir/c.go", "", []string{"./sub dir/c.go"}},
		{"*.go", "sub dir", []string{"sub dir/c.go", "sub dir/deep/d.go"}},
		{"deep/*", "sub dir/", []string{"sub dir/deep/d.go"}},
		{"./*.go", "br[1]", []string{"br[1]/g.go"}},
		{"*.go", "it's $x", []string{"it's $x/f.go"}},
		{"*.rs", "", nil},
		{"{sub dir,deep}/*.go", "", []string{"./deep/j.go", "./sub dir/c.go"}},
		{"nosuchdir/*.go", "", nil},
	}
	for _, sh := range shells(t) {
		dir := globTree(t)
		for _, tc := range tests {
			out, stderr, code := run(t, sh, dir, GlobCommand(tc.pattern, tc.path))
			if code != 0 || stderr != "" {
				t.Errorf("%s: glob %q in %q: code %d stderr %q", sh.name, tc.pattern, tc.path, code, stderr)
			}
			if diff := cmp.Diff(tc.want, lines(out)); diff != "" {
				t.Errorf("%s: glob %q in %q (-want +got):\n%s", sh.name, tc.pattern, tc.path, diff)
			}
		}
		// An absolute pattern ignores path.
		out, _, code := run(t, sh, dir, GlobCommand(filepath.Join(dir, "sub dir", "*.go"), "elsewhere"))
		if want := []string{filepath.Join(dir, "sub dir", "c.go")}; code != 0 || !slices.Equal(lines(out), want) {
			t.Errorf("%s: absolute glob: code %d %q", sh.name, code, out)
		}
		_, stderr, code := run(t, sh, dir, GlobCommand("*.go", "missing dir"))
		if code != 1 || stderr != "glob: missing dir: no such directory\n" {
			t.Errorf("%s: glob in a missing dir: code %d stderr %q", sh.name, code, stderr)
		}
	}
}

func TestExpandBraces(t *testing.T) {
	for in, want := range map[string][]string{
		"*.go":             {"*.go"},
		"*.{ts,tsx}":       {"*.ts", "*.tsx"},
		"{a,b}/{c,d}":      {"a/c", "a/d", "b/c", "b/d"},
		"x{a,{b,c}}y":      {"xay", "xby", "xcy"},
		"{single}":         {"{single}"},
		"{,x}":             {"", "x"},
		`\{a,b}`:           {`\{a,b}`},
		"{unclosed,":       {"{unclosed,"},
		"}{a,b}":           {"}a", "}b"},
		"{a,b}{c}":         {"a{c}", "b{c}"},
		"src/**/*.{js,ts}": {"src/**/*.js", "src/**/*.ts"},
	} {
		if got := expandBraces(in); !slices.Equal(got, want) {
			t.Errorf("expandBraces(%q) = %q, want %q", in, got, want)
		}
	}
	if got := expandBraces(strings.Repeat("{a,b}", 10)); len(got) != maxBraceAlternatives {
		t.Errorf("expansion not capped: %d", len(got))
	}
}

func TestGrepCommand(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.go"), "package a\nfunc foo() {}\n", 0o644)
	writeFile(t, filepath.Join(dir, "sub dir", "b.txt"), "fooo\nbar\n-x flag\n$HOME 'q'\n", 0o644)
	writeFile(t, filepath.Join(dir, "sub dir", "c.md"), "baz\n", 0o644)
	writeFile(t, filepath.Join(dir, ".git", "d.go"), "foo\n", 0o644)
	writeFile(t, filepath.Join(dir, "bin.dat"), "foo\x00\x01\x02", 0o644)
	tests := []struct {
		pattern, path, include string
		want                   []string
		code                   int
	}{
		{"fo+", "", "", []string{"./a.go:2:func foo() {}", "./sub dir/b.txt:1:fooo"}, 0},
		{"fo+|ba[rz]", "sub dir", "", []string{"sub dir/b.txt:1:fooo", "sub dir/b.txt:2:bar", "sub dir/c.md:1:baz"}, 0},
		{"fo+|ba[rz]", ".", "*.{go,md}", []string{"./a.go:2:func foo() {}", "./sub dir/c.md:1:baz"}, 0},
		{"-x", "", "*.txt", []string{"./sub dir/b.txt:3:-x flag"}, 0},
		{`\$HOME 'q'`, "sub dir/b.txt", "", []string{"4:$HOME 'q'"}, 0},
		{"nothing here", "", "", nil, 1},
		{"x", "missing", "", nil, 2},
	}
	for _, sh := range shells(t) {
		for _, tc := range tests {
			out, stderr, code := run(t, sh, dir, GrepCommand(tc.pattern, tc.path, tc.include))
			got := lines(out)
			slices.Sort(got)
			if code != tc.code || (tc.code == 0 && stderr != "") {
				t.Errorf("%s: grep %q: code %d stderr %q, want %d", sh.name, tc.pattern, code, stderr, tc.code)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: grep %q %q %q (-want +got):\n%s", sh.name, tc.pattern, tc.path, tc.include, diff)
			}
		}
	}
}
