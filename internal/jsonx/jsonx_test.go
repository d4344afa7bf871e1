package jsonx

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/internal/jsonx/jsonxtest"
)

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		s := jsonxtest.RandomString(r)
		if got, want := string(AppendString(nil, s)), jsonxtest.Encode(t, s); got != want {
			t.Fatalf("case %d %q:\n got %s\nwant %s", i, s, got, want)
		}
	}
}

// Every byte that needs care, at every offset of the 8-byte fast path.
func TestAppendStringFastPathOffsets(t *testing.T) {
	for _, special := range []string{"\"", "\\", "\x00", "\x1f", "\x7f", "\n", "é", "\u2028", "\xff", "\xe2\x80"} {
		for before := range 18 {
			for _, after := range []int{0, 1, 7, 8, 9} {
				s := strings.Repeat("a", before) + special + strings.Repeat("b", after)
				if got, want := string(AppendString([]byte("x"), s)), "x"+jsonxtest.Encode(t, s); got != want {
					t.Fatalf("%q:\n got %s\nwant %s", s, got, want)
				}
			}
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain ascii text of some length", "a<b>&", "<a>&\"\\\n\r\t\x00\x1f\x7f",
		"ünï\u2028\u2029x", "\x00\u2028\xff", "😀\xed\xa0\x80", "\xff\xfe\xc3", "12345678\"12345678",
		"abcdefg\x80", strings.Repeat("é", 9) + "\x01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(AppendString(nil, s)), jsonxtest.Encode(t, s); got != want {
			t.Fatalf("AppendString(%q)\n got %s\nwant %s", s, got, want)
		}
	})
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestFields(t *testing.T) {
	d, err := NewFields([]byte(` {"s":"x","n":null,"b":true,"i":-3,"u":4,"r":{ "a" : [1, 2] },"a":["p","q"],"type":"t","z":{ }} `))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := d.Peek("type"); !ok || string(v) != `"t"` {
		t.Errorf("Peek = %s, %v", v, ok)
	}
	if d.Str("s") != "x" || d.Str("s") != "" || d.StrPtr("n") != nil || !d.Bool("b") || d.Int("i") != -3 ||
		*d.Uint64Ptr("u") != 4 || d.Strings("a")[1] != "q" || string(d.Raw("r")) != `{"a":[1,2]}` || d.Raw("missing") != nil {
		t.Error("accessors")
	}
	if e := d.Extra("type"); len(e) != 1 || string(e["z"]) != `{}` {
		t.Errorf("Extra = %v", e)
	}
	if d.Err != nil {
		t.Error(d.Err)
	}

	// null: Raw keeps it, RawOpt and RawOrNull's missing case do not.
	d, _ = NewFields([]byte(`{"a":null,"b":null}`))
	if string(d.Raw("a")) != "null" || d.RawOpt("b") != nil || string(d.RawOrNull("c")) != "null" || d.Extra() != nil {
		t.Error("null handling")
	}

	// Errors: the first sticks, named by field.
	d, _ = NewFields([]byte(`{"s":1,"t":2,"o":[],"l":[{"x":1},5]}`))
	d.Str("s")
	d.Str("o2")
	if want := "field s: expected a string, got 1"; errText(d.Err) != want {
		t.Errorf("Str error %q, want %q", d.Err, want)
	}
	d.Err = nil
	d.DecodeStr("t")
	if want := "field t: json: cannot unmarshal number into Go value of type string"; errText(d.Err) != want {
		t.Errorf("DecodeStr error %q, want %q", d.Err, want)
	}
	d.Err = nil
	if d.Object("o", func(*Fields) error { return nil }) || errText(d.Err) != "field o: expected a JSON object" {
		t.Errorf("Object error %v", d.Err)
	}
	d.Err = nil
	if d.Array("l", func(_ int, raw json.RawMessage) error {
		sub, err := NewFields(raw)
		if err != nil {
			return err
		}
		return sub.Err
	}) || errText(d.Err) != "field l[1]: expected a JSON object" {
		t.Errorf("Array error %v", d.Err)
	}

	for in, want := range map[string]string{`null`: "expected a JSON object", `[]`: "expected a JSON object",
		``: "unexpected end of JSON input", `{`: "unexpected end of JSON input"} {
		if _, err := NewFields([]byte(in)); errText(err) != want {
			t.Errorf("NewFields(%q) error %v, want %q", in, err, want)
		}
	}
}

func TestEncoder(t *testing.T) {
	yes, n := true, int64(7)
	s := "p"
	extra := map[string]json.RawMessage{"b": json.RawMessage(`[ 1 ]`), "a": json.RawMessage(`1`),
		"known": json.RawMessage(`2`), "s": json.RawMessage(`3`), "k\u2028": nil}
	for _, track := range []bool{false, true} {
		var w Encoder
		if track {
			w.TrackKeys()
		}
		f := w.Open()
		w.Str("s", "<&>")
		w.StrOpt("empty", "")
		w.StrPtr("sp", &s)
		w.StrPtr("np", nil)
		w.BoolOpt("bo", &yes)
		w.BoolOpt("nbo", nil)
		w.BoolPtr("nb", nil)
		w.IntOpt("io", &n)
		w.IntOpt("nio", nil)
		w.RawOpt("ro", nil)
		w.Raw("r", nil, "null")
		w.Strings("l", nil)
		w.Key("o")
		g := w.Open()
		w.MapKey("m\"")
		w.B = append(w.B, '1')
		w.Close(g)
		w.Extra(extra, "known")
		w.Close(f)
		want := `{"s":"<&>","sp":"p","np":null,"bo":true,"nb":null,"io":7,"r":null,"l":[],"o":{"m\"":1},"a":1,"b":[1],"k\u2028":null,"s":3}`
		if track {
			want = strings.Replace(want, `,"s":3`, "", 1)
		}
		if string(w.B) != want || w.Err != nil {
			t.Errorf("track=%v:\n got %s %v\nwant %s", track, w.B, w.Err, want)
		}
	}

	w := Encoder{InvalidRaw: "invalid raw JSON"}
	w.Written("x")
	w.Raw("a", json.RawMessage(`{`), "")
	w.Raw("b", json.RawMessage(`[`), "")
	if want := "field a: invalid raw JSON: unexpected end of JSON input"; errText(w.Err) != want {
		t.Errorf("error %q, want %q", w.Err, want)
	}
	w = Encoder{}
	w.RawValue("v", json.RawMessage(`nope`), "")
	if want := "field v: invalid JSON: invalid character 'o' in literal null (expecting 'u')"; errText(w.Err) != want {
		t.Errorf("error %q, want %q", w.Err, want)
	}
}
