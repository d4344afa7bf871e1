package server_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/server"
)

// The errors the engine treats specially, each in a server's own words:
// a streaming client gets a stream that fails at once with the engine's
// code and the upstream's message (Codex reads context-length and quota
// errors only there); a non-streaming client gets the upstream's status
// with the code in the error body; an overload is HTTP 503
// server_is_overloaded.
func TestUpstreamErrorCodes(t *testing.T) {
	cases := []struct {
		server string
		status int
		body   string
		code   string
	}{
		{"vllm", 400, `{"object":"error","message":"This model's maximum context length is 32768 tokens. However, you requested 40000 tokens (39000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`, "context_length_exceeded"},
		{"sglang", 400, `{"object":"error","message":"The input (40000 tokens) is longer than the model's context length (32768 tokens).","type":"BadRequestError","param":null,"code":400}`, "context_length_exceeded"},
		{"llama.cpp", 400, `{"error":{"code":400,"message":"request (40000 tokens) exceeds the available context size (32768 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":40000,"n_ctx":32768}}`, "context_length_exceeded"},
		{"ollama", 400, `{"error":{"message":"prompt too long; exceeded max context length by 232 tokens","type":"api_error","param":null,"code":null}}`, "context_length_exceeded"},
		{"tgi", 422, `{"error":"Input validation error: ` + "`inputs` tokens + `max_new_tokens` must be <= 32768. Given: 40000 `inputs` tokens and 1000 `max_new_tokens`" + `","error_type":"validation"}`, "context_length_exceeded"},
		{"lmstudio", 400, `{"error":"The number of tokens to keep from the initial prompt is greater than the context length. Try to load the model with a larger context length, or provide a shorter input"}`, "context_length_exceeded"},
		{"openrouter", 400, `{"error":{"message":"This endpoint's maximum context length is 131072 tokens. However, you requested about 140000 tokens. Please reduce the length.","code":400}}`, "context_length_exceeded"},
		{"deepseek", 400, `{"error":{"message":"This model's maximum context length is 131072 tokens. However, you requested 140000 tokens (139000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`, "context_length_exceeded"},
		{"anthropic", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 215000 tokens > 200000 maximum"}}`, "context_length_exceeded"},
		{"deepseek-balance", 402, `{"error":{"message":"Insufficient Balance","type":"unknown_error","param":null,"code":"invalid_request_error"}}`, "insufficient_quota"},
		{"anthropic-overloaded", 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "server_is_overloaded"},
	}
	for _, c := range cases {
		t.Run(c.server, func(t *testing.T) {
			up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(c.status)
				io.WriteString(w, c.body)
			}))
			p := newProxy(t, up, server.Config{})
			stream := strings.Contains(c.code, "context") || c.code == "insufficient_quota"
			resp := p.post(t, "/v1/responses", codexRequest(userMsg, false), nil)
			if stream {
				if resp.StatusCode != 200 {
					t.Fatalf("status %d, want 200 and a failing stream", resp.StatusCode)
				}
				last := terminal(t, readSSE(t, resp.Body))
				e, _ := last.Data["response"].(map[string]any)["error"].(map[string]any)
				if last.Name != "response.failed" || e["code"] != c.code || e["message"] == "" || !strings.Contains(c.body, e["message"].(string)) {
					t.Errorf("got %s, want response.failed with code %s and the upstream's message", last.Raw, c.code)
				}
				if logs := p.logs.String(); !strings.Contains(logs, fmt.Sprintf("upstream_status=%d", c.status)) || !strings.Contains(logs, "outcome=upstream_error") {
					t.Errorf("logs: %s", logs)
				}
				if s := p.srv.Metrics(); s.Started != 1 || s.Failed != 1 {
					t.Errorf("metrics: started %d, failed %d; want 1, 1", s.Started, s.Failed)
				}
			}
			// Without "stream": true, an HTTP error carrying the code.
			body := strings.Replace(codexRequest(userMsg, false), `"stream":true`, `"stream":false`, 1)
			resp = p.post(t, "/v1/responses", body, nil)
			want := c.status
			if c.code == "server_is_overloaded" {
				want = http.StatusServiceUnavailable
			}
			data, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != want || !strings.Contains(string(data), `"code":"`+c.code+`"`) {
				t.Errorf("unary: status %d %s, want %d with code %s", resp.StatusCode, data, want, c.code)
			}
		})
	}
}
