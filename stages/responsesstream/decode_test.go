package responsesstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/internal/jsonx"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/sse"
)

// view flattens what the decoder read from one event's data.
func (d *Decoder) view() map[string]string {
	r := &d.raw
	v := map[string]string{
		"output_index":  fmt.Sprint(r.outputIndex),
		"content_index": fmt.Sprint(r.contentIndex),
		"summary_index": fmt.Sprint(r.summaryIndex),
	}
	put := func(k string, sp jsonx.Span) {
		if sp.OK() {
			v[k] = string(d.sc.Bytes(sp))
		}
	}
	putErr := func(prefix string, e rawError) {
		if e.present {
			v[prefix] = "present"
		}
		put(prefix+".code", e.code)
		put(prefix+".message", e.message)
		put(prefix+".type", e.typ)
	}
	put("type", r.typ)
	put("delta", r.delta)
	put("item_id", r.itemID)
	put("item", r.item)
	put("code", r.topErr.code)
	put("message", r.topErr.message)
	putErr("error", r.nested)
	put("response.id", r.resp.id)
	put("response.model", r.resp.model)
	put("response.incomplete_details.reason", r.resp.incompleteReason)
	putErr("response.error", r.resp.err)
	if r.resp.hasUsage {
		u := r.resp.usage
		v["response.usage"] = fmt.Sprint(u.input, " ", u.cached, " ", u.output, " ", u.reasoning, " ", u.total, " ", u.hasTotal)
	}
	return v
}

// refView reads data with encoding/json into the same flat view.
func refView(data []byte) (map[string]string, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, err
	}
	if top == nil {
		return nil, errors.New("not an object")
	}
	v := map[string]string{}
	var firstErr error
	check := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	str := func(k string, m map[string]json.RawMessage, f string) {
		if raw, ok := m[f]; ok {
			var p *string
			check(json.Unmarshal(raw, &p))
			if p != nil {
				v[k] = *p
			}
		}
	}
	num := func(m map[string]json.RawMessage, f string) (int64, bool) {
		raw, ok := m[f]
		if !ok {
			return 0, false
		}
		var p *int64
		check(json.Unmarshal(raw, &p))
		if p == nil {
			return 0, false
		}
		return *p, true
	}
	code := func(k string, m map[string]json.RawMessage) {
		raw, ok := m["code"]
		if !ok {
			return
		}
		if c := raw[0]; c == '-' || (c >= '0' && c <= '9') {
			v[k] = string(raw)
			return
		}
		str(k, m, "code")
	}
	obj := func(raw json.RawMessage) map[string]json.RawMessage {
		var m map[string]json.RawMessage
		check(json.Unmarshal(raw, &m))
		return m
	}
	errObj := func(prefix string, raw json.RawMessage) {
		if string(raw) == "null" {
			return
		}
		v[prefix] = "present"
		if raw[0] == '"' {
			var s string
			check(json.Unmarshal(raw, &s))
			v[prefix+".message"] = s
			return
		}
		if m := obj(raw); m != nil {
			code(prefix+".code", m)
			str(prefix+".message", m, "message")
			str(prefix+".type", m, "type")
		}
	}
	for _, f := range []string{"output_index", "content_index", "summary_index"} {
		n, _ := num(top, f)
		v[f] = fmt.Sprint(n)
	}
	str("type", top, "type")
	str("delta", top, "delta")
	str("item_id", top, "item_id")
	if raw, ok := top["item"]; ok && string(raw) != "null" {
		v["item"] = string(raw)
	}
	code("code", top)
	str("message", top, "message")
	if raw, ok := top["error"]; ok {
		errObj("error", raw)
	}
	if raw, ok := top["response"]; ok {
		if m := obj(raw); m != nil {
			str("response.id", m, "id")
			str("response.model", m, "model")
			if raw, ok := m["incomplete_details"]; ok {
				if d := obj(raw); d != nil {
					str("response.incomplete_details.reason", d, "reason")
				}
			}
			if raw, ok := m["error"]; ok {
				errObj("response.error", raw)
			}
			if raw, ok := m["usage"]; ok {
				if u := obj(raw); u != nil {
					in, _ := num(u, "input_tokens")
					out, _ := num(u, "output_tokens")
					total, hasTotal := num(u, "total_tokens")
					var cached, reasoning int64
					if raw, ok := u["input_tokens_details"]; ok {
						if d := obj(raw); d != nil {
							cached, _ = num(d, "cached_tokens")
						}
					}
					if raw, ok := u["output_tokens_details"]; ok {
						if d := obj(raw); d != nil {
							reasoning, _ = num(d, "reasoning_tokens")
						}
					}
					v["response.usage"] = fmt.Sprint(in, " ", cached, " ", out, " ", reasoning, " ", total, " ", hasTotal)
				}
			}
		}
	}
	return v, firstErr
}

func diffParse(t *testing.T, d *Decoder, data []byte) {
	t.Helper()
	err := d.parseErr(data)
	want, werr := refView(data)
	if (err != nil) != (werr != nil) {
		t.Fatalf("%q: decoder error %v, encoding/json error %v", data, err, werr)
	}
	if err != nil {
		return
	}
	if diff := cmp.Diff(want, d.view()); diff != "" {
		t.Fatalf("%q: decoder differs from encoding/json (-json +decoder):\n%s", data, diff)
	}
}

var parseCases = []string{
	`{"type":"response.output_text.delta","item_id":"msg_1","output_index":1,"content_index":0,"delta":"The","logprobs":[],"obfuscation":"Zq","sequence_number":14}`,
	`{"type":"response.reasoning_summary_text.delta","item_id":"rs","output_index":0,"summary_index":2,"delta":"a\nb\u00e9\ud83d\ude00"}`,
	`{"type":"response.output_item.done","output_index":0,"item":{"id":"fc","type":"function_call","arguments":"{\"a\":1}","call_id":"c","name":"n"}}`,
	`{"type":"response.completed","response":{"id":"resp_1","model":"m","output":[{"a":1}],"usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":4},"output_tokens":3,"output_tokens_details":{"reasoning_tokens":1},"total_tokens":13}}}`,
	`{"type":"response.completed","response":{"id":"resp_1","usage":{"input_tokens":10,"output_tokens":3,"input_tokens_details":null}}}`,
	`{"type":"response.failed","response":{"id":"r","error":{"code":"server_error","message":"boom"}}}`,
	`{"type":"response.incomplete","response":{"id":"r","incomplete_details":{"reason":"content_filter","x":[1]},"status":"incomplete"}}`,
	`{"type":"response.incomplete","response":{"incomplete_details":null}}`,
	`{"type":"response.incomplete","response":{"incomplete_details":{"reason":null}}}`,
	`{"type":"response.incomplete","response":{"incomplete_details":{"reason":1}}}`,
	`{"type":"response.incomplete","response":{"incomplete_details":"max_output_tokens"}}`,
	`{"type":"error","code":"rate_limit_exceeded","message":"try again in 1ms","param":null}`,
	`{"type":"error","code":429,"message":"x"}`,
	`{"type":"error","error":{"type":"t","code":null,"message":"m"}}`,
	`{"type":"error","error":"plain"}`,
	`{"type":"x","response":null,"item":null,"error":null}`,
	`{"type":"x","output_index":1.5}`,
	`{"type":"x","delta":5}`,
	`{"type":"x","response":{"usage":{"input_tokens":"1"}}}`,
	`{"type":"x","code":true}`,
	`{"type":"x","error":[]}`,
	`[]`,
	`null`,
	"{\"delta\":\"\xff\"}",
	// Cases about JSON syntax alone are in internal/jsonx.
}

func TestParseMatchesEncodingJSON(t *testing.T) {
	d := NewDecoder(Options{})
	for _, c := range parseCases {
		diffParse(t, d, []byte(c))
	}
}

// FuzzParse checks the reflection-free reader against encoding/json.
func FuzzParse(f *testing.F) {
	for _, c := range parseCases {
		f.Add([]byte(c))
	}
	d := NewDecoder(Options{})
	f.Fuzz(func(t *testing.T, data []byte) { diffParse(t, d, data) })
}

func TestRetryAfterMS(t *testing.T) {
	tests := []struct {
		msg  string
		want int64
	}{
		{"Please try again in 125ms.", 125},
		{"Please try again in 2.5s.", 2500},
		{"please TRY AGAIN IN 3 seconds", 3000},
		{"try again in 1.2345s", 1235},
		{"try again in 0.5ms", 1},
		{"try again in 20 milliseconds", 20},
		{"try again in a moment", 0},
		{"try again in 5m", 0},
		{"Rate limit reached", 0},
		{"", 0},
	}
	for _, tc := range tests {
		if got := retryAfterMS(tc.msg); got != tc.want {
			t.Errorf("retryAfterMS(%q) = %d, want %d", tc.msg, got, tc.want)
		}
	}
}

func TestUpstreamError(t *testing.T) {
	tests := []struct {
		typ, code, message string
		want               protocol.StreamError
	}{
		{"", "server_error", "boom", protocol.StreamError{Kind: "upstream_error", Code: "server_error", Message: "boom", Retryable: true}},
		{"", "rate_limit_exceeded", "try again in 7ms", protocol.StreamError{Kind: "upstream_error", Code: "rate_limit_exceeded", Message: "try again in 7ms", Retryable: true, RetryAfterMS: 7}},
		{"invalid_request_error", "context_length_exceeded", "too long", protocol.StreamError{Kind: "upstream_error", Type: "invalid_request_error", Code: "context_length_exceeded", Message: "too long"}},
		{"", "insufficient_quota", "", protocol.StreamError{Kind: "upstream_error", Code: "insufficient_quota"}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(&tc.want, newUpstreamError(tc.typ, tc.code, tc.message)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	}
}

// TestHotPathAllocations: an output_text.delta costs no allocation beyond
// the amortised growth of the decoder's string arena.
func TestHotPathAllocations(t *testing.T) {
	ctx := context.Background()
	d := NewDecoder(Options{})
	ev := sse.Event{Type: TypeOutputTextDelta, Data: []byte(`{"type":"response.output_text.delta","item_id":"msg_1","output_index":1,"content_index":0,"delta":" decoder","logprobs":[],"obfuscation":"Zq","sequence_number":15}`)}
	var n int
	allocs := testing.AllocsPerRun(10000, func() {
		if err := d.Push(ctx, ev, func(protocol.ResponseEvent) { n++ }); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0.01 {
		t.Errorf("%.3f allocations per text delta, want ~0", allocs)
	}
	if n == 0 {
		t.Fatal("no events")
	}
}

func TestDecodeErrors(t *testing.T) {
	d := NewDecoder(Options{})
	err := d.Push(context.Background(), sse.Event{Type: TypeOutputTextDelta, Data: []byte(`{"delta":`), Offset: 9}, func(protocol.ResponseEvent) {})
	var de *DecodeError
	var se *SyntaxError
	if !errors.As(err, &de) || !errors.As(err, &se) || de.Offset != 9 || !strings.Contains(err.Error(), "event at byte 9") {
		t.Fatalf("error %v, want a *DecodeError at byte 9 wrapping a *SyntaxError", err)
	}
}

// TestDecodeErrorText pins the text of the fatal errors: where (the event
// and its byte offset), then what is wrong. Data that is not JSON at all is
// quoted by how it starts; data that starts like JSON of another kind, or
// breaks later, keeps the syntax error and its offset.
func TestDecodeErrorText(t *testing.T) {
	tests := []struct {
		name, sse, data string
		want            string
		dataOffset      int
		notJSON         bool
	}{
		{"HTML page", TypeOutputTextDelta, "<!DOCTYPE html>\n<html><body>Bad Gateway</body></html>",
			`response.output_text.delta event at byte 5: data line is not JSON: starts with "<!DOCTYPE html>\n"…`, 0, true},
		{"plain text, unnamed", "message", "Service Unavailable",
			`message event at byte 5: data line is not JSON: starts with "Service Unavaila"…`, 0, true},
		{"short, blanks around", TypeCompleted, "\t <oops> \r\n",
			`response.completed event at byte 5: data line is not JSON: starts with "<oops>"`, 0, true},
		{"cut at a character boundary", TypeCreated, "ééééééééé",
			`response.created event at byte 5: data line is not JSON: starts with "éééééééé"…`, 0, true},
		{"array, not an object", TypeCompleted, `[{"type":"response.completed"}]`,
			"response.completed event at byte 5: invalid JSON at data byte 0: invalid character '[' looking for beginning of object", 0, false},
		{"number, not an object", TypeCompleted, `502 Bad Gateway`,
			"response.completed event at byte 5: invalid JSON at data byte 0: invalid character '5' looking for beginning of object", 0, false},
		{"broken later, after blanks", TypeOutputTextDelta, "  {\"delta\":\"x\",}",
			"response.output_text.delta event at byte 5: invalid JSON at data byte 13: invalid character '}' looking for beginning of object key string", 13, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []protocol.ResponseEvent
			err := NewDecoder(Options{}).Push(context.Background(), sse.Event{Type: tc.sse, Data: []byte(tc.data), Offset: 5},
				func(e protocol.ResponseEvent) { got = append(got, e) })
			de, ok := errors.AsType[*DecodeError](err)
			if !ok || err.Error() != tc.want {
				t.Fatalf("error %v, want a *DecodeError %q", err, tc.want)
			}
			if len(got) != 0 {
				t.Errorf("emitted %v before the error", got)
			}
			if _, isSyntax := errors.AsType[*SyntaxError](err); !isSyntax || de.DataOffset != tc.dataOffset || de.Offset != 5 {
				t.Errorf("%#v: want a *SyntaxError at data byte %d of the event at byte 5", de, tc.dataOffset)
			}
			if _, ok := errors.AsType[*NotJSONError](err); ok != tc.notJSON {
				t.Errorf("*NotJSONError in the chain: %v, want %v", ok, tc.notJSON)
			}
		})
	}
	// An error event's text stays its message, whatever it looks like.
	last := terminalOf(t, []sse.Event{{Type: TypeError, Data: []byte("<html>overloaded</html>"), Offset: 5}})
	if last.Error == nil || last.Error.Message != "<html>overloaded</html>" {
		t.Errorf("plain error event: %+v", last)
	}
}

// terminalOf runs events through a fresh Decoder and returns its terminal
// event.
func terminalOf(t *testing.T, events []sse.Event) protocol.ResponseEvent {
	t.Helper()
	d := NewDecoder(Options{})
	var last protocol.ResponseEvent
	emit := func(e protocol.ResponseEvent) { last = e }
	for _, ev := range events {
		if err := d.Push(context.Background(), ev, emit); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Finish(context.Background(), emit); err != nil {
		t.Fatal(err)
	}
	if !last.IsTerminal() {
		t.Fatalf("last event %s is not terminal", last.Type)
	}
	return last
}

// unnamed returns SSE events without a name (their JSON type names them).
func unnamed(data ...string) []sse.Event {
	evs := make([]sse.Event, len(data))
	for i, d := range data {
		evs[i] = sse.Event{Type: "message", Data: []byte(d), Offset: int64(i)}
	}
	return evs
}

func TestFinishReasonAndResponseID(t *testing.T) {
	const (
		created    = `{"type":"response.created","response":{"id":"resp_c"}}`
		fnDone     = `{"type":"response.output_item.done","item":{"type":"function_call","id":"fc","call_id":"c","name":"n","arguments":"{}"}}`
		customDone = `{"type":"response.output_item.done","item":{"type":"custom_tool_call","id":"ct","call_id":"c2","name":"apply_patch","input":"x"}}`
		fnAdded    = `{"type":"response.output_item.added","item":{"type":"function_call","id":"fc","call_id":"c","name":"n","arguments":""}}`
		msgDone    = `{"type":"response.output_item.done","item":{"type":"message","id":"m","role":"assistant","content":[]}}`
		completed  = `{"type":"response.completed","response":{"id":"resp_1"}}`
	)
	incomplete := func(details string) string {
		return `{"type":"response.incomplete","response":{"id":"resp_1","status":"incomplete","incomplete_details":` + details + `}}`
	}
	for _, tc := range []struct {
		name   string
		events []sse.Event
		typ    protocol.EventType
		finish string
		id     string
	}{
		{"completed", unnamed(created, msgDone, completed), protocol.EventCompleted, protocol.FinishStop, "resp_1"},
		{"function call", unnamed(created, fnDone, msgDone, completed), protocol.EventCompleted, protocol.FinishToolCalls, "resp_1"},
		{"custom tool call", unnamed(customDone, completed), protocol.EventCompleted, protocol.FinishToolCalls, "resp_1"},
		{"call added, never done", unnamed(fnAdded, completed), protocol.EventCompleted, protocol.FinishStop, "resp_1"},
		{"completed without id", unnamed(created, `{"type":"response.completed","response":{}}`), protocol.EventCompleted, protocol.FinishStop, "resp_c"},
		{"max_output_tokens", unnamed(fnDone, incomplete(`{"reason":"max_output_tokens"}`)), protocol.EventCompleted, protocol.FinishLength, "resp_1"},
		{"content_filter", unnamed(incomplete(`{"reason":"content_filter"}`)), protocol.EventCompleted, protocol.FinishContentFilter, "resp_1"},
		{"other incomplete reason", unnamed(incomplete(`{"reason":"something_new"}`)), protocol.EventCompleted, "something_new", "resp_1"},
		{"incomplete without reason", unnamed(incomplete(`null`)), protocol.EventCompleted, "", "resp_1"},
		{"failed", unnamed(created, `{"type":"response.failed","response":{"id":"resp_f","error":{"code":"server_error","message":"x"}}}`), protocol.EventFailed, "", "resp_f"},
		{"failed without id", unnamed(created, `{"type":"response.failed","response":{"error":null}}`), protocol.EventFailed, "", "resp_c"},
		{"error event", unnamed(created, `{"type":"error","code":"rate_limit_exceeded","message":"slow"}`), protocol.EventFailed, "", "resp_c"},
		{"plain-text error", append(unnamed(created), sse.Event{Type: TypeError, Data: []byte("oops")}), protocol.EventFailed, "", "resp_c"},
		{"error before created", unnamed(`{"type":"error","message":"x"}`), protocol.EventFailed, "", ""},
		{"end of input", unnamed(created), protocol.EventFailed, "", "resp_c"},
		{"cut mid-event", append(unnamed(created), sse.Event{Truncated: true, Offset: 9}), protocol.EventFailed, "", "resp_c"},
	} {
		got := terminalOf(t, tc.events)
		if got.Type != tc.typ || got.FinishReason != tc.finish || got.ResponseID != tc.id {
			t.Errorf("%s: %s finish %q response %q, want %s finish %q response %q", tc.name, got.Type, got.FinishReason, got.ResponseID, tc.typ, tc.finish, tc.id)
		}
	}
}
