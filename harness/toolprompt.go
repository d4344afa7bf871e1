package harness

import (
	"fmt"
	"slices"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/stages/toolprompt"
)

// toolPromptHarnesses are the harnesses whose chat request sends the
// client's function tools as they are: the ones tools in the prompt
// applies to. The others bring tools of their own or a text protocol.
var toolPromptHarnesses = []string{NativeName, NameMinimal, NameKimiCLI, NameQwenCode}

// ToolsInPromptApplies reports whether tools in the prompt can apply to a
// route: the chat wire and a harness that sends the client's function tools.
func ToolsInPromptApplies(wire Wire, harness string) bool {
	return wire == WireChat && slices.Contains(toolPromptHarnesses, harness)
}

// withToolsInPrompt inserts the request.toolprompt node after
// request.history when the configuration or the model's caps ask for tools
// in the prompt and the route takes it (ToolsInPromptApplies; elsewhere it
// is left out, logged at debug). The format is the model's tool_format,
// else the configured one, resolved by toolprompt.Resolve; the env's model
// caps record it, so the response side reads the calls back in the same
// format.
func withToolsInPrompt(cfg Config, env *Env, spec Spec, g *pipeline.Graph) (*pipeline.Graph, error) {
	if !cfg.ToolsInPrompt && !env.Model.ToolsInPrompt {
		return g, nil
	}
	if !ToolsInPromptApplies(env.Wire, spec.Name) {
		env.Logger.Debug("harness: tools in the prompt do not apply to this route; tools sent as usual", "harness", spec.Name, "wire", env.Wire)
		return g, nil
	}
	want := env.Model.ToolFormat
	if want == "" {
		want = cfg.ToolFormat
	}
	model := ""
	if env.Request != nil {
		model = env.Request.Model
	}
	format, err := toolprompt.Resolve(want, model)
	if err != nil {
		return nil, fmt.Errorf("harness %s: tools in the prompt: %w", spec.Name, err)
	}
	n, err := toolprompt.Node(toolprompt.Options{Format: format, Prompts: env.Prompts, Logger: env.Logger})
	if err != nil {
		return nil, fmt.Errorf("harness %s: %w", spec.Name, err)
	}
	if g, err = g.InsertAfter(request.NodeHistory, n); err != nil {
		return nil, fmt.Errorf("harness %s: tools in the prompt: %w", spec.Name, err)
	}
	env.Model.ToolsInPrompt, env.Model.ToolFormat = true, format
	return g, nil
}
