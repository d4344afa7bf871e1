package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The committed codecs are what the tables generate: a table changed
// without `go generate`, or a generated file edited by hand, fails here.
func TestCommittedCodecsAreGenerated(t *testing.T) {
	for name, path := range map[string]string{
		"chat":      filepath.Join("..", "..", "wire", "chat", "codec_gen.go"),
		"anthropic": filepath.Join("..", "..", "wire", "anthropic", "codec_gen.go"),
		"protocol":  filepath.Join("..", "..", "protocol", "item_codec_gen.go"),
	} {
		t.Run(name, func(t *testing.T) {
			want, err := generateFor(name)
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s differs from what internal/codecgen writes: run `go generate` in its package", path)
			}
		})
	}
}

// A table that names a type it does not have, or a custom field without
// its code, is an error, not a file that does not compile.
func TestTableErrors(t *testing.T) {
	tests := []struct {
		name string
		p    pkg
		want string
	}{
		{"unknown object type", pkg{name: "x", types: []typ{{name: "A", fields: []field{{key: "b", name: "B", kind: object, elem: "B"}}}}}, "no type B"},
		{"unknown array type", pkg{name: "x", types: []typ{{name: "A", fields: []field{{key: "b", name: "B", kind: array, elem: "B"}}}}}, "no type B"},
		{"custom without enc", pkg{name: "x", types: []typ{{name: "A", fields: []field{{key: "b", name: "B", kind: custom, dec: "\t_ = 1"}}}}}, "has no encoder"},
		{"custom without dec", pkg{name: "x", types: []typ{{name: "A", fields: []field{{key: "b", name: "B", kind: custom, enc: "\t_ = 1"}}}}}, "needs dec"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := generate(&tt.p); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// An item table with a kind the item codecs do not have, or a custom
// field without its reading, is an error.
func TestItemTableErrors(t *testing.T) {
	tests := []struct {
		name  string
		items []item
		want  string
	}{
		{"wire kind in an item", []item{{name: "A", tag: "TypeA", fields: []field{{key: "b", name: "B", kind: boolOpt}}}}, "not an item kind"},
		{"custom without dec", []item{{name: "A", tag: "TypeA", fields: []field{{key: "b", name: "B", kind: custom, enc: "\t_ = 1"}}}}, "needs dec"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := generateItems(tt.items); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// lowerFirst keeps a leading initialism together.
func TestLowerFirst(t *testing.T) {
	for in, want := range map[string]string{"Message": "message", "ImageURL": "imageURL", "JSONSchema": "jsonSchema", "URL": "url", "x": "x"} {
		if got := lowerFirst(in); got != want {
			t.Errorf("lowerFirst(%q) = %q, want %q", in, got, want)
		}
	}
}
