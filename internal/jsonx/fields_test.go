package jsonx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/internal/jsonx/jsonxtest"
)

// Fields keeps what encoding/json's map decoding gives: the last of
// duplicate keys, unescaped keys, the values verbatim.
func TestFieldsMatchesMapDecoding(t *testing.T) {
	for _, doc := range []string{
		`{}`, `{"a":1,"a":2}`, `{"a":1,"b":[1, {"c" : 2}],"a":"x"}`, `{"k\u00e9y":"v","\ud83d\ude00":true}`,
		`{"s":"\u00e9\n\ud800x","n":null}`, ` { "w" : { } , "z" : [ ] } `,
	} {
		d, err := NewFields([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal([]byte(doc), &want); err != nil {
			t.Fatal(err)
		}
		got := map[string]json.RawMessage{}
		for _, m := range d.members {
			got[m.key] = m.val
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", doc, got, want)
		}
	}
}

// Objects with many members use an index; lookups and removals agree with
// the list.
func TestFieldsManyMembers(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	const n = 3 * fieldsIndexAt
	for i := range n {
		fmt.Fprintf(&b, `%s"k%d":%d`, map[bool]string{true: "", false: ","}[i == 0], i, i)
	}
	b.WriteString(`,"k5":"last"}`)
	d, err := NewFields([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if d.index == nil {
		t.Fatal("no index for a large object")
	}
	if got := d.Str("k5"); got != "last" {
		t.Errorf("k5 = %q, want the last duplicate", got)
	}
	for i := 0; i < n; i += 2 {
		if i == 5 {
			continue
		}
		if got := d.Int(fmt.Sprintf("k%d", i)); got != i {
			t.Fatalf("k%d = %d", i, got)
		}
	}
	extra := d.Extra()
	if len(extra) != n/2-1 {
		t.Fatalf("%d members left, want %d", len(extra), n/2-1)
	}
	for i := 1; i < n; i += 2 {
		if i == 5 {
			continue
		}
		if got := string(extra[fmt.Sprintf("k%d", i)]); got != fmt.Sprint(i) {
			t.Fatalf("extra k%d = %q", i, got)
		}
	}
	if d.Err != nil {
		t.Fatal(d.Err)
	}
}

// Fields reads its input in place (no copy per nesting level): what it
// hands out to keep — strings, Raw, Extra — is a copy that does not change
// when the caller reuses its buffer afterwards (the json.Unmarshaler
// contract), while Take and Array give views of the input, for decoding on
// the spot.
func TestFieldsKeepOnlyCopies(t *testing.T) {
	buf := []byte(`{"a":{"x":[1,2]},"b":"text","c":[3],"d":{"y": true},"e":[4]}`)
	d, err := NewFields(buf)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := d.Take("a")
	var elems []json.RawMessage
	d.Array("c", func(_ int, raw json.RawMessage) error {
		elems = append(elems, raw)
		return nil
	})
	if &a[0] != &buf[5] || &elems[0][0] != &buf[33] {
		t.Errorf("Take and Array copied their values: %q %q", a, elems)
	}
	b, raw, extra := d.Str("b"), d.Raw("d"), d.Extra()
	for i := range buf {
		buf[i] = ' '
	}
	if b != "text" || string(raw) != `{"y":true}` || string(extra["e"]) != "[4]" || len(extra) != 1 {
		t.Errorf("kept values changed with the input: b=%q raw=%q extra=%q", b, raw, extra)
	}
}

// A malformed object gets encoding/json's message; a valid non-object is
// "expected a JSON object".
func TestFieldsErrorsMatchEncodingJSON(t *testing.T) {
	for _, doc := range []string{`{"a":}`, `{"a":1,}`, `{"a" 1}`, `{"a":1} x`, `{"a":"\x01"}`, `{`, `[1]`, `null`, `"s"`, ``} {
		_, err := NewFields([]byte(doc))
		var m map[string]json.RawMessage
		werr := json.Unmarshal([]byte(doc), &m)
		switch {
		case err == nil:
			t.Errorf("%q: no error", doc)
		case strings.HasPrefix(doc, "{") && werr != nil && err.Error() != werr.Error():
			t.Errorf("%q: %v, encoding/json: %v", doc, err, werr)
		}
	}
}

func TestTypedReadersMatchEncodingJSON(t *testing.T) {
	for _, raw := range []string{`true`, `false`, `0`, `"true"`, `1.5`, `{}`} {
		d, _ := NewFields([]byte(`{"v":` + raw + `}`))
		got := d.BoolPtr("v")
		var want bool
		werr := json.Unmarshal([]byte(raw), &want)
		if (werr != nil) != (d.Err != nil) || (werr == nil && (got == nil || *got != want)) {
			t.Errorf("BoolPtr(%s) = %v, %v; encoding/json %v, %v", raw, got, d.Err, want, werr)
		}
		d, _ = NewFields([]byte(`{"v":` + raw + `}`))
		if s := d.DecodeStr("v"); werr == nil && d.Err == nil {
			t.Errorf("DecodeStr(%s) = %q without error", raw, s)
		}
	}
}

func TestStringsMatchesEncodingJSONArrays(t *testing.T) {
	for _, raw := range []string{`[]`, `["a","\u00e9"]`, `[ "x" , "y" ]`, `["a",1]`, `[null]`, `"s"`, `{}`} {
		d, _ := NewFields([]byte(`{"v":` + raw + `}`))
		got := d.Strings("v")
		var want []string
		werr := json.Unmarshal([]byte(raw), &want)
		if errText(d.Err) != errText(func() error {
			if werr != nil {
				return fmt.Errorf("field v: %w", werr)
			}
			return nil
		}()) || (werr == nil && !reflect.DeepEqual(got, want)) {
			t.Errorf("Strings(%s) = %q, %v; encoding/json %q, %v", raw, got, d.Err, want, werr)
		}
	}
}

func TestSplitArray(t *testing.T) {
	for _, doc := range []string{`[]`, ` [ 1 , "a" , {"b":[2]} , null ] `, `null`, `[1,]`, `[1 2]`, `{}`, `"x"`, `[`, `[1] 2`} {
		got, err := SplitArray([]byte(doc))
		var want []json.RawMessage
		werr := json.Unmarshal([]byte(doc), &want)
		if errText(err) != errText(werr) {
			t.Errorf("%q: error %v, encoding/json %v", doc, err, werr)
			continue
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %q, encoding/json %q", doc, got, want)
		}
	}
}

func TestDecodeStringAndCompactMatchEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for i := range 5000 {
		s := jsonxtest.RandomString(r)
		raw := []byte(jsonxtest.Encode(t, s))
		got, err := DecodeString(raw)
		var want string
		werr := json.Unmarshal(raw, &want)
		if got != want || errText(err) != errText(werr) {
			t.Fatalf("case %d %s: %q, %v; encoding/json %q, %v", i, raw, got, err, want, werr)
		}
		doc := []byte(" {\n \"k\" :\t[ " + string(raw) + " , 1 ,{ } ] } ")
		var buf bytes.Buffer
		if err := json.Compact(&buf, doc); err != nil {
			t.Fatal(err)
		}
		if c := Compact(doc); !bytes.Equal(c, buf.Bytes()) {
			t.Fatalf("Compact(%s) = %s, want %s", doc, c, buf.Bytes())
		}
	}
	if got := Compact([]byte(`{"a": 1`)); string(got) != `{"a": 1` {
		t.Errorf("Compact of invalid JSON = %q, want it unchanged", got)
	}
}

// FuzzFields: NewFields and SplitArray agree with encoding/json's decoding
// into a map and a slice of raw values — the same members (the last of a
// duplicate key), the same elements, an error exactly when it errs (and
// its message for a malformed object) — and Compact with json.Compact.
func FuzzFields(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"a":[2]}`, `{"k\u00e9":"v\ud800"}`, ` {"x": {"y": [1, 2, {}]}} `, `[1,"a",null]`,
		`{"a":}`, `{"a" 1}`, `[1,]`, `null`, `"s"`, `{"` + strings.Repeat(`a":1,"`, 30) + `b":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want map[string]json.RawMessage
		werr := json.Unmarshal(data, &want)
		d, err := NewFields(data)
		if werr == nil && want == nil { // null: Fields wants an object
			if !errors.Is(err, errNotObject) {
				t.Fatalf("%q: NewFields error %v, want %v", data, err, errNotObject)
			}
			return
		}
		if (err == nil) != (werr == nil) {
			t.Fatalf("%q: NewFields error %v, encoding/json %v", data, err, werr)
		}
		if err == nil {
			got := map[string]json.RawMessage{}
			for _, m := range d.members {
				got[m.key] = m.val
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%q:\n got %q\nwant %q", data, got, want)
			}
		} else if t0 := TrimSpace(data); len(t0) > 0 && t0[0] == '{' && err.Error() != werr.Error() {
			t.Fatalf("%q: %v, encoding/json %v", data, err, werr)
		}
		var wantElems []json.RawMessage
		welems := json.Unmarshal(data, &wantElems)
		elems, eerr := SplitArray(data)
		if errText(eerr) != errText(welems) || (welems == nil && !reflect.DeepEqual(elems, wantElems)) {
			t.Fatalf("%q: SplitArray %q, %v; encoding/json %q, %v", data, elems, eerr, wantElems, welems)
		}
		if json.Valid(data) {
			var buf bytes.Buffer
			if err := json.Compact(&buf, data); err != nil {
				t.Fatal(err)
			}
			if c := Compact(data); !bytes.Equal(c, buf.Bytes()) {
				t.Fatalf("Compact(%q) = %q, want %q", data, c, buf.Bytes())
			}
		}
	})
}
