package harness

import "github.com/harnessflow/harnessflow/stages/request"

// harnessReasoning is the reasoning control the harness routes see in
// [Env.RequestOptions]: the thinking toggle, the one switch the emulated
// agents send, or nothing. The effort-following forms are the native
// route's (docs/reasoning-controls.md#harness-routes), so a harness body
// keeps the shape its agent gives it.
func harnessReasoning(c request.ReasoningControl) request.ReasoningControl {
	if c == request.ReasoningThinkingToggle {
		return c
	}
	return request.ReasoningDefault
}
