package sweagent

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestShellWords(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		err  string
	}{
		{in: "a b  c", want: []string{"a", "b", "c"}},
		{in: "a 'b c' \"d e\"", want: []string{"a", "b c", "d e"}},
		{in: `a'b'"c"d`, want: []string{"abcd"}},
		{in: `x "a \$ \" \\ \n b"`, want: []string{"x", `a $ " \ \n b`}},
		{in: `x a\ b \'`, want: []string{"x", "a b", "'"}},
		{in: "x 'multi\nline'", want: []string{"x", "multi\nline"}},
		{in: "x \\\ny", want: []string{"x", "y"}},
		{in: `x $'a\nb\t\x41\101\'\u00e9'`, want: []string{"x", "a\nb\tAA'é"}},
		{in: "x # a comment\ny", want: []string{"x", "y"}},
		{in: "x a#b", want: []string{"x", "a#b"}},
		{in: "x ''", want: []string{"x", ""}},
		{in: "x $ 5$", want: []string{"x", "$", "5$"}},
		{in: "x 'unterminated", err: "unterminated single quote"},
		{in: `x "unterminated`, err: "unterminated double quote"},
		{in: "x $HOME", err: "expansions"},
		{in: `x "$(id)"`, err: "expansions"},
		{in: "x `id`", err: "command substitution"},
		{in: "x ; y", err: "only one"},
		{in: "x > f", err: "only one"},
		{in: "x && y", err: "only one"},
	}
	for _, c := range cases {
		got, err := shellWords(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("shellWords(%q) error = %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("shellWords(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// shells are the shells the generated commands are run with: bash (what
// `bash -lc` and Codex run) and dash (a plain POSIX sh).
func shells(t *testing.T) []string {
	var out []string
	for _, s := range []string{"bash", "dash"} {
		if p, err := exec.LookPath(s); err == nil {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		t.Skip("no bash or dash")
	}
	return out
}

func runIn(t *testing.T, shell, dir, script string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(shell, "-c", script)
	cmd.Dir = dir
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// The generated commands do what the editor commands mean, on a temporary
// directory, with names holding spaces and quotes.
func TestEditorCommand(t *testing.T) {
	const name = `it's a "file".py`
	orig := "def f():\n    return 1\n\nprint(f())\n"
	cases := []struct {
		name    string
		cmd     string
		file    string // content before, "" for no file
		want    string // content after
		out     string // a substring of stdout
		errText string // a substring of stderr; the command must fail
	}{
		{name: "view a file", cmd: `str_replace_editor view 'it'\''s a "file".py'`, file: orig, want: orig,
			out: "     1\tdef f():\n     2\t    return 1\n     3\t\n     4\tprint(f())\n"},
		{name: "view a range", cmd: `str_replace_editor view "it's a \"file\".py" --view_range 2 3`, file: orig, want: orig,
			out: "     2\t    return 1\n     3\t\n"},
		{name: "view to the end", cmd: `str_replace_editor view "it's a \"file\".py" --view_range 4 -1`, file: orig, want: orig,
			out: "     4\tprint(f())\n"},
		{name: "view a directory", cmd: `str_replace_editor view .`, file: orig, want: orig, out: "./it's a \"file\".py\n"},
		{name: "view a missing file", cmd: `str_replace_editor view nothing.py`, errText: "no such file"},
		{name: "create", cmd: "str_replace_editor create \"it's a \\\"file\\\".py\" --file_text 'x = \"$HOME\"\n'\\''q'\\''\n'",
			want: "x = \"$HOME\"\n'q'\n", out: "Wrote"},
		{name: "create with $'…'", cmd: `str_replace_editor create "it's a \"file\".py" --file_text=$'a\tb\nc'`, want: "a\tb\nc"},
		{name: "create refuses an existing file", cmd: `str_replace_editor create "it's a \"file\".py" --file_text new`, file: orig, want: orig,
			errText: "already exists"},
		{name: "str_replace", cmd: `str_replace_editor str_replace "it's a \"file\".py" --old_str '    return 1' --new_str '    return 2 * [1][0]'`,
			file: orig, want: strings.Replace(orig, "return 1", "return 2 * [1][0]", 1), out: "1 replacement"},
		{name: "str_replace across lines, new_str absent", cmd: "str_replace_editor str_replace \"it's a \\\"file\\\".py\" --old_str $'\\n\\nprint(f())'",
			file: orig, want: "def f():\n    return 1\n"},
		{name: "str_replace not unique", cmd: `str_replace_editor str_replace "it's a \"file\".py" --old_str f --new_str g`, file: orig, want: orig,
			errText: "found"},
		{name: "str_replace missing", cmd: `str_replace_editor str_replace "it's a \"file\".py" --old_str nope --new_str g`, file: orig, want: orig,
			errText: "not found"},
		{name: "insert at the top", cmd: `str_replace_editor insert "it's a \"file\".py" --insert_line 0 --new_str 'import os'`, file: orig,
			want: "import os\n" + orig, out: "Inserted"},
		{name: "insert in the middle, two lines", cmd: `str_replace_editor insert "it's a \"file\".py" --insert_line 2 --new_str $'# a\n# b'`, file: orig,
			want: "def f():\n    return 1\n# a\n# b\n\nprint(f())\n"},
		{name: "insert after the last line", cmd: `str_replace_editor insert "it's a \"file\".py" --insert_line 4 --new_str end`, file: orig,
			want: orig + "end\n"},
		{name: "insert past the end", cmd: `str_replace_editor insert "it's a \"file\".py" --insert_line 9 --new_str x`, file: orig, want: orig,
			errText: "has 4 lines"},
		{name: "undo_edit", cmd: `str_replace_editor undo_edit "it's a \"file\".py"`, file: orig, want: orig, errText: "undo_edit is not available"},
		{name: "unknown command", cmd: `str_replace_editor delete x`, errText: "unknown command"},
		{name: "unknown option", cmd: `str_replace_editor view x --color`, errText: "unknown option"},
		{name: "missing value", cmd: `str_replace_editor create x --file_text`, errText: "needs 1 value"},
		{name: "a second command", cmd: `str_replace_editor view x && rm -rf /`, errText: "only one"},
		{name: "an expansion", cmd: `str_replace_editor create x --file_text "$HOME"`, errText: "expansions"},
		{name: "bad range", cmd: `str_replace_editor view x --view_range 5 2`, errText: "--view_range"},
	}
	for _, shell := range shells(t) {
		for _, c := range cases {
			t.Run(filepath.Base(shell)+"/"+c.name, func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, name)
				if c.file != "" {
					if err := os.WriteFile(path, []byte(c.file), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				stdout, stderr, code := runIn(t, shell, dir, EditorCommand(c.cmd))
				if c.errText != "" {
					if code == 0 || !strings.Contains(stderr, c.errText) {
						t.Errorf("exit %d, stderr %q; want a failure saying %q", code, stderr, c.errText)
					}
				} else if code != 0 {
					t.Fatalf("exit %d, stderr %q", code, stderr)
				}
				if !strings.Contains(stdout, c.out) {
					t.Errorf("stdout %q does not contain %q", stdout, c.out)
				}
				data, err := os.ReadFile(path)
				switch {
				case c.want == "" && err == nil && c.file == "":
					t.Errorf("a file was created: %q", data)
				case c.want != "" && string(data) != c.want:
					t.Errorf("file = %q, %v; want %q", data, err, c.want)
				}
			})
		}
	}
}
