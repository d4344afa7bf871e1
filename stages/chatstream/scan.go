package chatstream

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth is the deepest nesting of arrays and objects the scanner accepts,
// the same limit as encoding/json.
const maxDepth = 10000

// scanner is a zero-copy JSON reader over one complete document. Decoded
// strings alias data when they need no unescaping and no UTF-8 repair;
// otherwise they are written to scratch. Neither is copied, so every slice it
// returns is valid only until the next reset.
//
// Methods return false after the first syntax error, which is kept in err
// and errAt; later calls keep failing, so callers can simply propagate false.
type scanner struct {
	data    []byte
	pos     int
	depth   int
	scratch []byte
	err     string // empty while the input is valid so far
	errAt   int    // offset in data of the first error
}

func (s *scanner) reset(data []byte) {
	s.data, s.pos, s.depth = data, 0, 0
	s.scratch = s.scratch[:0]
	s.err, s.errAt = "", 0
}

// fail records the first syntax error and returns false.
func (s *scanner) fail(msg string) bool {
	if s.err == "" {
		s.err, s.errAt = msg, s.pos
	}
	return false
}

// failChar reports an unexpected byte (or end of input) at s.pos.
func (s *scanner) failChar(context string) bool {
	if s.pos >= len(s.data) {
		return s.fail("unexpected end of input")
	}
	return s.fail("invalid character " + quoteChar(s.data[s.pos]) + " " + context)
}

func quoteChar(c byte) string {
	switch {
	case c == '\'':
		return `'\''`
	case c == '"':
		return `'"'`
	case c >= 0x20 && c < 0x7f:
		return "'" + string(rune(c)) + "'"
	}
	return "byte 0x" + strconv.FormatUint(uint64(c), 16)
}

// ws skips JSON whitespace.
func (s *scanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at end of input. The common
// case (no whitespace: compact JSON) is inlined.
func (s *scanner) peek() byte {
	if s.pos < len(s.data) {
		if c := s.data[s.pos]; c > ' ' {
			return c
		}
	}
	return s.peekSlow()
}

func (s *scanner) peekSlow() byte {
	s.ws()
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

// strStop marks the bytes that end the fast path of a string scan: the
// closing quote, a backslash, and control characters (invalid in JSON).
var strStop = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'] = true
	t['\\'] = true
	return t
}()

// SWAR constants: a byte value repeated in all 8 lanes of a uint64.
const (
	lanes01 = 0x0101010101010101
	lanes20 = 0x2020202020202020
	lanes22 = 0x2222222222222222
	lanes5C = 0x5C5C5C5C5C5C5C5C
	lanes80 = 0x8080808080808080
)

// scanPlain returns the index of the first byte at or after i that ends a
// string's plain run (a quote, a backslash or a control character), or
// len(d), and the OR of the bytes it passed (to tell whether any was
// non-ASCII; bytes after the stop may be included, which only costs a
// UTF-8 check). It tests eight bytes at a time.
func scanPlain(d []byte, i int) (int, byte) {
	var acc uint64
	for ; i+8 <= len(d); i += 8 {
		x := binary.LittleEndian.Uint64(d[i:])
		q, b := x^lanes22, x^lanes5C
		// A lane is flagged when it is zero in q or b, or below 0x20 in x;
		// borrows only flag lanes above a real match, so the lowest flag
		// is exact.
		stop := ((q - lanes01) &^ q) | ((b - lanes01) &^ b) | ((x - lanes20) &^ x)
		stop &= lanes80
		acc |= x
		if stop != 0 {
			i += bits.TrailingZeros64(stop) >> 3
			return i, foldHigh(acc)
		}
	}
	var hi byte
	for ; i < len(d) && !strStop[d[i]]; i++ {
		hi |= d[i]
	}
	return i, hi | foldHigh(acc)
}

// foldHigh returns 0x80 when any lane of x has its high bit set.
func foldHigh(x uint64) byte {
	if x&lanes80 != 0 {
		return 0x80
	}
	return 0
}

// str decodes the string at s.pos (which holds '"') the way encoding/json
// does: escapes resolved, \uXXXX surrogate pairs combined, lone surrogates
// and invalid UTF-8 bytes replaced by U+FFFD.
func (s *scanner) str() ([]byte, bool) {
	d := s.data
	start := s.pos + 1
	i, hi := scanPlain(d, start)
	if i >= len(d) {
		s.pos = i
		return nil, s.fail("unexpected end of input")
	}
	if d[i] == '"' {
		v := d[start:i:i]
		if hi >= utf8.RuneSelf && !utf8.Valid(v) {
			return s.strSlow(start)
		}
		s.pos = i + 1
		return v, true
	}
	if d[i] == '\\' {
		return s.strSlow(start)
	}
	s.pos = i
	return nil, s.fail("invalid character " + quoteChar(d[i]) + " in string literal")
}

// strSlow decodes the string whose contents start at start into scratch.
func (s *scanner) strSlow(start int) ([]byte, bool) {
	d := s.data
	out := len(s.scratch)
	b := s.scratch
	i := start
	for {
		if i >= len(d) {
			s.pos = i
			s.scratch = b
			return nil, s.fail("unexpected end of input")
		}
		c := d[i]
		switch {
		case c == '"':
			s.pos = i + 1
			s.scratch = b
			return b[out:len(b):len(b)], true
		case c == '\\':
			if i+1 >= len(d) {
				s.pos = i + 1
				s.scratch = b
				return nil, s.fail("unexpected end of input")
			}
			switch e := d[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
				i += 2
			case 'b':
				b = append(b, '\b')
				i += 2
			case 'f':
				b = append(b, '\f')
				i += 2
			case 'n':
				b = append(b, '\n')
				i += 2
			case 'r':
				b = append(b, '\r')
				i += 2
			case 't':
				b = append(b, '\t')
				i += 2
			case 'u':
				r, ok := hex4(d, i+2)
				if !ok {
					s.pos = i + 2
					for k := 0; k < 4 && s.pos < len(d) && isHex(d[s.pos]); k++ {
						s.pos++
					}
					s.scratch = b
					return nil, s.failChar("in \\u hexadecimal character escape")
				}
				i += 6
				if utf16.IsSurrogate(r) {
					// A valid pair is consumed whole; anything else turns the
					// first half into U+FFFD and leaves what follows alone.
					if i+1 < len(d) && d[i] == '\\' && d[i+1] == 'u' {
						if r2, ok := hex4(d, i+2); ok {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								b = utf8.AppendRune(b, dec)
								i += 6
								continue
							}
						}
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
			default:
				s.pos = i + 1
				s.scratch = b
				return nil, s.fail("invalid character " + quoteChar(e) + " in string escape code")
			}
		case c < 0x20:
			s.pos = i
			s.scratch = b
			return nil, s.fail("invalid character " + quoteChar(c) + " in string literal")
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, d[i:i+size]...)
			}
			i += size
		}
	}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// hex4 reads the four hex digits at d[i:].
func hex4(d []byte, i int) (rune, bool) {
	if i+4 > len(d) {
		return 0, false
	}
	var r rune
	for _, c := range d[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// skipStr validates the string at s.pos without decoding it.
func (s *scanner) skipStr() bool {
	d := s.data
	i := s.pos + 1
	for {
		i, _ = scanPlain(d, i)
		if i >= len(d) {
			s.pos = i
			return s.fail("unexpected end of input")
		}
		switch c := d[i]; c {
		case '"':
			s.pos = i + 1
			return true
		case '\\':
			if i+1 >= len(d) {
				s.pos = i + 1
				return s.fail("unexpected end of input")
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if _, ok := hex4(d, i+2); !ok {
					s.pos = i + 2
					for k := 0; k < 4 && s.pos < len(d) && isHex(d[s.pos]); k++ {
						s.pos++
					}
					return s.failChar("in \\u hexadecimal character escape")
				}
				i += 6
			default:
				s.pos = i + 1
				return s.fail("invalid character " + quoteChar(d[i+1]) + " in string escape code")
			}
		default:
			s.pos = i
			return s.fail("invalid character " + quoteChar(c) + " in string literal")
		}
	}
}

// num scans the number at s.pos. It returns the literal and whether it is an
// integer (no fraction, no exponent).
func (s *scanner) num() (lit []byte, isInt bool, ok bool) {
	d := s.data
	i := s.pos
	start := i
	if i < len(d) && d[i] == '-' {
		i++
	}
	if i >= len(d) {
		s.pos = i
		return nil, false, s.fail("unexpected end of input")
	}
	switch c := d[i]; {
	case c == '0':
		i++
	case c >= '1' && c <= '9':
		i++
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		s.pos = i
		return nil, false, s.failChar("in numeric literal")
	}
	isInt = true
	if i < len(d) && d[i] == '.' {
		isInt = false
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			s.pos = i
			return nil, false, s.failChar("after decimal point in numeric literal")
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		isInt = false
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			s.pos = i
			return nil, false, s.failChar("in exponent of numeric literal")
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	s.pos = i
	return d[start:i], isInt, true
}

// parseInt converts an integer literal (JSON grammar, so no leading zeros)
// as strconv.ParseInt(lit, 10, 64) would; ok is false when out of range.
func parseInt(lit []byte) (int64, bool) {
	neg := false
	if len(lit) > 0 && lit[0] == '-' {
		neg, lit = true, lit[1:]
	}
	if len(lit) == 0 || len(lit) > 19 { // 19 digits always fit in a uint64
		return 0, false
	}
	var u uint64
	for _, c := range lit {
		u = u*10 + uint64(c-'0')
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

// lit scans the literal word (true, false, null) at s.pos.
func (s *scanner) lit(word string) bool {
	if s.pos+len(word) <= len(s.data) && string(s.data[s.pos:s.pos+len(word)]) == word {
		s.pos += len(word)
		return true
	}
	d := s.data
	for k := 0; k < len(word); k++ {
		if s.pos >= len(d) {
			return s.fail("unexpected end of input")
		}
		if d[s.pos] != word[k] {
			return s.failChar("in literal " + word + " (expecting " + quoteChar(word[k]) + ")")
		}
		s.pos++
	}
	return true
}

// value kinds reported by kind().
const (
	kindNone   = 0
	kindString = '"'
	kindObject = '{'
	kindArray  = '['
	kindNull   = 'n'
	kindTrue   = 't'
	kindFalse  = 'f'
	kindNumber = '0'
)

// kind classifies the value that starts at the next non-space byte.
func (s *scanner) kind() byte {
	switch c := s.peek(); c {
	case '"', '{', '[', 'n', 't', 'f':
		return c
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return kindNumber
	}
	return kindNone
}

// skip validates and skips one value of any kind.
func (s *scanner) skip() bool {
	switch s.kind() {
	case kindString:
		return s.skipStr()
	case kindObject:
		if !s.enter('{') {
			return false
		}
		for first := true; ; first = false {
			_, more, ok := s.rawKey(first)
			if !ok {
				return false
			}
			if !more {
				return true
			}
			if !s.skip() {
				return false
			}
		}
	case kindArray:
		if !s.enter('[') {
			return false
		}
		for first := true; ; first = false {
			more, ok := s.elem(first)
			if !ok {
				return false
			}
			if !more {
				return true
			}
			if !s.skip() {
				return false
			}
		}
	case kindNull:
		return s.lit("null")
	case kindTrue:
		return s.lit("true")
	case kindFalse:
		return s.lit("false")
	case kindNumber:
		_, _, ok := s.num()
		return ok
	}
	return s.failChar("looking for beginning of value")
}

// raw skips one value and returns its bytes.
func (s *scanner) raw() ([]byte, bool) {
	s.ws()
	start := s.pos
	if !s.skip() {
		return nil, false
	}
	return s.data[start:s.pos], true
}

// enter consumes the opening bracket open at s.pos (after whitespace).
func (s *scanner) enter(open byte) bool {
	if s.peek() != open {
		return s.failChar("looking for beginning of value")
	}
	if s.depth >= maxDepth {
		return s.fail("exceeded max depth")
	}
	s.depth++
	s.pos++
	return true
}

// rawKey advances to the next member of the object being read: it consumes
// the ',' or '}' before it, and the key and ':' of the member. more is false
// (and the '}' consumed) when the object ends. The key is decoded only when
// it contains escapes or non-ASCII bytes; otherwise it aliases data.
func (s *scanner) rawKey(first bool) (key []byte, more bool, ok bool) {
	c := s.peek()
	if c == '}' && first {
		s.pos++
		s.depth--
		return nil, false, true
	}
	if !first {
		switch c {
		case '}':
			s.pos++
			s.depth--
			return nil, false, true
		case ',':
			s.pos++
			c = s.peek()
		default:
			return nil, false, s.failChar("after object key:value pair")
		}
	}
	if c != '"' {
		return nil, false, s.failChar("looking for beginning of object key string")
	}
	key, ok = s.str()
	if !ok {
		return nil, false, false
	}
	if s.peek() != ':' {
		return nil, false, s.failChar("after object key")
	}
	s.pos++
	return key, true, true
}

// elem advances to the next element of the array being read, consuming the
// ',' or ']' before it; more is false (and the ']' consumed) at the end.
func (s *scanner) elem(first bool) (more bool, ok bool) {
	c := s.peek()
	if c == ']' {
		if first {
			s.pos++
			s.depth--
			return false, true
		}
		s.pos++
		s.depth--
		return false, true
	}
	if !first {
		if c != ',' {
			return false, s.failChar("after array element")
		}
		s.pos++
		if s.peek() == ']' {
			return false, s.failChar("looking for beginning of value")
		}
	}
	return true, true
}

// end checks that only whitespace follows the top-level value.
func (s *scanner) end() bool {
	if s.peek() != 0 || s.pos < len(s.data) {
		return s.failChar("after top-level value")
	}
	return true
}

// strField reads a string value; a value of another type is skipped and
// reported as absent (ok stays true unless the JSON is invalid).
func (s *scanner) strField() (v []byte, present bool, ok bool) {
	if s.kind() == kindString {
		v, ok = s.str()
		return v, ok, ok
	}
	return nil, false, s.skip()
}

// intField reads an integer value; null, other types, fractions, exponents
// and out-of-range numbers are reported as absent.
func (s *scanner) intField() (v int64, present bool, ok bool) {
	if s.kind() == kindNumber {
		lit, isInt, ok := s.num()
		if !ok {
			return 0, false, false
		}
		if !isInt {
			return 0, false, true
		}
		v, present = parseInt(lit)
		return v, present, true
	}
	return 0, false, s.skip()
}
