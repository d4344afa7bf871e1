package sweagent

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/harnessflow/harnessflow/harness/bridge"
)

// EditorCommand returns a POSIX shell command for the client's shell that
// does what one str_replace_editor command of SWE-agent's file editor
// means. The command line is split into words the way a shell would (see
// shellWords), then read like the editor's own argument parser:
//
//	str_replace_editor view PATH [--view_range START END]
//	    a directory: its files and directories two levels deep, hidden ones
//	    left out (find -maxdepth 2); a file: its lines numbered like cat -n
//	    (bridge.ReadCommand), from line START to END (END -1: to the end)
//	str_replace_editor create PATH --file_text TEXT
//	    writes TEXT to a new file, exactly (bridge.WriteCommand); fails
//	    when PATH exists
//	str_replace_editor str_replace PATH --old_str OLD [--new_str NEW]
//	    replaces the one occurrence of OLD by NEW (bridge.EditCommand);
//	    fails when OLD is missing or occurs more than once
//	str_replace_editor insert PATH --insert_line N --new_str TEXT
//	    inserts TEXT as new lines after line N (0: at the top)
//	str_replace_editor undo_edit PATH
//	    fails: nothing keeps an edit history between requests
//
// "--flag=value" works like "--flag value". Limits: no parameter or command
// expansion ($x, $(…), `…`), no globbing or tilde expansion (such words are
// refused, or taken literally for * ? [ ~), and no second command (; & | < >
// are refused): the editor runs alone. Paths may be relative (the editor
// wants absolute ones). Tabs are not expanded before matching, the edited
// file's snippet is not printed, and insert gives a file without a final
// newline one. A command the editor would reject becomes a command that
// prints the reason on stderr and exits 2.
func EditorCommand(cmd string) string {
	script, err := editorScript(cmd)
	if err != nil {
		return usageError(err.Error())
	}
	return script
}

// usageError is a command that prints "str_replace_editor: msg" on stderr
// and exits 2.
func usageError(msg string) string {
	return "printf '%s\\n' " + bridge.Quote("str_replace_editor: "+msg) + " >&2; exit 2"
}

func say(msg string) string { return "printf '%s\\n' " + bridge.Quote(msg) }

// editorArgs are the parsed arguments of one editor command.
type editorArgs struct {
	sub, path string
	flags     map[string][]string
}

// editorFlags are the editor's options and how many values each takes.
var editorFlags = map[string]int{"--file_text": 1, "--old_str": 1, "--new_str": 1, "--insert_line": 1, "--view_range": 2}

func parseEditor(cmd string) (*editorArgs, error) {
	words, err := shellWords(cmd)
	if err != nil {
		return nil, err
	}
	if len(words) == 0 || words[0] != "str_replace_editor" {
		return nil, errors.New("not a str_replace_editor command")
	}
	a := &editorArgs{flags: map[string][]string{}}
	var pos []string
	for i := 1; i < len(words); i++ {
		w := words[i]
		if !strings.HasPrefix(w, "--") {
			pos = append(pos, w)
			continue
		}
		name, value, inline := strings.Cut(w, "=")
		n, known := editorFlags[name]
		if !known {
			return nil, fmt.Errorf("unknown option %s", name)
		}
		var vals []string
		switch {
		case inline && n == 1:
			vals = []string{value}
		case inline:
			return nil, fmt.Errorf("option %s takes %d values", name, n)
		case i+n >= len(words):
			return nil, fmt.Errorf("option %s needs %d value(s)", name, n)
		default:
			vals = words[i+1 : i+1+n]
			i += n
		}
		a.flags[name] = vals
	}
	if len(pos) != 2 {
		return nil, fmt.Errorf("want a command (view, create, str_replace, insert, undo_edit) and a path, got %d word(s): %q", len(pos), pos)
	}
	a.sub, a.path = pos[0], pos[1]
	if a.path == "" {
		return nil, errors.New("empty path")
	}
	return a, nil
}

func (a *editorArgs) flag(name string) (string, bool) {
	v, ok := a.flags[name]
	if !ok {
		return "", false
	}
	return v[0], true
}

func editorScript(cmd string) (string, error) {
	a, err := parseEditor(cmd)
	if err != nil {
		return "", err
	}
	p := bridge.Quote(a.path)
	switch a.sub {
	case "view":
		start, end := 1, -1
		if r, ok := a.flags["--view_range"]; ok {
			if start, err = strconv.Atoi(r[0]); err == nil {
				end, err = strconv.Atoi(r[1])
			}
			switch {
			case err != nil:
				return "", fmt.Errorf("--view_range wants two integers, got %q %q", r[0], r[1])
			case start < 1 || end != -1 && end < start:
				return "", fmt.Errorf("--view_range %d %d: want 1 <= START <= END, or END -1 for the end of the file", start, end)
			}
		}
		limit := 0
		if end != -1 {
			limit = end - start + 1
		}
		return "if [ -d " + p + " ]; then " +
			say("Files and directories in "+a.path+", two levels deep, hidden ones left out:") + "; " +
			"find " + p + " -maxdepth 2 -not -path '*/.*' | LC_ALL=C sort; " +
			"else " + say("Contents of "+a.path+", numbered like cat -n:") + "; " +
			bridge.ReadCommand(a.path, start, limit) + "; fi", nil
	case "create":
		text, ok := a.flag("--file_text")
		if !ok {
			return "", errors.New("create needs --file_text")
		}
		return "if [ -e " + p + " ]; then " + usageError(a.path+" already exists; create does not overwrite files, use str_replace to change it") +
			"; fi; " + bridge.WriteCommand(a.path, text), nil
	case "str_replace":
		old, ok := a.flag("--old_str")
		if !ok || old == "" {
			return "", errors.New("str_replace needs a non-empty --old_str")
		}
		newS, _ := a.flag("--new_str")
		return bridge.EditCommand(a.path, old, newS, false), nil
	case "insert":
		at, ok := a.flag("--insert_line")
		if !ok {
			return "", errors.New("insert needs --insert_line")
		}
		n, err := strconv.Atoi(at)
		if err != nil || n < 0 {
			return "", fmt.Errorf("--insert_line wants a line number (0 or more), got %q", at)
		}
		text, ok := a.flag("--new_str")
		if !ok {
			return "", errors.New("insert needs --new_str")
		}
		return insertCommand(a.path, n, text)
	case "undo_edit":
		return "", errors.New("undo_edit is not available here (no edit history is kept between requests); undo the change with str_replace")
	}
	return "", fmt.Errorf("unknown command %q (want view, create, str_replace, insert or undo_edit)", a.sub)
}

// insertAwk inserts ENVIRON["HFB_NEW"] after line n of the file it reads,
// writing the file again in place at the end (it has read it whole).
const insertAwk = `{ line[NR] = $0 }
END {
	if (n > NR) { printf "str_replace_editor: %s has %d lines, cannot insert after line %d\n", name, NR, n | "cat 1>&2"; close("cat 1>&2"); exit 1 }
	t = ENVIRON["HFB_NEW"]; path = ENVIRON["HFB_PATH"]
	for (i = 1; i <= n; i++) print line[i] > path
	print t > path
	for (i = n + 1; i <= NR; i++) print line[i] > path
	close(path)
	printf "Inserted the text after line %d of %s\n", n, name
}`

// insertCommand inserts text after line n of path (0: at the top). The text
// and the path travel in the environment, so nothing in them is an escape.
func insertCommand(path string, n int, text string) (string, error) {
	if strings.ContainsRune(text, 0) {
		return "", errors.New("--new_str cannot contain NUL bytes")
	}
	awkPath := path
	if awkPath == "-" {
		awkPath = "./-"
	}
	p := bridge.Quote(path)
	return "if [ ! -f " + p + " ]; then " + usageError(path+": no such file") + "; fi; " +
		"HFB_NEW=" + bridge.Quote(text) + " HFB_PATH=" + bridge.Quote(awkPath) +
		" LC_ALL=C awk -v n=" + strconv.Itoa(n) + " -v name=" + bridge.Quote(escapeAwkVar(path)) + " " + bridge.Quote(insertAwk) + " < " + p, nil
}

// escapeAwkVar escapes backslashes for awk -v, which processes escapes.
func escapeAwkVar(s string) string { return strings.ReplaceAll(s, `\`, `\\`) }

// shellWords splits a command line into words as a POSIX shell would,
// without running anything: words are separated by unquoted blanks and
// newlines; '…' is literal; "…" is literal except that \ escapes $ ` " \
// and a newline; $'…' takes C escapes (\n \t \r \\ \' \" \a \b \e \f \v,
// \xHH, \NNN octal); an unquoted \ escapes the next character (\ and a
// newline join lines); an unquoted # at the start of a word starts a
// comment. Expansions ($name, ${…}, $(…), `…`) and operators (; & | < > ( ))
// are errors: the caller cannot run them. Other characters are literal.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
			i++
		case c == '#' && !inWord:
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '\\':
			if i+1 < len(s) && s[i+1] == '\n' {
				i += 2
				continue
			}
			if i+1 < len(s) {
				cur.WriteByte(s[i+1])
				i += 2
			} else {
				i++
			}
			inWord = true
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated single quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 2
			inWord = true
		case c == '"':
			n, err := doubleQuoted(s[i+1:], &cur)
			if err != nil {
				return nil, err
			}
			i += n + 1
			inWord = true
		case c == '$' && i+1 < len(s) && s[i+1] == '\'':
			n, err := ansiQuoted(s[i+2:], &cur)
			if err != nil {
				return nil, err
			}
			i += n + 2
			inWord = true
		case c == '$' && i+1 < len(s) && isExpansionStart(s[i+1]):
			return nil, errors.New("shell expansions ($…) are not supported here; quote the text with single quotes")
		case c == '`':
			return nil, errors.New("command substitution (`…`) is not supported here; quote the text with single quotes")
		case strings.IndexByte(";&|<>()", c) >= 0:
			return nil, fmt.Errorf("%q: only one str_replace_editor command can run at a time; quote the text or send other commands in your next reply", c)
		default:
			cur.WriteByte(c)
			inWord = true
			i++
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// isExpansionStart reports whether $ followed by c starts an expansion.
func isExpansionStart(c byte) bool {
	return c == '{' || c == '(' || c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		strings.IndexByte("@*#?$!-", c) >= 0
}

// doubleQuoted reads the body of "…" from s (after the opening quote) into
// b and returns how many bytes it used, the closing quote included.
func doubleQuoted(s string, b *strings.Builder) (int, error) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return i + 1, nil
		case '\\':
			if i+1 < len(s) {
				switch s[i+1] {
				case '$', '`', '"', '\\':
					b.WriteByte(s[i+1])
					i++
					continue
				case '\n':
					i++
					continue
				}
			}
			b.WriteByte(c)
		case '$':
			if i+1 < len(s) && isExpansionStart(s[i+1]) {
				return 0, errors.New("shell expansions ($…) are not supported here; quote the text with single quotes")
			}
			b.WriteByte(c)
		case '`':
			return 0, errors.New("command substitution (`…`) is not supported here; quote the text with single quotes")
		default:
			b.WriteByte(c)
		}
	}
	return 0, errors.New("unterminated double quote")
}

// ansiQuoted reads the body of $'…' from s (after the opening quote) into b.
func ansiQuoted(s string, b *strings.Builder) (int, error) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\'' {
			return i + 1, nil
		}
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'x':
			v, n := hexValue(s[i+1:], 2)
			if n == 0 {
				b.WriteString(`\x`)
				continue
			}
			b.WriteByte(byte(v))
			i += n
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v, n := octalValue(s[i:], 3)
			b.WriteByte(byte(v))
			i += n - 1
		case 'u', 'U':
			width := 4
			if e == 'U' {
				width = 8
			}
			v, n := hexValue(s[i+1:], width)
			if n == 0 || !utf8.ValidRune(rune(v)) {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			b.WriteRune(rune(v))
			i += n
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return 0, errors.New("unterminated $'…' quote")
}

func hexValue(s string, max int) (v, n int) {
	for n < max && n < len(s) {
		d := strings.IndexByte("0123456789abcdef", lower(s[n]))
		if d < 0 {
			break
		}
		v = v*16 + d
		n++
	}
	return v, n
}

func octalValue(s string, max int) (v, n int) {
	for n < max && n < len(s) && s[n] >= '0' && s[n] <= '7' {
		v = v*8 + int(s[n]-'0')
		n++
	}
	return v, n
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
