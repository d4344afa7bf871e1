package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
)

// TestCodexContextLength runs a real Codex against an upstream answering
// with each server's context-length wording (wire/errcode's table): Codex
// must take it for a full context window — its own message, not the raw
// body — and the upstream's message must not be lost on the way (the
// proxy's log keeps it as the request's reason).
func TestCodexContextLength(t *testing.T) {
	bin := os.Getenv(codexEnv)
	if bin == "" {
		t.Skipf("set %s to a Codex CLI binary to run (scripts/e2e-codex.sh does)", codexEnv)
	}
	for _, c := range []struct {
		server string
		status int
		body   string
	}{
		{"vllm", 400, `{"object":"error","message":"This model's maximum context length is 32768 tokens. However, you requested 40000 tokens (39000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`},
		{"sglang", 400, `{"object":"error","message":"The input (40000 tokens) is longer than the model's context length (32768 tokens).","type":"BadRequestError","param":null,"code":400}`},
		{"llama.cpp", 400, `{"error":{"code":400,"message":"request (40000 tokens) exceeds the available context size (32768 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":40000,"n_ctx":32768}}`},
		{"ollama", 400, `{"error":{"message":"prompt too long; exceeded max context length by 232 tokens","type":"api_error","param":null,"code":null}}`},
		{"tgi", 422, `{"error":"Input validation error: ` + "`inputs` tokens + `max_new_tokens` must be <= 32768. Given: 40000 `inputs` tokens and 1000 `max_new_tokens`" + `","error_type":"validation"}`},
		{"lmstudio", 400, `{"error":"The number of tokens to keep from the initial prompt is greater than the context length. Try to load the model with a larger context length, or provide a shorter input"}`},
		{"openrouter", 400, `{"error":{"message":"This endpoint's maximum context length is 131072 tokens. However, you requested about 140000 tokens. Please reduce the length.","code":400}}`},
		{"deepseek", 400, `{"error":{"message":"This model's maximum context length is 131072 tokens. However, you requested 140000 tokens (139000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`},
		{"anthropic-wording", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 215000 tokens > 200000 maximum"}}`},
	} {
		t.Run(c.server, func(t *testing.T) {
			t.Parallel()
			model := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(c.status)
				_, _ = io.WriteString(w, c.body)
			})
			p := startUpstreamProxy(t, model, nil)
			run := runCodex(t, bin, p.url+"/v1", true)
			if run.exitCode == 0 {
				t.Fatalf("codex exited with 0, want a failed turn\n%s", run)
			}
			// Codex's own context-window message, not the upstream body.
			var failed string
			for _, line := range strings.Split(run.stdout, "\n") {
				var ev codexEvent
				if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "turn.failed" {
					failed = ev.errorMessage()
				}
			}
			if !strings.Contains(failed, "context window") || strings.Contains(failed, "tokens") || strings.Contains(run.stderr, "tokens") {
				t.Errorf("codex did not print its context-window message (turn.failed %q)\n%s", failed, run)
			}
			p.stop(t)
			recs := p.log.records()
			if len(recs) != 1 || recs[0].upstreamStatus != c.status || recs[0].outcome != "upstream_error" {
				t.Errorf("proxy requests %+v, want one with upstream status %d, outcome upstream_error", recs, c.status)
			}
		})
	}
}
