package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/scripted"
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
// sends upstream for the same request, on the native route and on every
// harness route of the chat and Messages wires (the scripted model answers
// them all); a route with a title request is compared on its main request,
// the last one the upstream got.
func TestShapeEqualsServe(t *testing.T) {
	for _, wire := range []string{"chat", "messages"} {
		var mu sync.Mutex
		var got []string
		model := scripted.New(nil)
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			got = append(got, string(b))
			mu.Unlock()
			r.Body = io.NopCloser(strings.NewReader(string(b)))
			model.ServeHTTP(w, r)
		}))
		srv := server.New(server.Config{Upstream: up.URL + "/v1", Wire: harness.Wire(wire), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		ts := httptest.NewServer(srv.Handler())
		routes := []string{""}
		for _, s := range harness.Default().All() {
			if s.Name != harness.NativeName && s.Supports(harness.Wire(wire)) {
				routes = append(routes, s.Name)
			}
		}
		if wire == "messages" {
			routes = routes[1:] // the messages wire has no native route
		}
		if len(routes) < 3 {
			t.Fatalf("%s: only the routes %q", wire, routes)
		}
		for _, name := range routes {
			path := "/v1/responses"
			if name != "" {
				path = "/h/" + name + "/v1/responses"
			}
			resp, err := http.Post(ts.URL+path, "application/json", strings.NewReader(codexSearchRequest))
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mu.Lock()
			n := len(got)
			sent := ""
			if n > 0 {
				sent = got[n-1]
			}
			got = got[:0]
			mu.Unlock()
			if n == 0 {
				t.Errorf("%s %s: the upstream got nothing (status %d)", wire, path, resp.StatusCode)
				continue
			}
			args := []string{"--wire", wire, "--upstream", up.URL + "/v1"}
			if name != "" {
				args = append(args, "--harness", name)
			}
			code, out, errOut := shapeCLI(t, codexSearchRequest, args...)
			if code != 0 {
				t.Errorf("shape %v: %d %s", args, code, errOut)
				continue
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
				t.Fatalf("%s %s: upstream body: %v", wire, path, err)
			}
			if d := cmp.Diff(a, b); d != "" {
				t.Errorf("%s %s: shape body differs from what serve sent (-shape +serve):\n%s", wire, path, d)
			}
			// deepseek-tui's own tool set has a web_search of its own (the
			// bridge answers its calls with a tool error): what the agent
			// sends, not Codex's hosted tool.
			if strings.Contains(sent, `"web_search"`) && name != harness.NameDeepSeekTUI {
				t.Errorf("%s %s: the upstream body offers web_search", wire, path)
			}
			switch name {
			case "", harness.NameMinimal, harness.NameKimiCLI:
				if !strings.Contains(sent, `"mcp__probe_echo_text"`) || !strings.Contains(sent, `"tool_search"`) || strings.Contains(sent, `"lazy"`) {
					t.Errorf("%s %s: want the loaded MCP tool and tool_search offered, the deferred tool not: %s", wire, path, sent)
				}
			}
			if name == "" && !strings.Contains(sent, `"messages":[{"role":"system","content":"You are a coding agent. Base prompt."}`) {
				t.Errorf("native: the base prompt is not the system message: %s", sent)
			}
		}
		ts.Close()
		srv.CloseIdleConnections()
		up.Close()
	}
}
