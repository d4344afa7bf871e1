package redact

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Secret kinds, as they appear in the replacement marker [REDACTED:<kind>].
const (
	KindAPIKey       = "api_key"        // sk-… (OpenAI, Anthropic and compatible keys)
	KindAWSAccessKey = "aws_access_key" // AKIA…/ASIA…/ABIA…/ACCA…/A3T… access key IDs
	KindGitHubToken  = "github_token"   // ghp_/gho_/ghu_/ghs_/ghr_… and github_pat_…
	KindBearerToken  = "bearer_token"   // the token of "Bearer <token>"
	KindPrivateKey   = "private_key"    // PEM "-----BEGIN … PRIVATE KEY-----" blocks
	KindCustom       = "custom"         // a user pattern without a kind of its own
)

// Builtins lists the kinds of the built-in detectors, in the order they are tried.
var Builtins = []string{KindAPIKey, KindAWSAccessKey, KindGitHubToken, KindBearerToken, KindPrivateKey}

// Marker returns the text that replaces a secret of the given kind.
func Marker(kind string) string { return "[REDACTED:" + kind + "]" }

// verdict is what a detector says about a candidate start.
type verdict uint8

const (
	none  verdict = iota // no secret starts here, whatever follows
	need                 // the text is a proper prefix of a possible secret: more input decides
	match                // a secret starts here
)

// result is a detector's answer for one candidate start.
type result struct {
	v    verdict
	keep int       // bytes kept verbatim before the secret ("Bearer ")
	n    int       // bytes matched so far, keep included
	more swallower // non-nil: the secret may go on past n; it eats the rest
}

// noPrev is the left context at the start of a text.
const noPrev rune = -1

// detector finds one kind of secret. Detectors are immutable and shared.
type detector interface {
	kind() string
	// maxHold is the longest text for which scan may answer need: the
	// most a stream ever holds back for this detector.
	maxHold() int
	// firsts marks the bytes a secret of this kind can start with.
	firsts(set *[256]bool)
	// scan judges a candidate secret starting at s[0]. prev is the rune
	// before s[0] (noPrev at the start of the text). final says s is the
	// whole rest of the text.
	scan(s string, prev rune, final bool) result
}

// swallower consumes the continuation of a confirmed secret, possibly
// across many pushes. It is per stream (it may hold state).
type swallower interface {
	// eat consumes the secret's bytes at the start of s and reports how many,
	// and whether the secret may continue after s (only when all of s was
	// eaten and final is false).
	eat(s string, final bool) (n int, more bool)
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isAlnum(c byte) bool  { return isDigit(c) || isLetter(c) }
func isUpperAlnum(c byte) bool {
	return isDigit(c) || (c >= 'A' && c <= 'Z')
}
func isWordByte(c byte) bool { return isAlnum(c) || c == '_' }
func isKeyByte(c byte) bool  { return isAlnum(c) || c == '_' || c == '-' }
func isBearerByte(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' || c == '-'
}

// leftOK reports whether prev lets a secret start: prev must not be a byte
// of class, nor a non-ASCII letter or digit (so "task-…" or "αsk-…" never
// start an sk- key).
func leftOK(prev rune, class func(byte) bool) bool {
	switch {
	case prev == noPrev:
		return true
	case prev < utf8.RuneSelf:
		return !class(byte(prev))
	default:
		return !unicode.IsLetter(prev) && !unicode.IsDigit(prev)
	}
}

// literal checks that s starts with lit. It returns need when s is a proper
// prefix of lit (and more input could follow), none on a mismatch, match when
// all of lit is present.
func literal(s, lit string, final bool, fold bool) verdict {
	n := min(len(s), len(lit))
	if fold {
		if !strings.EqualFold(s[:n], lit[:n]) {
			return none
		}
	} else if s[:n] != lit[:n] {
		return none
	}
	if n < len(lit) {
		if final {
			return none
		}
		return need
	}
	return match
}

// classSwallow eats bytes of a class: the tail of a token that was already
// confirmed as a secret. With pad, '=' padding after the token is eaten too.
type classSwallow struct {
	class func(byte) bool
	pad   bool
	inPad bool
}

func (c *classSwallow) eat(s string, final bool) (int, bool) {
	i := 0
	for ; i < len(s); i++ {
		b := s[i]
		if !c.inPad && c.class(b) {
			continue
		}
		if c.pad && b == '=' {
			c.inPad = true
			continue
		}
		return i, false
	}
	return i, !final
}

// tokenRule is a secret made of a literal prefix and a run of token bytes,
// confirmed once the run is long enough and mixes letters and digits.
type tokenRule struct {
	min      int  // confirm at this many run bytes (if the mix holds)
	give     int  // not a secret if unconfirmed at this many run bytes
	mixed    bool // require a letter and a digit in the run
	class    func(byte) bool
	swallowF func() swallower
}

// run judges the token run in s (after the prefix). off is the prefix length.
func (t *tokenRule) run(s string, off int, final bool) result {
	digit, letter := false, false
	for j := off; j < len(s); j++ {
		c := s[j]
		if !t.class(c) {
			return result{} // the token ended unconfirmed
		}
		if isDigit(c) {
			digit = true
		} else if isLetter(c) {
			letter = true
		}
		n := j - off + 1
		if n >= t.min && (!t.mixed || (digit && letter)) {
			return result{v: match, n: j + 1, more: t.swallowF()}
		}
		if n >= t.give {
			return result{}
		}
	}
	if final {
		return result{}
	}
	return result{v: need}
}

// skKey: "sk-" + [A-Za-z0-9_-]{20,}, with a letter and a digit among the
// first 64 body bytes; not preceded by a key byte.
type skKey struct{ rule tokenRule }

func newSKKey() *skKey {
	return &skKey{rule: tokenRule{min: 20, give: 64, mixed: true, class: isKeyByte,
		swallowF: func() swallower { return &classSwallow{class: isKeyByte} }}}
}

func (*skKey) kind() string          { return KindAPIKey }
func (d *skKey) maxHold() int        { return 3 + d.rule.give - 1 }
func (*skKey) firsts(set *[256]bool) { set['s'] = true }
func (d *skKey) scan(s string, prev rune, final bool) result {
	if !leftOK(prev, isKeyByte) {
		return result{}
	}
	if v := literal(s, "sk-", final, false); v != match {
		return result{v: v}
	}
	return d.rule.run(s, 3, final)
}

// awsKey: (AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9]) + [A-Z0-9]{16}, exactly 20
// bytes between non-alphanumerics.
type awsKey struct{}

func (awsKey) kind() string          { return KindAWSAccessKey }
func (awsKey) maxHold() int          { return 20 }
func (awsKey) firsts(set *[256]bool) { set['A'] = true }

func (awsKey) scan(s string, prev rune, final bool) result {
	if !leftOK(prev, isAlnum) {
		return result{}
	}
	n := min(len(s), 20)
	for j := range n {
		c := s[j]
		ok := false
		switch j {
		case 0:
			ok = c == 'A'
		case 1:
			ok = c == 'K' || c == 'S' || c == 'B' || c == 'C' || c == '3'
		case 2:
			switch s[1] {
			case 'K', 'S', 'B':
				ok = c == 'I'
			case 'C':
				ok = c == 'C'
			case '3':
				ok = c == 'T'
			}
		case 3:
			if s[1] == '3' {
				ok = isUpperAlnum(c)
			} else {
				ok = c == 'A'
			}
		default:
			ok = isUpperAlnum(c)
		}
		if !ok {
			return result{}
		}
	}
	switch {
	case len(s) > 20:
		if isAlnum(s[20]) {
			return result{}
		}
		return result{v: match, n: 20}
	case final:
		if len(s) == 20 {
			return result{v: match, n: 20}
		}
		return result{}
	default:
		return result{v: need}
	}
}

// ghToken: gh[pousr]_ + [A-Za-z0-9]{36,} and github_pat_ + [A-Za-z0-9_]{22,};
// not preceded by a word byte.
type ghToken struct{ classic, pat tokenRule }

func newGHToken() *ghToken {
	return &ghToken{
		classic: tokenRule{min: 36, give: 36, class: isAlnum,
			swallowF: func() swallower { return &classSwallow{class: isAlnum} }},
		pat: tokenRule{min: 22, give: 22, class: isWordByte,
			swallowF: func() swallower { return &classSwallow{class: isWordByte} }},
	}
}

func (*ghToken) kind() string          { return KindGitHubToken }
func (*ghToken) maxHold() int          { return 4 + 35 }
func (*ghToken) firsts(set *[256]bool) { set['g'] = true }

func (d *ghToken) scan(s string, prev rune, final bool) result {
	if !leftOK(prev, isWordByte) {
		return result{}
	}
	// Classic: "gh" + one of pousr + "_".
	classic := result{}
	switch v := literal(s, "gh", final, false); {
	case v == need:
		return result{v: need} // "g" alone: either form may follow
	case v == match:
		switch {
		case len(s) == 2:
			classic = result{v: need}
			if final {
				classic = result{}
			}
		case strings.IndexByte("pousr", s[2]) >= 0:
			if v := literal(s[3:], "_", final, false); v == match {
				classic = d.classic.run(s, 4, final)
			} else {
				classic = result{v: v}
			}
		}
	}
	if classic.v != none {
		return classic
	}
	if v := literal(s, "github_pat_", final, false); v != match {
		return result{v: v}
	}
	return d.pat.run(s, len("github_pat_"), final)
}

// bearer: "Bearer" (any case) + 1–4 spaces or tabs + a token of
// [A-Za-z0-9._~+/-] with a letter and a digit, at least 16 bytes, confirmed
// within its first 64 bytes, then '=' padding. "Bearer " is kept.
type bearer struct{ rule tokenRule }

func newBearer() *bearer {
	return &bearer{rule: tokenRule{min: 16, give: 64, mixed: true, class: isBearerByte,
		swallowF: func() swallower { return &classSwallow{class: isBearerByte, pad: true} }}}
}

const maxBearerSpaces = 4

func (*bearer) kind() string   { return KindBearerToken }
func (d *bearer) maxHold() int { return 6 + maxBearerSpaces + d.rule.give - 1 }
func (*bearer) firsts(set *[256]bool) {
	set['B'], set['b'] = true, true
}

func (d *bearer) scan(s string, prev rune, final bool) result {
	if !leftOK(prev, isAlnum) {
		return result{}
	}
	if v := literal(s, "bearer", final, true); v != match {
		return result{v: v}
	}
	j := 6
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	switch sp := j - 6; {
	case sp > maxBearerSpaces:
		return result{}
	case j == len(s):
		if final {
			return result{}
		}
		return result{v: need}
	case sp == 0:
		return result{}
	}
	r := d.rule.run(s, j, final)
	if r.v == match {
		r.keep = j
	}
	return r
}

// pemKey: "-----BEGIN " + label + "-----" where the label (at most 49 bytes
// of [A-Z0-9 ]) ends in "PRIVATE KEY" or "PRIVATE KEY BLOCK". Everything
// up to the matching END line is the secret.
type pemKey struct{ maxBytes int }

const (
	pemBegin    = "-----BEGIN "
	pemEnd      = "-----END "
	pemMaxLabel = 49
)

func isPEMLabelByte(c byte) bool { return isUpperAlnum(c) || c == ' ' }

func pemLabelOK(label string) bool {
	return strings.HasSuffix(label, "PRIVATE KEY") || strings.HasSuffix(label, "PRIVATE KEY BLOCK")
}

func (*pemKey) kind() string          { return KindPrivateKey }
func (*pemKey) maxHold() int          { return len(pemBegin) + pemMaxLabel + 4 }
func (*pemKey) firsts(set *[256]bool) { set['-'] = true }

func (d *pemKey) scan(s string, _ rune, final bool) result {
	n, v := pemLine(s, pemBegin, final)
	if v != match {
		return result{v: v}
	}
	return result{v: match, n: n, more: &pemSwallow{max: d.maxBytes, used: n}}
}

// pemLine judges "<intro><label>-----" at the start of s.
func pemLine(s, intro string, final bool) (int, verdict) {
	if v := literal(s, intro, final, false); v != match {
		return 0, v
	}
	j := len(intro)
	for j < len(s) && isPEMLabelByte(s[j]) {
		j++
		if j-len(intro) > pemMaxLabel {
			return 0, none
		}
	}
	if j < len(s) && !pemLabelOK(s[len(intro):j]) {
		return 0, none
	}
	if v := literal(s[j:], "-----", final, false); v != match {
		return 0, v
	}
	return j + 5, match
}

// pemSwallow eats a private key block up to and including its END line.
// After max bytes without an END line the block is taken to end at the next
// whitespace (so a token that straddles the cap is not cut in two).
type pemSwallow struct {
	max    int
	used   int
	carry  string // swallowed tail that may begin an END line
	capped bool   // past max: eat up to whitespace
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (p *pemSwallow) eat(s string, final bool) (int, bool) {
	if p.capped {
		for i := 0; i < len(s); i++ {
			if isSpace(s[i]) {
				return i, false
			}
		}
		return len(s), !final
	}
	text := p.carry + s
	base := len(p.carry)
	from := 0
	for {
		k := strings.Index(text[from:], pemEnd)
		if k < 0 {
			break
		}
		k += from
		n, v := pemLine(text[k:], pemEnd, final)
		switch v {
		case match:
			return p.stop(max(0, k+n-base), s, final)
		case need:
			return p.keep(text[k:], s, final)
		}
		from = k + 1
	}
	// No END line begun: keep the longest suffix that may start one.
	tail := ""
	for i := max(0, len(text)-len(pemEnd)+1); i < len(text); i++ {
		if strings.HasPrefix(pemEnd, text[i:]) {
			tail = text[i:]
			break
		}
	}
	return p.keep(tail, s, final)
}

// stop ends the block after consumed bytes of s, unless that passes max.
func (p *pemSwallow) stop(consumed int, s string, final bool) (int, bool) {
	if p.used+consumed > p.max {
		return p.overflow(s, final)
	}
	p.used += consumed
	p.carry = ""
	return consumed, false
}

// keep eats all of s and remembers carry, unless that passes max.
func (p *pemSwallow) keep(carry, s string, final bool) (int, bool) {
	if p.used+len(s) > p.max {
		return p.overflow(s, final)
	}
	p.used += len(s)
	p.carry = strings.Clone(carry)
	return len(s), !final
}

// overflow eats s up to max, then up to the next whitespace.
func (p *pemSwallow) overflow(s string, final bool) (int, bool) {
	n := max(0, p.max-p.used)
	p.used, p.carry, p.capped = p.max, "", true
	m, more := p.eat(s[n:], final)
	return n + m, more
}
