package responses_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/wire/responses"
)

// chatTurn is what the chat decoder emits for a reply with reasoning, text
// and a tool call: fixed item ids, the reasoning still open when the text
// starts, the done items at the end.
func chatTurn() []protocol.ResponseEvent {
	rs := &protocol.Reasoning{ID: "chat-reasoning-1", Summary: []protocol.SummaryText{},
		Content: []protocol.ReasoningContent{{Type: protocol.ReasoningTypeText}}}
	msg := &protocol.Message{ID: "chat-message-1", Role: protocol.RoleAssistant, Content: []protocol.ContentItem{protocol.OutputText("")}}
	return []protocol.ResponseEvent{
		protocol.ServerModel("m"), protocol.Created(),
		protocol.Added(rs), protocol.ReasoningDelta("think", 0), protocol.ReasoningDelta("ing", 0),
		protocol.Added(msg), protocol.TextDelta("Hel"), protocol.TextDelta("lo"),
		protocol.Done(&protocol.Reasoning{ID: "chat-reasoning-1", Summary: []protocol.SummaryText{},
			Content: []protocol.ReasoningContent{{Type: protocol.ReasoningTypeText, Text: "thinking"}}}),
		protocol.Done(&protocol.Message{ID: "chat-message-1", Role: protocol.RoleAssistant, Content: []protocol.ContentItem{protocol.OutputText("Hello")}}),
		protocol.Done(&protocol.FunctionCall{Name: "exec_command", Arguments: `{"cmd":"ls"}`, CallID: "call_1"}),
		protocol.Completed("chatcmpl-compat", &protocol.TokenUsage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15}),
	}
}

func run(t *testing.T, opts responses.Options, evs []protocol.ResponseEvent) (*responses.Writer, []byte) {
	t.Helper()
	var buf bytes.Buffer
	w := responses.NewWriter(&buf, opts)
	for _, ev := range evs {
		if err := w.Accept(ev); err != nil {
			t.Fatalf("accept %s: %v", ev.Type, err)
		}
	}
	return w, buf.Bytes()
}

func itemIDs(t *testing.T, b []byte) []string {
	t.Helper()
	var ids []string
	for _, ev := range parseSSE(t, b) {
		if ev.name == "response.output_item.added" {
			ids = append(ids, ev.data["item"].(map[string]any)["id"].(string))
		}
	}
	return ids
}

// Item ids differ between responses (the chat decoder gives every response
// the same ones) and within one.
func TestWriterUniqueItemIDs(t *testing.T) {
	seen := map[string]bool{}
	for range 3 {
		_, b := run(t, responses.Options{}, chatTurn())
		checkWellFormed(t, b)
		ids := itemIDs(t, b)
		if len(ids) != 3 {
			t.Fatalf("ids %v", ids)
		}
		for _, id := range ids {
			if seen[id] {
				t.Errorf("id %q repeats", id)
			}
			seen[id] = true
		}
	}
}

// KeepItemIDs keeps the ids an upstream gives (the Responses wire's are
// unique already) and still makes repeated or missing ones unique.
func TestWriterKeepItemIDs(t *testing.T) {
	m := func(id, text string) *protocol.Message {
		return &protocol.Message{ID: id, Role: protocol.RoleAssistant, Content: []protocol.ContentItem{protocol.OutputText(text)}}
	}
	opts := fixedOptions
	opts.KeepItemIDs = true
	_, b := run(t, opts, []protocol.ResponseEvent{
		protocol.Done(m("msg_up1", "a")), protocol.Done(m("msg_up1", "b")), protocol.Done(m("", "c")),
		protocol.Done(&protocol.FunctionCall{Name: "f", Arguments: "{}", CallID: "c1"}),
		protocol.Completed("r", nil),
	})
	checkWellFormed(t, b)
	if diff := cmp.Diff([]string{"msg_up1", "msg_up1_test_1", "msg_test_2", "fc_test_3"}, itemIDs(t, b)); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
}

// The reasoning item is done before the message opens, the message is
// announced without content and gets exactly one part, and the done item
// of the reasoning (sent after the message started) is not written twice.
func TestWriterOneItemAtATime(t *testing.T) {
	w, b := run(t, fixedOptions, chatTurn())
	checkWellFormed(t, b)
	var order []string
	for _, ev := range parseSSE(t, b) {
		switch ev.name {
		case "response.output_item.added", "response.output_item.done":
			order = append(order, strings.TrimPrefix(ev.name, "response.output_item.")+" "+ev.data["item"].(map[string]any)["type"].(string))
		case "response.content_part.added":
			order = append(order, "part "+ev.data["part"].(map[string]any)["type"].(string))
		}
	}
	want := []string{"added reasoning", "part reasoning_text", "done reasoning", "added message", "part output_text", "done message",
		"added function_call", "done function_call"}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	out := w.Output()
	if len(out) != 3 {
		t.Fatalf("output %d items", len(out))
	}
	if r := out[0].(*protocol.Reasoning); len(r.Content) != 1 || r.Content[0].Text != "thinking" {
		t.Errorf("reasoning %+v", r)
	}
	if m := out[1].(*protocol.Message); len(m.Content) != 1 || m.Content[0].Text != "Hello" {
		t.Errorf("message %+v", m)
	}
}

// Reasoning and text that interleave become separate items, each with
// only its own text.
func TestWriterInterleavedItems(t *testing.T) {
	rs := &protocol.Reasoning{ID: "r1"}
	msg := &protocol.Message{ID: "m1", Role: protocol.RoleAssistant}
	w, b := run(t, fixedOptions, []protocol.ResponseEvent{
		protocol.Added(rs), protocol.SummaryDelta("a", 0),
		protocol.Added(msg), protocol.TextDelta("x"),
		protocol.SummaryDelta("b", 0), protocol.TextDelta("y"),
		protocol.Done(&protocol.Reasoning{ID: "r1", Summary: []protocol.SummaryText{{Type: protocol.SummaryTypeText, Text: "ab"}}}),
		protocol.Done(&protocol.Message{ID: "m1", Role: protocol.RoleAssistant, Content: []protocol.ContentItem{protocol.OutputText("xy")}}),
		protocol.Completed("r", nil),
	})
	checkWellFormed(t, b)
	var texts []string
	for _, it := range w.Output() {
		switch v := it.(type) {
		case *protocol.Reasoning:
			texts = append(texts, "rs:"+v.Summary[0].Text)
		case *protocol.Message:
			texts = append(texts, "msg:"+v.Content[0].Text)
		}
	}
	if diff := cmp.Diff([]string{"rs:a", "msg:x", "rs:b", "msg:y"}, texts); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
}

// Reasoning parts are numbered for the client from 0 in the order they
// come, whatever indexes the upstream used; parts that only the done item
// has are streamed whole.
func TestWriterReasoningParts(t *testing.T) {
	w, b := run(t, fixedOptions, []protocol.ResponseEvent{
		protocol.SummaryDelta("second", 3), protocol.SummaryPartAdded(1), protocol.SummaryDelta("first", 1),
		protocol.Done(&protocol.Reasoning{Summary: []protocol.SummaryText{{Type: protocol.SummaryTypeText, Text: "zero"},
			{Type: protocol.SummaryTypeText, Text: "FIRST"}}}),
		protocol.Completed("r", nil),
	})
	checkWellFormed(t, b)
	var got []string
	for _, s := range w.Output()[0].(*protocol.Reasoning).Summary {
		got = append(got, s.Text)
	}
	if diff := cmp.Diff([]string{"second", "FIRST", "zero"}, got); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
}

// The Response object echoes the request's parameters and has null where
// the client set nothing.
func TestWriterResponseObject(t *testing.T) {
	req, err := protocol.DecodeRequest([]byte(`{"model":"gpt-x","instructions":"Be brief.","input":"hi",
		"tools":[{"type":"function","name":"f","description":"d","parameters":{"type":"object","properties":{}},"strict":true}],
		"tool_choice":"required","parallel_tool_calls":false,"temperature":0.2,"top_p":0.9,"max_output_tokens":100,
		"metadata":{"k":"v"},"previous_response_id":"resp_prev","user":"u1","reasoning":{"effort":"low"},
		"text":{"verbosity":"low"},"truncation":"auto","store":true,"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	opts := fixedOptions
	opts.Request, opts.Model, opts.Store = req, "gpt-x", true
	w, b := run(t, opts, []protocol.ResponseEvent{protocol.TextDelta("ok"), protocol.Completed("r", &protocol.TokenUsage{InputTokens: 3, OutputTokens: 1})})
	checkWellFormed(t, b)
	checkOpenAIGo(t, b)
	var got map[string]any
	if err := json.Unmarshal(w.AppendResponse(nil), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"instructions": "Be brief.", "tool_choice": "required", "parallel_tool_calls": false, "temperature": 0.2,
		"top_p": 0.9, "max_output_tokens": float64(100), "metadata": map[string]any{"k": "v"},
		"previous_response_id": "resp_prev", "user": "u1", "reasoning": map[string]any{"effort": "low", "summary": nil},
		"text": map[string]any{"verbosity": "low"}, "truncation": "auto", "store": true, "model": "gpt-x",
		"status": "completed", "error": nil, "incomplete_details": nil,
		"usage": map[string]any{"input_tokens": float64(3), "input_tokens_details": map[string]any{"cached_tokens": float64(0)},
			"output_tokens": float64(1), "output_tokens_details": map[string]any{"reasoning_tokens": float64(0)}, "total_tokens": float64(4)},
	}
	for k, v := range want {
		if diff := cmp.Diff(v, got[k]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", k, diff)
		}
	}
	if tools, _ := got["tools"].([]any); len(tools) != 1 || tools[0].(map[string]any)["name"] != "f" {
		t.Errorf("tools %v", got["tools"])
	}

	// No request: the defaults.
	w, _ = run(t, fixedOptions, []protocol.ResponseEvent{protocol.Completed("r", nil)})
	got = nil
	if err := json.Unmarshal(w.AppendResponse(nil), &got); err != nil {
		t.Fatal(err)
	}
	defaults := map[string]any{"instructions": nil, "tool_choice": "auto", "tools": []any{}, "parallel_tool_calls": true,
		"temperature": nil, "top_p": nil, "metadata": map[string]any{}, "previous_response_id": nil, "store": false,
		"text": map[string]any{"format": map[string]any{"type": "text"}}, "truncation": "disabled", "usage": nil, "model": "",
		"output": []any{}}
	for k, v := range defaults {
		if diff := cmp.Diff(v, got[k]); diff != "" {
			t.Errorf("default %s (-want +got):\n%s", k, diff)
		}
	}
	if _, ok := got["user"]; ok {
		t.Error("user without a user")
	}
}

// recordingWriter records what was written when Keep ran.
type recordingWriter struct{ bytes.Buffer }

// Keep runs before the terminal event is written, with the output as the
// client receives it, and decides the terminal object's "store".
func TestWriterKeep(t *testing.T) {
	for _, kept := range []bool{true, false} {
		var rec recordingWriter
		var seen []protocol.ResponseItem
		var before string
		opts := fixedOptions
		opts.Store = true
		opts.Keep = func(out []protocol.ResponseItem) (bool, *protocol.StreamError) {
			seen, before = out, rec.String()
			return kept, nil
		}
		w := responses.NewWriter(&rec, opts)
		for _, ev := range chatTurn() {
			if err := w.Accept(ev); err != nil {
				t.Fatal(err)
			}
		}
		if strings.Contains(before, "response.completed") || !strings.Contains(before, "response.output_item.done") {
			t.Errorf("Keep ran after the terminal event or before the items were done")
		}
		if len(seen) != 3 || protocol.ItemID(seen[1]) != "chat-message-1_test_1" {
			t.Errorf("Keep saw %d items (%v)", len(seen), seen)
		}
		evs := parseSSE(t, rec.Bytes())
		first, last := evs[0].data["response"].(map[string]any), evs[len(evs)-1].data["response"].(map[string]any)
		if first["store"] != true || last["store"] != kept {
			t.Errorf("kept %v: store %v then %v", kept, first["store"], last["store"])
		}
	}
	// Not for a failed response.
	called := false
	opts := fixedOptions
	opts.Keep = func([]protocol.ResponseItem) (bool, *protocol.StreamError) { called = true; return true, nil }
	run(t, opts, []protocol.ResponseEvent{protocol.TextDelta("x"), protocol.Failed(&protocol.StreamError{Kind: protocol.ErrKindTruncated})})
	if called {
		t.Error("Keep called for a failed response")
	}
}

// A Keep that fails ends the response with response.failed carrying its
// error, after the items were done; the objects say "store": false at the
// end, and the writer's Failure is that error (a non-streaming client's
// error body comes from it).
func TestWriterKeepFails(t *testing.T) {
	opts := fixedOptions
	opts.Store = true
	fail := &protocol.StreamError{Kind: protocol.ErrKindUpstream, Code: "store_unavailable", Message: "the store is down", RetryAfterMS: 2000}
	opts.Keep = func([]protocol.ResponseItem) (bool, *protocol.StreamError) { return false, fail }
	w, b := run(t, opts, chatTurn())
	evs := parseSSE(t, b)
	last := evs[len(evs)-1]
	if last.name != "response.failed" {
		t.Fatalf("terminal %s, want response.failed", last.name)
	}
	resp := last.data["response"].(map[string]any)
	e, _ := resp["error"].(map[string]any)
	if resp["status"] != "failed" || resp["store"] != false || e["code"] != "store_unavailable" ||
		!strings.Contains(e["message"].(string), "the store is down") || !strings.Contains(e["message"].(string), "try again in 2000ms") {
		t.Errorf("failed response %v", resp)
	}
	if _, ok := resp["end_turn"]; ok {
		t.Errorf("a failed response carries end_turn: %v", resp)
	}
	done := 0
	for _, ev := range evs {
		if ev.name == "response.completed" {
			t.Error("response.completed written although Keep failed")
		}
		if ev.name == "response.output_item.done" {
			done++
		}
	}
	if done != 3 {
		t.Errorf("%d items done before the failure, want 3", done)
	}
	if f := w.Failure(); f == nil || f.Code != "store_unavailable" || f.RetryAfterMS != 2000 {
		t.Errorf("Failure() = %+v", f)
	}
	if w.Terminal() != responses.EventFailed {
		t.Errorf("Terminal() = %s", w.Terminal())
	}
}

// With no io.Writer the writer writes nothing and builds the same Response
// object a stream ends with.
func TestWriterWithoutStream(t *testing.T) {
	for name, evs := range map[string][]protocol.ResponseEvent{
		"completed":  chatTurn(),
		"incomplete": {protocol.TextDelta("cut"), {Type: protocol.EventCompleted, FinishReason: protocol.FinishLength}},
		"failed":     {protocol.TextDelta("x"), protocol.Failed(&protocol.StreamError{Kind: protocol.ErrKindUpstream, Code: "rate_limit_exceeded", Message: "slow down"})},
	} {
		t.Run(name, func(t *testing.T) {
			_, b := run(t, fixedOptions, evs)
			sseEvs := parseSSE(t, b)
			want, _ := json.Marshal(sseEvs[len(sseEvs)-1].data["response"])
			quiet := responses.NewWriter(nil, fixedOptions)
			for _, ev := range evs {
				if err := quiet.Accept(ev); err != nil {
					t.Fatal(err)
				}
			}
			var got any
			if err := json.Unmarshal(quiet.AppendResponse(nil), &got); err != nil {
				t.Fatal(err)
			}
			gotJSON, _ := json.Marshal(got)
			if string(gotJSON) != string(want) {
				t.Errorf("response object\n got %s\nwant %s", gotJSON, want)
			}
			if quiet.Events() != len(sseEvs) || !quiet.Ended() {
				t.Errorf("events %d, want %d", quiet.Events(), len(sseEvs))
			}
			if name == "failed" && (quiet.Failure() == nil || quiet.Failure().Code != "rate_limit_exceeded") {
				t.Errorf("failure %+v", quiet.Failure())
			}
		})
	}
}

// Items that are nil pointers are ignored, not a panic.
func TestWriterNilItems(t *testing.T) {
	_, b := run(t, fixedOptions, []protocol.ResponseEvent{
		protocol.Added((*protocol.Message)(nil)), protocol.Done((*protocol.FunctionCall)(nil)), {Type: protocol.EventOutputItemDone},
		protocol.Done(&protocol.OtherItem{Type: "image_generation_call"}), protocol.Completed("r", nil),
	})
	checkWellFormed(t, b)
	if ids := itemIDs(t, b); len(ids) != 1 || ids[0] != "item_test_0" {
		t.Errorf("ids %v", ids)
	}
}

// FuzzWriter: whatever the engine's events, in whatever order, the stream
// written is well formed.
func FuzzWriter(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13})
	f.Add([]byte{5, 0, 0, 6, 2, 2, 7, 9, 10, 13})
	f.Add([]byte{3, 4, 3, 1, 8, 11, 12, 2, 14})
	f.Fuzz(func(t *testing.T, ops []byte) {
		var buf bytes.Buffer
		w := responses.NewWriter(&buf, fixedOptions)
		for _, op := range ops {
			if err := w.Accept(fuzzEvent(op)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Accept(protocol.Completed("r", nil)); err != nil {
			t.Fatal(err)
		}
		for _, p := range wellFormed(buf.Bytes()) {
			t.Error(p)
		}
	})
}

func fuzzEvent(op byte) protocol.ResponseEvent {
	id := []string{"", "a", "b"}[int(op>>4)%3]
	text := []protocol.ContentItem{protocol.OutputText("done text")}
	switch op % 16 {
	case 0:
		return protocol.TextDelta("t")
	case 1:
		return protocol.ReasoningDelta("r", int(op>>4)%3)
	case 2:
		return protocol.SummaryDelta("s", int(op>>4)%3)
	case 3:
		return protocol.SummaryPartAdded(int(op>>4) % 3)
	case 4:
		return protocol.Added(&protocol.Message{ID: id, Role: protocol.RoleAssistant})
	case 5:
		return protocol.Added(&protocol.Reasoning{ID: id})
	case 6:
		return protocol.Added(&protocol.FunctionCall{ID: id, Name: "f", CallID: "c" + id})
	case 7:
		return protocol.ToolInputDelta(id, "c"+id, `{"x":1}`)
	case 8:
		return protocol.Done(&protocol.Message{ID: id, Role: protocol.RoleAssistant, Content: text})
	case 9:
		return protocol.Done(&protocol.Reasoning{ID: id, Summary: []protocol.SummaryText{{Type: protocol.SummaryTypeText, Text: "sum"}},
			Content: []protocol.ReasoningContent{{Type: protocol.ReasoningTypeText, Text: "raw"}}})
	case 10:
		return protocol.Done(&protocol.FunctionCall{ID: id, Name: "f", CallID: "c" + id, Arguments: "{}"})
	case 11:
		return protocol.Done(&protocol.CustomToolCall{ID: id, Name: "p", CallID: "c" + id, Input: "in"})
	case 12:
		return protocol.Done(&protocol.Message{ID: id, Role: protocol.RoleUser, Content: []protocol.ContentItem{protocol.InputText("u")}})
	case 13:
		return protocol.Done(&protocol.Message{ID: id, Role: protocol.RoleAssistant})
	case 14:
		return protocol.ServerModel("m" + id)
	}
	return protocol.Created()
}

// BenchmarkWriter writes a reply of 1000 text deltas and a tool call.
func BenchmarkWriter(b *testing.B) {
	evs := []protocol.ResponseEvent{protocol.Created(), protocol.Added(&protocol.Reasoning{ID: "r"})}
	for range 200 {
		evs = append(evs, protocol.ReasoningDelta("thinking ", 0))
	}
	for range 1000 {
		evs = append(evs, protocol.TextDelta("some words "))
	}
	evs = append(evs, protocol.Done(&protocol.FunctionCall{Name: "exec_command", Arguments: `{"cmd":"ls -la"}`, CallID: "c1"}),
		protocol.Completed("r", &protocol.TokenUsage{InputTokens: 100, OutputTokens: 1200}))
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		w := responses.NewWriter(&buf, fixedOptions)
		for _, ev := range evs {
			if err := w.Accept(ev); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.SetBytes(int64(buf.Len()))
}
