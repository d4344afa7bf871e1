package terminus2

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The original terminus-2 reads the model's JSON with Python's json.loads,
// and the model sees that decoder's verdict in the parse-error prompt. This
// file reproduces the parts of CPython's json module (3.12, the C scanner)
// that the parser depends on:
//
//   - what it accepts: strict strings (no raw control characters), NaN,
//     Infinity and -Infinity, duplicate keys (the last value wins);
//   - its error messages and positions ("Expecting ',' delimiter: line 1
//     column 12 (char 11)"), counted in code points as Python does;
//   - repr() of a string, which the error message quotes.
//
// Values decode to nil, bool, float64 (integers too: only their truthiness
// and float value matter), string, []any and *pyObject.

// pyObject is a decoded JSON object: its keys in first-seen order (a
// duplicate key keeps its first position and takes its last value).
type pyObject struct {
	keys []string
	vals map[string]any
}

// get returns the value of key k.
func (o *pyObject) get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

// maxJSONDepth is where nesting stops, as Python's recursion limit stops
// its decoder.
const maxJSONDepth = 900

// pyJSONError is a json.JSONDecodeError: a message and a position in code
// points of the document.
type pyJSONError struct {
	msg  string
	doc  []rune
	pos  int
	bare bool // no position (the recursion error)
}

// Error gives the message as Python's str(JSONDecodeError) does.
func (e *pyJSONError) Error() string {
	if e.bare {
		return e.msg
	}
	line, col := 1, e.pos+1
	for i := 0; i < e.pos && i < len(e.doc); i++ {
		if e.doc[i] == '\n' {
			line++
			col = e.pos - i
		}
	}
	return fmt.Sprintf("%s: line %d column %d (char %d)", e.msg, line, col, e.pos)
}

type pyDecoder struct {
	s     []rune
	depth int
}

// pyLoads decodes s as json.loads(s) does.
func pyLoads(s string) (any, error) {
	d := &pyDecoder{s: []rune(s)}
	v, end, err := d.scan(d.ws(0))
	if err != nil {
		return nil, err
	}
	if end = d.ws(end); end != len(d.s) {
		return nil, d.fail("Extra data", end)
	}
	return v, nil
}

func (d *pyDecoder) fail(msg string, pos int) error {
	return &pyJSONError{msg: msg, doc: d.s, pos: pos}
}

func isJSONSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

// ws skips JSON white space from i.
func (d *pyDecoder) ws(i int) int {
	for i < len(d.s) && isJSONSpace(d.s[i]) {
		i++
	}
	return i
}

// has reports whether the document continues with lit at i.
func (d *pyDecoder) has(i int, lit string) bool {
	for _, r := range lit {
		if i >= len(d.s) || d.s[i] != r {
			return false
		}
		i++
	}
	return true
}

// scan reads one value at idx (scan_once): a value that cannot start there
// is "Expecting value" at idx.
func (d *pyDecoder) scan(idx int) (any, int, error) {
	if idx >= len(d.s) {
		return nil, idx, d.fail("Expecting value", idx)
	}
	switch d.s[idx] {
	case '"':
		return d.str(idx + 1)
	case '{':
		return d.nested(idx, "object", d.object)
	case '[':
		return d.nested(idx, "array", d.array)
	case 'n':
		if d.has(idx, "null") {
			return nil, idx + 4, nil
		}
	case 't':
		if d.has(idx, "true") {
			return true, idx + 4, nil
		}
	case 'f':
		if d.has(idx, "false") {
			return false, idx + 5, nil
		}
	case 'N':
		if d.has(idx, "NaN") {
			return math.NaN(), idx + 3, nil
		}
	case 'I':
		if d.has(idx, "Infinity") {
			return math.Inf(1), idx + 8, nil
		}
	case '-':
		if d.has(idx, "-Infinity") {
			return math.Inf(-1), idx + 9, nil
		}
	}
	return d.number(idx)
}

func (d *pyDecoder) nested(idx int, what string, f func(int) (any, int, error)) (any, int, error) {
	if d.depth >= maxJSONDepth {
		return nil, idx, &pyJSONError{msg: "maximum recursion depth exceeded while decoding a JSON " + what + " from a unicode string", bare: true}
	}
	d.depth++
	defer func() { d.depth-- }()
	return f(idx + 1)
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// number matches -?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)? at start.
func (d *pyDecoder) number(start int) (any, int, error) {
	s, idx, end := d.s, start, len(d.s)
	if idx < end && s[idx] == '-' {
		idx++
	}
	switch {
	case idx < end && s[idx] >= '1' && s[idx] <= '9':
		for idx++; idx < end && isDigit(s[idx]); idx++ {
		}
	case idx < end && s[idx] == '0':
		idx++
	default:
		return nil, start, d.fail("Expecting value", start)
	}
	if idx+1 < end && s[idx] == '.' && isDigit(s[idx+1]) {
		for idx += 2; idx < end && isDigit(s[idx]); idx++ {
		}
	}
	if idx+1 < end && (s[idx] == 'e' || s[idx] == 'E') {
		e := idx
		idx++
		if idx+1 < end && (s[idx] == '-' || s[idx] == '+') {
			idx++
		}
		for idx < end && isDigit(s[idx]) {
			idx++
		}
		if !isDigit(s[idx-1]) {
			idx = e
		}
	}
	f, err := strconv.ParseFloat(string(s[start:idx]), 64)
	if err != nil && !isRangeErr(err) {
		return nil, start, d.fail("Expecting value", start)
	}
	return f, idx, nil
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// str reads a string whose opening quote is at end-1 (scanstring, strict).
func (d *pyDecoder) str(end int) (any, int, error) {
	s, n := d.s, len(d.s)
	begin := end - 1
	var b strings.Builder
	for {
		next := end
		var c rune
		for ; next < n; next++ {
			c = s[next]
			if c == '"' || c == '\\' {
				break
			}
			if c <= 0x1f {
				return nil, next, d.fail("Invalid control character at", next)
			}
		}
		if next >= n {
			return nil, begin, d.fail("Unterminated string starting at", begin)
		}
		b.WriteString(string(s[end:next]))
		next++
		if c == '"' {
			return b.String(), next, nil
		}
		if next == n {
			return nil, begin, d.fail("Unterminated string starting at", begin)
		}
		c = s[next]
		if c != 'u' {
			end = next + 1
			switch c {
			case '"', '\\', '/':
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			default:
				return nil, end - 2, d.fail("Invalid \\escape", end-2)
			}
			b.WriteRune(c)
			continue
		}
		next++
		end = next + 4
		if end >= n {
			return nil, next - 1, d.fail("Invalid \\uXXXX escape", next-1)
		}
		u, ok := hex4(s[next:end])
		if !ok {
			return nil, end - 5, d.fail("Invalid \\uXXXX escape", end-5)
		}
		next = end
		if u >= 0xd800 && u <= 0xdbff && end+6 < n && s[next] == '\\' && s[next+1] == 'u' {
			u2, ok := hex4(s[next+2 : next+6])
			if !ok {
				return nil, end + 1, d.fail("Invalid \\uXXXX escape", end+1)
			}
			if u2 >= 0xdc00 && u2 <= 0xdfff {
				u = 0x10000 + (u-0xd800)<<10 + (u2 - 0xdc00)
				end += 6
			}
		}
		b.WriteRune(u) // a lone surrogate becomes U+FFFD: Go strings hold UTF-8
	}
}

func hex4(rs []rune) (rune, bool) {
	var v rune
	for _, r := range rs {
		v <<= 4
		switch {
		case r >= '0' && r <= '9':
			v |= r - '0'
		case r >= 'a' && r <= 'f':
			v |= r - 'a' + 10
		case r >= 'A' && r <= 'F':
			v |= r - 'A' + 10
		default:
			return 0, false
		}
	}
	return v, true
}

// object reads an object whose '{' is at idx-1.
func (d *pyDecoder) object(idx int) (any, int, error) {
	o := &pyObject{vals: map[string]any{}}
	s, n := d.s, len(d.s)
	idx = d.ws(idx)
	if idx < n && s[idx] == '}' {
		return o, idx + 1, nil
	}
	for {
		if idx >= n || s[idx] != '"' {
			return nil, idx, d.fail("Expecting property name enclosed in double quotes", idx)
		}
		kv, next, err := d.str(idx + 1)
		if err != nil {
			return nil, next, err
		}
		key := kv.(string)
		idx = d.ws(next)
		if idx >= n || s[idx] != ':' {
			return nil, idx, d.fail("Expecting ':' delimiter", idx)
		}
		v, next, err := d.scan(d.ws(idx + 1))
		if err != nil {
			return nil, next, err
		}
		if _, dup := o.vals[key]; !dup {
			o.keys = append(o.keys, key)
		}
		o.vals[key] = v
		idx = d.ws(next)
		if idx < n && s[idx] == '}' {
			return o, idx + 1, nil
		}
		if idx >= n || s[idx] != ',' {
			return nil, idx, d.fail("Expecting ',' delimiter", idx)
		}
		idx = d.ws(idx + 1)
	}
}

// array reads an array whose '[' is at idx-1.
func (d *pyDecoder) array(idx int) (any, int, error) {
	out := []any{}
	s, n := d.s, len(d.s)
	idx = d.ws(idx)
	if idx < n && s[idx] == ']' {
		return out, idx + 1, nil
	}
	for {
		v, next, err := d.scan(idx)
		if err != nil {
			return nil, next, err
		}
		out = append(out, v)
		idx = d.ws(next)
		if idx < n && s[idx] == ']' {
			return out, idx + 1, nil
		}
		if idx >= n || s[idx] != ',' {
			return nil, idx, d.fail("Expecting ',' delimiter", idx)
		}
		idx = d.ws(idx + 1)
	}
}

// truthy is Python's bool(v) of a decoded value.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case float64:
		return x != 0 // NaN is true
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case *pyObject:
		return len(x.keys) > 0
	}
	return true
}

// pyRepr is Python's repr() of a string.
func pyRepr(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	b := make([]byte, 0, len(s)+2)
	b = append(b, q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b = append(b, '\\', byte(r))
		case r == '\t':
			b = append(b, `\t`...)
		case r == '\n':
			b = append(b, `\n`...)
		case r == '\r':
			b = append(b, `\r`...)
		case r < ' ' || r == 0x7f:
			b = fmt.Appendf(b, `\x%02x`, r)
		case r < 0x7f:
			b = append(b, byte(r))
		case unicode.IsPrint(r):
			b = utf8.AppendRune(b, r)
		case r <= 0xff:
			b = fmt.Appendf(b, `\x%02x`, r)
		case r <= 0xffff:
			b = fmt.Appendf(b, `\u%04x`, r)
		default:
			b = fmt.Appendf(b, `\U%08x`, r)
		}
	}
	return string(append(b, q))
}

// isPySpace reports whether Python's str.isspace() holds for r.
func isPySpace(r rune) bool {
	return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
}

// pyStrip is Python's str.strip().
func pyStrip(s string) string { return strings.TrimFunc(s, isPySpace) }
