package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/scripted"
	"github.com/harnessflow/harnessflow/server"
)

// logLine returns the log line of the request to path (the last one),
// waiting a moment for it: the line is written after the answer.
func logLine(p *proxy, path string) string {
	for range 200 {
		for _, l := range strings.Split(p.logs.String(), "\n") {
			if strings.Contains(l, `msg="harnessflow request"`) && strings.Contains(l, "path="+path+" ") {
				return l
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return ""
}

// TestErrorReasonsLogged: every error answer is logged with its reason,
// the message the client got; never a key.
func TestErrorReasonsLogged(t *testing.T) {
	const apiKey = "sk-upstream-secret-123456"
	limited := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"message":"slow down, key `+apiKey+`","type":"rate_limit_error"}}`)
	})
	const clientKey = "sk-client-own-key-987654"
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		// (It quotes the client's key whichever key it got.)
		io.WriteString(w, `{"error":{"message":"bad key `+clientKey+`"}}`)
	})
	cases := []struct {
		name       string
		wire       harness.Wire
		upstream   http.Handler
		method     string
		path, body string
		status     int
		reason     string // a part of the logged reason
	}{
		{"not JSON", harness.WireChat, scripted.New(nil), http.MethodPost, "/v1/responses", `{bad`, 400, `reason="invalid Responses request: `},
		{"content a number", harness.WireChat, scripted.New(nil), http.MethodPost, "/v1/responses", `{"model":"m","input":[{"type":"message","role":"user","content":3}]}`, 400,
			`reason="invalid Responses request: input[0].content: want an array or a string, got a number"`},
		{"no model", harness.WireChat, scripted.New(nil), http.MethodPost, "/v1/responses", `{"input":"hi"}`, 400, `reason="`},
		{"unknown harness", harness.WireChat, scripted.New(nil), http.MethodPost, "/h/nosuch/v1/responses", codexRequest(userMsg, false), 404, `reason="unknown harness \"nosuch\"`},
		{"route on messages", harness.WireMessages, scripted.New(nil), http.MethodPost, "/h/minimal/v1/responses", codexRequest(userMsg, false), 400, `is not supported by harness = \"minimal\" — harnessflow: `},
		{"upstream 429", harness.WireChat, limited, http.MethodPost, "/v1/responses", codexRequest(userMsg, false), 429, `reason="slow down, key xxxxx"`},
		{"upstream echoes the client's key", harness.WireChat, echo, http.MethodPost, "/h/minimal/v1/responses", codexRequest(userMsg, false), 401, `reason="bad key xxxxx"`},
		{"no route", harness.WireChat, scripted.New(nil), http.MethodGet, "/v2/nothing", "", 404, `reason="no route for GET /v2/nothing`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newProxy(t, newUpstream(t, c.upstream), server.Config{Wire: c.wire, APIKey: apiKey})
			req, _ := http.NewRequest(c.method, p.ts.URL+c.path, strings.NewReader(c.body))
			req.Header.Set("Authorization", "Bearer "+clientKey)
			resp, err := p.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.status {
				t.Fatalf("HTTP %d, want %d", resp.StatusCode, c.status)
			}
			line := logLine(p, c.path)
			logs := p.logs.String()
			if !strings.Contains(line, c.reason) || !strings.Contains(line, "status="+strconv.Itoa(c.status)) {
				t.Errorf("log line %q lacks %q\nall logs:\n%s", line, c.reason, logs)
			}
			if strings.Contains(logs, apiKey) || strings.Contains(logs, clientKey) {
				t.Errorf("logs hold the API key:\n%s", logs)
			}
		})
	}
	// A completed request logs no reason.
	p := newProxy(t, newUpstream(t, scripted.New(nil)), server.Config{})
	readSSE(t, p.post(t, "/v1/responses", codexRequest(userMsg, false), nil).Body)
	if line := logLine(p, "/v1/responses"); !strings.Contains(line, "outcome=completed") || strings.Contains(line, "reason=") {
		t.Errorf("completed request: %q", line)
	}
}

// TestModels: GET /v1/models (and the harness routes' …/models) is the
// upstream's list, fetched with the client's credentials; an Anthropic list
// is translated; an upstream without one gives the configured models or a
// clear error.
func TestModels(t *testing.T) {
	anthropicList := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("x-api-key") != "client-key-123" || r.Header.Get("anthropic-version") == "" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		io.WriteString(w, `{"data":[{"type":"model","id":"claude-x","display_name":"Claude X","created_at":"2026-02-01T00:00:00Z"}],"has_more":false,"first_id":"claude-x","last_id":"claude-x"}`)
	})
	noList := http.NotFoundHandler()
	cases := []struct {
		name     string
		cfg      server.Config
		upstream http.Handler
		path     string
		status   int
		want     string // a part of the body
	}{
		{"scripted", server.Config{}, scripted.New(nil), "/v1/models", 200, `{"object":"list","data":[{"id":"harnessflow-scripted","object":"model"`},
		{"harness route", server.Config{}, scripted.New(nil), "/h/minimal/v1/models", 200, `"id":"harnessflow-scripted"`},
		{"short path", server.Config{}, scripted.New(nil), "/models", 200, `"id":"harnessflow-scripted"`},
		{"unknown harness", server.Config{}, scripted.New(nil), "/h/nosuch/v1/models", 404, `unknown harness \"nosuch\"`},
		{"anthropic", server.Config{Wire: harness.WireMessages}, anthropicList, "/h/claude-code/v1/models", 200,
			`{"object":"list","data":[{"id":"claude-x","object":"model","created":1769904000,"owned_by":"anthropic"}]}`},
		{"scripted on messages", server.Config{Wire: harness.WireMessages}, scripted.New(nil), "/v1/models", 200, `"id":"harnessflow-scripted","object":"model","created":1767225600`},
		{"no list", server.Config{}, noList, "/v1/models", 404, `the upstream has no model list (GET http://`},
		{"no list, configured", server.Config{DefaultModel: "my-model"}, noList, "/v1/models", 200, `{"object":"list","data":[{"id":"my-model","object":"model","created":0,"owned_by":"harnessflow"}]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := &recorder{h: c.upstream}
			p := newProxy(t, newUpstream(t, rec), c.cfg)
			req, _ := http.NewRequest(http.MethodGet, p.ts.URL+c.path, nil)
			req.Header.Set("Authorization", "Bearer client-key-123")
			resp, err := p.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.status || !strings.Contains(string(body), c.want) {
				t.Errorf("HTTP %d %s\nwant %d and %s", resp.StatusCode, body, c.status, c.want)
			}
			if !json.Valid(body) {
				t.Errorf("not JSON: %s", body)
			}
			if c.status == 200 && c.cfg.Wire != harness.WireMessages {
				path, _, h := rec.last(t)
				if path != "/v1/models" || h.Get("Authorization") != "Bearer client-key-123" {
					t.Errorf("upstream got %s with Authorization %q", path, h.Get("Authorization"))
				}
			}
		})
	}
	// With client keys, the list wants one too.
	p := newProxy(t, newUpstream(t, scripted.New(nil)), server.Config{ClientKeys: []string{clientKeyA}})
	resp, err := p.client.Get(p.ts.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without a client key: %d", resp.StatusCode)
	}
}

// TestRouteErrorHint: the routing error's exact text is followed by the
// fix in harnessflow's terms — the routes that serve the wire, and the
// --upstream-wire that serves the harness — never Codex config keys alone.
func TestRouteErrorHint(t *testing.T) {
	p := newProxy(t, newUpstream(t, scripted.New(nil)), server.Config{Wire: harness.WireMessages})
	cases := []struct {
		path string
		want []string
	}{
		{"/v1/responses", []string{"the native route has no translation to the messages wire", "/h/claude-code/v1", "/h/zcode/v1", "base_url"}},
		{"/h/kimi-cli/v1/responses", []string{"harness kimi-cli is not served on --upstream-wire messages", "--upstream-wire chat", "/h/claude-code-bare/v1"}},
	}
	for _, c := range cases {
		resp := p.post(t, c.path, codexRequest(userMsg, false), nil)
		msg, _ := errorBody(t, resp)
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q lacks %q", c.path, msg, w)
			}
		}
		if strings.Contains(msg, "/h/kimi-cli/v1,") || strings.Contains(msg, "/h/minimal/v1") {
			t.Errorf("%s: %q lists a route that does not serve messages", c.path, msg)
		}
	}
}
