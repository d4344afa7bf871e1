package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/server"
)

// codexSearchRequest is a Codex 0.171-shaped turn after a tool search:
// the base prompt as the first developer message, tool_search, a deferred
// function, web_search, and a history whose tool_search_output loaded an
// MCP namespace, whose tool was then called.
const codexSearchRequest = `{"model":"m","stream":true,"tool_choice":"auto","parallel_tool_calls":true,
 "tools":[
  {"type":"function","name":"exec_command","description":"run","parameters":{"type":"object","properties":{"cmd":{"type":"string"}}}},
  {"type":"function","name":"lazy","description":"deferred","defer_loading":true,"parameters":{"type":"object","properties":{}}},
  {"type":"tool_search","execution":"client","description":"Search for tools","parameters":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}},
  {"type":"web_search","external_web_access":false}
 ],
 "input":[
  {"type":"message","role":"developer","content":[{"type":"input_text","text":"You are a coding agent. Base prompt."}]},
  {"type":"message","role":"user","content":[{"type":"input_text","text":"echo via mcp"}]},
  {"type":"tool_search_call","call_id":"call_ts1","status":"completed","execution":"client","arguments":{"query":"echo"}},
  {"type":"tool_search_output","call_id":"call_ts1","status":"completed","execution":"client","tools":[
    {"type":"namespace","name":"mcp__probe","description":"probe","tools":[
      {"type":"function","name":"echo_text","description":"Echo","defer_loading":true,"parameters":{"type":"object","properties":{"text":{"type":"string"}}}}]}]},
  {"type":"function_call","call_id":"call_e1","name":"echo_text","namespace":"mcp__probe","arguments":"{\"text\":\"hi\"}"},
  {"type":"function_call_output","call_id":"call_e1","output":"hi"}
 ]}`

// TestShapeEqualsServe: what `shape` prints as the body is what `serve`
// sends upstream for the same request, on the native route and on a
// harness route that sends the client's tools.
func TestShapeEqualsServe(t *testing.T) {
	var mu sync.Mutex
	var got []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"id":"c","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer up.Close()
	srv := server.New(server.Config{Upstream: up.URL + "/v1", Wire: "chat"})
	ts := httptest.NewServer(srv.Handler())
	defer func() { ts.Close(); srv.CloseIdleConnections() }()
	for _, route := range []struct{ path, harness string }{{"/v1/responses", ""}, {"/h/minimal/v1/responses", "minimal"}} {
		resp, err := http.Post(ts.URL+route.path, "application/json", strings.NewReader(codexSearchRequest))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		mu.Lock()
		if len(got) == 0 {
			mu.Unlock()
			t.Fatalf("%s: the upstream got nothing (status %d)", route.path, resp.StatusCode)
		}
		sent := got[len(got)-1]
		mu.Unlock()
		args := []string{"--wire", "chat", "--upstream", up.URL + "/v1"}
		if route.harness != "" {
			args = append(args, "--harness", route.harness)
		}
		code, out, errOut := shapeCLI(t, codexSearchRequest, args...)
		if code != 0 {
			t.Fatalf("shape %v: %d %s", args, code, errOut)
		}
		var shaped struct {
			Body json.RawMessage `json:"body"`
		}
		if err := json.Unmarshal([]byte(out), &shaped); err != nil {
			t.Fatal(err)
		}
		var a, b any
		if err := json.Unmarshal(shaped.Body, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(sent), &b); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(a, b); d != "" {
			t.Errorf("%s: shape body differs from what serve sent (-shape +serve):\n%s", route.path, d)
		}
		for _, want := range []string{`"mcp__probe_echo_text"`, `"tool_search"`} {
			if !strings.Contains(sent, want) {
				t.Errorf("%s: the upstream body lacks %s: %s", route.path, want, sent)
			}
		}
		if strings.Contains(sent, `"web_search"`) || strings.Contains(sent, `"lazy"`) {
			t.Errorf("%s: the upstream body offers web_search or the deferred tool: %s", route.path, sent)
		}
		if route.harness == "" && !strings.Contains(sent, `"messages":[{"role":"system","content":"You are a coding agent. Base prompt."}`) {
			t.Errorf("native: the base prompt is not the system message: %s", sent)
		}
	}
}
