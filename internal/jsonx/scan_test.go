package jsonx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// cases are documents for the differential tests against encoding/json:
// valid and invalid syntax, every escape, surrogates, invalid UTF-8, numbers
// and the nesting limit. The stream packages keep the cases that are about
// their own fields.
var cases = []string{
	// strings
	`"plain"`,
	`""`,
	`"a\"b\\c\/d\b\f\n\r\t\u0041\u00e9\ud83d\ude00"`,
	`"t\u00e9"`,
	`"\ud800"`,
	`"\ud800\u0041"`,
	`"\udc00\ud800\udc00"`,
	`"\ud800\ud800\udc00"`,
	`"\uDBFF\uDFFF"`,
	`"\ud83d\u"`,
	"\"bad \xff\xfe utf8 \xed\xa0\x80 é\"",
	"\"a\xffb\"",
	"\"\xf0\x9f\x98\x80 and \xf0\x9f\"",
	"\"0123456\xc3\xa9789abcdef\"",
	`"0123456789abcdef0123456789abcdef"`,
	"\"0123456789\\nabcdef\xff0123456789abcdef\"",
	"\"tab\tinside\"",
	"\"nul\x00inside\"",
	`"\x"`,
	`"\u12"`,
	`"\u12G4"`,
	`"\`,
	`"unterminated`,
	`"` + strings.Repeat("x", 100),
	// objects
	`{}`,
	` { "a" : 1 , "b" : [ true , false , null ] , "c" : { } } `,
	`{"type":"x",}`,
	`{"type":"x"`,
	`{"type":"x"}}`,
	`{"type":"x"} x`,
	`{"type":"a` + "\x01" + `b"}`,
	`{"type":"a\x01b"}`,
	`{"type":"\x"}`,
	`{"type":"\u12"}`,
	`{"type":"\u12G4"}`,
	`{"a":"` + strings.Repeat("x", 100) + `}`,
	`{"a":1,"a":2}`,
	`{"\u0061":1,"a":{"b":null}}`,
	"{\"t\xffype\":\"x\",\"\\u0074ype\":\"y\"}",
	`{a:1}`,
	`{"a" 1}`,
	`{"a":1 "b":2}`,
	`{,}`,
	`{"a":tru}`,
	`{"a":nul}`,
	`{"a":fals}`,
	`{"a":nulll}`,
	// arrays
	`[]`,
	`[1,"two",[3],{"four":4}]`,
	`{"a":[1,]}`,
	`{"a":[1 2]}`,
	`[,1]`,
	`[1`,
	// numbers
	`0`,
	`-0`,
	`12`,
	`-12.5e+3`,
	`1E-2`,
	`9223372036854775807`,
	`-9223372036854775808`,
	`9223372036854775808`,
	`-9223372036854775809`,
	`18446744073709551616`,
	`1.5`,
	`1e2`,
	`01`,
	`-`,
	`-a`,
	`1.`,
	`1.e3`,
	`1e`,
	`1e+`,
	`.5`,
	`+1`,
	// literals and the rest
	`true`,
	`false`,
	`null`,
	`nul`,
	`x`,
	``,
	` `,
	` null `,
	`"x"`,
	`{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	`{"a":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
	strings.Repeat(`{"a":`, 10001) + `1` + strings.Repeat(`}`, 10001),
}

// readValue reads any value with the callback API into what encoding/json
// decodes into an interface{} with UseNumber.
func readValue(s *Scanner) (any, bool) {
	switch s.Kind() {
	case KindObject:
		m := map[string]any{}
		ok := s.Object(func(key []byte) bool {
			v, ok := readValue(s)
			m[string(key)] = v
			return ok
		})
		return m, ok
	case KindArray:
		a := []any{}
		ok := s.Array(func() bool {
			v, ok := readValue(s)
			a = append(a, v)
			return ok
		})
		return a, ok
	case KindString:
		b, ok := s.Str()
		return string(b), ok
	case KindNull:
		_, ok := s.Null()
		return nil, ok
	case KindNumber:
		sp, ok := s.Number()
		return json.Number(s.Bytes(sp)), ok
	}
	raw, ok := s.Raw()
	switch string(raw) {
	case "true":
		return true, ok
	case "false":
		return false, ok
	}
	if ok {
		panic("Raw accepted " + string(raw))
	}
	return nil, ok
}

// pull reads any value with the hand-walking API (Members, Elems) into the
// same shape as readValue.
func pull(s *Scanner) (any, bool) {
	switch s.Kind() {
	case KindObject:
		obj := map[string]any{}
		m := s.Members()
		for m.Next() {
			v, ok := pull(s)
			if !ok {
				return nil, false
			}
			obj[string(m.Key())] = v
		}
		return obj, m.Done()
	case KindArray:
		a := []any{}
		e := s.Elems()
		for e.Next() {
			v, ok := pull(s)
			if !ok {
				return nil, false
			}
			a = append(a, v)
		}
		return a, e.Done()
	case KindNumber:
		lit, _, ok := s.Num()
		return json.Number(lit), ok
	}
	return readValue(s)
}

// reference decodes data with encoding/json.
func reference(data []byte) (any, error) {
	if !json.Valid(data) {
		return nil, errors.New("invalid")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data: %v", err)
	}
	return v, nil
}

// checkErr fails when the scanner's verdict differs from encoding/json's, or
// when a failure is not a *SyntaxError inside the data.
func checkErr(t *testing.T, s *Scanner, what string, data []byte, ok, valid bool) {
	t.Helper()
	if ok != valid {
		t.Fatalf("%q: %s ok=%v (error %v), encoding/json valid %v", data, what, ok, s.Err(), valid)
	}
	err := s.Err()
	if ok != (err == nil) {
		t.Fatalf("%q: %s ok=%v but Err() = %v", data, what, ok, err)
	}
	if err != nil {
		var se *SyntaxError
		if !errors.As(err, &se) || se.Offset < 0 || se.Offset > len(data) {
			t.Fatalf("%q: %s error %v is not a *SyntaxError inside the data", data, what, err)
		}
	}
}

// diff reads data in every way the API offers and compares with
// encoding/json: the whole value by callbacks and by hand, Skip, Raw, Int,
// IntField, StrOrNull, StrField and, for objects, ParseObject.
func diff(t *testing.T, s *Scanner, data []byte) {
	t.Helper()
	want, werr := reference(data)
	valid := werr == nil

	for name, read := range map[string]func(*Scanner) (any, bool){"callbacks": readValue, "by hand": pull} {
		s.Reset(data)
		got, ok := read(s)
		ok = ok && s.End()
		checkErr(t, s, name, data, ok, valid)
		if ok {
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("%q: %s differs from encoding/json (-json +scanner):\n%s", data, name, d)
			}
		}
	}

	s.Reset(data)
	ok := s.Skip() && s.End()
	checkErr(t, s, "Skip", data, ok, valid)

	s.Reset(data)
	raw, ok := s.Raw()
	ok = ok && s.End()
	checkErr(t, s, "Raw", data, ok, valid)
	if valid && !bytes.Equal(raw, TrimSpace(data)) {
		t.Fatalf("%q: Raw = %q", data, raw)
	}

	s.Reset(data)
	isObject := s.Peek() == '{'
	ok = s.ParseObject(data, func([]byte) bool { return s.Skip() })
	checkErr(t, s, "ParseObject", data, ok, valid && isObject)
	if !valid {
		return
	}

	var wantInt *int64
	intErr := json.Unmarshal(data, &wantInt)
	s.Reset(data)
	n, present, ok := s.Int()
	ok = ok && s.End()
	if ok != (intErr == nil) || ok && (present != (wantInt != nil) || present && n != *wantInt) {
		t.Fatalf("%q: Int = %d, %v, %v (%v); encoding/json: %v, %v", data, n, present, ok, s.Err(), wantInt, intErr)
	}

	// The lenient read takes what the strict one takes and skips the rest.
	s.Reset(data)
	n2, present2, ok := s.IntField()
	ok = ok && s.End()
	if !ok || present2 != (intErr == nil && wantInt != nil) || present2 && n2 != *wantInt {
		t.Fatalf("%q: IntField = %d, %v, %v (%v); encoding/json: %v, %v", data, n2, present2, ok, s.Err(), wantInt, intErr)
	}

	var wantStr *string
	strErr := json.Unmarshal(data, &wantStr)
	s.Reset(data)
	sp, ok := s.StrOrNull()
	ok = ok && s.End()
	if ok != (strErr == nil) || ok && (sp.OK() != (wantStr != nil) || sp.OK() && string(s.Bytes(sp)) != *wantStr) {
		t.Fatalf("%q: StrOrNull = %q, %v, %v; encoding/json: %v, %v", data, s.Bytes(sp), sp.OK(), ok, wantStr, strErr)
	}
	s.Reset(data)
	v, present, ok := s.StrField()
	ok = ok && s.End()
	if !ok || present != (strErr == nil && wantStr != nil) || present && string(v) != *wantStr {
		t.Fatalf("%q: StrField = %q, %v, %v; encoding/json: %v, %v", data, v, present, ok, wantStr, strErr)
	}
}

func TestMatchesEncodingJSON(t *testing.T) {
	var s Scanner
	for _, c := range cases {
		diff(t, &s, []byte(c))
	}
}

// TestStringsMatchEncodingJSON decodes random awkward strings (escapes,
// surrogates, invalid UTF-8, at every offset of the 8-byte fast path) both
// ways, through one scanner whose scratch buffer is reused.
func TestStringsMatchEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	pieces := []string{"a", "é", "😀", "\\n", "\\\"", "\\\\", "\\u00e9", "\\ud83d\\ude00", "\\ud83d", "\\ude00x",
		"\\ud83d\\u0041", "\xff", "\xed\xa0\x80", "\xc3", "0123456789abcdef", "\\/", "\\t"}
	var s Scanner
	for i := range 20000 {
		var b strings.Builder
		b.WriteString(strings.Repeat("x", r.IntN(9)))
		for range r.IntN(6) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		doc := []byte(`"` + b.String() + `"`)
		diff(t, &s, doc)
		if t.Failed() {
			t.Fatalf("case %d: %q", i, doc)
		}
	}
}

// FuzzScanner checks the scanner against encoding/json on arbitrary input.
func FuzzScanner(f *testing.F) {
	for _, c := range cases {
		if len(c) < 4096 {
			f.Add([]byte(c))
		}
	}
	var s Scanner
	f.Fuzz(func(t *testing.T, data []byte) { diff(t, &s, data) })
}

// TestErrors pins the messages and offsets of syntax errors, which reach
// the stream packages' run errors.
func TestErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a":tru}`, `invalid JSON at data byte 8: invalid character '}' in literal true (expecting 'e')`},
		{`{"a":nul`, `invalid JSON at data byte 8: unexpected end of data in literal null (expecting 'l')`},
		{`{"a":1 "b":2}`, `invalid JSON at data byte 7: invalid character '"' after object key:value pair`},
		{`{"a" 1}`, `invalid JSON at data byte 5: invalid character '1' after object key`},
		{`{a:1}`, `invalid JSON at data byte 1: invalid character 'a' looking for beginning of object key string`},
		{`{"a":1,}`, `invalid JSON at data byte 7: invalid character '}' looking for beginning of object key string`},
		{`{"a":1`, `invalid JSON at data byte 6: unexpected end of data after object key:value pair`},
		{`[1 2]`, `invalid JSON at data byte 3: invalid character '2' after array element`},
		{`[1,]`, `invalid JSON at data byte 3: invalid character ']' looking for beginning of value`},
		{`[1`, `invalid JSON at data byte 2: unexpected end of data after array element`},
		{`"abc`, `invalid JSON at data byte 4: unexpected end of data in string literal`},
		{`"ab\ncd`, `invalid JSON at data byte 7: unexpected end of data in string literal`},
		{`"a` + "\x01" + `"`, `invalid JSON at data byte 2: invalid character '\x01' in string literal`},
		{`"\x"`, `invalid JSON at data byte 2: invalid character 'x' in string escape code`},
		{`"\u12G4"`, `invalid JSON at data byte 5: invalid character 'G' in \u hexadecimal character escape`},
		{`"\u12`, `invalid JSON at data byte 5: unexpected end of data in \u hexadecimal character escape`},
		{`"\`, `invalid JSON at data byte 2: unexpected end of data in string escape code`},
		{`1.`, `invalid JSON at data byte 2: unexpected end of data after decimal point in numeric literal`},
		{`1e+x`, `invalid JSON at data byte 3: invalid character 'x' in exponent of numeric literal`},
		{`-x`, `invalid JSON at data byte 1: invalid character 'x' in numeric literal`},
		{`-`, `invalid JSON at data byte 1: unexpected end of data in numeric literal`},
		{`1 2`, `invalid JSON at data byte 2: invalid character '2' after top-level value`},
		{`x`, `invalid JSON at data byte 0: invalid character 'x' looking for beginning of value`},
		{``, `invalid JSON at data byte 0: unexpected end of data looking for beginning of value`},
		{strings.Repeat("[", 10001), `invalid JSON at data byte 10001: exceeded max depth`},
	}
	var s Scanner
	for _, tc := range tests {
		for _, read := range []func() bool{s.Skip, func() bool { _, ok := readValue(&s); return ok }} {
			s.Reset([]byte(tc.in))
			ok := read() && s.End()
			if err := s.Err(); ok || err == nil || err.Error() != tc.want {
				t.Errorf("%q: ok=%v error %v, want %q", tc.in, ok, err, tc.want)
			}
		}
	}
}

// TestTypedErrors pins the errors of the strict reads on well-formed input.
func TestTypedErrors(t *testing.T) {
	var s Scanner
	for _, tc := range []struct {
		in, want string
		read     func() bool
	}{
		{`1.5`, `invalid JSON at data byte 0: number 1.5 is not an integer`, func() bool { _, _, ok := s.Int(); return ok }},
		{`9223372036854775808`, `invalid JSON at data byte 0: integer overflow`, func() bool { _, _, ok := s.Int(); return ok }},
		{`"1"`, `invalid JSON at data byte 3: expected an integer`, func() bool { _, _, ok := s.Int(); return ok }},
		{`[1]`, `invalid JSON at data byte 3: expected a string`, func() bool { _, ok := s.StrOrNull(); return ok }},
		{` "x"`, `invalid JSON at data byte 0: invalid character ' ' looking for beginning of string`, func() bool { _, ok := s.Str(); return ok }},
		{`[]`, `invalid JSON at data byte 0: invalid character '[' looking for beginning of object`, func() bool { _, ok := s.ObjectOrNull(nil); return ok }},
		{`{}`, `invalid JSON at data byte 0: invalid character '{' looking for beginning of array`, func() bool { return s.Array(nil) }},
	} {
		s.Reset([]byte(tc.in))
		if ok := tc.read(); ok || s.Err() == nil || s.Err().Error() != tc.want {
			t.Errorf("%q: ok=%v error %v, want %q", tc.in, ok, s.Err(), tc.want)
		}
	}
}

// Err reports the first error of a document: later failing reads do not
// replace it, and Reset clears it.
func TestFirstErrorKept(t *testing.T) {
	var s Scanner
	s.Reset([]byte(`{"a":x} [`))
	if s.Skip() {
		t.Fatal("accepted x")
	}
	first := s.Err().Error()
	for name, read := range map[string]func() bool{
		"Str":         func() bool { s.Seek(0); _, ok := s.Str(); return ok },
		"EnterArray":  func() bool { s.Seek(0); return s.EnterArray() },
		"EnterObject": func() bool { s.Seek(8); return s.EnterObject() },
		"Num":         func() bool { s.Seek(0); _, _, ok := s.Num(); return ok },
		"Elems":       func() bool { s.Seek(9); e := s.ElemsAfter(); return e.Next() || e.Done() },
		"End":         func() bool { s.Seek(0); return s.End() },
	} {
		if read() {
			t.Errorf("%s succeeded on bad input", name)
		}
		if got := s.Err().Error(); got != first {
			t.Errorf("%s replaced the error %q with %q", name, first, got)
		}
	}
	s.Reset([]byte(`1`))
	if s.Err() != nil || !s.Skip() {
		t.Error("Reset did not clear the error")
	}
}

// TestSpans checks where decoded bytes live and how long they stay valid:
// plain strings alias the document, unescaped ones the scratch buffer, and
// all of them survive later reads of the same document.
func TestSpans(t *testing.T) {
	data := []byte(`{"plain":"abc","esc":"a\nb","null":null,"n":-12}`)
	var s Scanner
	got := map[string]Span{}
	if !s.ParseObject(data, func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "n":
			got[string(key)], ok = s.Number()
		default:
			got[string(key)], ok = s.StrOrNull()
		}
		return ok
	}) {
		t.Fatal(s.Err())
	}
	if sp := got["plain"]; sp != DataSpan(10, 3) || string(s.Bytes(sp)) != "abc" || sp.Len() != 3 {
		t.Errorf("plain: %+v %q", sp, s.Bytes(sp))
	}
	if sp := got["esc"]; !sp.OK() || sp.src != spanScratch || string(s.Bytes(sp)) != "a\nb" {
		t.Errorf("esc: %+v %q", sp, s.Bytes(sp))
	}
	if sp := got["null"]; sp.OK() || sp.Len() != 0 || s.Bytes(sp) != nil {
		t.Errorf("null: %+v", sp)
	}
	if sp := got["n"]; string(s.Bytes(sp)) != "-12" {
		t.Errorf("n: %q", s.Bytes(sp))
	}
	if b := s.Bytes(got["plain"]); cap(b) != len(b) {
		t.Errorf("Bytes has spare capacity %d", cap(b)-len(b))
	}

	// A fast path matches a prefix itself and reads on from there.
	s.Reset(data)
	s.Seek(len(`{"plain":`))
	if sp, ok := s.StrSpan(); !ok || string(s.Bytes(sp)) != "abc" || s.Pos() != 14 {
		t.Errorf("Seek+Str: %q, %v, pos %d", s.Bytes(sp), s.Err(), s.Pos())
	}

	// A huge scratch buffer is not kept for the next document.
	s.Reset([]byte(`"` + strings.Repeat(`\n`, 1<<20) + `"`))
	if _, ok := s.Str(); !ok {
		t.Fatal(s.Err())
	}
	s.Reset(data)
	if cap(s.scratch) != 0 {
		t.Errorf("scratch of %d bytes kept", cap(s.scratch))
	}
}

func TestObjectOrNull(t *testing.T) {
	var s Scanner
	for _, tc := range []struct {
		in      string
		present bool
		keys    string
	}{
		{`null`, false, ""},
		{` {"a":1,"b":{}} `, true, "ab"},
		{`{}`, true, ""},
	} {
		s.Reset([]byte(tc.in))
		var keys string
		present, ok := s.ObjectOrNull(func(key []byte) bool {
			keys += string(key)
			return s.Skip()
		})
		ok = ok && s.End()
		if !ok || present != tc.present || keys != tc.keys {
			t.Errorf("%q: %v, %q, %v", tc.in, present, keys, s.Err())
		}
	}
	// The member's false ends the read, without an error of the scanner's.
	s.Reset([]byte(`{"a":1,"b":2}`))
	n := 0
	if _, ok := s.ObjectOrNull(func([]byte) bool { n++; return false }); ok || n != 1 || s.Err() != nil {
		t.Errorf("ok=%v after %d members, error %v", ok, n, s.Err())
	}
}

// Objects visits the object elements of an array and skips the others.
func TestObjects(t *testing.T) {
	var s Scanner
	for in, want := range map[string]string{
		`[{"k":"a"},1,"x",{"k":"b"},[{"k":"no"}],null]`: "ab",
		`[]`:                        "",
		`"not an array"`:            "",
		`{"k":"object, not array"}`: "",
	} {
		s.Reset([]byte(in))
		var got string
		ok := s.Objects(func() bool {
			return s.Object(func(key []byte) bool {
				v, _, ok := s.StrField()
				got += string(v)
				return ok
			})
		}) && s.End()
		if !ok || got != want {
			t.Errorf("%s: %q, %v (%v), want %q", in, got, ok, s.Err(), want)
		}
	}
}

func TestCompactAndJoin(t *testing.T) {
	var s Scanner
	for in, want := range map[string]string{
		`{"a":1}`:                               `{"a":1}`,
		"{ \"a\" :\t[ 1 ,\r\n\"x y\\\" z\" ] }": `{"a":[1,"x y\" z"]}`,
	} {
		s.Reset([]byte(in))
		raw, ok := s.Raw()
		if !ok {
			t.Fatal(s.Err())
		}
		var ref bytes.Buffer
		if err := json.Compact(&ref, raw); err != nil || ref.String() != want {
			t.Fatalf("bad case %q: %q %v", in, ref.String(), err)
		}
		if got := string(s.Compact(raw)); got != want {
			t.Errorf("Compact(%q) = %q, want %q", in, got, want)
		}
	}
	if got := s.Join(nil); got != nil {
		t.Errorf("Join(nil) = %q", got)
	}
	one := []byte("one")
	if got := s.Join([][]byte{one}); &got[0] != &one[0] {
		t.Error("Join of one part copied it")
	}
	if got := string(s.Join([][]byte{[]byte("a"), nil, []byte("bc")})); got != "abc" {
		t.Errorf("Join = %q", got)
	}
}

func TestParseInt(t *testing.T) {
	for _, lit := range []string{"0", "-0", "7", "-7", "9223372036854775807", "-9223372036854775808",
		"9223372036854775808", "-9223372036854775809", "18446744073709551616", "123456789012345678901", "-", ""} {
		var want int64
		werr := json.Unmarshal([]byte(lit), &want)
		got, ok := ParseInt([]byte(lit))
		if ok != (werr == nil) || ok && got != want {
			t.Errorf("ParseInt(%q) = %d, %v; encoding/json %d, %v", lit, got, ok, want, werr)
		}
	}
}

func TestKindName(t *testing.T) {
	var s Scanner
	for in, want := range map[string]string{`"s"`: "a string", `{}`: "an object", `[]`: "an array", `null`: "null",
		`true`: "a boolean", `false`: "a boolean", `-1`: "a number", `x`: "no JSON value", ``: "no JSON value"} {
		s.Reset([]byte(in))
		if got := s.Kind().Name(); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

func TestTrimSpace(t *testing.T) {
	for in, want := range map[string]string{
		"":                  "",
		" \t\r\n":           "",
		" [DONE]\n":         "[DONE]",
		"\n{\"a\": 1} \r\n": "{\"a\": 1}",
		"\v{}\f":            "\v{}\f",
		"x":                 "x",
	} {
		if got := string(TrimSpace([]byte(in))); got != want {
			t.Errorf("TrimSpace(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestStop8 checks the word-at-a-time string scans against the byte
// tables: stop8 flags exactly strStop's bytes in its lowest bit, special8
// those and every non-ASCII byte.
func TestStop8(t *testing.T) {
	var buf [8]byte
	check := func() {
		first, firstSpecial := -1, -1
		for i, c := range buf {
			if first < 0 && strStop[c] {
				first = i
			}
			if firstSpecial < 0 && (strStop[c] || c >= 0x80) {
				firstSpecial = i
			}
		}
		x := uint64(0)
		for i := 7; i >= 0; i-- {
			x = x<<8 | uint64(buf[i])
		}
		lowest := func(m uint64) int {
			if m == 0 {
				return -1
			}
			for i := range 8 {
				if m>>(8*i+7)&1 != 0 {
					return i
				}
			}
			return -1
		}
		if got := lowest(stop8(x)); got != first {
			t.Fatalf("stop8(% x) flags byte %d first, want %d", buf, got, first)
		}
		if got := lowest(special8(x)); got != firstSpecial {
			t.Fatalf("special8(% x) flags byte %d first, want %d", buf, got, firstSpecial)
		}
	}
	for c := range 256 {
		for pos := range 8 {
			for i := range buf {
				buf[i] = 'a'
			}
			buf[pos] = byte(c)
			check()
			for i := range buf {
				buf[i] = byte(0x20 + (i*13)%0x5e)
				if buf[i] == '"' || buf[i] == '\\' {
					buf[i] = 'z'
				}
			}
			buf[pos] = byte(c)
			check()
		}
	}
	rng := uint64(1)
	for range 1 << 20 {
		rng = rng*6364136223846793005 + 1442695040888963407
		for i := range buf {
			buf[i] = byte(rng >> (8 * i))
			if rng>>(60-i)&1 == 0 {
				buf[i] = 0x20 + buf[i]%0x5f
			}
		}
		check()
	}
}

// TestScannerSteadyStateAllocs: reading a document with escapes through a
// warm scanner allocates nothing (errors aside).
func TestScannerSteadyStateAllocs(t *testing.T) {
	doc := []byte(`{"a":"x\ny","b":[1,2.5,{"c":null}],"d":"\u00e9\ud83d\ude00","e":true}`)
	var s Scanner
	read := func() {
		if !s.ParseObject(doc, func([]byte) bool { _, ok := s.RawSpan(); return ok }) {
			t.Fatal(s.Err())
		}
		s.Reset(doc)
		if _, ok := pullNoAlloc(&s); !ok {
			t.Fatal(s.Err())
		}
	}
	read()
	if n := testing.AllocsPerRun(100, read); n != 0 {
		t.Errorf("%v allocations per read", n)
	}
}

// pullNoAlloc walks any value by hand, decoding every string, keeping nothing.
func pullNoAlloc(s *Scanner) (int, bool) {
	n := 0
	switch s.Kind() {
	case KindObject:
		m := s.Members()
		for m.Next() {
			k, ok := pullNoAlloc(s)
			if !ok {
				return 0, false
			}
			n += k
		}
		return n, m.Done()
	case KindString:
		b, ok := s.Str()
		return len(b), ok
	}
	return 0, s.Skip()
}

func TestCheckAndNoData(t *testing.T) {
	var s Scanner
	s.Reset([]byte(`{"a":1}`))
	if err := s.Check(s.Skip()); err != nil {
		t.Errorf("Check(ok) = %v", err)
	}
	s.Reset([]byte(`{"a":}`))
	var se *SyntaxError
	if err := s.Check(s.Skip()); !errors.As(err, &se) || se.Offset != 5 {
		t.Errorf("Check after a syntax error = %v", err)
	}
	s.Reset([]byte(`{"a":1}`))
	if err := s.Check(s.Object(func([]byte) bool { return false })); !errors.Is(err, ErrStopped) {
		t.Errorf("Check of a stopped read = %v", err)
	}
	for in, want := range map[string]bool{"": true, " \r\n": true, "[DONE]": true, " [DONE]\n": true, "{}": false, "[DONE] x": false, "null": false} {
		if got := NoData([]byte(in)); got != want {
			t.Errorf("NoData(%q) = %v", in, got)
		}
	}
}
