package anthropicstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/internal/jsonx"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/sse"
)

// view flattens what the decoder read from one event's data, for comparison
// with the encoding/json reference.
func (d *Decoder) view() map[string]string {
	r := &d.raw
	v := map[string]string{"index": fmt.Sprint(r.index)}
	put := func(k string, sp jsonx.Span) {
		if sp.OK() {
			v[k] = string(d.sc.Bytes(sp))
		}
	}
	put("type", r.typ)
	put("delta.type", r.delta.typ)
	put("delta.text", r.delta.text)
	put("delta.thinking", r.delta.thinking)
	put("delta.partial_json", r.delta.partialJSON)
	put("delta.signature", r.delta.signature)
	put("delta.stop_reason", r.delta.stopReason)
	put("delta.stop_sequence", r.delta.stopSequence)
	usage := func(prefix string, u Usage) {
		bits := []struct {
			name string
			bit  UsageField
			val  int64
		}{
			{"input_tokens", UsageInput, u.InputTokens},
			{"cache_creation_input_tokens", UsageCacheCreation, u.CacheCreationInputTokens},
			{"cache_read_input_tokens", UsageCacheRead, u.CacheReadInputTokens},
			{"output_tokens", UsageOutput, u.OutputTokens},
			{"output_tokens_details.reasoning_tokens", UsageReasoning, u.ReasoningTokens},
		}
		v[prefix] = "present"
		for _, b := range bits {
			if u.Present&b.bit != 0 {
				v[prefix+"."+b.name] = fmt.Sprint(b.val)
			}
		}
	}
	if r.hasUsage {
		usage("usage", r.usage)
	}
	put("message.id", r.msg.id)
	put("message.model", r.msg.model)
	put("message.role", r.msg.role)
	if r.msg.hasUsage {
		usage("message.usage", r.msg.usage)
	}
	put("content_block.type", r.block.typ)
	put("content_block.id", r.block.id)
	put("content_block.name", r.block.name)
	put("content_block.input", r.block.input)
	put("content_block.text", r.block.text)
	put("content_block.thinking", r.block.thinking)
	put("content_block.signature", r.block.signature)
	put("content_block.data", r.block.data)
	put("content_block.tool_use_id", r.block.toolUseID)
	if r.err.present {
		v["error"] = "present"
	}
	put("error.type", r.err.typ)
	put("error.message", r.err.message)
	put("request_id", r.reqID)
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
	v := map[string]string{"index": "0"}
	var firstErr error
	check := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	str := func(k string, m map[string]json.RawMessage, f string) {
		raw, ok := m[f]
		if !ok {
			return
		}
		var p *string
		check(json.Unmarshal(raw, &p))
		if p != nil {
			v[k] = *p
		}
	}
	num := func(k string, m map[string]json.RawMessage, f string) {
		raw, ok := m[f]
		if !ok {
			return
		}
		var p *int64
		check(json.Unmarshal(raw, &p))
		if p != nil {
			v[k] = fmt.Sprint(*p)
		}
	}
	obj := func(raw json.RawMessage) map[string]json.RawMessage {
		var m map[string]json.RawMessage
		check(json.Unmarshal(raw, &m))
		return m
	}
	usage := func(prefix string, raw json.RawMessage) {
		m := obj(raw)
		if m == nil {
			return
		}
		v[prefix] = "present"
		for _, f := range []string{"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"} {
			num(prefix+"."+f, m, f)
		}
		if raw, ok := m["output_tokens_details"]; ok {
			if d := obj(raw); d != nil {
				num(prefix+".output_tokens_details.reasoning_tokens", d, "reasoning_tokens")
			}
		}
	}
	str("type", top, "type")
	if raw, ok := top["index"]; ok {
		var p *int64
		check(json.Unmarshal(raw, &p))
		if p != nil {
			v["index"] = fmt.Sprint(*p)
		}
	}
	if raw, ok := top["delta"]; ok {
		if m := obj(raw); m != nil {
			for _, f := range []string{"type", "text", "thinking", "partial_json", "signature", "stop_reason", "stop_sequence"} {
				str("delta."+f, m, f)
			}
		}
	}
	if raw, ok := top["usage"]; ok {
		usage("usage", raw)
	}
	if raw, ok := top["message"]; ok {
		if m := obj(raw); m != nil {
			for _, f := range []string{"id", "model", "role"} {
				str("message."+f, m, f)
			}
			if raw, ok := m["usage"]; ok {
				usage("message.usage", raw)
			}
		}
	}
	if raw, ok := top["content_block"]; ok {
		if m := obj(raw); m != nil {
			for _, f := range []string{"type", "id", "name", "text", "thinking", "signature", "data", "tool_use_id"} {
				str("content_block."+f, m, f)
			}
			if raw, ok := m["input"]; ok {
				v["content_block.input"] = string(raw)
			}
		}
	}
	if raw, ok := top["error"]; ok && string(raw) != "null" {
		v["error"] = "present"
		if raw[0] == '"' {
			str("error.message", top, "error")
		} else if m := obj(raw); m != nil {
			str("error.type", m, "type")
			str("error.message", m, "message")
		}
	}
	str("request_id", top, "request_id")
	return v, firstErr
}

// diffParse compares the decoder's reading of data with encoding/json's,
// through the general parser and, when it applies, the delta fast path.
func diffParse(t *testing.T, d *Decoder, data []byte) {
	t.Helper()
	want, werr := refView(data)
	if d.parseDelta(data) {
		if werr != nil {
			t.Fatalf("%q: fast path accepted what encoding/json rejects: %v", data, werr)
		}
		if diff := cmp.Diff(want, d.view()); diff != "" {
			t.Fatalf("%q: fast path differs from encoding/json (-json +decoder):\n%s", data, diff)
		}
	}
	err := d.parseErr(data)
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
	`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"t\u00e9"}}`,
	`{"type":"content_block_delta","index":10,"delta":{"type":"input_json_delta","partial_json":"{\"a\": "}}`,
	`{"type":"content_block_delta","index":3,"delta":{"type":"signature_delta","signature":"EqQB=="}}`,
	`{"type":"content_block_delta","index":123456789,"delta":{"type":"text_delta","text":""}}`,
	`{"type":"content_block_delta","index":1234567890,"delta":{"type":"text_delta","text":"x"}}`,
	`{"type":"content_block_delta","index":01,"delta":{"type":"text_delta","text":"x"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}} `,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x\"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x","y":1}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","thinking":"x"}}`,
	`{"type":"content_block_delta","index":-1,"delta":{"type":"text_delta","text":"x"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a` + "\xff" + `b"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Here"}}`,
	` { "delta" : { "text" : "a\"b\\c\/d\b\f\n\r\t\u0041\u00e9\ud83d\ude00" , "type" : "text_delta" } , "type" : "content_block_delta" , "index" : 12 } `,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\ud800"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\ud800\u0041"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\udc00\ud800\udc00"}}`,
	"{\"type\":\"x\",\"delta\":{\"text\":\"bad \xff\xfe utf8 \xed\xa0\x80 é\"}}",
	"{\"t\xffype\":\"x\",\"\\u0074ype\":\"y\"}",
	`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":412,"cache_creation_input_tokens":0,"cache_read_input_tokens":2048,"cache_creation":{"ephemeral_5m_input_tokens":0},"output_tokens":3,"service_tier":"standard"}}}`,
	`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":null,"output_tokens":58,"output_tokens_details":{"reasoning_tokens":5}}}`,
	`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"bash","input":{ "a" : [1, 2.5e3, -0, true, false, null, "x"] }}}`,
	`{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"abc"}}`,
	`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}`,
	`{"type":"error","error":"plain"}`,
	`{"type":"error","error":null}`,
	`{"delta":{"text":"a"},"delta":{"type":"b"}}`,
	`{"usage":{"input_tokens":1},"usage":null}`,
	`{"usage":{"input_tokens":1,"input_tokens":null}}`,
	`{"index":9223372036854775807}`,
	`{"index":-9223372036854775808}`,
	`{}`,
	// invalid
	`{"index":9223372036854775808}`,
	`{"index":1.5}`,
	`{"index":1e2}`,
	`{"index":"1"}`,
	`{"index":01}`,
	`{"index":-}`,
	`{"index":1.}`,
	`{"index":1e}`,
	`{"type":1}`,
	`{"delta":"x"}`,
	`{"delta":[]}`,
	`{"usage":{"input_tokens":"1"}}`,
	`{"error":5}`,
	`null`,
	`[]`,
	`"x"`,
	``,
	// Cases about JSON syntax alone are in internal/jsonx.
}

func TestParseMatchesEncodingJSON(t *testing.T) {
	d := NewDecoder()
	for _, c := range parseCases {
		diffParse(t, d, []byte(c))
	}
}

// FuzzParse checks the reflection-free reader against encoding/json on
// arbitrary event data.
func FuzzParse(f *testing.F) {
	for _, c := range parseCases {
		if len(c) < 4096 {
			f.Add([]byte(c))
		}
	}
	d := NewDecoder()
	f.Fuzz(func(t *testing.T, data []byte) { diffParse(t, d, data) })
}

func decodeOne(t *testing.T, name, data string) (Event, error) {
	t.Helper()
	var got []Event
	err := NewDecoder().Push(context.Background(), sse.Event{Type: name, Data: []byte(data), Offset: 77}, func(e Event) { got = append(got, e.Own()) })
	if len(got) > 1 {
		t.Fatalf("%d events", len(got))
	}
	if len(got) == 0 {
		return Event{}, err
	}
	return got[0], err
}

func TestDecodeEvents(t *testing.T) {
	tests := []struct {
		name, sse, data string
		want            Event // Offset is filled in
		none            bool
		err             string
		notJSON         bool // err's cause is a *NotJSONError
	}{
		{name: "text delta", sse: "content_block_delta", data: `{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"hi"}}`,
			want: Event{Type: TypeContentBlockDelta, Index: 2, Delta: DeltaText, Text: []byte("hi")}},
		{name: "thinking delta", sse: "content_block_delta", data: `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"t"}}`,
			want: Event{Type: TypeContentBlockDelta, Delta: DeltaThinking, Text: []byte("t")}},
		{name: "input json delta empty", sse: "content_block_delta", data: `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}`,
			want: Event{Type: TypeContentBlockDelta, Index: 1, Delta: DeltaInputJSON, Text: []byte{}}},
		{name: "signature", sse: "content_block_delta", data: `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"s=="}}`,
			want: Event{Type: TypeContentBlockDelta, Delta: DeltaSignature, Text: []byte("s==")}},
		{name: "unknown delta", sse: "content_block_delta", data: `{"type":"content_block_delta","index":0,"delta":{"type":"new_delta","x":1}}`,
			want: Event{Type: TypeContentBlockDelta, Delta: "new_delta"}},
		{name: "unnamed event by JSON type", sse: "message", data: `{"type":"content_block_stop","index":3}`,
			want: Event{Type: TypeContentBlockStop, Index: 3}},
		{name: "JSON type wins over name", sse: "content_block_stop", data: `{"type":"message_stop"}`,
			want: Event{Type: TypeMessageStop}},
		{name: "name used without JSON type", sse: "content_block_stop", data: `{"index":4}`,
			want: Event{Type: TypeContentBlockStop, Index: 4}},
		{name: "start", sse: "content_block_start", data: `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"bash","input":{ }}}`,
			want: Event{Type: TypeContentBlockStart, Index: 1, Block: &Block{Type: "tool_use", ID: "toolu_1", Name: "bash", Input: []byte("{ }")}}},
		{name: "message start", sse: "message_start", data: `{"type":"message_start","message":{"id":"msg_1","model":"m","role":"assistant","usage":{"input_tokens":5,"output_tokens":1}}}`,
			want: Event{Type: TypeMessageStart, Message: &MessageInfo{ID: "msg_1", Model: "m", Role: "assistant"},
				Usage: &Usage{InputTokens: 5, OutputTokens: 1, Present: UsageInput | UsageOutput}}},
		{name: "message delta", sse: "message_delta", data: `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":9}}`,
			want: Event{Type: TypeMessageDelta, StopReason: "tool_use", Usage: &Usage{OutputTokens: 9, Present: UsageOutput}}},
		{name: "error", sse: "error", data: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"r"}`,
			want: Event{Type: TypeError, Error: &APIError{Type: "overloaded_error", Message: "Overloaded", RequestID: "r"}}},
		{name: "error without details", sse: "error", data: `{"type":"error"}`,
			want: Event{Type: TypeError, Error: &APIError{Message: `{"type":"error"}`}}},
		{name: "ping", sse: "ping", data: `{"type": "ping"}`, want: Event{Type: TypePing}},
		{name: "unknown name ignored unread", sse: "weird", data: `{not json`, none: true},
		{name: "unknown JSON type ignored", sse: "message", data: `{"type":"future"}`, none: true},
		{name: "untyped unnamed ignored", sse: "message", data: `{"index":1}`, none: true},
		{name: "blank data ignored", sse: "content_block_delta", data: " \n ", none: true},
		{name: "DONE ignored", sse: "message", data: "[DONE]", none: true},
		{name: "malformed", sse: "content_block_delta", data: `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x}}`,
			none: true, err: "content_block_delta event at byte 77: invalid JSON at data byte 80: unexpected end of data in string literal"},
		{name: "not an object", sse: "message_stop", data: `[1]`, none: true,
			err: "message_stop event at byte 77: invalid JSON at data byte 0: invalid character '[' looking for beginning of object"},
		// Data that is not JSON at all is named by how it starts; data that
		// starts like JSON of another kind keeps its syntax error.
		{name: "HTML page", sse: "content_block_delta", data: "<html><head><title>502 Bad Gateway</title></head></html>", none: true, notJSON: true,
			err: `content_block_delta event at byte 77: data line is not JSON: starts with "<html><head><tit"…`},
		{name: "plain text unnamed", sse: "message", data: "upstream timed out", none: true, notJSON: true,
			err: `message event at byte 77: data line is not JSON: starts with "upstream timed o"…`},
		{name: "short text, blanks around", sse: "message_start", data: " \t<oops>\r\n", none: true, notJSON: true,
			err: `message_start event at byte 77: data line is not JSON: starts with "<oops>"`},
		{name: "cut at a character boundary", sse: "message_delta", data: "ééééééééé", none: true, notJSON: true,
			err: `message_delta event at byte 77: data line is not JSON: starts with "éééééééé"…`},
		{name: "control byte", sse: "message_delta", data: "\x00{}", none: true, notJSON: true,
			err: `message_delta event at byte 77: data line is not JSON: starts with "\x00{}"`},
		{name: "string not object", sse: "message_stop", data: `"stop"`, none: true,
			err: `message_stop event at byte 77: invalid JSON at data byte 0: invalid character '"' looking for beginning of object`},
		{name: "word like a literal", sse: "message_stop", data: `nope`, none: true,
			err: "message_stop event at byte 77: invalid JSON at data byte 0: invalid character 'n' looking for beginning of object"},
		{name: "blanks before malformed", sse: "content_block_stop", data: "  {\"index\":}", none: true,
			err: "content_block_stop event at byte 77: invalid JSON at data byte 9: invalid character '}' looking for beginning of value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeOne(t, tc.sse, tc.data)
			if tc.err != "" {
				var se *SyntaxError
				var de *DecodeError
				if err == nil || err.Error() != tc.err || !errors.As(err, &se) || !errors.As(err, &de) || de.Offset != 77 {
					t.Fatalf("error %v, want %q (a *DecodeError wrapping a *SyntaxError)", err, tc.err)
				}
				if _, ok := errors.AsType[*NotJSONError](err); ok != tc.notJSON {
					t.Errorf("error %v: *NotJSONError in the chain %v, want %v", err, ok, tc.notJSON)
				}
				if tc.notJSON && (se.Offset != 0 || de.DataOffset != 0) {
					t.Errorf("not-JSON error %#v: want the syntax error at data byte 0", de)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if tc.none {
				if got.Type != "" || got.Offset != 0 {
					t.Fatalf("emitted %+v, want nothing", got)
				}
				return
			}
			tc.want.Offset = 77
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeTruncationMarker(t *testing.T) {
	var got []Event
	d := NewDecoder()
	if err := d.Push(context.Background(), sse.Event{Truncated: true, Offset: 42}, func(e Event) { got = append(got, e) }); err != nil {
		t.Fatal(err)
	}
	want := []Event{{Type: TypeEndOfStream, Offset: 42, Truncated: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatal(diff)
	}
}

func TestUpstreamErrorClassification(t *testing.T) {
	tests := []struct {
		in   APIError
		want protocol.StreamError
	}{
		{APIError{Type: "overloaded_error", Message: "Overloaded"}, protocol.StreamError{Kind: "upstream_error", Type: "overloaded_error", Code: "server_is_overloaded", Message: "Overloaded", Retryable: true, HTTPStatus: 529}},
		{APIError{Type: "rate_limit_error", Message: "slow"}, protocol.StreamError{Kind: "upstream_error", Type: "rate_limit_error", Code: "rate_limit_exceeded", Message: "slow", Retryable: true, HTTPStatus: 429}},
		{APIError{Type: "api_error", Message: "x", RequestID: "r"}, protocol.StreamError{Kind: "upstream_error", Type: "api_error", Message: "x", Retryable: true, HTTPStatus: 500, RequestID: "r"}},
		{APIError{Type: "timeout_error"}, protocol.StreamError{Kind: "upstream_error", Type: "timeout_error", Retryable: true, HTTPStatus: 504}},
		{APIError{Type: "invalid_request_error", Message: "prompt is too long: 1 > 0"}, protocol.StreamError{Kind: "upstream_error", Type: "invalid_request_error", Code: "context_length_exceeded", Message: "prompt is too long: 1 > 0", HTTPStatus: 400}},
		{APIError{Type: "invalid_request_error", Message: "input exceeds the context window"}, protocol.StreamError{Kind: "upstream_error", Type: "invalid_request_error", Code: "context_length_exceeded", Message: "input exceeds the context window", HTTPStatus: 400}},
		{APIError{Type: "api_error", Message: "maximum context length reached"}, protocol.StreamError{Kind: "upstream_error", Type: "api_error", Code: "context_length_exceeded", Message: "maximum context length reached", HTTPStatus: 500}},
		{APIError{Type: "invalid_request_error", Message: "Prompt Is Too Long"}, protocol.StreamError{Kind: "upstream_error", Type: "invalid_request_error", Code: "context_length_exceeded", Message: "Prompt Is Too Long", HTTPStatus: 400}},
		{APIError{Type: "billing_error"}, protocol.StreamError{Kind: "upstream_error", Type: "billing_error", Code: "insufficient_quota", HTTPStatus: 402}},
		{APIError{Type: "something_new", Message: "?"}, protocol.StreamError{Kind: "upstream_error", Type: "something_new", Message: "?"}},
	}
	for _, tc := range tests {
		got := upstreamError(&tc.in)
		if diff := cmp.Diff(&tc.want, got); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", tc.in, diff)
		}
	}
}

// TestHotPathAllocations pins the cost of the bulk of a stream: decoding a
// text delta allocates nothing, and turning it into an output_text.delta
// allocates only when the block's text buffer grows.
func TestHotPathAllocations(t *testing.T) {
	ctx := context.Background()
	d := NewDecoder()
	a := NewAccumulator(Options{})
	sink := func(protocol.ResponseEvent) {}
	ev := sse.Event{Type: "content_block_delta", Data: []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello, world"}}`)}
	if err := d.Push(ctx, sse.Event{Type: "content_block_start", Data: []byte(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)}, func(e Event) {
		if err := a.Push(ctx, e, sink); err != nil {
			t.Fatal(err)
		}
	}); err != nil {
		t.Fatal(err)
	}
	var perr error
	push := func(e Event) { perr = a.Push(ctx, e, sink) }
	allocs := testing.AllocsPerRun(10000, func() {
		if err := d.Push(ctx, ev, push); err != nil || perr != nil {
			t.Fatal(err, perr)
		}
	})
	if allocs > 0.01 {
		t.Errorf("%.3f allocations per text delta, want ~0", allocs)
	}
	decodeOnly := testing.AllocsPerRun(1000, func() {
		if err := d.Push(ctx, ev, func(Event) {}); err != nil {
			t.Fatal(err)
		}
	})
	if decodeOnly != 0 {
		t.Errorf("decoding a text delta allocates %.1f times, want 0", decodeOnly)
	}
}
