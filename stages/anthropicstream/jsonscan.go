package anthropicstream

// This file is a small validating JSON reader without reflection. The same
// file lives in stages/responsesstream (keep the two copies identical; only
// the package clause differs).
//
// It accepts exactly what encoding/json accepts as a document (RFC 8259
// syntax, nesting depth at most 10000, any bytes >= 0x80 inside strings) and
// decodes strings exactly as encoding/json does: escapes, surrogate pairs,
// lone surrogates and invalid UTF-8 become U+FFFD. Decoded strings alias the
// input when they contain no escape and are valid UTF-8; otherwise they are
// unescaped into a scratch buffer that only grows while one document is read,
// so every slice handed out stays valid until the next reset.

import (
	"encoding/binary"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// SyntaxError is a malformed JSON document: Offset is the byte offset inside
// the event's data where reading stopped.
type SyntaxError struct {
	Offset int
	Msg    string
}

// Error returns "invalid JSON at data byte N: MSG".
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at data byte %d: %s", e.Offset, e.Msg)
}

type scanner struct {
	data    []byte
	pos     int
	depth   int
	scratch []byte
}

// span locates a decoded value without holding a pointer, so that records
// of spans are cheap to clear and copy: src says whether it lies in the
// document (spanData) or in the scratch buffer (spanScratch); spanNone is an
// absent or null value.
type span struct {
	off, n int
	src    uint8
}

const (
	spanNone uint8 = iota
	spanData
	spanScratch
)

// ok reports whether the value was present and not null.
func (sp span) ok() bool { return sp.src != spanNone }

// bytes returns the bytes sp locates (nil for spanNone). They stay valid
// until the next reset.
func (s *scanner) bytes(sp span) []byte {
	switch sp.src {
	case spanData:
		return s.data[sp.off : sp.off+sp.n : sp.off+sp.n]
	case spanScratch:
		return s.scratch[sp.off : sp.off+sp.n : sp.off+sp.n]
	}
	return nil
}

// strSpecial marks the bytes the string fast path must look at.
var strSpecial = func() (t [256]bool) {
	for i := range 0x20 {
		t[i] = true
	}
	t['"'], t['\\'] = true, true
	for i := 0x80; i < 256; i++ {
		t[i] = true
	}
	return t
}()

func (s *scanner) reset(data []byte) {
	s.data, s.pos, s.depth = data, 0, 0
	s.scratch = s.scratch[:0]
	if cap(s.scratch) > 1<<20 {
		s.scratch = nil
	}
}

func (s *scanner) fail(msg string) error { return &SyntaxError{Offset: s.pos, Msg: msg} }

func (s *scanner) failChar(what string) error {
	if s.pos >= len(s.data) {
		return s.fail("unexpected end of data " + what)
	}
	return s.fail(fmt.Sprintf("invalid character %q %s", s.data[s.pos], what))
}

func (s *scanner) ws() {
	if s.pos < len(s.data) && s.data[s.pos] > ' ' {
		return
	}
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// end checks that only whitespace follows the top-level value.
func (s *scanner) end() error {
	s.ws()
	if s.pos != len(s.data) {
		return s.failChar("after top-level value")
	}
	return nil
}

// peek returns the next non-space byte, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

// null consumes a null literal if one is next.
func (s *scanner) null() (bool, error) {
	if s.peek() != 'n' {
		return false, nil
	}
	return true, s.literal("null")
}

func (s *scanner) literal(lit string) error {
	if len(s.data)-s.pos < len(lit) || string(s.data[s.pos:s.pos+len(lit)]) != lit {
		for i := 0; i < len(lit) && s.pos < len(s.data) && s.data[s.pos] == lit[i]; i++ {
			s.pos++
		}
		return s.failChar("in literal " + lit)
	}
	s.pos += len(lit)
	return nil
}

// object reads an object, calling member for every key with the scanner
// positioned at the value; member must consume exactly one value.
func (s *scanner) object(member func(key []byte) error) error {
	if s.peek() != '{' {
		return s.failChar("looking for beginning of object")
	}
	s.pos++
	if s.depth++; s.depth > maxDepth {
		return s.fail("exceeded max depth")
	}
	if s.peek() == '}' {
		s.pos++
		s.depth--
		return nil
	}
	for {
		if s.peek() != '"' {
			return s.failChar("looking for beginning of object key string")
		}
		key, err := s.str()
		if err != nil {
			return err
		}
		if s.peek() != ':' {
			return s.failChar("after object key")
		}
		s.pos++
		s.ws()
		if err := member(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			s.depth--
			return nil
		default:
			return s.failChar("after object key:value pair")
		}
	}
}

// array reads an array, calling elem with the scanner positioned at each
// element; elem must consume exactly one value.
func (s *scanner) array(elem func() error) error {
	if s.peek() != '[' {
		return s.failChar("looking for beginning of array")
	}
	s.pos++
	if s.depth++; s.depth > maxDepth {
		return s.fail("exceeded max depth")
	}
	if s.peek() == ']' {
		s.pos++
		s.depth--
		return nil
	}
	for {
		s.ws()
		if err := elem(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.pos++
		case ']':
			s.pos++
			s.depth--
			return nil
		default:
			return s.failChar("after array element")
		}
	}
}

// skip validates and consumes any value.
func (s *scanner) skip() error {
	switch c := s.peek(); {
	case c == '{':
		return s.object(func([]byte) error { return s.skip() })
	case c == '[':
		return s.array(s.skip)
	case c == '"':
		return s.skipStr()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		_, err := s.number()
		return err
	}
	return s.failChar("looking for beginning of value")
}

// raw consumes any value and returns the span of its text.
func (s *scanner) raw() (span, error) {
	s.ws()
	start := s.pos
	if err := s.skip(); err != nil {
		return span{}, err
	}
	return span{off: start, n: s.pos - start, src: spanData}, nil
}

// number consumes a number and returns its text.
func (s *scanner) number() ([]byte, error) {
	start := s.pos
	d := s.data
	i := s.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		s.pos = i
		return nil, s.failChar("in numeric literal")
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			s.pos = i
			return nil, s.failChar("after decimal point in numeric literal")
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			s.pos = i
			return nil, s.failChar("in exponent of numeric literal")
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	s.pos = i
	return d[start:i], nil
}

// int reads an integer number (or null, reported as ok=false), failing on
// fractions, exponents, overflow and non-numbers as encoding/json does for
// an integer field.
func (s *scanner) int() (v int64, ok bool, err error) {
	if isNull, err := s.null(); isNull || err != nil {
		return 0, false, err
	}
	c := s.peek()
	if c != '-' && (c < '0' || c > '9') {
		if err := s.skip(); err != nil {
			return 0, false, err
		}
		return 0, false, s.fail("expected an integer")
	}
	start := s.pos
	num, err := s.number()
	if err != nil {
		return 0, false, err
	}
	neg := num[0] == '-'
	if neg {
		num = num[1:]
	}
	const cutoff = (1 << 63) / 10
	var u uint64
	for _, c := range num {
		if c < '0' || c > '9' {
			return 0, false, &SyntaxError{Offset: start, Msg: "number " + string(s.data[start:s.pos]) + " is not an integer"}
		}
		if u > cutoff {
			return 0, false, &SyntaxError{Offset: start, Msg: "integer overflow"}
		}
		u = u*10 + uint64(c-'0')
	}
	if u > 1<<63 || (!neg && u == 1<<63) {
		return 0, false, &SyntaxError{Offset: start, Msg: "integer overflow"}
	}
	if neg {
		return -int64(u), true, nil
	}
	return int64(u), true, nil
}

// strOrNull reads a string (decoded) or null (spanNone).
func (s *scanner) strOrNull() (span, error) {
	switch s.peek() {
	case 'n':
		return span{}, s.literal("null")
	case '"':
		return s.strSpan()
	}
	if err := s.skip(); err != nil {
		return span{}, err
	}
	return span{}, s.fail("expected a string")
}

// str reads a string and returns its decoded bytes.
func (s *scanner) str() ([]byte, error) {
	sp, err := s.strSpan()
	return s.bytes(sp), err
}

// strSpan reads a string and returns the span of its decoded bytes.
func (s *scanner) strSpan() (span, error) {
	d := s.data
	if s.pos >= len(d) || d[s.pos] != '"' {
		return span{}, s.failChar("looking for beginning of string")
	}
	start := s.pos + 1
	i := start
	for i < len(d) {
		// Skip 8 plain bytes at a time: none is '"', '\\', a control
		// character or non-ASCII.
		for i+8 <= len(d) && !special8(binary.LittleEndian.Uint64(d[i:])) {
			i += 8
		}
		if i >= len(d) {
			break
		}
		c := d[i]
		if !strSpecial[c] {
			i++
			continue
		}
		if c == '"' {
			s.pos = i + 1
			return span{off: start, n: i - start, src: spanData}, nil
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(d[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
		}
		return s.strSlow(start, i)
	}
	s.pos = i
	return span{}, s.fail("unexpected end of data in string literal")
}

// strSlow decodes the rest of a string from i (start is its first byte) into
// the scratch buffer.
func (s *scanner) strSlow(start, i int) (span, error) {
	d := s.data
	from := len(s.scratch)
	out := append(s.scratch, d[start:i]...)
	for i < len(d) {
		c := d[i]
		switch {
		case c == '"':
			s.scratch = out
			s.pos = i + 1
			return span{off: from, n: len(out) - from, src: spanScratch}, nil
		case c == '\\':
			if i+1 >= len(d) {
				s.pos = i + 1
				return span{}, s.fail("unexpected end of data in string escape code")
			}
			switch e := d[i+1]; e {
			case '"', '\\', '/':
				out = append(out, e)
				i += 2
			case 'b':
				out = append(out, '\b')
				i += 2
			case 'f':
				out = append(out, '\f')
				i += 2
			case 'n':
				out = append(out, '\n')
				i += 2
			case 'r':
				out = append(out, '\r')
				i += 2
			case 't':
				out = append(out, '\t')
				i += 2
			case 'u':
				r, ok := hex4(d[i+2:])
				if !ok {
					s.pos = i + 2
					for k := 0; k < 4 && s.pos < len(d) && isHex(d[s.pos]); k++ {
						s.pos++
					}
					return span{}, s.failChar("in \\u hexadecimal character escape")
				}
				i += 6
				if utf16.IsSurrogate(r) {
					var r2 rune = -1
					if i+1 < len(d) && d[i] == '\\' && d[i+1] == 'u' {
						if v, ok := hex4(d[i+2:]); ok {
							r2 = v
						}
					}
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						out = utf8.AppendRune(out, dec)
						i += 6
						continue
					}
					r = utf8.RuneError
				}
				out = utf8.AppendRune(out, r)
			default:
				s.pos = i + 1
				return span{}, s.failChar("in string escape code")
			}
		case c < 0x20:
			s.pos = i
			return span{}, s.failChar("in string literal")
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size == 1 {
				out = append(out, "\uFFFD"...)
			} else {
				out = append(out, d[i:i+size]...)
			}
			i += size
		}
	}
	s.scratch = out
	s.pos = i
	return span{}, s.fail("unexpected end of data in string literal")
}

// skipStr validates a string without decoding it.
func (s *scanner) skipStr() error {
	d := s.data
	i := s.pos + 1
	for i < len(d) {
		c := d[i]
		switch {
		case c == '"':
			s.pos = i + 1
			return nil
		case c == '\\':
			if i+1 >= len(d) {
				s.pos = i + 1
				return s.fail("unexpected end of data in string escape code")
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if _, ok := hex4(d[i+2:]); !ok {
					s.pos = i + 2
					for k := 0; k < 4 && s.pos < len(d) && isHex(d[s.pos]); k++ {
						s.pos++
					}
					return s.failChar("in \\u hexadecimal character escape")
				}
				i += 6
			default:
				s.pos = i + 1
				return s.failChar("in string escape code")
			}
		case c < 0x20:
			s.pos = i
			return s.failChar("in string literal")
		default:
			i++
		}
	}
	s.pos = i
	return s.fail("unexpected end of data in string literal")
}

// special8 reports whether any of the 8 bytes packed in x needs attention
// inside a string: '"', '\\', a control character (< 0x20) or a byte >= 0x80.
// (v - n) borrows into bit 7 of a byte exactly when the byte is below n, as
// long as no byte has bit 7 set — and if one has, x itself answers true.
func special8(x uint64) bool {
	const (
		lo = 0x0101010101010101
		hi = 0x8080808080808080
	)
	q := x ^ (lo * '"')
	b := x ^ (lo * '\\')
	return ((x-lo*0x20)|(q-lo)|(b-lo)|x)&hi != 0
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
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
