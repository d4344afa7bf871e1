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
		// The other spellings tool schemas use, unions and nullables.
		{"3.14", "float", `3.14`},
		{"3.14", "double", `3.14`},
		{"-2", "int", `-2`},
		{"2.5", "int", `"2.5"`},
		{"True", "bool", `true`},
		{"{'a': 1}", "dict", `{"a":1}`},
		{"(1, 2)", "list", `[1,2]`},
		{"x", "str", `"x"`},
		{"7", "integer|null", `7`},
		{"None", "integer|null", `null`},
		{"null", "string|null", `null`},
		{"hello", "string|null", `"hello"`},
		{"7", "integer|string", `7`},
		{"seven", "integer|string", `"seven"`},
		{"true", "number|boolean", `true`},
		{"[1]", "object|array", `[1]`},
		{"12", "Float", `12`},
		{"3.14", "decimal128", `"3.14"`},
		{"abc", "number", `"abc"`},
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
		for _, typ := range []string{"string", "", "integer", "number", "boolean", "object", "array", "null", "float", "integer|null", "string|null", "int|string"} {
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

// TestSchemaTypes reads the type names, unions and nullables of property
// schemas into the form TypedValue takes.
func TestSchemaTypes(t *testing.T) {
	got := ParamTypes(json.RawMessage(`{"type":"object","properties":{
		"a":{"type":"float"},"b":{"type":["integer","null"]},"c":{"anyOf":[{"type":"string"},{"type":"null"}]},
		"d":{"type":"number","nullable":true},"e":{"oneOf":[{"type":"integer"},{"type":"boolean"}]},"f":{},
		"g":{"type":"weird"}}}`))
	want := map[string]string{"a": "float", "b": "integer|null", "c": "string|null", "d": "number|null", "e": "integer|boolean", "f": "", "g": "weird"}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("type of %s = %q, want %q", k, got[k], w)
		}
	}
	for _, c := range []struct {
		typ    string
		stream bool
	}{{"string", true}, {"", true}, {"weird", true}, {"float", false}, {"string|null", false}, {"integer|string", false}} {
		if valueStreams(c.typ) != c.stream {
			t.Errorf("valueStreams(%q) = %v", c.typ, !c.stream)
		}
	}
}
