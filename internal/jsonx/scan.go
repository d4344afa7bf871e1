package jsonx

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of arrays and objects a Scanner accepts,
// encoding/json's limit.
const MaxDepth = 10000

// SyntaxError is a malformed JSON document, or a value that is not of the
// type a strict read asked for.
type SyntaxError struct {
	// Offset is the byte offset inside the document where reading stopped.
	Offset int
	// Msg says what is wrong, in encoding/json's words where it has them.
	Msg string
}

// Error returns "invalid JSON at data byte N: MSG".
func (e *SyntaxError) Error() string {
	return "invalid JSON at data byte " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// Scanner is a validating JSON reader over one complete document at a time,
// without reflection and, in steady state, without allocating: the stream
// decoders' common reader. It accepts exactly what encoding/json accepts (RFC
// 8259 syntax, nesting depth at most MaxDepth, any bytes >= 0x80 inside
// strings) and decodes strings as encoding/json does: escapes resolved,
// surrogate pairs combined, lone surrogates and invalid UTF-8 bytes replaced
// by U+FFFD. A decoded string aliases the document when it needs no
// unescaping and no repair; otherwise it is written to a scratch buffer that
// only grows while one document is read, so everything handed out stays
// valid until the next Reset.
//
// The caller drives it, knowing the shape it expects: Kind or Peek tell what
// comes next, and each read consumes one value (Str, StrField, Int, Num,
// Raw, Skip, ...). Objects and arrays are walked either with callbacks
// (Object, ObjectOrNull, Array) or, on hot paths and where a walk must start
// in the middle of a document (see Prefix), by hand with EnterObject/Key and
// EnterArray/Elem.
//
// Reads report success as a bool; the caller stops at the first false and
// passes it up (where the scanner stands after a failed read is not
// defined). Err returns the first error of the document. The zero Scanner
// is ready to use; it is not safe for concurrent use.
type Scanner struct {
	data    []byte
	pos     int
	depth   int
	scratch []byte
	err     *SyntaxError // the first error of the document
}

// Kind classifies the value that starts at the next non-space byte: the byte
// that starts it, with all numbers as KindNumber.
type Kind byte

// Value kinds reported by Scanner.Kind.
const (
	KindNone   Kind = 0 // end of data, or a byte no value starts with
	KindString Kind = '"'
	KindObject Kind = '{'
	KindArray  Kind = '['
	KindNull   Kind = 'n'
	KindTrue   Kind = 't'
	KindFalse  Kind = 'f'
	KindNumber Kind = '0'
)

// Name returns the kind as a phrase: "a string", "an object", "null", ...
func (k Kind) Name() string {
	switch k {
	case KindString:
		return "a string"
	case KindObject:
		return "an object"
	case KindArray:
		return "an array"
	case KindNull:
		return "null"
	case KindTrue, KindFalse:
		return "a boolean"
	case KindNumber:
		return "a number"
	}
	return "no JSON value"
}

// Span locates a decoded value without holding a pointer, so that records
// of spans are cheap to clear and copy: it lies in the document or in the
// scratch buffer. The zero Span is an absent or null value. Scanner.Bytes
// resolves it.
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

// maxKeptScratch bounds the scratch buffer kept from one document to the
// next: one huge escaped string must not pin its memory for a whole stream.
const maxKeptScratch = 1 << 20

// Reset starts reading the document data at its first byte and clears the
// error. Spans and bytes handed out for the previous document become invalid.
func (s *Scanner) Reset(data []byte) {
	s.data, s.pos, s.depth, s.err = data, 0, 0, nil
	s.scratch = s.scratch[:0]
	if cap(s.scratch) > maxKeptScratch {
		s.scratch = nil
	}
}

// ParseObject reads data as one document that must be an object, calling
// member as Object does, and checks that nothing but whitespace follows it.
func (s *Scanner) ParseObject(data []byte, member func(key []byte) bool) bool {
	s.Reset(data)
	return s.Object(member) && s.End()
}

// Pos returns the offset in the document of the next byte to read.
func (s *Scanner) Pos() int { return s.pos }

// Seek moves the read position to offset pos (0 <= pos <= len(data)) of the
// document, for callers that matched a prefix of it themselves.
func (s *Scanner) Seek(pos int) { s.pos = pos }

// Depth returns how many objects and arrays are open at the read position.
func (s *Scanner) Depth() int { return s.depth }

// Err returns the first syntax error of the document (a *SyntaxError), or
// nil while it is valid so far.
func (s *Scanner) Err() error {
	if s.err == nil {
		return nil
	}
	return s.err
}

// ErrStopped is what Check returns when a read failed without a syntax
// error: a callback (Object's member, say) stopped it.
var ErrStopped = errors.New("jsonx: the read was stopped by its caller")

// Check turns the result of a read into an error: nil when ok, else the
// document's first error (ErrStopped when there is none).
func (s *Scanner) Check(ok bool) error {
	switch {
	case ok:
		return nil
	case s.err != nil:
		return s.err
	}
	return ErrStopped
}

// NoData reports whether the data of an event carries no document: it is
// empty or whitespace, or the "[DONE]" sentinel some proxies append to any
// stream.
func NoData(data []byte) bool {
	t := TrimSpace(data)
	return len(t) == 0 || string(t) == "[DONE]"
}

// fail records the first error, at the read position, and returns false.
func (s *Scanner) fail(msg string) bool { return s.failAt(s.pos, msg) }

func (s *Scanner) failAt(at int, msg string) bool {
	if s.err == nil {
		s.err = &SyntaxError{Offset: at, Msg: msg}
	}
	return false
}

// failChar reports the unexpected byte at the read position, or the end of
// the data, seen while context ("in string literal", ...).
func (s *Scanner) failChar(context string) bool {
	if s.pos >= len(s.data) {
		return s.fail("unexpected end of data " + context)
	}
	return s.fail("invalid character " + quoteChar(s.data[s.pos]) + " " + context)
}

// quoteChar formats c as encoding/json's errors do.
func quoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	q := strconv.Quote(string(rune(c)))
	return "'" + q[1:len(q)-1] + "'"
}

// ws skips JSON whitespace.
func (s *Scanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// Peek skips whitespace and returns the next byte, or 0 at the end. The
// common case (no whitespace: compact JSON) is inlined.
func (s *Scanner) Peek() byte {
	if s.pos < len(s.data) {
		if c := s.data[s.pos]; c > ' ' {
			return c
		}
	}
	return s.peekSlow()
}

func (s *Scanner) peekSlow() byte {
	s.ws()
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

// Kind skips whitespace and classifies the value that starts there.
func (s *Scanner) Kind() Kind {
	switch c := s.Peek(); c {
	case '"', '{', '[', 'n', 't', 'f':
		return Kind(c)
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return KindNumber
	}
	return KindNone
}

// End checks that only whitespace follows the top-level value.
func (s *Scanner) End() bool {
	if s.Peek() != 0 || s.pos < len(s.data) {
		return s.failChar("after top-level value")
	}
	return true
}

// EnterObject consumes the '{' that opens an object.
func (s *Scanner) EnterObject() bool {
	if s.Peek() == '{' && s.depth < MaxDepth {
		s.pos++
		s.depth++
		return true
	}
	return s.enterFailed('{', "looking for beginning of object")
}

// EnterArray consumes the '[' that opens an array.
func (s *Scanner) EnterArray() bool {
	if s.Peek() == '[' && s.depth < MaxDepth {
		s.pos++
		s.depth++
		return true
	}
	return s.enterFailed('[', "looking for beginning of array")
}

// enterFailed reports why the bracket open could not be entered.
func (s *Scanner) enterFailed(open byte, context string) bool {
	if s.Peek() != open {
		return s.failChar(context)
	}
	s.pos++
	return s.fail("exceeded max depth")
}

// Members walks the members of an object by hand, for the hot paths where
// a callback per member (Object) costs too much:
//
//	m := s.Members()
//	for m.Next() {
//		switch string(m.Key()) { ... } // read the value
//	}
//	return m.Done()
//
// A failed read of a value stops the walk: the next Next returns false and
// Done reports the failure, so the body need not check its reads. A walk
// must start on a document without error so far.
type Members struct {
	s     *Scanner
	key   []byte
	first bool // no member was read yet
}

// Members consumes the '{' that opens an object and starts a walk of its
// members.
func (s *Scanner) Members() Members {
	s.EnterObject()
	return Members{s: s, first: true}
}

// MembersAfter continues the walk of an object whose opening and some
// members were read before (a parse resumed after a Prefix).
func (s *Scanner) MembersAfter() Members { return Members{s: s} }

// Next advances to the next member and reports whether there is one: it
// consumes the ',' or '}' before it, and the key and ':' of the member,
// leaving the scanner at the member's value, which the caller must
// consume. At the end of the object it consumes the '}'.
func (m *Members) Next() bool {
	s := m.s
	if s.err != nil {
		return false
	}
	c := s.Peek()
	if c == '}' {
		s.pos++
		s.depth--
		return false
	}
	if m.first {
		m.first = false
	} else {
		if c != ',' {
			return s.failChar("after object key:value pair")
		}
		s.pos++
		c = s.Peek()
	}
	if c != '"' {
		return s.failChar("looking for beginning of object key string")
	}
	key, ok := s.str()
	if !ok {
		return false
	}
	if s.Peek() != ':' {
		return s.failChar("after object key")
	}
	s.pos++
	m.key = key
	return true
}

// Key returns the decoded key of the current member.
func (m *Members) Key() []byte { return m.key }

// Done reports, once Next returned false, whether the object was read to
// its end without error.
func (m *Members) Done() bool { return m.s.err == nil }

// Elems walks the elements of an array by hand, as Members walks an
// object's members.
type Elems struct {
	s     *Scanner
	first bool
}

// Elems consumes the '[' that opens an array and starts a walk of its
// elements.
func (s *Scanner) Elems() Elems {
	s.EnterArray()
	return Elems{s: s, first: true}
}

// ElemsAfter continues the walk of an array whose opening and some elements
// were read before.
func (s *Scanner) ElemsAfter() Elems { return Elems{s: s} }

// Next advances to the next element and reports whether there is one: it
// consumes the ',' or ']' before it, leaving the scanner at the element,
// which the caller must consume. At the end of the array it consumes the
// ']'.
func (e *Elems) Next() bool {
	s := e.s
	if s.err != nil {
		return false
	}
	c := s.Peek()
	if c == ']' {
		s.pos++
		s.depth--
		return false
	}
	if e.first {
		e.first = false
	} else {
		if c != ',' {
			return s.failChar("after array element")
		}
		s.pos++
	}
	return true
}

// Done reports, once Next returned false, whether the array was read to its
// end without error.
func (e *Elems) Done() bool { return e.s.err == nil }

// Object reads an object, calling member for every key (decoded, and valid
// until the next Reset) with the scanner at the value; member must consume
// exactly one value. A false from member ends the read (with the scanner's
// error, if member stopped on one).
func (s *Scanner) Object(member func(key []byte) bool) bool {
	m := s.Members()
	for m.Next() {
		if !member(m.Key()) {
			return false
		}
	}
	return m.Done()
}

// ObjectOrNull reads an object as Object does, or null; present reports
// whether the value was not null.
func (s *Scanner) ObjectOrNull(member func(key []byte) bool) (present, ok bool) {
	if isNull, ok := s.Null(); isNull || !ok {
		return false, ok
	}
	return true, s.Object(member)
}

// Array reads an array, calling elem with the scanner at each element; elem
// must consume exactly one value. A false from elem ends the read.
func (s *Scanner) Array(elem func() bool) bool {
	e := s.Elems()
	for e.Next() {
		if !elem() {
			return false
		}
	}
	return e.Done()
}

// Objects reads an array and calls obj for every element that is an object
// (with the scanner at it; obj must consume it), skipping the other
// elements. Anything but an array is skipped, and counts as no elements.
func (s *Scanner) Objects(obj func() bool) bool {
	if s.Kind() != KindArray {
		return s.Skip()
	}
	return s.Array(func() bool {
		if s.Kind() != KindObject {
			return s.Skip()
		}
		return obj()
	})
}

// Skip validates and consumes one value of any kind.
func (s *Scanner) Skip() bool {
	switch s.Kind() {
	case KindString:
		return s.skipStr()
	case KindObject:
		m := s.Members()
		for m.Next() {
			if !s.Skip() {
				return false
			}
		}
		return m.Done()
	case KindArray:
		e := s.Elems()
		for e.Next() {
			if !s.Skip() {
				return false
			}
		}
		return e.Done()
	case KindNull:
		return s.lit("null")
	case KindTrue:
		return s.lit("true")
	case KindFalse:
		return s.lit("false")
	case KindNumber:
		_, _, ok := s.Num()
		return ok
	}
	return s.failChar("looking for beginning of value")
}

// RawSpan consumes any value and returns the span of its text, verbatim.
func (s *Scanner) RawSpan() (Span, bool) {
	s.ws()
	start := s.pos
	if !s.Skip() {
		return Span{}, false
	}
	return DataSpan(start, s.pos-start), true
}

// Raw consumes any value and returns its text, verbatim.
func (s *Scanner) Raw() ([]byte, bool) {
	sp, ok := s.RawSpan()
	return s.Bytes(sp), ok
}

// Null consumes null if it comes next, reporting whether it did.
func (s *Scanner) Null() (isNull, ok bool) {
	if s.Peek() != 'n' {
		return false, true
	}
	return true, s.lit("null")
}

// lit consumes the literal word (true, false, null) at the read position.
func (s *Scanner) lit(word string) bool {
	if s.pos+len(word) <= len(s.data) && string(s.data[s.pos:s.pos+len(word)]) == word {
		s.pos += len(word)
		return true
	}
	for k := 0; k < len(word); k++ {
		if s.pos >= len(s.data) || s.data[s.pos] != word[k] {
			return s.failChar("in literal " + word + " (expecting " + quoteChar(word[k]) + ")")
		}
		s.pos++
	}
	return true
}

// Num consumes a number and returns its text and whether it is an integer
// (no fraction, no exponent).
func (s *Scanner) Num() (lit []byte, isInt bool, ok bool) {
	d := s.data
	i := s.pos
	start := i
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
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
	return d[start:i:i], isInt, true
}

// Number skips whitespace, consumes a number and returns the span of its text.
func (s *Scanner) Number() (Span, bool) {
	s.ws()
	start := s.pos
	lit, _, ok := s.Num()
	return DataSpan(start, len(lit)), ok
}

// ParseInt converts an integer literal of the JSON grammar (no leading
// zeros) as strconv.ParseInt(lit, 10, 64) would; ok is false when it is out
// of range.
func ParseInt(lit []byte) (int64, bool) {
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

// Int reads an integer, or null (present is false), strictly: a fraction, an
// exponent, an overflow or a value of another type is an error, as for an
// int64 field of encoding/json.
func (s *Scanner) Int() (v int64, present, ok bool) {
	switch s.Kind() {
	case KindNull:
		return 0, false, s.lit("null")
	case KindNumber:
	default:
		if !s.Skip() {
			return 0, false, false
		}
		return 0, false, s.fail("expected an integer")
	}
	start := s.pos
	lit, isInt, ok := s.Num()
	switch {
	case !ok:
		return 0, false, false
	case !isInt:
		return 0, false, s.failAt(start, "number "+string(lit)+" is not an integer")
	}
	if v, ok = ParseInt(lit); !ok {
		return 0, false, s.failAt(start, "integer overflow")
	}
	return v, true, true
}

// IntField reads an integer leniently: null, other types, fractions,
// exponents and out-of-range numbers are skipped and reported as absent (ok
// stays true unless the JSON is invalid).
func (s *Scanner) IntField() (v int64, present, ok bool) {
	if s.Kind() != KindNumber {
		return 0, false, s.Skip()
	}
	lit, isInt, ok := s.Num()
	if !ok || !isInt {
		return 0, false, ok
	}
	v, present = ParseInt(lit)
	return v, present, true
}

// StrOrNull reads a string (decoded) or null (the absent Span), strictly:
// any other value is an error.
func (s *Scanner) StrOrNull() (Span, bool) {
	switch s.Kind() {
	case KindNull:
		return Span{}, s.lit("null")
	case KindString:
		return s.StrSpan()
	}
	if !s.Skip() {
		return Span{}, false
	}
	return Span{}, s.fail("expected a string")
}

// StrField reads a string leniently: a value of another type is skipped and
// reported as absent (ok stays true unless the JSON is invalid).
func (s *Scanner) StrField() (v []byte, present, ok bool) {
	if s.Kind() != KindString {
		return nil, false, s.Skip()
	}
	v, ok = s.str()
	return v, ok, ok
}

// Str reads a string, which must start at the read position (no whitespace
// is skipped: call Kind or Peek first), and returns its decoded bytes.
func (s *Scanner) Str() ([]byte, bool) {
	if s.pos >= len(s.data) || s.data[s.pos] != '"' {
		return nil, s.failChar("looking for beginning of string")
	}
	return s.str()
}

// StrSpan reads a string as Str does and returns the span of its decoded
// bytes.
func (s *Scanner) StrSpan() (Span, bool) {
	start := s.pos + 1
	b, ok := s.Str()
	return s.spanOf(b, start), ok
}

// spanOf returns the Span of b, a string str just read whose contents start
// at start in the document: b is that part of the document, or, decoded,
// the tail of the scratch buffer.
func (s *Scanner) spanOf(b []byte, start int) Span {
	if len(b) > 0 && &b[0] != &s.data[start] {
		return Span{off: len(s.scratch) - len(b), n: len(b), src: spanScratch}
	}
	return DataSpan(start, len(b))
}

// str reads the string whose opening quote is at the read position. A
// string that needs no decoding (no escape, valid UTF-8) is returned as it
// is in the document; any other is decoded onto the end of the scratch
// buffer.
func (s *Scanner) str() ([]byte, bool) {
	d := s.data
	start := s.pos + 1
	i, hi := scanPlain(d, start)
	if i < len(d) && d[i] == '"' {
		v := d[start:i:i]
		if hi < utf8.RuneSelf || utf8.Valid(v) {
			s.pos = i + 1
			return v, true
		}
	}
	if hi >= utf8.RuneSelf {
		i = start // the bytes before the stop may need repair
	}
	return s.decodeStr(start, i)
}

// decodeStr decodes the string whose contents start at start onto the end
// of scratch; the bytes from start to i are plain ASCII, copied as they are.
// Escapes and invalid UTF-8 are decoded as encoding/json does.
func (s *Scanner) decodeStr(start, i int) ([]byte, bool) {
	d := s.data
	from := len(s.scratch)
	b := append(s.scratch, d[start:i]...)
	for {
		if i >= len(d) {
			s.scratch, s.pos = b, i
			return nil, s.fail("unexpected end of data in string literal")
		}
		switch c := d[i]; {
		case c == '"':
			s.scratch, s.pos = b, i+1
			return b[from:len(b):len(b)], true
		case c == '\\':
			if i+1 < len(d) && simpleEscape[d[i+1]] != 0 {
				b = append(b, simpleEscape[d[i+1]])
				i += 2
				continue
			}
			r, n := s.unescape(i)
			if n == 0 {
				s.scratch = b
				return nil, false
			}
			b = utf8.AppendRune(b, r)
			i += n
		case c < 0x20:
			s.scratch, s.pos = b, i
			return nil, s.failChar("in string literal")
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, "\uFFFD"...)
			} else {
				b = append(b, d[i:i+size]...)
			}
			i += size
		}
	}
}

// simpleEscape maps the byte after a backslash to the byte the two stand
// for, for the escapes other than \u; 0 for the rest.
var simpleEscape = func() (t [256]byte) {
	for e, c := range map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'} {
		t[e] = c
	}
	return t
}()

// unescape reads the escape sequence at d[i] (a backslash) other than the
// simple ones (see simpleEscape) and returns the rune it stands for and its
// length: a \u escape, or a surrogate pair of them read whole (a lone
// surrogate stands for U+FFFD and what follows it is left alone). Anything
// else fails the scan (n is 0).
func (s *Scanner) unescape(i int) (r rune, n int) {
	d := s.data
	switch {
	case i+1 >= len(d):
		s.pos = i + 1
		s.fail("unexpected end of data in string escape code")
		return 0, 0
	case d[i+1] != 'u':
		s.pos = i + 1
		s.failChar("in string escape code")
		return 0, 0
	}
	r, ok := hex4(d, i+2)
	if !ok {
		s.pos = i + 2
		for k := 0; k < 4 && s.pos < len(d) && isHex(d[s.pos]); k++ {
			s.pos++
		}
		s.failChar("in \\u hexadecimal character escape")
		return 0, 0
	}
	if !utf16.IsSurrogate(r) {
		return r, 6
	}
	if i+7 < len(d) && d[i+6] == '\\' && d[i+7] == 'u' {
		if r2, ok := hex4(d, i+8); ok {
			if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
				return dec, 12
			}
		}
	}
	return utf8.RuneError, 6
}

// skipStr validates the string at the read position without decoding it.
func (s *Scanner) skipStr() bool {
	d := s.data
	i := s.pos + 1
	for {
		i, _ = scanPlain(d, i)
		if i >= len(d) {
			s.pos = i
			return s.fail("unexpected end of data in string literal")
		}
		switch d[i] {
		case '"':
			s.pos = i + 1
			return true
		case '\\':
			if i+1 < len(d) && simpleEscape[d[i+1]] != 0 {
				i += 2
				continue
			}
			_, n := s.unescape(i)
			if n == 0 {
				return false
			}
			i += n
		default:
			s.pos = i
			return s.failChar("in string literal")
		}
	}
}

// strStop marks the bytes that end a plain run inside a string: the closing
// quote, a backslash and the control characters (invalid in JSON).
var strStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// scanPlain returns the index of the first byte at or after i that ends a
// plain run of a string (see strStop), or len(d), and the OR of the bytes
// it passed, to tell whether any was non-ASCII (bytes after the stop may be
// included, which only costs a UTF-8 check). It tests eight bytes at a time.
func scanPlain(d []byte, i int) (int, byte) {
	var acc uint64
	for ; i+8 <= len(d); i += 8 {
		w := binary.LittleEndian.Uint64(d[i:])
		acc |= w
		if stop := stop8(w); stop != 0 {
			return i + bits.TrailingZeros64(stop)>>3, highBit(acc)
		}
	}
	var hi byte
	for ; i < len(d) && !strStop[d[i]]; i++ {
		hi |= d[i]
	}
	return i, hi | highBit(acc)
}

// highBit returns 0x80 when any byte of w has its high bit set.
func highBit(w uint64) byte {
	if w&msb != 0 {
		return 0x80
	}
	return 0
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

// Compact returns the valid JSON value raw without the whitespace outside
// its strings, as json.Compact writes it: raw itself when it has none, else
// a copy in the scratch buffer.
func (s *Scanner) Compact(raw []byte) []byte {
	if bytes.IndexAny(raw, " \t\r\n") < 0 {
		return raw
	}
	start := len(s.scratch)
	in := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if in {
			s.scratch = append(s.scratch, c)
			switch c {
			case '\\':
				i++
				s.scratch = append(s.scratch, raw[i])
			case '"':
				in = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\r', '\n':
		default:
			in = c == '"'
			s.scratch = append(s.scratch, c)
		}
	}
	return s.scratch[start:len(s.scratch):len(s.scratch)]
}

// Join returns parts concatenated: nil for none, the one part itself, or a
// copy in the scratch buffer.
func (s *Scanner) Join(parts [][]byte) []byte {
	switch len(parts) {
	case 0:
		return nil
	case 1:
		return parts[0]
	}
	start := len(s.scratch)
	for _, p := range parts {
		s.scratch = append(s.scratch, p...)
	}
	return s.scratch[start:len(s.scratch):len(s.scratch)]
}

// TrimSpace returns b without leading and trailing JSON whitespace (space,
// tab, newline, carriage return), without allocating.
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
