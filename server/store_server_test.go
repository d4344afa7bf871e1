package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/scripted"
	"github.com/harnessflow/harnessflow/server"
)

// streamed posts a streaming request and returns the terminal response
// object.
func streamed(t *testing.T, p *proxy, body string, header map[string]string) map[string]any {
	t.Helper()
	resp := p.post(t, "/v1/responses", body, header)
	if resp.StatusCode != 200 {
		data, _ := io.ReadAll(resp.Body)
		t.Fatalf("HTTP %d: %s", resp.StatusCode, data)
	}
	last := terminal(t, readSSE(t, resp.Body))
	if last.Name != "response.completed" {
		t.Fatalf("terminal %s: %s", last.Name, last.Raw)
	}
	return last.Data["response"].(map[string]any)
}

func outputIDs(obj map[string]any) map[string]string {
	ids := map[string]string{}
	for _, it := range obj["output"].([]any) {
		m := it.(map[string]any)
		ids[m["type"].(string)] = m["id"].(string)
	}
	return ids
}

var bearerA = map[string]string{"Authorization": "Bearer sk-client-a"}

// previous_response_id brings the previous response's input and output in
// front of the request's input; the upstream never sees the id.
func TestPreviousResponseID(t *testing.T) {
	rec := &recorder{h: scripted.New(nil)}
	p := newProxy(t, newUpstream(t, rec), server.Config{})
	first := streamed(t, p, `{"model":"m","input":"My name is Ada.","stream":true}`, bearerA)
	if first["store"] != true {
		t.Fatalf("store %v", first["store"])
	}
	id := first["id"].(string)
	second := streamed(t, p, `{"model":"m","input":"What is my name?","stream":true,"previous_response_id":"`+id+`"}`, bearerA)
	if second["previous_response_id"] != id {
		t.Errorf("previous_response_id echoed as %v", second["previous_response_id"])
	}
	_, body, _ := rec.last(t)
	var chat struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(body), &chat); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range chat.Messages {
		got = append(got, m.Role+": "+m.Content)
	}
	want := []string{"user: My name is Ada.", "assistant: " + outputText(first), "user: What is my name?"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("upstream messages\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if strings.Contains(body, "previous_response_id") || strings.Contains(body, id) {
		t.Errorf("the id went upstream: %s", body)
	}
	// A chain: the third request sees all of it.
	third := streamed(t, p, `{"model":"m","input":"And again?","previous_response_id":"`+second["id"].(string)+`","stream":true}`, bearerA)
	_, body, _ = rec.last(t)
	for _, s := range []string{"My name is Ada.", "What is my name?", "And again?", outputText(second)} {
		if !strings.Contains(body, s) {
			t.Errorf("third upstream request lacks %q", s)
		}
	}
	// Non-streaming, the same.
	status, obj := unaryBody(t, p, `{"model":"m","input":"Once more.","previous_response_id":"`+third["id"].(string)+`"}`, bearerA)
	if status != 200 || obj["previous_response_id"] != third["id"] {
		t.Errorf("%d %v", status, obj)
	}
	_, body, _ = rec.last(t)
	if !strings.Contains(body, "My name is Ada.") {
		t.Errorf("unary continuation lost the history: %s", body)
	}
}

// item_reference input items (the AI SDK's default with store true) are
// replaced by the items they name: the upstream sees the assistant text and
// the call of the earlier response.
func TestItemReference(t *testing.T) {
	rec := &recorder{h: scripted.New(nil)}
	p := newProxy(t, newUpstream(t, rec), server.Config{})
	tools := `"tools":[{"type":"function","name":"shell","description":"Run a command.","parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]},"strict":false}]`
	first := streamed(t, p, `{"model":"m","input":[{"role":"user","content":"Run it."}],`+tools+`,"stream":true}`, bearerA)
	ids := outputIDs(first)
	if ids["message"] == "" || ids["reasoning"] == "" || ids["function_call"] == "" {
		t.Fatalf("output %v", first["output"])
	}
	var call map[string]any
	for _, it := range first["output"].([]any) {
		if m := it.(map[string]any); m["type"] == "function_call" {
			call = m
		}
	}
	input := fmt.Sprintf(`[{"role":"user","content":"Run it."},{"type":"item_reference","id":%q},{"type":"item_reference","id":%q},`+
		`{"type":"function_call","call_id":%q,"name":"shell","arguments":%q},{"type":"function_call_output","call_id":%q,"output":"hello from the tool"}]`,
		ids["reasoning"], ids["message"], call["call_id"], call["arguments"], call["call_id"])
	second := streamed(t, p, `{"model":"m","input":`+input+`,`+tools+`,"stream":true}`, bearerA)
	if !strings.Contains(outputText(second), "hello from the tool") {
		t.Errorf("second answer %q", outputText(second))
	}
	_, body, _ := rec.last(t)
	if !strings.Contains(body, "Let me run a quick command.") || strings.Contains(body, "item_reference") {
		t.Errorf("the referenced text did not reach the upstream: %s", body)
	}
	// A reference of another credential is not found.
	resp := p.post(t, "/v1/responses", `{"model":"m","input":`+input+`,`+tools+`,"stream":true}`, map[string]string{"Authorization": "Bearer sk-client-b"})
	msg, typ := errorBody(t, resp)
	if resp.StatusCode != 400 || typ != "invalid_request_error" || !strings.Contains(msg, ids["reasoning"]) || !strings.Contains(msg, "not found") {
		t.Errorf("other key: %d %q", resp.StatusCode, msg)
	}
}

// Codex sends store:false: nothing is kept, the response says so, and its
// requests go upstream as before (no store lookups, nothing added).
func TestStoreFalseKeepsNothing(t *testing.T) {
	rec := &recorder{h: scripted.New(nil)}
	p := newProxy(t, newUpstream(t, rec), server.Config{})
	obj := streamed(t, p, codexRequest(userMsg, true), bearerA)
	if obj["store"] != false {
		t.Errorf("store %v", obj["store"])
	}
	resp := p.post(t, "/v1/responses", `{"model":"m","input":"x","stream":true,"previous_response_id":"`+obj["id"].(string)+`"}`, bearerA)
	msg, _ := errorBody(t, resp)
	if resp.StatusCode != 400 || !strings.Contains(msg, `"store": false`) {
		t.Errorf("%d %q", resp.StatusCode, msg)
	}
	if m := metricsText(t, p); strings.Contains(m, "harnessflow_store_puts_total{") || !strings.Contains(m, "harnessflow_store_responses 0") {
		t.Errorf("metrics:\n%s", m)
	}
}

// An unknown id, or the store switched off: HTTP 400 saying why, and the
// upstream is not called.
func TestStoreReferenceErrors(t *testing.T) {
	rec := &recorder{h: scripted.New(nil)}
	up := newUpstream(t, rec)
	on := newProxy(t, up, server.Config{StoreTTL: 30 * 60e9, StoreMaxResponses: 500, StoreMaxBytes: 64 << 20})
	off := newProxy(t, up, server.Config{NoStore: true})
	cases := []struct {
		p    *proxy
		body string
		want []string
	}{
		{on, `{"model":"m","input":"x","previous_response_id":"resp_nope"}`,
			[]string{`previous_response_id "resp_nope" not found`, "30 minutes", "at most 500", "64 MiB", "API key", `"store": false`}},
		{on, `{"model":"m","input":[{"type":"item_reference","id":"msg_nope"}]}`, []string{`input[0]: item_reference "msg_nope" not found`}},
		{on, `{"model":"m","input":[{"type":"item_reference"}]}`, []string{`needs an "id"`}},
		{on, `{"model":"m","input":"x","previous_response_id":7}`, []string{"previous_response_id must be a string"}},
		{off, `{"model":"m","input":"x","previous_response_id":"resp_x"}`, []string{"keeps no responses"}},
		{off, `{"model":"m","input":[{"type":"item_reference","id":"msg_x"}]}`, []string{"keeps no responses"}},
	}
	for _, c := range cases {
		resp := c.p.post(t, "/v1/responses", c.body, nil)
		msg, typ := errorBody(t, resp)
		if resp.StatusCode != 400 || typ != "invalid_request_error" {
			t.Errorf("%s: %d %s %q", c.body, resp.StatusCode, typ, msg)
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: message %q lacks %q", c.body, msg, w)
			}
		}
	}
	if n := rec.requests(); n != 0 {
		t.Errorf("the upstream was called %d times", n)
	}
	m := metricsText(t, on)
	for _, w := range []string{`harnessflow_store_lookups_total{kind="previous_response",result="miss"} 1`,
		`harnessflow_store_lookups_total{kind="item_reference",result="miss"} 1`} {
		if !strings.Contains(m, w) {
			t.Errorf("metrics lack %s:\n%s", w, m)
		}
	}
	if m := metricsText(t, off); !strings.Contains(m, `result="disabled"} 1`) || strings.Contains(m, "harnessflow_store_responses") {
		t.Errorf("metrics (store off):\n%s", m)
	}
}

// failingStore is a Store whose every call fails.
type failingStore struct{}

func (failingStore) Put(context.Context, string, *server.StoredResponse) error {
	return errors.New("backend down")
}
func (failingStore) Get(context.Context, string, string) (*server.StoredResponse, error) {
	return nil, errors.New("backend down")
}
func (failingStore) GetItem(context.Context, string, string) (protocol.ResponseItem, error) {
	return nil, errors.New("backend down")
}

// A store that fails: a lookup is HTTP 503; a response that cannot be kept
// fails (store_unavailable); a response that need not be kept completes.
// (TestStoreOutageStream follows an outage through.)
func TestStoreFailure(t *testing.T) {
	p := newProxy(t, newUpstream(t, scripted.New(nil)), server.Config{Store: failingStore{}})
	resp := p.post(t, "/v1/responses", `{"model":"m","input":"hi","stream":true}`, nil)
	if last := terminal(t, readSSE(t, resp.Body)); last.Name != "response.failed" || !strings.Contains(last.Raw, `"code":"store_unavailable"`) {
		t.Errorf("a response the store could not keep: %s", last.Raw)
	}
	if obj := streamed(t, p, `{"model":"m","input":"hi","stream":true,"store":false}`, nil); obj["store"] != false {
		t.Errorf("store %v", obj["store"])
	}
	resp = p.post(t, "/v1/responses", `{"model":"m","input":"x","previous_response_id":"resp_1"}`, nil)
	if msg, _ := errorBody(t, resp); resp.StatusCode != 503 || !strings.Contains(msg, "backend down") {
		t.Errorf("%d %q", resp.StatusCode, msg)
	}
	if m := metricsText(t, p); !strings.Contains(m, `harnessflow_store_puts_total{result="error"} 1`) {
		t.Errorf("metrics:\n%s", m)
	}
}

// responsesUpstream is a Responses-wire upstream answering every request
// with one message of id msgID.
func responsesUpstream(msgID string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		item := `{"type":"message","id":"` + msgID + `","role":"assistant","status":"completed","content":[{"type":"output_text","text":"upstream says hi","annotations":[]}]}`
		for _, ev := range []string{
			`{"type":"response.created","response":{"id":"resp_up","model":"up-model","output":[]}}`,
			`{"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"` + msgID + `","role":"assistant","status":"in_progress","content":[]}}`,
			`{"type":"response.output_text.delta","item_id":"` + msgID + `","output_index":0,"content_index":0,"delta":"upstream says hi"}`,
			`{"type":"response.output_item.done","output_index":0,"item":` + item + `}`,
			`{"type":"response.completed","response":{"id":"resp_up","model":"up-model","output":[` + item + `],"usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3}}}`,
		} {
			var head struct{ Type string }
			_ = json.Unmarshal([]byte(ev), &head)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", head.Type, ev)
		}
	}
}

// On the Responses wire the upstream's item ids are kept; a reference the
// store holds is resolved, one it does not hold goes upstream as it is (the
// ids are the upstream's); previous_response_id never goes upstream; and
// parallel_tool_calls and store go only when the client sent them.
func TestStoreResponsesWire(t *testing.T) {
	rec := &recorder{h: responsesUpstream("msg_upstream_1")}
	p := newProxy(t, newUpstream(t, rec), server.Config{Wire: harness.WireResponses})
	first := streamed(t, p, `{"model":"m","input":"hi","stream":true}`, nil)
	if ids := outputIDs(first); ids["message"] != "msg_upstream_1" {
		t.Errorf("ids %v", ids)
	}
	_, body, _ := rec.last(t)
	if strings.Contains(body, "parallel_tool_calls") || strings.Contains(body, `"store"`) {
		t.Errorf("defaults the client did not send went upstream: %s", body)
	}
	streamed(t, p, `{"model":"m","previous_response_id":"`+first["id"].(string)+`","parallel_tool_calls":false,"store":false,"stream":true,`+
		`"input":[{"type":"item_reference","id":"msg_upstream_1"},{"type":"item_reference","id":"msg_elsewhere"},{"role":"user","content":"more"}]}`, nil)
	_, body, _ = rec.last(t)
	var up struct {
		Input []map[string]any `json:"input"`
		Extra map[string]any
	}
	if err := json.Unmarshal([]byte(body), &up); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, it := range up.Input {
		k := fmt.Sprint(it["type"])
		if id, ok := it["id"]; ok {
			k += ":" + fmt.Sprint(id)
		}
		kinds = append(kinds, k)
	}
	want := "message,message:msg_upstream_1,message:msg_upstream_1,item_reference:msg_elsewhere,message"
	if strings.Join(kinds, ",") != want {
		t.Errorf("upstream input %v, want %s", kinds, want)
	}
	if strings.Contains(body, "previous_response_id") || !strings.Contains(body, `"parallel_tool_calls":false`) || !strings.Contains(body, `"store":false`) {
		t.Errorf("upstream body: %s", body)
	}
}

// On the chat wire parallel_tool_calls and store go upstream only when the
// client sent them.
func TestNoDefaultsUpstream(t *testing.T) {
	rec := &recorder{h: scripted.New(nil)}
	p := newProxy(t, newUpstream(t, rec), server.Config{})
	tools := `"tools":[{"type":"function","name":"shell","parameters":{"type":"object","properties":{"command":{"type":"string"}}}}]`
	streamed(t, p, `{"model":"m","input":"hi",`+tools+`,"stream":true}`, nil)
	_, body, _ := rec.last(t)
	if strings.Contains(body, "parallel_tool_calls") || strings.Contains(body, `"store"`) {
		t.Errorf("defaults the client did not send went upstream: %s", body)
	}
	streamed(t, p, `{"model":"m","input":"hi",`+tools+`,"parallel_tool_calls":false,"store":false,"stream":true}`, nil)
	_, body, _ = rec.last(t)
	if !strings.Contains(body, `"parallel_tool_calls":false`) || !strings.Contains(body, `"store":false`) {
		t.Errorf("what the client sent did not go upstream: %s", body)
	}
}
