// Package jsonxtest holds test helpers for code that writes JSON strings with jsonx: the
// encoding/json reference and a generator of awkward strings.
package jsonxtest

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// Encode returns v as encoding/json writes it with SetEscapeHTML(false) (no newline): the
// reference for hand-written encodings.
func Encode(tb testing.TB, v any) string {
	tb.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		tb.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

var pieces = []string{"a", "Z", " ", "\"", "\\", "/", "<", ">", "&", "\n", "\r", "\t", "\b", "\f",
	"\x00", "\x1f", "\x7f", "é", "✓", "😀", "\u2028", "\u2029", "\ufffd", "\xff", "\xc3", "\xe2\x80",
	"\xed\xa0\x80", "\xf4\x90\x80\x80", "plain ascii run ", "0123456789abcdef"}

// RandomString mixes ASCII (controls, quotes, <>&, runs longer than 8 bytes), multi-byte
// runes, U+2028/9 and invalid UTF-8.
func RandomString(r *rand.Rand) string {
	var sb strings.Builder
	n := r.IntN(24)
	for range n {
		if r.IntN(4) == 0 {
			sb.WriteByte(byte(r.IntN(256)))
		} else {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
	}
	return sb.String()
}
