package bridge

import "strings"

// Quote returns s as one POSIX shell word that stands for exactly s, whatever
// its bytes: s itself when it is made only of characters no shell treats
// specially (letters, digits and _ - . / : , + @ %), otherwise s in single
// quotes with every ' written as '\”. The result is safe in any position of
// a command, including the first word and the right side of a redirection.
//
// A NUL byte cannot be part of a shell word (argv and environment strings end
// at NUL); Quote leaves it in place and the shell will cut the word there.
// WriteCommand handles NULs in file content on its own.
func Quote(s string) string {
	if s != "" && isSafeWord(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			b.WriteString(`'\''`)
			continue
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('\'')
	return b.String()
}

// isSafeWord reports whether every byte of s is one that no POSIX shell
// expands or splits on, in any position. '=' is left out (a first word
// "a=b" is an assignment), and so are '~' (tilde expansion), '#' (comment),
// '!' and '^' (history, old Bourne pipes), and all glob, quote and control
// characters.
func isSafeWord(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '_', c == '-', c == '.', c == '/', c == ':', c == ',', c == '+', c == '@', c == '%':
		default:
			return false
		}
	}
	return true
}

// Join returns argv as one shell command line: every element quoted with
// Quote and separated by single spaces. Running the result with sh -c runs
// argv[0] with the remaining elements as its arguments, unchanged. An empty
// argv gives "".
func Join(argv []string) string {
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(Quote(a))
	}
	return b.String()
}

// shellScript reports whether argv is a shell running one script
// (sh|bash|zsh|dash -c|-lc SCRIPT, by name or path) and returns the script.
// Extra arguments after the script ($0, $1, ...) mean no.
func shellScript(argv []string) (string, bool) {
	if len(argv) != 3 {
		return "", false
	}
	name := argv[0]
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	switch name {
	case "sh", "bash", "zsh", "dash":
	default:
		return "", false
	}
	switch argv[1] {
	case "-c", "-lc", "-cl":
		return argv[2], true
	}
	return "", false
}
