package sse

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func msg(data string, off int64) rec { return rec{Type: "message", Data: data, Offset: off} }

func trunc(off int64) rec { return rec{NilData: true, Truncated: true, Offset: off} }

func withID(r rec, id string) rec { r.ID = id; return r }

func withType(r rec, typ string) rec { r.Type = typ; return r }

func withRetry(r rec, d time.Duration) rec { r.Retry, r.RetrySet = d, true; return r }

var ruleTests = map[string]struct {
	in   string
	max  int
	want []rec
	err  string
}{
	"empty input":                          {in: ""},
	"blank lines only":                     {in: "\n\n\r\n\r"},
	"simple":                               {in: "data: hello\n\n", want: []rec{msg("hello", 0)}},
	"no space after colon":                 {in: "data:hello\n\n", want: []rec{msg("hello", 0)}},
	"only one space stripped":              {in: "data:  x\n\n", want: []rec{msg(" x", 0)}},
	"tab is not stripped":                  {in: "data:\tx\n\n", want: []rec{msg("\tx", 0)}},
	"space only value":                     {in: "data: \n\n", want: []rec{msg("", 0)}},
	"colon in value":                       {in: "data: a:b: c\n\n", want: []rec{msg("a:b: c", 0)}},
	"multi-line data joined":               {in: "data: a\ndata: b\ndata: c\n\n", want: []rec{msg("a\nb\nc", 0)}},
	"data without colon":                   {in: "data\n\n", want: []rec{msg("", 0)}},
	"two bare data lines":                  {in: "data\ndata\n\n", want: []rec{msg("\n", 0)}},
	"data colon empty":                     {in: "data:\n\n", want: []rec{msg("", 0)}},
	"nul in data kept":                     {in: "data: a\x00b\n\n", want: []rec{msg("a\x00b", 0)}},
	"multi-byte runes":                     {in: "data: héllo 世界 🎉\n\n", want: []rec{msg("héllo 世界 🎉", 0)}},
	"two events":                           {in: "data: a\n\ndata: b\n\n", want: []rec{msg("a", 0), msg("b", 9)}},
	"extra blank lines":                    {in: "\n\ndata: a\n\n\n\ndata: b\n\n", want: []rec{msg("a", 2), msg("b", 13)}},
	"CRLF":                                 {in: "data: a\r\n\r\ndata: b\r\n\r\n", want: []rec{msg("a", 0), msg("b", 11)}},
	"lone CR":                              {in: "data: a\r\rdata: b\r\r", want: []rec{msg("a", 0), msg("b", 9)}},
	"mixed endings":                        {in: "data: a\rdata: b\ndata: c\r\n\r", want: []rec{msg("a\nb\nc", 0)}},
	"CR CR LF is two lines":                {in: "data: a\r\r\ndata: b\n\n", want: []rec{msg("a", 0), msg("b", 10)}},
	"LF CR is two endings":                 {in: "data: a\n\rdata: b\n\n", want: []rec{msg("a", 0), msg("b", 9)}},
	"BOM dropped":                          {in: "\uFEFFdata: a\n\n", want: []rec{msg("a", 3)}},
	"second BOM is not dropped":            {in: "\uFEFF\uFEFFdata: a\n\n"},
	"BOM inside data kept":                 {in: "\uFEFFdata: \uFEFFx\n\n", want: []rec{msg("\uFEFFx", 3)}},
	"BOM later is data":                    {in: "data: a\n\n\uFEFFdata: b\n\ndata: \uFEFF\n\n", want: []rec{msg("a", 0), msg("\uFEFF", 21)}},
	"partial BOM bytes are data":           {in: "\xEF:c\ndata: x\n\n", want: []rec{msg("x", 0)}},
	"partial BOM then EOF":                 {in: "\xEF\xBB", want: []rec{trunc(0)}},
	"partial BOM then EOF, over the limit": {in: "\xEF\xBB", max: 1, err: "sse: event starting at byte 0 exceeds 1 bytes"},
	"BOM only":                             {in: "\uFEFF"},
	"comment":                              {in: ": ping\n\ndata: x\n\n", want: []rec{msg("x", 8)}},
	"bare colon comment":                   {in: ":\ndata: x\n\n", want: []rec{msg("x", 2)}},
	"comment inside event":                 {in: "data: a\n: c\ndata: b\n\n", want: []rec{msg("a\nb", 0)}},
	"comment before data":                  {in: ": c\ndata: x\n\n", want: []rec{msg("x", 4)}},
	"comment only block":                   {in: ": a\n: b\n\n"},
	"event type":                           {in: "event: add\ndata: 1\n\n", want: []rec{withType(msg("1", 0), "add")}},
	"event type after data":                {in: "data: 1\nevent: add\n\n", want: []rec{withType(msg("1", 0), "add")}},
	"last event field wins":                {in: "event: a\nevent: b\ndata: 1\n\n", want: []rec{withType(msg("1", 0), "b")}},
	"event type is per event":              {in: "event: add\ndata: 1\n\ndata: 2\n\n", want: []rec{withType(msg("1", 0), "add"), msg("2", 20)}},
	"empty event is message":               {in: "event:\ndata: x\n\n", want: []rec{msg("x", 0)}},
	"bare event is message":                {in: "event\ndata: x\n\n", want: []rec{msg("x", 0)}},
	"event-only block resets":              {in: "event: a\n\ndata: x\n\n", want: []rec{msg("x", 10)}},
	"known type":                           {in: "event: content_block_delta\ndata: {}\n\n", want: []rec{withType(msg("{}", 0), "content_block_delta")}},
	"event type case kept":                 {in: "event: Add Thing\ndata: x\n\n", want: []rec{withType(msg("x", 0), "Add Thing")}},
	"id persists":                          {in: "id: 1\ndata: a\n\ndata: b\n\n", want: []rec{withID(msg("a", 0), "1"), withID(msg("b", 15), "1")}},
	"bare id clears":                       {in: "id: 1\ndata: a\n\nid\ndata: b\n\n", want: []rec{withID(msg("a", 0), "1"), msg("b", 15)}},
	"empty id clears":                      {in: "id: 1\ndata: a\n\nid:\ndata: b\n\n", want: []rec{withID(msg("a", 0), "1"), msg("b", 15)}},
	"id with NUL ignored":                  {in: "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n", want: []rec{withID(msg("a", 0), "1"), withID(msg("b", 15), "1")}},
	"id changes":                           {in: "id: 1\ndata: a\n\nid: 22\ndata: b\n\n", want: []rec{withID(msg("a", 0), "1"), withID(msg("b", 15), "22")}},
	"id-only block dispatches nothing but sets id": {
		in: "id: 7\n\ndata: x\n\n", want: []rec{withID(msg("x", 7), "7")},
	},
	"retry":                   {in: "retry: 1500\ndata: x\n\n", want: []rec{withRetry(msg("x", 0), 1500*time.Millisecond)}},
	"retry zero":              {in: "retry: 0\ndata: x\n\n", want: []rec{withRetry(msg("x", 0), 0)}},
	"retry letters ignored":   {in: "retry: 15a\ndata: x\n\n", want: []rec{msg("x", 0)}},
	"retry negative ignored":  {in: "retry: -1\ndata: x\n\n", want: []rec{msg("x", 0)}},
	"retry decimal ignored":   {in: "retry: 1.5\ndata: x\n\n", want: []rec{msg("x", 0)}},
	"retry two spaces":        {in: "retry:  15\ndata: x\n\n", want: []rec{msg("x", 0)}},
	"retry empty ignored":     {in: "retry:\ndata: x\n\n", want: []rec{msg("x", 0)}},
	"retry persists":          {in: "retry: 10\n\ndata: x\n\n", want: []rec{withRetry(msg("x", 11), 10*time.Millisecond)}},
	"retry invalid keeps old": {in: "retry: 10\nretry: x\ndata: x\n\n", want: []rec{withRetry(msg("x", 0), 10*time.Millisecond)}},
	"retry huge saturates": {
		in:   "retry: 99999999999999999999\ndata: x\n\n",
		want: []rec{withRetry(msg("x", 0), time.Duration(math.MaxInt64/int64(time.Millisecond))*time.Millisecond)},
	},
	"unknown field ignored":   {in: "foo: bar\ndata: x\n\n", want: []rec{msg("x", 0)}},
	"unknown-only block":      {in: "foo: bar\n\n"},
	"field names are cased":   {in: "DATA: x\nData: y\nEvent: e\nID: 3\n\n"},
	"leading space not field": {in: " data: x\n\n"},
	"mixed field forms": {
		in:   "event:e\r\nid:9\rdata\ndata:  sp\r\n: c\ndata:x\n\n",
		want: []rec{withID(withType(msg("\n sp\nx", 0), "e"), "9")},
	},
	"truncated mid-line":         {in: "data: a\n\ndata: b", want: []rec{msg("a", 0), trunc(9)}},
	"truncated after field line": {in: "data: a\n", want: []rec{trunc(0)}},
	"truncated after CR":         {in: "data: a\r", want: []rec{trunc(0)}},
	"trailing CR is blank line":  {in: "data: a\n\r", want: []rec{msg("a", 0)}},
	"truncated id-only block":    {in: "id: 5\n", want: []rec{withID(trunc(0), "5")}},
	"truncated keeps old id":     {in: "id: 5\ndata: a\n\ndata: b\n", want: []rec{withID(msg("a", 0), "5"), withID(trunc(15), "5")}},
	"truncated event starts at first field": {
		in: "data: a\n\n: c\nevent: x\ndata: b", want: []rec{msg("a", 0), trunc(13)},
	},
	"trailing comment is not truncation": {in: "data: a\n\n: bye\n", want: []rec{msg("a", 0)}},
	"trailing partial comment":           {in: "data: a\n\n: by", want: []rec{msg("a", 0), trunc(9)}},
	"whatwg stock example": {
		in:   ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n",
		want: []rec{withID(msg("first event", 15), "1"), msg("second event", 40), trunc(62)},
	},
	"whatwg empty data example": {
		in:   "data\n\ndata\ndata\n\ndata:",
		want: []rec{msg("", 0), msg("\n", 6), trunc(17)},
	},
	"whatwg space example": {in: "data:test\n\ndata: test\n\n", want: []rec{msg("test", 0), msg("test", 11)}},
	"at the limit": {
		in: "data: a\n\n", max: 7, want: []rec{msg("a", 0)},
	},
	"line over the limit": {
		in: "data: ok\n\ndata: 0123456789\n\n", max: 10, want: []rec{msg("ok", 0)},
		err: "sse: event starting at byte 10 exceeds 10 bytes",
	},
	"later line over the limit names the event start": {
		in: "id: 1\ndata: 0123456789\n\n", max: 10,
		err: "sse: event starting at byte 0 exceeds 10 bytes",
	},
	"joined data over the limit": {
		in: "data: ok\n\ndata: 012345\ndata: 6789\ndata: ab\n\n", max: 12, want: []rec{msg("ok", 0)},
		err: "sse: event starting at byte 10 exceeds 12 bytes",
	},
	"comment line over the limit": {
		in: "data: a\n\n: 123456789\n", max: 8, want: []rec{msg("a", 0)},
		err: "sse: event starting at byte 9 exceeds 8 bytes",
	},
	"line one byte over the limit": {
		in: "data: a\n\ndata: ab\n\n", max: 7, want: []rec{msg("a", 0)},
		err: "sse: event starting at byte 9 exceeds 7 bytes",
	},
	"joined data at the limit": {
		in: "data: 12\ndata: 34\ndata: 56\n\n", max: 8, want: []rec{msg("12\n34\n56", 0)},
	},
	"joined data one byte over the limit": {
		in: "data: 12\ndata: 34\ndata: 56\ndata\n\n", max: 8,
		err: "sse: event starting at byte 0 exceeds 8 bytes",
	},
	"unterminated line at the limit": {
		in: "data: 12", max: 8, want: []rec{trunc(0)},
	},
	"unterminated line one byte over the limit": {
		in: "data: 123", max: 8,
		err: "sse: event starting at byte 0 exceeds 8 bytes",
	},
	"unterminated line over the limit": {
		in: "data: 123456789", max: 8,
		err: "sse: event starting at byte 0 exceeds 8 bytes",
	},
}

// TestRules checks every framing rule, each input decoded whole, one byte at
// a time and split in two at every offset, and against the reference.
func TestRules(t *testing.T) {
	for name, tc := range ruleTests {
		t.Run(name, func(t *testing.T) {
			in := []byte(tc.in)
			opts := Options{MaxEventBytes: tc.max}
			want := result{Events: tc.want, Err: tc.err}
			check := func(how string, got result) {
				t.Helper()
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: events mismatch (-want +got):\n%s", how, diff)
				}
			}
			check("whole", decodeWhole(t, opts, in))
			check("reference", refDecode(in, tc.max))
			ones := make([]int, len(in))
			for i := range ones {
				ones[i] = 1
			}
			check("one byte at a time", decodeChunks(t, opts, in, ones))
			for i := 1; i < len(in); i++ {
				got := decodeChunks(t, opts, in, []int{i})
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("split at %d: events mismatch (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

func TestTooLargeError(t *testing.T) {
	d := New(Options{MaxEventBytes: 4})
	ctx := context.Background()
	err := d.Push(ctx, []byte("data: 12345\n\n"), func(Event) { t.Error("unexpected event") })
	var tl *TooLargeError
	if !errors.As(err, &tl) || !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Push error = %v, want a *TooLargeError matching ErrTooLarge", err)
	}
	if tl.Offset != 0 || tl.Limit != 4 {
		t.Errorf("TooLargeError = %+v, want Offset 0 Limit 4", *tl)
	}
	// The error is sticky.
	if err2 := d.Push(ctx, []byte("\n\n"), func(Event) {}); err2 != err {
		t.Errorf("second Push error = %v, want the sticky %v", err2, err)
	}
	if err2 := d.Finish(ctx, func(Event) {}); err2 != err {
		t.Errorf("Finish error = %v, want the sticky %v", err2, err)
	}
}

func TestDefaultLimit(t *testing.T) {
	d := New(Options{})
	if d.max != DefaultMaxEventBytes {
		t.Fatalf("default max = %d, want %d", d.max, DefaultMaxEventBytes)
	}
	// A 1 MiB line, far above bufio.Scanner's 64 KiB default, decodes.
	big := bytes.Repeat([]byte("x"), 1<<20)
	in := append(append([]byte("data: "), big...), "\n\n"...)
	got := decodeChunks(t, Options{}, in, randomSizes(newRand(1), len(in), 4096))
	if got.Err != "" || len(got.Events) != 1 || got.Events[0].Data != string(big) {
		t.Fatalf("1 MiB event: got err %q and %d events", got.Err, len(got.Events))
	}
	// Negative means default too.
	if d := New(Options{MaxEventBytes: -1}); d.max != DefaultMaxEventBytes {
		t.Errorf("MaxEventBytes -1 gives max %d, want default", d.max)
	}
}

// TestOwnSurvivesReuse checks that Own copies are independent of the chunk
// and of the decoder's buffers, and that borrowed events really do borrow
// (so the test would notice an Own that does not copy).
func TestOwnSurvivesReuse(t *testing.T) {
	ctx := context.Background()
	for name, tc := range map[string]struct {
		first, second string
		want          rec
	}{
		"aliasing the chunk": {
			first: "id: id1\ndata: hello\n\n", second: "id: XXX\ndata: XXXXX\n\n",
			want: rec{Type: "message", Data: "hello", ID: "id1"},
		},
		"in the data buffer": {
			first: "id: id1\ndata: a\ndata: b\n\n", second: "id: XXX\ndata: X\ndata: X\n\n",
			want: rec{Type: "message", Data: "a\nb", ID: "id1"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			d := New(Options{})
			chunk := []byte(tc.first)
			var owned, borrowed Event
			err := d.Push(ctx, chunk, func(e Event) { borrowed, owned = e, e.Own() })
			if err != nil {
				t.Fatal(err)
			}
			copy(chunk, tc.second)
			if err := d.Push(ctx, chunk, func(Event) {}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, toRec(owned)); diff != "" {
				t.Errorf("owned event changed after reuse (-want +got):\n%s", diff)
			}
			if string(borrowed.Data) == tc.want.Data || string(borrowed.ID) == tc.want.ID {
				t.Errorf("borrowed event was not overwritten (data %q, id %q): the test no longer exercises borrowing",
					borrowed.Data, borrowed.ID)
			}
		})
	}
	t.Run("nil and empty", func(t *testing.T) {
		if e := (Event{Data: []byte{}}).Own(); e.Data == nil || len(e.Data) != 0 || e.ID != nil {
			t.Errorf("Own of empty data = %#v, want non-nil empty Data and nil ID", e)
		}
		if e := (Event{Truncated: true, ID: []byte("7")}).Own(); e.Data != nil || string(e.ID) != "7" {
			t.Errorf("Own of truncation marker = %#v, want nil Data and ID 7", e)
		}
		src := Event{Data: []byte("ab"), ID: []byte("cd")}
		e := src.Own()
		e.Data = append(e.Data, 'x')
		if string(e.ID) != "cd" {
			t.Errorf("appending to owned Data clobbered ID: %q", e.ID)
		}
	})
}

func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	d := New(Options{MaxEventBytes: 100})
	var got []rec
	emit := func(e Event) { got = append(got, toRec(e)) }
	if err := d.Push(ctx, []byte("\uFEFFid: 1\nretry: 5\nevent: x\ndata: a"), emit); err != nil {
		t.Fatal(err)
	}
	if d.Truncated() {
		t.Error("Truncated() true before Finish")
	}
	if err := d.Finish(ctx, emit); err != nil {
		t.Fatal(err)
	}
	if !d.Truncated() {
		t.Error("Truncated() false after a stream cut mid-event")
	}
	if err := d.Finish(ctx, emit); err != nil {
		t.Errorf("second Finish: %v", err)
	}
	if err := d.Push(ctx, []byte("data: x\n\n"), emit); !errors.Is(err, ErrPushAfterFinish) {
		t.Errorf("Push after Finish = %v, want ErrPushAfterFinish", err)
	}
	want := []rec{withRetry(withID(trunc(3), "1"), 5*time.Millisecond)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("first stream (-want +got):\n%s", diff)
	}

	// Reset starts a new stream: BOM, id, retry, offsets and limits are fresh.
	d.Reset()
	got = nil
	if err := d.Push(ctx, []byte("\uFEFFdata: b\n\n"), emit); err != nil {
		t.Fatal(err)
	}
	if err := d.Finish(ctx, emit); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]rec{msg("b", 3)}, got); diff != "" {
		t.Errorf("after Reset (-want +got):\n%s", diff)
	}
	if d.Truncated() || d.max != 100 {
		t.Errorf("after Reset: Truncated %v, max %d", d.Truncated(), d.max)
	}
}

func TestStageConstructors(t *testing.T) {
	if Name != "sse.decode" {
		t.Errorf("Name = %q", Name)
	}
	s := NewStage()
	if _, ok := s.(interface {
		Finish(context.Context, func(Event)) error
	}); !ok {
		t.Error("NewStage() does not implement Finisher")
	}
	f := StageFactory(Options{MaxEventBytes: 9})
	a, b := f().(*Decoder), f().(*Decoder)
	if a == b || a.max != 9 {
		t.Errorf("StageFactory: distinct %v, max %d", a != b, a.max)
	}
}

// TestLargeBuffersReleased checks that a huge event does not pin its buffer.
func TestLargeBuffersReleased(t *testing.T) {
	ctx := context.Background()
	d := New(Options{})
	big := "data: " + strings.Repeat("x", 1<<20)
	for _, chunk := range []string{big[:100], big[100:], "\ndata: " + strings.Repeat("y", 1<<20), "\n", "\n"} {
		if err := d.Push(ctx, []byte(chunk), func(Event) {}); err != nil {
			t.Fatal(err)
		}
	}
	if cap(d.line) > retainBytes || cap(d.data) > retainBytes {
		t.Errorf("buffers retained after a 2 MiB event: line %d, data %d bytes", cap(d.line), cap(d.data))
	}
}

// TestZeroAllocs pins the hot-path promise: no allocation per event in steady
// state, whether events sit inside one chunk or span chunks.
func TestZeroAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	ctx := context.Background()
	chat := `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1767313000,"model":"gpt-4.1","choices":[{"index":0,"delta":{"content":" hello"},"finish_reason":null}]}` + "\n\n"
	for name, chunks := range map[string][]string{
		"chat chunk":     {chat},
		"CRLF":           {strings.ReplaceAll(chat, "\n", "\r\n")},
		"lone CR":        {strings.ReplaceAll(chat, "\n", "\r")},
		"split mid-line": {chat[:50], chat[50:]},
		"CR|LF split":    {"data: a\r", "\n\r", "\n"},
		"multi-line":     {"data: a\ndata: b\n\n"},
		"named event":    {"event: content_block_delta\ndata: {\"delta\":{}}\n\n"},
		"custom type":    {"event: my.event\ndata: {}\n\n"},
		"ids and retry":  {"id: 12345\nretry: 300\ndata: x\n\n"},
		"comment":        {": OPENROUTER PROCESSING\n\n"},
		"one byte reads": strings.Split("event: x\ndata: 12\n\n", ""),
		"many per chunk": {strings.Repeat(chat, 8)},
	} {
		t.Run(name, func(t *testing.T) {
			d := New(Options{})
			bufs := make([][]byte, len(chunks))
			for i, c := range chunks {
				bufs[i] = []byte(c)
			}
			n := 0
			emit := func(Event) { n++ }
			run := func() {
				for _, b := range bufs {
					if err := d.Push(ctx, b, emit); err != nil {
						t.Fatal(err)
					}
				}
			}
			run() // warm up buffers and the type cache
			if allocs := testing.AllocsPerRun(200, run); allocs != 0 {
				t.Errorf("%v allocations per run, want 0", allocs)
			}
			if n == 0 && name != "comment" {
				t.Error("no events emitted")
			}
		})
	}
}
