package inboundjson

import (
	"encoding/json"
	"testing"
)

func TestReaders(t *testing.T) {
	tests := []struct {
		name, raw string
		read      func(json.RawMessage, string) error
		want      string // the error, "" for none
	}{
		{"object", `{"a":1}`, func(r json.RawMessage, p string) error { _, err := Object(r, p); return err }, ""},
		{"object of array", `[1]`, func(r json.RawMessage, p string) error { _, err := Object(r, p); return err }, "x.y: want an object, got an array"},
		{"array of null", `null`, func(r json.RawMessage, p string) error { _, err := Array(r, p); return err }, "x.y: want an array, got null"},
		{"string", `"s\u00e9"`, func(r json.RawMessage, p string) error { _, err := String(r, p); return err }, ""},
		{"string of number", `1`, func(r json.RawMessage, p string) error { _, err := String(r, p); return err }, "x.y: want a string, got a number"},
		{"bad string", `"\x"`, func(r json.RawMessage, p string) error { _, err := String(r, p); return err }, "x.y: not a valid JSON string: invalid character 'x' in string escape code"},
		{"bool", ` true `, func(r json.RawMessage, p string) error { _, err := Bool(r, p); return err }, ""},
		{"bool of string", `"true"`, func(r json.RawMessage, p string) error { _, err := Bool(r, p); return err }, "x.y: want true or false, got a string"},
		{"int", `42`, func(r json.RawMessage, p string) error { _, err := Int(r, p); return err }, ""},
		{"int of float", `4.5`, func(r json.RawMessage, p string) error { _, err := Int(r, p); return err }, "x.y: want a whole number, got 4.5"},
		{"float", `-1e3`, func(r json.RawMessage, p string) error { _, err := Float(r, p); return err }, ""},
		{"float of object", `{}`, func(r json.RawMessage, p string) error { _, err := Float(r, p); return err }, "x.y: want a number, got an object"},
		{"nothing", ``, func(r json.RawMessage, p string) error { _, err := Object(r, p); return err }, "x.y: want an object, got nothing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.read(json.RawMessage(tt.raw), Join("x", "y"))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Fatalf("error %q, want %q", got, tt.want)
			}
		})
	}
	if p := Index(Join("", "messages"), 3); p != "messages[3]" {
		t.Fatalf("path %q", p)
	}
	if e := Errorf("", "bad"); e.Error() != "bad" {
		t.Fatalf("%q", e.Error())
	}
	if !IsNull(json.RawMessage(" null ")) || IsNull(json.RawMessage("0")) {
		t.Fatal("IsNull")
	}
	if string(Compact(json.RawMessage(`{ "a" : [1, 2] }`))) != `{"a":[1,2]}` {
		t.Fatal("Compact")
	}
}
