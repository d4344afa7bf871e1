// Package jsonscan is a small validating JSON reader without reflection,
// shared by the stream decoders of stages/anthropicstream and
// stages/responsesstream.
//
// It accepts exactly what encoding/json accepts as a document (RFC 8259
// syntax, nesting depth at most 10000, any bytes >= 0x80 inside strings) and
// decodes strings exactly as encoding/json does: escapes, surrogate pairs,
// lone surrogates and invalid UTF-8 become U+FFFD. Decoded strings alias the
// input when they contain no escape and are valid UTF-8; otherwise they are
// unescaped into a scratch buffer that only grows while one document is read,
// so every slice handed out stays valid until the next Reset.
//
// A Scanner is driven by the caller, which knows the shape it expects: Object
// calls back for every member, and the callback reads the value with Str,
// Int, Raw, Object, … or Skip. Values are returned as Spans, plain offsets
// that hold no pointer, so records of them are cheap to clear and copy.
package jsonscan

import (
	"encoding/binary"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// SyntaxError is a malformed JSON document, or a value that is not of the
// type the caller asked for.
type SyntaxError struct {
	// Offset is the byte offset inside the document where reading stopped.
	Offset int
	// Msg says what is wrong, in encoding/json's words where it has them.
	Msg string
}

// Error returns "invalid JSON at data byte N: MSG".
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at data byte %d: %s", e.Offset, e.Msg)
}

// Scanner reads one JSON document at a time (see Reset). Its zero value is
// ready to use; it keeps its scratch buffer from one document to the next,
// so it is not safe for concurrent use.
type Scanner struct {
	data    []byte
	pos     int
	depth   int
	scratch []byte
}

// Span locates a decoded value without holding a pointer, so that records
// of spans are cheap to clear and copy: src says whether it lies in the
// document (spanData) or in the scratch buffer (spanScratch). The zero Span
// (spanNone) is an absent or null value. Scanner.Bytes resolves it.
type Span struct {
	off, n int
	src    uint8
}

const (
	spanNone uint8 = iota
	spanData
	spanScratch
)

// DataSpan returns the Span of the n document bytes at offset off.
func DataSpan(off, n int) Span { return Span{off: off, n: n, src: spanData} }

// OK reports whether the value was present and not null.
func (sp Span) OK() bool { return sp.src != spanNone }

// Len returns the length of the bytes sp locates (0 for an absent value).
func (sp Span) Len() int { return sp.n }

// Bytes returns the bytes sp locates (nil for an absent value). They stay
// valid until the next Reset; their capacity ends with them, so appending
// to them never writes into the document or the scratch buffer.
func (s *Scanner) Bytes(sp Span) []byte {
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

// Reset starts reading the document data at its first byte. Spans and
// bytes handed out for the previous document become invalid.
func (s *Scanner) Reset(data []byte) {
	s.data, s.pos, s.depth = data, 0, 0
	s.scratch = s.scratch[:0]
	if cap(s.scratch) > 1<<20 {
		s.scratch = nil
	}
}

// ParseObject reads data as one document that must be an object, calling
// member as Object does, and checks that nothing but whitespace follows it.
func (s *Scanner) ParseObject(data []byte, member func(key []byte) error) error {
	s.Reset(data)
	if err := s.Object(member); err != nil {
		return err
	}
	return s.End()
}

// Pos returns the offset in the document of the next byte to read.
func (s *Scanner) Pos() int { return s.pos }

// Seek moves the read position to offset pos (0 <= pos <= len(data)) of the
// document, for callers that matched a prefix of it themselves.
func (s *Scanner) Seek(pos int) { s.pos = pos }

func (s *Scanner) fail(msg string) error { return &SyntaxError{Offset: s.pos, Msg: msg} }

func (s *Scanner) failChar(what string) error {
	if s.pos >= len(s.data) {
		return s.fail("unexpected end of data " + what)
	}
	return s.fail(fmt.Sprintf("invalid character %q %s", s.data[s.pos], what))
}

func (s *Scanner) ws() {
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

// End checks that only whitespace follows the top-level value.
func (s *Scanner) End() error {
	s.ws()
	if s.pos != len(s.data) {
		return s.failChar("after top-level value")
	}
	return nil
}

// Peek skips whitespace and returns the next byte, or 0 at the end.
func (s *Scanner) Peek() byte {
	s.ws()
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

// Null consumes a null literal if one is next and reports whether it did.
func (s *Scanner) Null() (bool, error) {
	if s.Peek() != 'n' {
		return false, nil
	}
	return true, s.literal("null")
}

func (s *Scanner) literal(lit string) error {
	if len(s.data)-s.pos < len(lit) || string(s.data[s.pos:s.pos+len(lit)]) != lit {
		for i := 0; i < len(lit) && s.pos < len(s.data) && s.data[s.pos] == lit[i]; i++ {
			s.pos++
		}
		return s.failChar("in literal " + lit)
	}
	s.pos += len(lit)
	return nil
}

// Object reads an object, calling member for every key (decoded, and valid
// until the next Reset) with the scanner positioned at the value; member
// must consume exactly one value. Its error, if any, ends the read.
func (s *Scanner) Object(member func(key []byte) error) error {
	if s.Peek() != '{' {
		return s.failChar("looking for beginning of object")
	}
	s.pos++
	if s.depth++; s.depth > maxDepth {
		return s.fail("exceeded max depth")
	}
	if s.Peek() == '}' {
		s.pos++
		s.depth--
		return nil
	}
	for {
		if s.Peek() != '"' {
			return s.failChar("looking for beginning of object key string")
		}
		key, err := s.key()
		if err != nil {
			return err
		}
		if s.Peek() != ':' {
			return s.failChar("after object key")
		}
		s.pos++
		s.ws()
		if err := member(key); err != nil {
			return err
		}
		switch s.Peek() {
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

// ObjectOrNull reads an object as Object does, or a null literal; it reports
// whether the value was not null.
func (s *Scanner) ObjectOrNull(member func(key []byte) error) (bool, error) {
	if isNull, err := s.Null(); isNull || err != nil {
		return false, err
	}
	return true, s.Object(member)
}

// Array reads an array, calling elem with the scanner positioned at each
// element; elem must consume exactly one value.
func (s *Scanner) Array(elem func() error) error {
	if s.Peek() != '[' {
		return s.failChar("looking for beginning of array")
	}
	s.pos++
	if s.depth++; s.depth > maxDepth {
		return s.fail("exceeded max depth")
	}
	if s.Peek() == ']' {
		s.pos++
		s.depth--
		return nil
	}
	for {
		s.ws()
		if err := elem(); err != nil {
			return err
		}
		switch s.Peek() {
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

// Skip validates and consumes any value.
func (s *Scanner) Skip() error {
	switch c := s.Peek(); {
	case c == '{':
		return s.Object(func([]byte) error { return s.Skip() })
	case c == '[':
		return s.Array(s.Skip)
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

// Raw consumes any value and returns the span of its text, verbatim.
func (s *Scanner) Raw() (Span, error) {
	s.ws()
	start := s.pos
	if err := s.Skip(); err != nil {
		return Span{}, err
	}
	return Span{off: start, n: s.pos - start, src: spanData}, nil
}

// Number consumes a number and returns the span of its text.
func (s *Scanner) Number() (Span, error) {
	s.ws()
	start := s.pos
	num, err := s.number()
	if err != nil {
		return Span{}, err
	}
	return DataSpan(start, len(num)), nil
}

// number consumes a number and returns its text.
func (s *Scanner) number() ([]byte, error) {
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

// Int reads an integer number (or null, reported as ok=false), failing on
// fractions, exponents, overflow and non-numbers as encoding/json does for
// an int64 field.
func (s *Scanner) Int() (v int64, ok bool, err error) {
	if isNull, err := s.Null(); isNull || err != nil {
		return 0, false, err
	}
	c := s.Peek()
	if c != '-' && (c < '0' || c > '9') {
		if err := s.Skip(); err != nil {
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

// StrOrNull reads a string (decoded) or null (the absent Span); any other
// value is an error.
func (s *Scanner) StrOrNull() (Span, error) {
	switch s.Peek() {
	case 'n':
		return Span{}, s.literal("null")
	case '"':
		return s.Str()
	}
	if err := s.Skip(); err != nil {
		return Span{}, err
	}
	return Span{}, s.fail("expected a string")
}

// key reads a string and returns its decoded bytes.
func (s *Scanner) key() ([]byte, error) {
	sp, err := s.Str()
	return s.Bytes(sp), err
}

// Str reads a string, which must start at the read position (no whitespace
// is skipped), and returns the span of its decoded bytes.
func (s *Scanner) Str() (Span, error) {
	d := s.data
	if s.pos >= len(d) || d[s.pos] != '"' {
		return Span{}, s.failChar("looking for beginning of string")
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
			return Span{off: start, n: i - start, src: spanData}, nil
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
	return Span{}, s.fail("unexpected end of data in string literal")
}

// strSlow decodes the rest of a string from i (start is its first byte) into
// the scratch buffer.
func (s *Scanner) strSlow(start, i int) (Span, error) {
	d := s.data
	from := len(s.scratch)
	out := append(s.scratch, d[start:i]...)
	for i < len(d) {
		c := d[i]
		switch {
		case c == '"':
			s.scratch = out
			s.pos = i + 1
			return Span{off: from, n: len(out) - from, src: spanScratch}, nil
		case c == '\\':
			if i+1 >= len(d) {
				s.pos = i + 1
				return Span{}, s.fail("unexpected end of data in string escape code")
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
					return Span{}, s.failChar("in \\u hexadecimal character escape")
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
				return Span{}, s.failChar("in string escape code")
			}
		case c < 0x20:
			s.pos = i
			return Span{}, s.failChar("in string literal")
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
	return Span{}, s.fail("unexpected end of data in string literal")
}

// skipStr validates a string without decoding it.
func (s *Scanner) skipStr() error {
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

// TrimSpace returns b without leading and trailing JSON whitespace (space,
// tab, newline, carriage return).
func TrimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
