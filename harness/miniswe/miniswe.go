// Package miniswe registers the "mini-swe-agent" harness: mini-swe-agent's
// way of working — a short system prompt, the task inside a long instance
// prompt, and a model that must run a shell command in every reply until it
// submits with `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`.
//
// # Variants
//
// Tool-call mode (the default, variant "tool") gives the model the client's
// function tools; text mode (variant "text") gives it none, for models
// without function calling, and reads one ```bash block per reply. A
// variant is chosen per model in the model table (serve, shape and
// translate take it with --model-caps FILE):
//
//	[{"match": "my-local-model", "variants": {"mini-swe-agent": "text"}}]
//
// so a Codex user picks text mode by the model name their config sends on
// /h/mini-swe-agent/v1. `harnessflow parse --harness mini-swe-agent
// --variant text` runs the text parser alone.
//
// # Request
//
// Tool-call mode: {"messages","model","tools"} — no "stream" key, so the
// upstream answers with one JSON body (the unary path). Tools are the
// client's function tools; every tool name maps to the function kind. The
// history is flattened by the shared flattener (request.FlattenPolicy):
//
//   - the system prompt of our own (system.tmpl);
//   - contextual user messages, user messages with a contextual developer
//     fragment and developer messages made only of such fragments are left
//     out; other developer messages become user messages;
//   - the first user message is the task, wrapped in the instance prompt
//     (instance.tmpl: "Please solve this issue: {task}", how to work, the
//     submit command, a <system_information> block with the client's
//     system — the client's OS, as its environment block does not give a
//     uname — and, on Darwin, the BSD sed note);
//   - an assistant text is held and replaced by a later one; the calls
//     after it join it in one assistant message (content "" without
//     text); a custom tool call's input is sent as {"command":input}, a
//     local_shell_call as bash {"command":[…]}; calls never answered are
//     sent unanswered;
//   - each tool output is rendered as mini-swe-agent shows observations:
//     the client's exec framing taken off, then <returncode>N</returncode>
//     and <output>…</output> (beyond 10000 characters, the first and the
//     last 5000 with a warning).
//
// The Codex fork whose mini-swe-agent harness this package reimplements
// also copies reasoning into provider_specific_fields and numbers each tool
// call with "index"; neither reaches the model, so neither is sent. Where
// an assistant text arrives while calls are pending (Codex never sends that
// order), the fork joins it to the calls' text; here it replaces it. The
// fork sends tool outputs as the client wrote them; here they are rendered
// as the original mini-swe-agent shows them.
//
// Text mode: {"messages","model"}, no tools. The history goes through the
// shared text-protocol renderer (request.TextProtocol): the first user
// message in instance_text.tmpl, assistant texts as they are, each tool
// output as a user message with the same observation rendering.
//
// # Response
//
// Tool-call mode ([ToolPost]): the answer is held until completed. A turn
// with an assistant message and no tool call is withheld — nothing of it
// reaches the client — and replaced by one follow-up user message (our
// no-tool-call text: call the shell tool, finish with the submit command);
// completed then carries end_turn:false so the client asks again. Any
// other turn passes unchanged; several calls in one turn pass (the unary
// path keeps them apart by their array position).
//
// Text mode ([TextPost]): the assistant message passes; exactly one
// ```bash block becomes a local_shell_call `bash -lc CMD` (30-second
// yield, the client's working directory), which harness.bridge hands to
// the client's exec_command; a reply with none or several gets one
// follow-up user message (our format error with the count; our
// output-limit text when the upstream stopped for length) and
// end_turn:false.
//
// # Finishing
//
// mini-swe-agent finishes when a command's output starts with the line
// COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT (and the command exited 0); the
// rest of the output is the submission. Through a client:
//
//   - a turn whose only command is `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`
//     (the sentinel possibly quoted) is not run: its output would be just
//     that line, so the task is submitted, with nothing more. The call is
//     dropped; the turn's assistant text is the final answer (a short
//     final message of our own when it has none), and the turn ends;
//   - any other command that prints the sentinel (`echo
//     COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff`) runs, and the
//     next request shows its output: the harness then withholds whatever
//     the model answers and ends the task with a final message holding the
//     submission. The proxy keeps no state, so that one upstream request
//     is still made.
//
// The legacy sentinel MINI_SWE_AGENT_FINAL_OUTPUT is recognised too. There
// is no limit on format retries (the original v2 stops after 3).
package miniswe

import (
	"encoding/json"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/wire/chat"
)

func init() { harness.MustRegister(Spec()) }

// Spec returns the mini-swe-agent harness.
func Spec() harness.Spec {
	return harness.Spec{
		Name:        harness.NameMiniSWEAgent,
		Description: "mini-swe-agent: the client's function tools (or, variant text, one ```bash block per reply); a reply without a command is sent back",
		Wires:       []harness.Wire{harness.WireChat},
		Request:     RequestGraph,
		Post:        PostNode,
		Parse:       Parse,
		Variants: []harness.VariantSpec{{Name: "mode", Values: []string{VariantTool, VariantText}, Default: VariantTool,
			Doc: "tool calls the bash tool; text writes one ```bash block per reply, for models without function calling"}},
	}
}

// config is what the request graph and the post stage of one turn share.
type config struct {
	text     bool // text mode
	obs      *observer
	tool     string // the shell tool the prompts name
	key      string // its command argument
	workdir  string // the client's working directory
	base     int    // call numbers start after it (the history's length)
	data     map[string]any
	finished bool   // the history ends with the submission
	submit   string // the submission, when finished
}

func newConfig(env *harness.Env) (*config, error) {
	text, err := textMode(env.Model.Variant(harness.NameMiniSWEAgent))
	if err != nil {
		return nil, err
	}
	obs, err := newObserver(env.Prompts)
	if err != nil {
		return nil, err
	}
	c := &config{text: text, obs: obs, workdir: env.Workspace.Cwd}
	c.tool, c.key = shellTool(env)
	osName := env.Workspace.OS
	system := map[string]string{"linux": "Linux", "darwin": "Darwin", "windows": "Windows"}[osName]
	if system == "" {
		system = osName
	}
	if env.Workspace.Shell != "" {
		system += ", shell " + env.Workspace.Shell
	}
	c.data = map[string]any{"Submit": obs.submits[0], "Tool": c.tool, "Key": c.key, "System": system, "Darwin": osName == "darwin"}
	if env.Request != nil {
		c.base = len(env.Request.Input)
		c.submit, c.finished = obs.submitted(env.Request.Input)
	}
	return c, nil
}

// render renders template name of the harness with the config's data and
// extra.
func (c *config) render(env *harness.Env, name string, extra map[string]any) (string, error) {
	data := make(map[string]any, len(c.data)+len(extra))
	for k, v := range c.data {
		data[k] = v
	}
	for k, v := range extra {
		data[k] = v
	}
	return env.Prompts.Render(harness.NameMiniSWEAgent, name, data)
}

// shellTool names the client's shell function and its command argument
// for the prompts; without one (or in text mode, where the model calls
// nothing) it is mini-swe-agent's own bash with "command".
func shellTool(env *harness.Env) (name, key string) {
	name, key = "bash", "command"
	if env.Client.Kind != bridge.ShellExecCommand && env.Client.Kind != bridge.ShellArgv || env.Request == nil {
		return name, key
	}
	for _, t := range env.Request.Tools {
		if t.Type != protocol.ToolTypeFunction || t.Name != env.Client.Name {
			continue
		}
		var s struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		_ = json.Unmarshal(t.Parameters, &s) // no schema: the "command" default
		if _, ok := s.Properties["cmd"]; ok && env.Client.Kind == bridge.ShellExecCommand {
			return t.Name, "cmd"
		}
		return t.Name, "command"
	}
	return name, key
}

// RequestGraph returns the mini-swe-agent request graph for env.Wire (chat
// only): request.system → request.tools (tool-call mode) → request.history
// → request.options → request.provider → request.encode.
func RequestGraph(env *harness.Env) (*pipeline.Graph, error) {
	c, err := newConfig(env)
	if err != nil {
		return nil, err
	}
	systemName, instanceName := "system", "instance"
	if c.text {
		systemName, instanceName = "system_text", "instance_text"
	}
	system, err := c.render(env, systemName, nil)
	if err != nil {
		return nil, err
	}
	if _, err := c.render(env, instanceName, map[string]any{"Task": ""}); err != nil {
		return nil, err
	}
	wrap := func(task string) (string, error) {
		s, err := c.render(env, instanceName, map[string]any{"Task": task})
		return strings.TrimRight(s, "\n"), err
	}
	opts := env.RequestOptions()
	nodes := []pipeline.Node{request.FixedSystemNode(strings.TrimRight(system, "\n"))}
	if c.text {
		nodes = append(nodes, request.TextHistoryNode(&request.TextProtocol{
			Task:                    request.TaskFirst,
			RenderTask:              wrap,
			SkipContextual:          true,
			Developer:               request.DeveloperAsUser,
			SkipContextualDeveloper: true,
			Observation:             c.obs.observe,
		}))
	} else {
		nodes = append(nodes, request.FunctionToolsNode(), request.HistoryNode(opts, toolPolicy(c, wrap)))
	}
	nodes = append(nodes,
		request.ChatBodyNode(request.ChatBody{}, "model; no stream (unary)"),
		request.ProviderNode(opts),
		request.ChatEncodeNode(request.ChatStyle{}),
	)
	return pipeline.New("request.mini-swe-agent", nodes...)
}

// toolPolicy is the flatten policy of tool-call mode (see the package doc).
func toolPolicy(c *config, wrap func(string) (string, error)) *request.FlattenPolicy {
	return &request.FlattenPolicy{
		Text:                    request.TextMerge,
		TextReplace:             true,
		Unanswered:              request.UnansweredKeep,
		Developer:               request.DeveloperAsUser,
		SkipContextualDeveloper: true,
		SkipContextual:          true,
		SkipDeveloperFragments:  true,
		BlankCallContent:        true,
		DropTrailingReasoning:   true,
		CallName:                func(_, name string) string { return name },
		LocalShellName:          "bash",
		LocalShellArguments:     bashArguments,
		MapCall: func(call *request.Call) {
			if cc, ok := call.Item.(*protocol.CustomToolCall); ok {
				call.Arguments = `{"command":` + string(chat.AppendString(nil, cc.Input)) + `}`
			}
		},
		MapOutput: c.obs.mapOutput,
		FirstUser: func(parts []request.Part) []request.Part {
			text, err := wrap(request.JoinText(parts, "\n"))
			if err != nil { // the template rendered when the graph was built
				return parts
			}
			return request.TextParts(text)
		},
	}
}

// bashArguments renders a local_shell_call as a bash call: {"command":[…]}.
func bashArguments(a *protocol.LocalShellAction) string {
	return request.ShellCallArguments(a, request.ShellTimeoutNone)
}
