package bridge

import (
	"fmt"
	"strconv"
	"strings"
)

// The commands below are POSIX sh (they run under bash and dash) and use
// only coreutils, grep, find and a POSIX awk (mawk, gawk, busybox and BWK
// awk all do). Every user value is quoted with Quote. Each checks its input
// first and fails with a message on stderr and exit status 1; the commands
// end with exit where they fail, so they are meant to be the whole script of
// a shell (as exec_command and bash -lc run them).

// fail returns a command that prints "tool: msg" on stderr and exits 1.
func fail(msg string) string {
	return "printf '%s\\n' " + Quote(msg) + " >&2; exit 1"
}

// requireFile returns a check that path exists and is not a directory.
func requireFile(tool, path string) string {
	p := Quote(path)
	return "if [ ! -e " + p + " ]; then " + fail(tool+": "+path+": no such file") +
		"; elif [ -d " + p + " ]; then " + fail(tool+": "+path+": is a directory") + "; fi; "
}

// ReadCommand returns a command that prints the lines of path numbered like
// cat -n ("%6d\t" and the line): from line offset (1-based; 0 or less means
// the first line), at most limit lines (0 or less means all). A last line
// without a newline is printed with one. Bytes are printed as they are (a
// binary file prints garbage).
func ReadCommand(path string, offset, limit int) string {
	start := max(offset, 1)
	n := max(limit, 0)
	return requireFile("read", path) +
		"LC_ALL=C awk -v s=" + strconv.Itoa(start) + " -v n=" + strconv.Itoa(n) +
		` 'NR < s { next } n > 0 && NR >= s + n { exit } { printf "%6d\t%s\n", NR, $0 }' < ` + Quote(path)
}

// WriteCommand returns a command that creates path's parent directories and
// writes content to path, exactly (any bytes, NUL included), replacing what
// was there, then prints "Wrote N bytes to PATH". The content is a quoted
// printf argument, never a heredoc, so no line of it can end the input.
func WriteCommand(path, content string) string {
	var b strings.Builder
	if dir := parentDir(path); dir != "" {
		b.WriteString("mkdir -p -- " + Quote(dir) + " && ")
	}
	parts := strings.Split(content, "\x00")
	if len(parts) == 1 {
		b.WriteString("printf '%s' " + Quote(content))
	} else {
		b.WriteString("{ ")
		for i, p := range parts {
			if i > 0 {
				b.WriteString(`printf '\000'; `)
			}
			if p != "" {
				b.WriteString("printf '%s' " + Quote(p) + "; ")
			}
		}
		b.WriteString("}")
	}
	b.WriteString(" > " + Quote(path) + " && printf '%s\\n' " + Quote(fmt.Sprintf("Wrote %d bytes to %s", len(content), path)))
	return b.String()
}

// parentDir returns the directory part of a POSIX path as dirname(1) does,
// or "" when it is the working directory or the root (nothing to create).
func parentDir(path string) string {
	p := strings.TrimRight(path, "/")
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ""
	}
	return strings.TrimRight(p[:i], "/")
}

// editAwk is the program of EditCommand. It reads the file as lines, then
// at the end: when old spans lines it joins them (with the file's final
// newline) into one string, else it works line by line; it counts the
// non-overlapping occurrences of old with index(), fails when there are
// none or (without replace-all) more than one, replaces them with substr()
// pieces, and writes the result over the file (which it has read whole).
// Strings are joined pairwise so that large files stay linear-logarithmic.
// Values come from ENVIRON, which awk does not escape-process.
const editAwk = `function fail(msg) { printf "%s\n", msg | "cat 1>&2"; close("cat 1>&2"); exit 1 }
function join(a, n, sep,    i, m) {
	if (n < 1) return ""
	while (n > 1) {
		m = 0
		for (i = 1; i <= n; i += 2) { m++; a[m] = (i < n) ? a[i] sep a[i + 1] : a[i] }
		n = m
	}
	return a[1]
}
function count(s,    c, i) {
	c = 0
	while ((i = index(s, old)) > 0) { c++; s = substr(s, i + lo) }
	return c
}
function repl(s,    p, n, i) {
	n = 0
	while ((i = index(s, old)) > 0) { p[++n] = substr(s, 1, i - 1); p[++n] = new; s = substr(s, i + lo) }
	p[++n] = s
	return join(p, n, "")
}
BEGIN { old = ENVIRON["HFB_OLD"]; new = ENVIRON["HFB_NEW"]; path = ENVIRON["HFB_PATH"]; name = ENVIRON["HFB_NAME"]; lo = length(old) }
{ line[NR] = $0 }
END {
	n = NR
	nl = (NR > 0 && ENVIRON["HFB_NL"] + 0 > 0)
	if (index(old, "\n") > 0) {
		buf = join(line, n, "\n")
		if (nl) buf = buf "\n"
		line[1] = buf; n = 1; nl = 0
	}
	total = 0
	for (i = 1; i <= n; i++) total += count(line[i])
	if (total == 0) fail(ENVIRON["HFB_TOOL"] ": " name ": old string not found")
	if (total > 1 && ENVIRON["HFB_ALL"] != "1") fail(ENVIRON["HFB_TOOL"] ": " name ": old string found " total " times; add context to make it unique, or replace all")
	for (i = 1; i <= n; i++) if (index(line[i], old) > 0) line[i] = repl(line[i])
	out = join(line, n, "\n")
	if (nl) out = out "\n"
	printf "%s", out > path
	close(path)
	printf "Edited %s: %d replacement%s\n", name, total, (total == 1 ? "" : "s")
}`

// EditCommand returns a command that replaces old with new in path as exact
// strings (no regular expressions, no escapes): it fails, changing nothing,
// when old does not occur or, unless replaceAll, occurs more than once;
// occurrences are counted without overlap, as strings.Count does. The file
// keeps its final newline, or lack of one, and its inode (it is rewritten in
// place, not atomically). An empty old writes new as the file when the file
// is missing or empty, and fails otherwise. old equal to new fails, as the
// native tools do. NUL bytes cannot be in old or new (they travel in the
// environment); the command then fails.
func EditCommand(path, old, new string, replaceAll bool) string {
	const tool = "edit"
	switch {
	case old == "":
		return "if [ -s " + Quote(path) + " ]; then " + fail(tool+": "+path+": old string is empty and the file is not") + "; fi; " +
			WriteCommand(path, new)
	case old == new:
		return fail(tool + ": " + path + ": old and new strings are the same")
	case strings.ContainsRune(old, 0) || strings.ContainsRune(new, 0):
		return fail(tool + ": " + path + ": old and new strings cannot contain NUL bytes")
	}
	awkPath := path
	if awkPath == "-" { // awk writes "-" to stdout
		awkPath = "./-"
	}
	all := "0"
	if replaceAll {
		all = "1"
	}
	return requireFile(tool, path) +
		"HFB_NL=$(tail -c 1 < " + Quote(path) + " | wc -l) HFB_OLD=" + Quote(old) + " HFB_NEW=" + Quote(new) +
		" HFB_ALL=" + all + " HFB_PATH=" + Quote(awkPath) + " HFB_NAME=" + Quote(path) + " HFB_TOOL=" + tool +
		" LC_ALL=C awk " + Quote(editAwk) + " < " + Quote(path)
}

// GlobCommand returns a command that lists the regular files under path
// (default ".") that match pattern, sorted bytewise, one per line, as find
// prints them (path/...); .git directories are skipped. Braces expand first
// ("*.{go,md}"). A pattern without '/' matches file names at any depth
// ("*.go" finds every Go file). A pattern with '/' is matched against the
// path below the start: a "**" segment stands for any number of
// directories (zero included), and the search starts at the pattern's
// leading literal directories. It is matched with find -path, where '*'
// also matches '/': this is exact for patterns without "**" (the depth is
// pinned) and the last segment must always match the file name, but in a
// pattern with "**" another '*' may also cross directories
// ("a/**/b/*.go" lists a/x/b/c/d.go too). An absolute pattern ignores path.
func GlobCommand(pattern, path string) string {
	base := startPoint(path)
	roots := map[string][]string{} // root -> find tests
	var order []string
	add := func(root, test string) {
		if _, ok := roots[root]; !ok {
			order = append(order, root)
		}
		roots[root] = append(roots[root], test)
	}
	relative := false
	for _, p := range expandBraces(pattern) {
		if !strings.Contains(p, "/") {
			relative = true
			add(base, "-name "+Quote(strings.ReplaceAll(p, "**", "*")))
			continue
		}
		root, rest := globRoot(p, base)
		if !strings.HasPrefix(p, "/") {
			relative = true
		}
		for _, alt := range starAlternatives(rest) {
			add(root, pathTest(root, rest, alt))
		}
	}
	var b strings.Builder
	if relative {
		b.WriteString("[ -d " + Quote(base) + " ] || { " + fail("glob: "+base+": no such directory") + "; }; ")
	}
	b.WriteString("{ ")
	for _, root := range order {
		r := Quote(root)
		b.WriteString("if [ -d " + r + " ]; then find " + r + " -name .git -prune -o -type f \\( " +
			strings.Join(roots[root], " -o ") + " \\) -print; fi; ")
	}
	b.WriteString("} | LC_ALL=C sort -u")
	return b.String()
}

// startPoint returns path as a find start point: "." for "", no trailing
// slashes, and "./" before a name find would take for an expression.
func startPoint(path string) string {
	if path == "" {
		return "."
	}
	if p := strings.TrimRight(path, "/"); p != "" {
		path = p
	} else {
		return "/"
	}
	if path[0] == '-' || path[0] == '!' || path[0] == '(' {
		path = "./" + path
	}
	return path
}

func isMeta(seg string) bool { return strings.ContainsAny(seg, `*?[\`) }

// globRoot splits a pattern with '/' into the directory to start find in
// (base, or / for an absolute pattern, joined with the leading literal
// segments but never the last one) and the remaining segments.
func globRoot(p, base string) (string, []string) {
	root := base
	if strings.HasPrefix(p, "/") {
		root = "/"
	}
	var segs []string
	for _, s := range strings.Split(p, "/") {
		if s != "" && s != "." {
			segs = append(segs, s)
		}
	}
	for len(segs) > 1 && !isMeta(segs[0]) {
		root = joinPath(root, segs[0])
		segs = segs[1:]
	}
	if len(segs) == 0 { // "/" or "./": nothing below
		segs = []string{"*"}
	}
	return root, segs
}

func joinPath(dir, name string) string {
	if strings.HasSuffix(dir, "/") {
		return dir + name
	}
	return dir + "/" + name
}

// starAlternative is one way to read the "**" segments of a pattern: each
// dropped (zero directories) or kept as a '*' that crosses directories.
type starAlternative struct {
	segs  []string
	exact bool // no crossing '*' left: the depth is len(segs)
}

// starAlternatives expands the "**" segments of segs (at most 4 get the
// zero-directory reading; beyond that they only cross).
func starAlternatives(segs []string) []starAlternative {
	alts := []starAlternative{{exact: true}}
	stars := 0
	for i, s := range segs {
		if s != "**" {
			s = strings.ReplaceAll(s, "**", "*")
			for k := range alts {
				alts[k].segs = append(alts[k].segs, s)
			}
			continue
		}
		last := i == len(segs)-1
		stars++
		var next []starAlternative
		for _, a := range alts {
			if !last && stars <= 4 { // zero directories
				next = append(next, starAlternative{segs: clone(a.segs), exact: a.exact})
			}
			next = append(next, starAlternative{segs: append(clone(a.segs), "*"), exact: false})
		}
		alts = next
	}
	return alts
}

func clone(s []string) []string { return append([]string(nil), s...) }

// pathTest returns the find test of one alternative under root.
func pathTest(root string, orig []string, a starAlternative) string {
	r := escapeGlob(root)
	t := "-path " + Quote(joinPath(r, strings.Join(a.segs, "/")))
	if a.exact {
		t += " ! -path " + Quote(r+strings.Repeat("/*", len(a.segs)+1))
	}
	if last := orig[len(orig)-1]; last != "**" {
		t += " -name " + Quote(strings.ReplaceAll(last, "**", "*"))
	}
	return "\\( " + t + " \\)"
}

// escapeGlob escapes the glob characters of a literal for fnmatch.
func escapeGlob(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// maxBraceAlternatives caps brace expansion.
const maxBraceAlternatives = 64

// expandBraces expands {a,b} groups (nested too) as a shell does, up to
// maxBraceAlternatives results. A group without a top-level comma, an
// unbalanced brace or a backslash-escaped brace is kept literally.
func expandBraces(s string) []string {
	open := -1
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open = i
			}
			depth++
		case '}':
			if depth == 0 {
				continue
			}
			depth--
			if depth > 0 {
				continue
			}
			alts := splitTopCommas(s[open+1 : i])
			if len(alts) < 2 {
				open = -1
				continue
			}
			var out []string
			for _, a := range alts {
				for _, tail := range expandBraces(a + s[i+1:]) {
					out = append(out, s[:open]+tail)
					if len(out) >= maxBraceAlternatives {
						return out
					}
				}
			}
			return out
		}
	}
	return []string{s}
}

func splitTopCommas(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// GrepCommand returns a command that searches the files under path
// (default ".") for the extended regular expression pattern:
// grep -rnIE (recursive, line numbers, binary files skipped), .git
// skipped, and one --include per brace alternative of include when it is
// set. include is matched against file names only (as --include does).
// grep's status stays: 0 with matches, 1 without, 2 on errors.
func GrepCommand(pattern, path, include string) string {
	if path == "" {
		path = "."
	}
	var b strings.Builder
	b.WriteString("grep -rnIE --exclude-dir=.git")
	if include != "" {
		for _, inc := range expandBraces(include) {
			b.WriteString(" --include=" + Quote(inc))
		}
	}
	b.WriteString(" -e " + Quote(pattern) + " -- " + Quote(path))
	return b.String()
}

// ReadTailCommand is ReadCommand for an offset counted from the end: the
// lines from the fromEnd-th last line on (fromEnd ≥ 1; 1 is the last
// line), at most limit of them (0 or less: all), numbered by their line
// numbers in the file. It reads the file twice (once to count its lines).
func ReadTailCommand(path string, fromEnd, limit int) string {
	back := max(fromEnd, 1)
	n := max(limit, 0)
	return requireFile("read", path) +
		"t=$(LC_ALL=C awk 'END { print NR }' < " + Quote(path) + "); " +
		"LC_ALL=C awk -v s=\"$((t - " + strconv.Itoa(back) + " + 1))\" -v n=" + strconv.Itoa(n) +
		` 'NR < s { next } n > 0 && NR >= s + n { exit } { printf "%6d\t%s\n", NR, $0 }' < ` + Quote(path)
}

// AppendCommand is WriteCommand appending content to path (created when
// missing) instead of replacing it; it prints "Appended N bytes to PATH".
func AppendCommand(path, content string) string {
	w := WriteCommand(path, content)
	i := strings.LastIndex(w, " > "+Quote(path)+" && printf")
	if i < 0 { // cannot happen: WriteCommand always ends so
		return w
	}
	return w[:i] + " >> " + Quote(path) + " && printf '%s\\n' " + Quote(fmt.Sprintf("Appended %d bytes to %s", len(content), path))
}

// UnavailableCommand returns a command that runs nothing: it prints, on
// stderr, that the native tool cannot run through the client and why, and
// exits 2, so the model gets a tool error with a visible exit code instead
// of a call that silently goes nowhere.
func UnavailableCommand(tool, why string) string {
	return "printf '%s\\n' " + Quote("harnessflow: "+tool+" cannot run here: "+why) + " >&2; exit 2"
}
