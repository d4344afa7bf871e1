package textcall

import (
	"encoding/json"
	"testing"
)

func TestTypedValue(t *testing.T) {
	for _, c := range []struct{ raw, typ, want string }{
		{"ls -la", "string", `"ls -la"`},
		{"  42 ", "string", `"  42 "`},
		{"42", "", `"42"`},
		{"42", "custom", `"42"`},
		{"42", "integer", `42`},
		{" -7\n", "integer", `-7`},
		{"4.5", "integer", `"4.5"`},
		{"12345678901234567890", "integer", `"12345678901234567890"`},
		{"4.5", "number", `4.5`},
		{"+3", "number", `3`},
		{"1.", "number", `1`},
		{".5", "number", `0.5`},
		{"1e3", "number", `1e3`},
		{"NaN", "number", `"NaN"`},
		{"0x10", "integer", `"0x10"`},
		{"True", "boolean", `true`},
		{"FALSE", "boolean", `false`},
		{"yes", "boolean", `"yes"`},
		{"1", "boolean", `"1"`},
		{"true", "integer", `"true"`},
		{"None", "integer", `null`},
		{"null", "object", `null`},
		{"None", "string", `"None"`},
		{"None", "null", `null`},
		{`{"a": [1, 2]}`, "object", `{"a":[1,2]}`},
		{`{'a': 'it\'s', "b": (1, 2), 'c': None, 'd': True,}`, "object", `{"a":"it's","b":[1,2],"c":null,"d":true}`},
		{`{'k': 'v'}`, "array", `"{'k': 'v'}"`},
		{`['a', "b"]`, "array", `["a","b"]`},
		{`"{'k': 'v'}"`, "object", `{"k":"v"}`},
		{`"[1, 2]"`, "array", `[1,2]`},
		{`"hello"`, "object", `"\"hello\""`},
		{`{'a': 1`, "object", `"{'a': 1"`},
		{`{1: 'a'}`, "object", `"{1: 'a'}"`},
		{`{'s': 'caf\u00e9 <b>'}`, "object", `{"s":"café <b>"}`},
		{"<p>&amp;</p>", "string", `"<p>&amp;</p>"`},
	} {
		if got := TypedValue(c.raw, c.typ); got != c.want {
			t.Errorf("TypedValue(%q, %q) = %s, want %s", c.raw, c.typ, got, c.want)
		}
	}
}

// FuzzTypedValue checks that TypedValue always gives one valid JSON value,
// and a string exactly when the type is not one it parses.
func FuzzTypedValue(f *testing.F) {
	for _, s := range []string{"42", "True", "{'a': [1, (2,)], 'b': None}", `"[1]"`, "-1.5e3", "x", "\xff", `'\u00e9'`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, typ := range []string{"string", "", "integer", "number", "boolean", "object", "array", "null"} {
			got := TypedValue(raw, typ)
			var v any
			if err := json.Unmarshal([]byte(got), &v); err != nil {
				t.Fatalf("TypedValue(%q, %q) = %q: not JSON: %v", raw, typ, got, err)
			}
			if _, isString := v.(string); (typ == "string" || typ == "") && !isString {
				t.Fatalf("TypedValue(%q, %q) = %q: not a string", raw, typ, got)
			}
		}
	})
}
