// Package minimal registers the "minimal" harness (docs/request-shaping.md#minimal): the smallest
// agent that still works — its own short system prompt (prompts/pack/minimal),
// the client's function tools, and a history flattened the minimal way:
//
//   - an assistant text is sent at once, with the reasoning before it;
//     texts that arrive while tool calls are pending join their content
//     with a newline;
//   - contextual user fragments (the environment block, AGENTS.md
//     instructions, …) are left out; developer messages become user
//     messages;
//   - a call with no output is still sent, unanswered (no "aborted"
//     synthesis, no deferral);
//   - a local_shell_call is shown as a call of "bash" with
//     {"command":[…],"timeout":seconds|null};
//   - images keep their detail; audio, video and encrypted content become
//     placeholder texts; a tool output of content items becomes content
//     parts.
//
// The body is {"model","messages","stream":true,
// "stream_options":{"include_usage":true},"tools","thinking"?}; thinking is
// sent for models with a thinking toggle: disabled for the effort "none",
// enabled otherwise. Provider quirks of the upstream apply. The response
// direction is the protocol layer alone: the model calls the client's tools
// directly.
package minimal

import (
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

func init() { harness.MustRegister(Spec()) }

// Spec returns the minimal harness.
func Spec() harness.Spec {
	return harness.Spec{
		Name:        harness.NameMinimal,
		Description: "a short system prompt of our own, the client's function tools, minimal flattening",
		Wires:       []harness.Wire{harness.WireChat},
		Request:     RequestGraph,
	}
}

// Policy returns the minimal harness's flatten policy.
func Policy() *request.FlattenPolicy {
	return &request.FlattenPolicy{
		Text:                  request.TextImmediate,
		TextJoin:              "\n",
		Unanswered:            request.UnansweredKeep,
		Developer:             request.DeveloperAsUser,
		SkipContextual:        true,
		BlankCallContent:      true,
		DropTrailingReasoning: true,
		CallName:              func(_, name string) string { return name },
		LocalShellName:        "bash",
		LocalShellArguments:   bashArguments,
	}
}

// Style returns the minimal harness's chat rendering.
func Style() request.ChatStyle {
	return request.ChatStyle{ImageDetail: true, AudioText: request.OmittedAudio, OutputParts: true}
}

// RequestGraph returns the minimal request graph for env.Wire (chat only):
// request.system → request.tools → request.history → request.options →
// request.provider → request.encode.
func RequestGraph(env *harness.Env) (*pipeline.Graph, error) {
	system, err := env.Prompts.Render(harness.NameMinimal, "system", nil)
	if err != nil {
		return nil, err
	}
	system = strings.TrimRight(system, "\n")
	opts := env.RequestOptions()
	toggle := opts.ReasoningControl == request.ReasoningThinkingToggle
	return pipeline.New("request.minimal",
		request.FixedSystemNode(system),
		request.FunctionToolsNode(),
		request.HistoryNode(opts, Policy()),
		request.ChatBodyNode(request.ChatBody{Stream: true, Edit: func(s *request.Shaping) error {
			if toggle {
				s.Body.Thinking = request.ThinkingSwitch(s.Request)
			}
			return nil
		}}, "model, stream with usage, thinking for thinking-toggle models"),
		request.ProviderNode(opts),
		request.ChatEncodeNode(Style()),
	)
}

// bashArguments renders a local_shell_call as minimal's bash call:
// {"command":[…],"timeout":seconds|null}.
func bashArguments(a *protocol.LocalShellAction) string {
	return request.ShellCallArguments(a, request.ShellTimeoutSeconds)
}
