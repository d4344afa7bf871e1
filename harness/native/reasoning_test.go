package native

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/protocol"
)

// TestNativeReasoning plans Codex requests with each effort (and none)
// through the native chat route for one model of each built-in family and
// checks the reasoning fields of the body.
func TestNativeReasoning(t *testing.T) {
	efforts := []string{"-", "none", "minimal", "low", "medium", "high", "xhigh"}
	const (
		nothing = `{}`
		tOn     = `{"thinking":{"type":"enabled"}}`
		tOff    = `{"thinking":{"type":"disabled"}}`
		etOn    = `{"chat_template_kwargs":{"enable_thinking":true}}`
		etOff   = `{"chat_template_kwargs":{"enable_thinking":false}}`
		ttOn    = `{"chat_template_kwargs":{"thinking":true}}`
		ttOff   = `{"chat_template_kwargs":{"thinking":false}}`
		low     = `{"reasoning_effort":"low"}`
		medium  = `{"reasoning_effort":"medium"}`
		high    = `{"reasoning_effort":"high"}`
	)
	or := func(e string) string { return `{"reasoning":{"effort":"` + e + `"}}` }
	for _, tt := range []struct {
		model, base string
		want        []string
	}{
		{"Qwen/Qwen3-32B", "", []string{nothing, etOff, etOff, etOn, etOn, etOn, etOn}},
		{"zai-org/GLM-4.6", "", []string{nothing, etOff, etOff, etOn, etOn, etOn, etOn}},
		{"deepseek-ai/DeepSeek-V3.1", "", []string{nothing, ttOff, ttOff, ttOn, ttOn, ttOn, ttOn}},
		{"moonshotai/Kimi-K2.5", "", []string{nothing, ttOff, ttOff, ttOn, ttOn, ttOn, ttOn}},
		{"glm-4.6", "", []string{tOn, tOff, tOn, tOn, tOn, tOn, tOn}}, // the thinking toggle, as minimal sends it
		{"openai/gpt-oss-120b", "", []string{nothing, low, low, low, medium, high, high}},
		{"Qwen/Qwen3-Coder-30B-A3B-Instruct", "", []string{nothing, nothing, nothing, nothing, nothing, nothing, nothing}},
		{"gpt-5.5", "", []string{nothing, nothing, nothing, nothing, nothing, nothing, nothing}},
		{"my-local-model", "", []string{nothing, low, low, low, medium, high, high}},
		{"qwen/qwen3-235b-a22b", "https://openrouter.ai/api/v1", []string{nothing, or("none"), or("minimal"), or("low"), or("medium"), or("high"), or("xhigh")}},
		{"some/model", "https://openrouter.ai/api/v1", []string{nothing, or("none"), or("minimal"), or("low"), or("medium"), or("high"), or("xhigh")}},
	} {
		for i, e := range efforts {
			req := &protocol.ResponsesRequest{Model: tt.model, Input: protocol.Items{protocol.UserMessage("hi")}, Stream: true}
			if e != "-" {
				req.Reasoning = &protocol.ReasoningConfig{Effort: e}
			}
			turn, err := harness.Plan(context.Background(), harness.Config{BaseURL: tt.base}, harness.NativeName, req, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := reasoningFields(t, turn.Shaped.Body); got != tt.want[i] {
				t.Errorf("%s %q: %s, want %s", tt.model, e, got, tt.want[i])
			}
		}
	}
}

func reasoningFields(t *testing.T, body []byte) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	out := map[string]json.RawMessage{}
	for _, k := range []string{"reasoning_effort", "thinking", "chat_template_kwargs", "reasoning"} {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	data, _ := json.Marshal(out)
	return string(data)
}
