package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// value reads any value with the exported API into what encoding/json
// decodes into an interface{} with UseNumber.
func value(s *Scanner) (any, error) {
	switch c := s.Peek(); {
	case c == '{':
		m := map[string]any{}
		err := s.Object(func(key []byte) error {
			v, err := value(s)
			m[string(key)] = v
			return err
		})
		return m, err
	case c == '[':
		a := []any{}
		err := s.Array(func() error {
			v, err := value(s)
			a = append(a, v)
			return err
		})
		return a, err
	case c == '"':
		sp, err := s.Str()
		return string(s.Bytes(sp)), err
	case c == 'n':
		_, err := s.Null()
		return nil, err
	case c == '-' || (c >= '0' && c <= '9'):
		sp, err := s.Number()
		return json.Number(s.Bytes(sp)), err
	}
	sp, err := s.Raw()
	switch string(s.Bytes(sp)) {
	case "true":
		return true, err
	case "false":
		return false, err
	}
	if err == nil {
		err = errors.New("Raw accepted " + string(s.Bytes(sp)))
	}
	return nil, err
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

// diff reads data in every way the API offers and compares with
// encoding/json: the whole value, Skip, Raw, Int, StrOrNull and, for
// objects, ParseObject.
func diff(t *testing.T, s *Scanner, data []byte) {
	t.Helper()
	want, werr := reference(data)
	valid := werr == nil

	s.Reset(data)
	got, err := value(s)
	if err == nil {
		err = s.End()
	}
	if (err != nil) == valid {
		t.Fatalf("%q: scanner error %v, encoding/json valid %v", data, err, valid)
	}
	if err != nil {
		var se *SyntaxError
		if !errors.As(err, &se) || se.Offset < 0 || se.Offset > len(data) {
			t.Fatalf("%q: error %v is not a *SyntaxError inside the data", data, err)
		}
	} else if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("%q: scanner differs from encoding/json (-json +scanner):\n%s", data, d)
	}

	s.Reset(data)
	err = s.Skip()
	if err == nil {
		err = s.End()
	}
	if (err != nil) == valid {
		t.Fatalf("%q: Skip error %v, encoding/json valid %v", data, err, valid)
	}

	s.Reset(data)
	sp, err := s.Raw()
	if err == nil {
		err = s.End()
	}
	if (err != nil) == valid {
		t.Fatalf("%q: Raw error %v, encoding/json valid %v", data, err, valid)
	}
	if valid && !bytes.Equal(s.Bytes(sp), TrimSpace(data)) {
		t.Fatalf("%q: Raw = %q", data, s.Bytes(sp))
	}

	s.Reset(data)
	isObject := s.Peek() == '{'
	err = s.ParseObject(data, func([]byte) error { return s.Skip() })
	if (err != nil) == (valid && isObject) {
		t.Fatalf("%q: ParseObject error %v, encoding/json valid %v", data, err, valid)
	}
	if !valid {
		return
	}

	var wantInt *int64
	intErr := json.Unmarshal(data, &wantInt)
	s.Reset(data)
	n, ok, err := s.Int()
	if err == nil {
		err = s.End()
	}
	if (err != nil) != (intErr != nil) || err == nil && (ok != (wantInt != nil) || ok && n != *wantInt) {
		t.Fatalf("%q: Int = %d, %v, %v; encoding/json: %v, %v", data, n, ok, err, wantInt, intErr)
	}

	var wantStr *string
	strErr := json.Unmarshal(data, &wantStr)
	s.Reset(data)
	sp, err = s.StrOrNull()
	if err == nil {
		err = s.End()
	}
	if (err != nil) != (strErr != nil) || err == nil && (sp.OK() != (wantStr != nil) || sp.OK() && string(s.Bytes(sp)) != *wantStr) {
		t.Fatalf("%q: StrOrNull = %q, %v, %v; encoding/json: %v, %v", data, s.Bytes(sp), sp.OK(), err, wantStr, strErr)
	}
}

func TestMatchesEncodingJSON(t *testing.T) {
	var s Scanner
	for _, c := range cases {
		diff(t, &s, []byte(c))
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
		{`{"a":tru}`, `invalid JSON at data byte 8: invalid character '}' in literal true`},
		{`{"a":1 "b":2}`, `invalid JSON at data byte 7: invalid character '"' after object key:value pair`},
		{`{"a" 1}`, `invalid JSON at data byte 5: invalid character '1' after object key`},
		{`{a:1}`, `invalid JSON at data byte 1: invalid character 'a' looking for beginning of object key string`},
		{`[1 2]`, `invalid JSON at data byte 3: invalid character '2' after array element`},
		{`[1`, `invalid JSON at data byte 2: unexpected end of data after array element`},
		{`"abc`, `invalid JSON at data byte 4: unexpected end of data in string literal`},
		{`"a` + "\x01" + `"`, `invalid JSON at data byte 2: invalid character '\x01' in string literal`},
		{`"\x"`, `invalid JSON at data byte 2: invalid character 'x' in string escape code`},
		{`"\u12G4"`, `invalid JSON at data byte 5: invalid character 'G' in \u hexadecimal character escape`},
		{`"\`, `invalid JSON at data byte 2: unexpected end of data in string escape code`},
		{`1.`, `invalid JSON at data byte 2: unexpected end of data after decimal point in numeric literal`},
		{`1e+x`, `invalid JSON at data byte 3: invalid character 'x' in exponent of numeric literal`},
		{`-x`, `invalid JSON at data byte 1: invalid character 'x' in numeric literal`},
		{`1 2`, `invalid JSON at data byte 2: invalid character '2' after top-level value`},
		{`x`, `invalid JSON at data byte 0: invalid character 'x' looking for beginning of value`},
		{strings.Repeat("[", 10001), `invalid JSON at data byte 10001: exceeded max depth`},
	}
	var s Scanner
	for _, tc := range tests {
		s.Reset([]byte(tc.in))
		err := s.Skip()
		if err == nil {
			err = s.End()
		}
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
}

// TestTypedErrors pins the errors of the typed reads on well-formed input.
func TestTypedErrors(t *testing.T) {
	var s Scanner
	for _, tc := range []struct {
		in, want string
		read     func() error
	}{
		{`1.5`, `invalid JSON at data byte 0: number 1.5 is not an integer`, func() error { _, _, err := s.Int(); return err }},
		{`9223372036854775808`, `invalid JSON at data byte 0: integer overflow`, func() error { _, _, err := s.Int(); return err }},
		{`"1"`, `invalid JSON at data byte 3: expected an integer`, func() error { _, _, err := s.Int(); return err }},
		{`[1]`, `invalid JSON at data byte 3: expected a string`, func() error { _, err := s.StrOrNull(); return err }},
		{` "x"`, `invalid JSON at data byte 0: invalid character ' ' looking for beginning of string`, func() error { _, err := s.Str(); return err }},
		{`[]`, `invalid JSON at data byte 0: invalid character '[' looking for beginning of object`, func() error { _, err := s.ObjectOrNull(nil); return err }},
	} {
		s.Reset([]byte(tc.in))
		if err := tc.read(); err == nil || err.Error() != tc.want {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
}

// TestSpans checks where decoded bytes live and how long they stay valid:
// plain strings alias the document, unescaped ones the scratch buffer, and
// all of them survive later reads of the same document.
func TestSpans(t *testing.T) {
	data := []byte(`{"plain":"abc","esc":"a\nb","null":null,"n":-12}`)
	var s Scanner
	got := map[string]Span{}
	if err := s.ParseObject(data, func(key []byte) error {
		var err error
		switch string(key) {
		case "n":
			got[string(key)], err = s.Number()
		default:
			got[string(key)], err = s.StrOrNull()
		}
		return err
	}); err != nil {
		t.Fatal(err)
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
	if sp, err := s.Str(); err != nil || string(s.Bytes(sp)) != "abc" || s.Pos() != 14 {
		t.Errorf("Seek+Str: %q, %v, pos %d", s.Bytes(sp), err, s.Pos())
	}

	// A huge scratch buffer is not kept for the next document.
	s.Reset([]byte(`"` + strings.Repeat(`\n`, 1<<20) + `"`))
	if _, err := s.Str(); err != nil {
		t.Fatal(err)
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
		present, err := s.ObjectOrNull(func(key []byte) error {
			keys += string(key)
			return s.Skip()
		})
		if err == nil {
			err = s.End()
		}
		if err != nil || present != tc.present || keys != tc.keys {
			t.Errorf("%q: %v, %q, %v", tc.in, present, keys, err)
		}
	}
	// The member's error ends the read.
	stop := errors.New("stop")
	s.Reset([]byte(`{"a":1,"b":2}`))
	if _, err := s.ObjectOrNull(func([]byte) error { return stop }); err != stop {
		t.Errorf("error %v, want the member's", err)
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

// TestSpecial8 checks the word-at-a-time string scan against the byte table.
func TestSpecial8(t *testing.T) {
	var buf [8]byte
	check := func() {
		want := false
		for _, c := range buf {
			want = want || strSpecial[c]
		}
		x := uint64(0)
		for i := 7; i >= 0; i-- {
			x = x<<8 | uint64(buf[i])
		}
		if got := special8(x); got != want {
			t.Fatalf("special8(% x) = %v, want %v", buf, got, want)
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
