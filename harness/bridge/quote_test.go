package bridge

import (
	"slices"
	"testing"
)

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"":             "''",
		"abc":          "abc",
		"a/b-c_d.e:f":  "a/b-c_d.e:f",
		"+@%,":         "+@%,",
		"a b":          "'a b'",
		"it's":         `'it'\''s'`,
		"'":            `''\'''`,
		"$HOME":        "'$HOME'",
		"a=b":          "'a=b'",
		"~":            "'~'",
		"#x":           "'#x'",
		"*":            "'*'",
		"new\nline":    "'new\nline'",
		`back\slash`:   `'back\slash'`,
		"héllo":        "'héllo'",
		"!":            "'!'",
		"\x00":         "'\x00'",
		"`x` $(y) \"z": "'`x` $(y) \"z'",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestJoin(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{nil, ""},
		{[]string{"ls"}, "ls"},
		{[]string{"echo", "a b", "", "it's"}, `echo 'a b' '' 'it'\''s'`},
		{[]string{"A=1", "cmd"}, "'A=1' cmd"},
	} {
		if got := Join(tc.argv); got != tc.want {
			t.Errorf("Join(%q) = %q, want %q", tc.argv, got, tc.want)
		}
	}
}

// TestQuoteRuns checks that the shells read Quote's words back as the
// original strings, in every position.
func TestQuoteRuns(t *testing.T) {
	words := []string{"", "plain", "a b", "it's", "''", "$HOME", "${x:-y}", "$(id)", "`id`", "a=b", "~", "~root", "#c", "*", "?",
		"[a]", "{a,b}", "!", "^", "new\nline", "\t", `back\slash`, `\`, "\\n", "-n", "-e", "--", "héllo", "\xff\xfe", "%s", ";", "&", "|", "<", ">"}
	for _, sh := range shells(t) {
		dir := t.TempDir()
		// Each word as the command's argument, and as an assignment's value.
		script := "printf '%s\\0' " + Join(words)
		out, stderr, code := run(t, sh, dir, script)
		if code != 0 {
			t.Fatalf("%s: %s: code %d %s", sh.name, script, code, stderr)
		}
		got := splitNUL(out)
		if !slices.Equal(got, words) {
			t.Errorf("%s: words differ:\n got %q\nwant %q", sh.name, got, words)
		}
		for _, w := range words {
			out, _, _ := run(t, sh, dir, "V="+Quote(w)+"; printf '%s' \"$V\"")
			if out != w {
				t.Errorf("%s: V=%s gives %q, want %q", sh.name, Quote(w), out, w)
			}
		}
		// A word as the first word of a command is never an assignment.
		if out, _, code := run(t, sh, dir, Quote("a=b")+" 2>/dev/null; echo $?"); out != "127\n" || code != 0 {
			t.Errorf("%s: 'a=b' as a command: %q", sh.name, out)
		}
	}
}

func splitNUL(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != 0 {
			i++
		}
		out = append(out, s[:i])
		if i == len(s) {
			break
		}
		s = s[i+1:]
	}
	return out
}

func TestShellScript(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string
		ok   bool
	}{
		{[]string{"bash", "-lc", "x"}, "x", true},
		{[]string{"/usr/bin/bash", "-c", "x"}, "x", true},
		{[]string{"sh", "-c", "x"}, "x", true},
		{[]string{"zsh", "-lc", ""}, "", true},
		{[]string{"bash", "-c"}, "", false},
		{[]string{"bash", "-c", "x", "y"}, "", false},
		{[]string{"python", "-c", "x"}, "", false},
		{[]string{"bash", "-x", "x"}, "", false},
	} {
		got, ok := shellScript(tc.argv)
		if got != tc.want || ok != tc.ok {
			t.Errorf("shellScript(%q) = %q %v", tc.argv, got, ok)
		}
	}
}
