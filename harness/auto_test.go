package harness_test

import (
	"context"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/protocol"
)

func TestDefaultFor(t *testing.T) {
	tests := []struct {
		model    string
		wire     harness.Wire
		provider string
		baseURL  string
		want     string
	}{
		// The fork's own pins (model-provider-info tests).
		{"k3", harness.WireChat, "kimi-for-coding", "https://api.kimi.com/coding/v1", harness.NameKimiCode},
		{"kimi-k3", harness.WireChat, "moonshotai", "https://api.moonshot.ai/v1", harness.NameKimiCode},
		{"anything", harness.WireMessages, "", "", harness.NameClaudeCode},
		{"anthropic/claude-sonnet-4", harness.WireChat, "openrouter", "https://openrouter.ai/api/v1", harness.NameClaudeCode},
		{"m", harness.WireChat, "", "https://api.anthropic.com/v1", harness.NameClaudeCode},
		{"Kimi-K2.5", harness.WireChat, "", "", harness.NameKimiCode},
		{"m", harness.WireChat, "", "https://api.moonshot.cn/v1", harness.NameKimiCode},
		{"Qwen3-Coder-30B", harness.WireChat, "", "", harness.NameQwenCode},
		{"qwq-32b", harness.WireChat, "", "", harness.NameQwenCode},
		{"org/qwq-32b", harness.WireChat, "", "", harness.NameQwenCode},
		{"myqwq", harness.WireChat, "", "", ""}, // qwq only as a prefix or after "/"
		{"m", harness.WireChat, "dashscope", "", harness.NameQwenCode},
		{"m", harness.WireChat, "", "https://dashscope-intl.aliyuncs.com/compatible-mode/v1", harness.NameQwenCode},
		{"m", harness.WireChat, "", "https://dashscope.aliyuncs.com/api/v1", ""}, // not the compatible mode
		{"deepseek-chat", harness.WireChat, "", "", harness.NameClaudeCodeBare},
		{"m", harness.WireChat, "", "https://api.deepseek.com", harness.NameClaudeCodeBare},
		// First rule wins: a Claude model served by a Kimi-named upstream.
		{"claude-x", harness.WireChat, "kimi", "", harness.NameClaudeCode},
		{"kimi-qwen-deepseek", harness.WireChat, "", "", harness.NameKimiCode},
		{"gpt-oss-20b", harness.WireChat, "local", "http://127.0.0.1:8000/v1", ""},
		{"", harness.WireResponses, "", "", ""},
	}
	for _, tt := range tests {
		if got := harness.DefaultFor(tt.model, tt.wire, tt.provider, tt.baseURL); got != tt.want {
			t.Errorf("DefaultFor(%q, %s, %q, %q) = %q, want %q", tt.model, tt.wire, tt.provider, tt.baseURL, got, tt.want)
		}
	}
}

// The auto harness plans each request with the harness its model picks;
// a pick this build lacks is native; the responses wire stays native.
func TestAutoPlans(t *testing.T) {
	req := func(model string) *protocol.ResponsesRequest {
		r, err := protocol.DecodeRequest([]byte(`{"model":"` + model + `","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}],` +
			`"tools":[{"type":"function","name":"exec_command","parameters":{"type":"object","properties":{"cmd":{"type":"string"}}}}]}`))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	orNative := func(h string) string {
		if _, ok := harness.Lookup(h); !ok {
			return harness.NativeName
		}
		return h
	}
	tests := []struct {
		model, provider string
		wire            harness.Wire
		want            string
	}{
		{"Qwen3-Coder-Next", "", harness.WireChat, harness.NameQwenCode},
		{"kimi-k2.5", "", harness.WireChat, orNative(harness.NameKimiCode)},
		{"gpt-oss-20b", "", harness.WireChat, harness.NativeName},
		{"some-model", "dashscope", harness.WireChat, harness.NameQwenCode},
		{"Qwen3-Coder-Next", "", harness.WireResponses, harness.NativeName},
		{"any", "", harness.WireMessages, harness.NameClaudeCode},
	}
	for _, tt := range tests {
		cfg := harness.Config{Wire: tt.wire, Provider: tt.provider}
		turn, err := harness.Plan(context.Background(), cfg, harness.NameAuto, req(tt.model), nil)
		if err != nil {
			t.Errorf("%s on %s: %v", tt.model, tt.wire, err)
			continue
		}
		if turn.Route.Harness != tt.want {
			t.Errorf("%s (upstream %q) on %s: served by %s (%s), want %s", tt.model, tt.provider, tt.wire, turn.Route.Harness, turn.Route, tt.want)
		}
	}
	if err := harness.CheckRoute(harness.WireChat, harness.NameAuto); err != nil {
		t.Errorf("CheckRoute(chat, auto): %v", err)
	}
	if r, err := harness.Resolve(harness.WireMessages, harness.NameAuto); err != nil || r.Harness != harness.NameClaudeCode {
		t.Errorf("Resolve(messages, auto) = %v, %v", r, err)
	}
}
