package harness

import (
	"testing"

	"github.com/harnessflow/harnessflow/stages/request"
)

// TestThinkingOpenCaps: the families whose templates open the reasoning
// block in the prompt have ThinkingOpen, and a turn applies it to text
// tool-call recovery unless its chat body turns thinking off.
func TestThinkingOpenCaps(t *testing.T) {
	for model, want := range map[string]bool{
		"Qwen/QwQ-32B": true, "deepseek-ai/DeepSeek-R1-0528": true, "Qwen/Qwen3-235B-A22B-Thinking-2507": true,
		"zai-org/GLM-4.6": true, "Qwen/Qwen3-8B": false, "Qwen/Qwen3-Coder-30B-A3B-Instruct": false,
		"meta-llama/Llama-3.1-8B-Instruct": false, "glm-4.6": false, "deepseek-ai/DeepSeek-V3.1": true,
		"deepseek-ai/DeepSeek-V3.2": false, "moonshotai/Kimi-K2-Instruct": false,
	} {
		if got := BuiltinModels().Lookup(model).ThinkingOpen; got != want {
			t.Errorf("%s: ThinkingOpen %v, want %v", model, got, want)
		}
	}
	for body, want := range map[string]bool{
		`{"model":"m"}`: true,
		`{"chat_template_kwargs":{"enable_thinking":true}}`:  true,
		`{"chat_template_kwargs":{"enable_thinking":false}}`: false,
		`{"chat_template_kwargs":{"thinking":false}}`:        false,
		`{"thinking":{"type":"disabled"}}`:                   false,
		`{"thinking":{"type":"enabled"}}`:                    true,
	} {
		turn := &Turn{Env: &Env{Model: ModelCaps{ThinkingOpen: true}}, Shaped: request.Shaped{Body: []byte(body)}}
		var opts ResponseOptions
		turn.textCallOptions(&opts)
		if opts.ThinkingOpen != want {
			t.Errorf("body %s: ThinkingOpen %v, want %v", body, opts.ThinkingOpen, want)
		}
	}
	// DeepSeek V3.1's thinking switch is off unless the body turns it on.
	for body, want := range map[string]bool{
		`{"model":"m"}`: false,
		`{"chat_template_kwargs":{"thinking":true}}`:  true,
		`{"chat_template_kwargs":{"thinking":false}}`: false,
	} {
		turn := &Turn{Env: &Env{Model: BuiltinModels().Lookup("deepseek-ai/DeepSeek-V3.1")}, Shaped: request.Shaped{Body: []byte(body)}}
		var opts ResponseOptions
		turn.textCallOptions(&opts)
		if opts.ThinkingOpen != want {
			t.Errorf("DeepSeek V3.1, body %s: ThinkingOpen %v, want %v", body, opts.ThinkingOpen, want)
		}
	}
	turn := &Turn{Env: &Env{}, Shaped: request.Shaped{Body: []byte(`{}`)}}
	var opts ResponseOptions
	if turn.textCallOptions(&opts); opts.ThinkingOpen {
		t.Error("a model without the cap got ThinkingOpen")
	}
}
