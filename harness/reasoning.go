package harness

import (
	"strings"

	"github.com/harnessflow/harnessflow/stages/request"
)

// toggledNames are the model-name substrings the model table switched with
// thinking_toggle before it knew the effort-following controls
// (docs/reasoning-controls.md#harness-routes).
var toggledNames = []string{"glm-4.5", "glm-4.6", "glm-4.7", "glm-5", "deepseek-v3.1", "deepseek-v3.2", "kimi-k2.5"}

// harnessReasoning is the reasoning control the harness routes see in
// [Env.RequestOptions]: the thinking toggle, the one switch the emulated
// agents send, or nothing. A model whose entry has another control but
// whose name the table used to toggle ("zai-org/GLM-4.6") keeps the
// toggle, so harness bodies do not change with the native route's forms.
func harnessReasoning(e *Env) request.ReasoningControl {
	switch c := e.Model.Reasoning; c {
	case request.ReasoningDefault, request.ReasoningThinkingToggle:
		return c
	}
	if e.Request != nil {
		m := strings.ToLower(e.Request.Model)
		for _, n := range toggledNames {
			if strings.Contains(m, n) {
				return request.ReasoningThinkingToggle
			}
		}
	}
	return request.ReasoningDefault
}
