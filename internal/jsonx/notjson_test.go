package jsonx

import (
	"errors"
	"strings"
	"testing"
)

func TestNotJSON(t *testing.T) {
	for _, c := range []struct {
		data, want string
	}{
		{"hello world", `data line is not JSON: starts with "hello world"`},
		{"<html><head><title>502 Bad Gateway</title>", `data line is not JSON: starts with "<html><head><tit"…`},
		{"ééééééééé", `data line is not JSON: starts with "éééééééé"…`},                                                                           // cut at a character boundary
		{"A" + strings.Repeat("\x86", 20), `data line is not JSON: starts with "A\x86\x86\x86\x86\x86\x86\x86\x86\x86\x86\x86\x86\x86\x86\x86"…`}, // no character to back up to
		{"€€€€€€x", `data line is not JSON: starts with "€€€€€"…`},                                                                                // 15 of 19 bytes: a whole character more would be 18
		{`{"a":}`, `invalid JSON at data byte 5: `},                                                                                               // JSON that breaks later: the parse error
		{`nope`, `invalid JSON at data byte `},
	} {
		var s Scanner
		s.Reset([]byte(c.data))
		s.Skip()
		if s.Err() == nil {
			s.End()
		}
		err := NotJSON("data line", []byte(c.data), s.Err())
		if err == nil {
			t.Fatalf("%q: no error", c.data)
		}
		if got := err.Error(); len(got) < len(c.want) || got[:len(c.want)] != c.want {
			t.Errorf("%q: %q, want %q…", c.data, got, c.want)
		}
		if DataOffset(err) < 0 {
			t.Errorf("%q: the syntax error is not in the chain", c.data)
		}
	}
	other := errors.New("x")
	if NotJSON("body", []byte("x"), other) != other || NotJSON("body", nil, &SyntaxError{}) == nil {
		t.Error("non-syntax errors must pass unchanged")
	}
}
