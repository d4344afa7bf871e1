package redact

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// DefaultPatternMaxLen bounds a user pattern whose regular expression can
// match arbitrarily long text (a + or * in it) and that sets no MaxLen.
const DefaultPatternMaxLen = 256

// MaxPatternMaxLen is the largest MaxLen a pattern may have: it is also the
// most text a stream holds back for that pattern.
const MaxPatternMaxLen = 4096

// Pattern is a user-supplied secret pattern.
//
// A match is what Go's regexp finds starting at the leftmost possible
// position, but it is looked for within MaxLen+1 bytes of its start: text
// further on is not seen by the pattern (so `\S+` stops after MaxLen+1
// bytes, and `$` there means the end of that window).
type Pattern struct {
	// Kind names the secret in the marker [REDACTED:<Kind>]; "" is "custom".
	// It should be a short identifier ([a-z0-9_]).
	Kind string
	// Regexp is the pattern in Go (RE2) syntax. It must not match the empty
	// string.
	Regexp string
	// MaxLen bounds a match in bytes. 0 derives it from the expression when
	// that is bounded (`[A-Z]{8}-\d{4}` → 13), and otherwise uses
	// DefaultPatternMaxLen. A positive MaxLen smaller than the derived bound
	// caps it. At most MaxPatternMaxLen.
	MaxLen int
}

// regexDetector is a compiled user Pattern.
type regexDetector struct {
	kindName string
	maxLen   int
	bare     *regexp.Regexp // \A(?:R)
	ctx      *regexp.Regexp // \A(?s:.)(R): the first rune is left context
	prog     *syntax.Prog
	first    [256]bool
}

func compilePattern(p Pattern) (*regexDetector, error) {
	kind := p.Kind
	if kind == "" {
		kind = KindCustom
	}
	fail := func(err error) (*regexDetector, error) {
		return nil, fmt.Errorf("redact: pattern %q: %w", p.Regexp, err)
	}
	re, err := regexp.Compile(p.Regexp)
	if err != nil {
		return fail(err)
	}
	if re.MatchString("") {
		return fail(errors.New("matches the empty string"))
	}
	ast, err := syntax.Parse(p.Regexp, syntax.Perl)
	if err != nil {
		return fail(err)
	}
	ast = ast.Simplify()
	prog, err := syntax.Compile(ast)
	if err != nil {
		return fail(err)
	}
	n := maxBytes(ast)
	switch {
	case p.MaxLen < 0 || p.MaxLen > MaxPatternMaxLen:
		return fail(fmt.Errorf("MaxLen %d out of range 1..%d", p.MaxLen, MaxPatternMaxLen))
	case p.MaxLen > 0 && (n < 0 || p.MaxLen < n):
		n = p.MaxLen
	case n < 0:
		n = DefaultPatternMaxLen
	case n > MaxPatternMaxLen:
		n = MaxPatternMaxLen
	}
	d := &regexDetector{
		kindName: kind,
		maxLen:   n,
		bare:     regexp.MustCompile(`\A(?:` + p.Regexp + `)`),
		ctx:      regexp.MustCompile(`\A(?s:.)(` + p.Regexp + `)`),
		prog:     prog,
	}
	d.computeFirsts()
	return d, nil
}

// maxBytes is the longest UTF-8 text ast can match, or -1 when unbounded.
func maxBytes(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		n := 0
		for _, r := range re.Rune {
			n += maxRuneLen(r, re.Flags&syntax.FoldCase != 0)
		}
		return n
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return 0
		}
		return utf8.RuneLen(min(re.Rune[len(re.Rune)-1], unicode.MaxRune))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return utf8.UTFMax
	case syntax.OpCapture, syntax.OpQuest:
		return maxBytes(re.Sub[0])
	case syntax.OpConcat, syntax.OpAlternate:
		n := 0
		for _, s := range re.Sub {
			m := maxBytes(s)
			if m < 0 {
				return -1
			}
			if re.Op == syntax.OpConcat {
				n += m
			} else {
				n = max(n, m)
			}
		}
		return n
	case syntax.OpStar, syntax.OpPlus:
		if maxBytes(re.Sub[0]) == 0 {
			return 0
		}
		return -1
	case syntax.OpRepeat:
		m := maxBytes(re.Sub[0])
		if m == 0 {
			return 0
		}
		if re.Max < 0 || m < 0 {
			return -1
		}
		return re.Max * m
	}
	return 0 // empty match, assertions, no match
}

func maxRuneLen(r rune, fold bool) int {
	n := utf8.RuneLen(r)
	if fold {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			n = max(n, utf8.RuneLen(f))
		}
	}
	return max(n, 1)
}

func (d *regexDetector) kind() string          { return d.kindName }
func (d *regexDetector) maxHold() int          { return d.maxLen }
func (d *regexDetector) firsts(set *[256]bool) { markFirsts(set, &d.first) }
func markFirsts(dst, src *[256]bool) {
	for i, ok := range src {
		if ok {
			dst[i] = true
		}
	}
}

// computeFirsts marks the bytes a match can start with: the first bytes of
// the runes the program can consume first. Assertions are taken as true,
// which can only add bytes.
func (d *regexDetector) computeFirsts() {
	var rs []uint32
	seen := make([]bool, len(d.prog.Inst))
	d.closure(uint32(d.prog.Start), seen, &rs, nil)
	for _, pc := range rs {
		in := &d.prog.Inst[pc]
		switch in.Op {
		case syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			for b := range 256 {
				if b < 0x80 || b >= 0xC0 {
					d.first[b] = true
				}
			}
			if in.Op == syntax.InstRuneAnyNotNL {
				d.first['\n'] = false
			}
		case syntax.InstRune1, syntax.InstRune:
			if len(in.Rune) == 1 {
				r := in.Rune[0]
				d.markRune(r)
				if syntax.Flags(in.Arg)&syntax.FoldCase != 0 {
					for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
						d.markRune(f)
					}
				}
				continue
			}
			for i := 0; i+1 < len(in.Rune); i += 2 {
				lo, hi := in.Rune[i], in.Rune[i+1]
				for r := lo; r <= min(hi, 0x7F); r++ {
					d.first[r] = true
				}
				if hi >= 0x80 {
					for b := 0xC0; b < 256; b++ {
						d.first[b] = true
					}
				}
			}
		}
	}
}

func (d *regexDetector) markRune(r rune) {
	if r < utf8.RuneSelf {
		d.first[r] = true
		return
	}
	var buf [utf8.UTFMax]byte
	utf8.EncodeRune(buf[:], r)
	d.first[buf[0]] = true
}

// closure adds to *rs the rune-consuming instructions reachable from pc
// without consuming input. It reports (through *matched) whether a match
// instruction is reachable.
func (d *regexDetector) closure(pc uint32, seen []bool, rs *[]uint32, matched *bool) {
	for {
		if seen[pc] {
			return
		}
		seen[pc] = true
		in := &d.prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			d.closure(in.Arg, seen, rs, matched)
			pc = in.Out
		case syntax.InstCapture, syntax.InstNop, syntax.InstEmptyWidth:
			pc = in.Out
		case syntax.InstMatch:
			if matched != nil {
				*matched = true
			}
			return
		case syntax.InstFail:
			return
		default:
			*rs = append(*rs, pc)
			return
		}
	}
}

func (d *regexDetector) step(in *syntax.Inst, r rune) bool {
	switch in.Op {
	case syntax.InstRuneAny:
		return true
	case syntax.InstRuneAnyNotNL:
		return r != '\n'
	}
	return in.MatchRune(r)
}

// settle runs the program (assertions taken as true: a superset of the real
// matches) over s. It reports whether any match is possible at all given
// the text seen, and pos, the offset at which no thread can go on (-1 if
// threads are still alive at the end of s).
func (d *regexDetector) settle(s string) (possible bool, pos int) {
	seen := make([]bool, len(d.prog.Inst))
	var cur, next []uint32
	matched := false
	d.closure(uint32(d.prog.Start), seen, &cur, &matched)
	i := 0
	for {
		if len(cur) == 0 {
			return matched, i
		}
		if i >= len(s) || !utf8.FullRuneInString(s[i:]) {
			return true, -1 // the text (or its last rune) goes on
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		clear(seen)
		next = next[:0]
		for _, pc := range cur {
			in := &d.prog.Inst[pc]
			if d.step(in, r) {
				d.closure(in.Out, seen, &next, &matched)
			}
		}
		cur, next = next, cur
		i += size
	}
}

func (d *regexDetector) scan(s string, prev rune, final bool) result {
	w := s[:min(len(s), d.maxLen+1)]
	possible, pos := d.settle(w)
	if !possible {
		return result{}
	}
	// The outcome is known once no thread can read on and the byte after
	// the stop (which assertions may look at) is present; or once the whole
	// window is present; or at the end of the text.
	decided := final || len(s) > d.maxLen || (pos >= 0 && pos < len(w))
	if !decided {
		return result{v: need}
	}
	var end int
	if prev == noPrev {
		loc := d.bare.FindStringIndex(w)
		if loc == nil {
			return result{}
		}
		end = loc[1]
	} else {
		ctx := string(prev)
		loc := d.ctx.FindStringSubmatchIndex(ctx + w)
		if loc == nil {
			return result{}
		}
		end = loc[3] - len(ctx)
	}
	if end <= 0 {
		return result{}
	}
	return result{v: match, n: end}
}
