package chatstream

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/stages/streamtest"
)

// TestUnaryDecodeErrors pins the fatal errors of chat.unary for bodies that
// are not a chat completion: where ("body"), then what is wrong. A body that
// is not JSON at all (a gateway's HTML page sent with 200, a plain-text
// error) is quoted by how it starts; JSON of another kind or JSON that
// breaks later keeps the parse error and its offset. The body arrives in
// pieces, so the error cannot depend on how it was read.
func TestUnaryDecodeErrors(t *testing.T) {
	tests := []struct {
		name, body string
		want       string
		dataOffset int // of the *SyntaxError, -1 for none
		notJSON    bool
	}{
		{"HTML page", "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head></html>\n",
			`body is not JSON: starts with "<!DOCTYPE html>\n"…`, 0, true},
		{"plain text", "Bad Gateway",
			`body is not JSON: starts with "Bad Gateway"`, 0, true},
		{"blanks around", "\r\n  <h1>oops</h1> \n",
			`body is not JSON: starts with "<h1>oops</h1>"`, 0, true},
		{"cut at a character boundary", "ééééééééé",
			`body is not JSON: starts with "éééééééé"…`, 0, true},
		{"byte order mark, then not JSON", "\ufeff<html>",
			`body is not JSON: starts with "<html>"`, 0, true},
		{"array", `[{"choices":[]}]`,
			"body: not a chat chunk: want a JSON object, got an array", -1, false},
		{"number then text", "502 Bad Gateway",
			"body: invalid JSON at data byte 4: invalid character 'B' after top-level value", 4, false},
		{"cut JSON", `{"choices":[{"message":`,
			"body: invalid JSON at data byte 23: unexpected end of data looking for beginning of value", 23, false},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := NewUnaryStage(Options{})
			var got []Chunk
			emit := func(c Chunk) { got = append(got, c) }
			for i := 0; i < len(tc.body); i += 5 {
				if err := st.Push(ctx, []byte(tc.body[i:min(i+5, len(tc.body))]), emit); err != nil {
					t.Fatal(err)
				}
			}
			err := st.(interface {
				Finish(context.Context, func(Chunk)) error
			}).Finish(ctx, emit)
			de, ok := errors.AsType[*DecodeError](err)
			if !ok || err.Error() != tc.want {
				t.Fatalf("error %v, want a *DecodeError %q", err, tc.want)
			}
			if len(got) != 0 {
				t.Errorf("emitted %d chunks before the error", len(got))
			}
			if de.Event != "" || de.Offset != 0 || de.DataOffset != tc.dataOffset {
				t.Errorf("%#v: want a body error at data byte %d", de, tc.dataOffset)
			}
			if _, isSyntax := errors.AsType[*SyntaxError](err); isSyntax != (tc.dataOffset >= 0) {
				t.Errorf("*SyntaxError in the chain: %v", isSyntax)
			}
			if _, ok := errors.AsType[*NotJSONError](err); ok != tc.notJSON {
				t.Errorf("*NotJSONError in the chain: %v, want %v", ok, tc.notJSON)
			}
		})
	}
}

// A UTF-8 byte order mark before a body is skipped, as before a stream.
func TestUnaryByteOrderMark(t *testing.T) {
	body := `{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`
	run := func(b string) []Chunk {
		st := NewUnaryStage(Options{})
		var got []Chunk
		emit := func(c Chunk) { got = append(got, c) }
		if err := st.Push(context.Background(), []byte(b), emit); err != nil {
			t.Fatal(err)
		}
		if err := st.(interface {
			Finish(context.Context, func(Chunk)) error
		}).Finish(context.Background(), emit); err != nil {
			t.Fatalf("%q: %v", b[:3], err)
		}
		return got
	}
	plain, marked := run(body), run("\ufeff"+body)
	if len(plain) == 0 || len(plain) != len(marked) {
		t.Fatalf("%d chunks without the mark, %d with it", len(plain), len(marked))
	}
}

// FuzzChatUnary: arbitrary bodies through UnaryGraph never panic, either
// fail with no terminal event or end with exactly one, whatever the reads
// (streamtest.CheckSplit); a body reported as not JSON is quoted from its
// first non-blank byte on, and that byte cannot start a JSON value.
func FuzzChatUnary(f *testing.F) {
	for _, gd := range streamtest.LoadGoldens(f, goldenLayout) {
		if gd.Has("unary") {
			f.Add(gd.Input, uint64(len(gd.Input)))
		}
	}
	for _, body := range []string{"<html>", " \n{}", `[{"choices":[]}]`, "-x", "nul", "\ufeff{}"} {
		f.Add([]byte(body), uint64(1))
	}
	g := pipeline.Must(UnaryGraph(Options{}))
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		streamtest.CheckSplit(t, g, data, seed)
		st := NewUnaryStage(Options{})
		if err := st.Push(ctx, data, func(Chunk) {}); err != nil {
			return
		}
		err := st.(interface {
			Finish(context.Context, func(Chunk)) error
		}).Finish(ctx, func(Chunk) {})
		ne, ok := errors.AsType[*NotJSONError](err)
		if !ok {
			return
		}
		body := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), " \t\r\n") // a leading byte order mark is skipped
		if ne.Start == "" || !bytes.HasPrefix(body, []byte(ne.Start)) || ne.Truncated != (len(ne.Start) < len(bytes.TrimRight(body, " \t\r\n"))) {
			t.Fatalf("%q: not-JSON error %+v does not quote the body's start", data, ne)
		}
		if bytes.IndexByte([]byte(`{["-0123456789tfn`+"\""), body[0]) >= 0 {
			t.Fatalf("%q: reported as not JSON, but %q can start a JSON value", data, body[0])
		}
	})
}
