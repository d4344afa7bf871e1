package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/server"
)

// The client's limit, sampling and cache-key fields reach a chat upstream
// on the native route (docs/request-shaping.md#client-fields), in the form
// the model table gives the model, and the echoed Response object reports
// what was asked. A "length" cut comes back as response.incomplete with
// the reason max_output_tokens.
func TestClientFieldsReachChatUpstream(t *testing.T) {
	rec := &recorder{h: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Once upon"},"finish_reason":null}]}`+"\n\n")
		io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`+"\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	})}
	up := newUpstream(t, rec)
	models, err := harness.NewModelTable(harness.ModelCaps{Match: "kimi-k2", PromptCacheKey: true, MaxOutputTokens: 4})
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, up, server.Config{Models: models})
	for _, c := range []struct {
		model string
		want  map[string]any // body fields; nil: must be absent
	}{
		// A model the table does not know: the limit as max_tokens, the
		// sampling as sent, no prompt_cache_key.
		{"m", map[string]any{"max_tokens": 5.0, "temperature": 0.1, "top_p": 0.9, "prompt_cache_key": nil, "max_completion_tokens": nil}},
		// The table's entry: its cap lowers the limit, its server takes the key.
		{"kimi-k2-instruct", map[string]any{"max_tokens": 4.0, "temperature": 0.1, "prompt_cache_key": "conv-123"}},
		// The built-in OpenAI entry: max_completion_tokens, no temperature or top_p.
		{"gpt-5.5", map[string]any{"max_completion_tokens": 5.0, "max_tokens": nil, "temperature": nil, "top_p": nil, "prompt_cache_key": "conv-123"}},
	} {
		body := `{"model":"` + c.model + `","input":"hi","stream":true,"max_output_tokens":5,"temperature":0.1,"top_p":0.9,"prompt_cache_key":"conv-123"}`
		evs := readSSE(t, p.post(t, "/v1/responses", body, nil).Body)
		last := terminal(t, evs)
		if last.Name != "response.incomplete" {
			t.Fatalf("%s: terminal %s, want response.incomplete", c.model, last.Name)
		}
		resp := last.Data["response"].(map[string]any)
		if d, _ := resp["incomplete_details"].(map[string]any); d["reason"] != "max_output_tokens" {
			t.Errorf("%s: incomplete_details %v", c.model, resp["incomplete_details"])
		}
		for k, v := range map[string]any{"max_output_tokens": 5.0, "temperature": 0.1, "top_p": 0.9, "prompt_cache_key": "conv-123"} {
			if resp[k] != v {
				t.Errorf("%s: response %s = %v, want %v (as asked)", c.model, k, resp[k], v)
			}
		}
		_, sent, _ := rec.last(t)
		var got map[string]any
		if err := json.Unmarshal([]byte(sent), &got); err != nil {
			t.Fatal(err)
		}
		for k, want := range c.want {
			v, ok := got[k]
			if want == nil && ok || want != nil && v != want {
				t.Errorf("%s: upstream body %s = %v (present %v), want %v\n%s", c.model, k, v, ok, want, sent)
			}
		}
	}
	if logs := p.logs.String(); !strings.Contains(logs, "field=temperature") || !strings.Contains(logs, "field=prompt_cache_key") {
		t.Errorf("no debug log naming the dropped fields:\n%s", logs)
	}
}

// A value out of range is the upstream's to refuse: it is sent, and the
// upstream's error reaches the client as the upstream's.
func TestClientFieldOutOfRangeIsUpstreamsToRefuse(t *testing.T) {
	rec := &recorder{h: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"temperature must be at most 2","type":"invalid_request_error","param":"temperature","code":null}}`)
	})}
	p := newProxy(t, newUpstream(t, rec), server.Config{})
	resp := p.post(t, "/v1/responses", `{"model":"m","input":"hi","stream":false,"temperature":7}`, nil)
	data, _ := io.ReadAll(resp.Body)
	if _, sent, _ := rec.last(t); !strings.Contains(sent, `"temperature":7`) {
		t.Errorf("upstream body %s, want temperature 7", sent)
	}
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(data), "temperature must be at most 2") {
		t.Errorf("status %d, body %s; want the upstream's 400", resp.StatusCode, data)
	}
}

// A client field of the wrong JSON type is refused before anything goes
// upstream, with an error naming the field.
func TestClientFieldWrongTypeIsRefused(t *testing.T) {
	rec := &recorder{h: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })}
	p := newProxy(t, newUpstream(t, rec), server.Config{})
	resp := p.post(t, "/v1/responses", `{"model":"m","input":"hi","stream":false,"max_output_tokens":"5"}`, nil)
	msg, typ := errorBody(t, resp)
	if resp.StatusCode != http.StatusBadRequest || typ != "invalid_request_error" || !strings.Contains(msg, "max_output_tokens: want an integer") {
		t.Errorf("status %d, %s: %s", resp.StatusCode, typ, msg)
	}
	if bodies, _, _ := rec.all(); len(bodies) != 0 {
		t.Errorf("the upstream got %d requests", len(bodies))
	}
}
