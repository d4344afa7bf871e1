// Package claudecode registers the "claude-code" and "claude-code-bare"
// harnesses: the requests Claude Code sends, in its Full profile (the long
// system prompt, Claude Code's tool set) and its Bare one (a two-line system
// prompt, Bash, Edit and Read), from one source of truth (Shape: the system
// prompt and the tool selection and ranking), rendered three ways:
//
//   - messages wire, route MessagesHarness(ClaudeCode): an Anthropic
//     Messages request with native tool use (see below);
//   - responses wire, route ClaudeCodeResponses(Full|Bare): the client's
//     Responses request with instructions, tools and input replaced;
//   - chat wire, route ClaudeCodeChat(Full|Bare): the same request converted
//     by the native chat conversion.
//
// # Tools
//
// The native Bash, Read, Write, Edit, Glob and Grep (Bare: Bash, Edit, Read)
// are shown when the client advertised a shell tool, and bridged to the
// client: Bash to its shell tool, Write to its apply_patch when it has one
// (an Add File patch) and otherwise, like Read, Edit, Glob and Grep, to a
// generated shell command (Edit is never a patch: that needs the file's
// text). Full also keeps the client's own function tools except the hidden
// ones (exec_command, write_stdin, request_user_input, update_plan,
// view_image, …), with a $schema key added, and adds Claude Code's
// supplemental reference tools (Agent, CronCreate, …, Workflow); Bare keeps
// client tools named Bash, Edit or Read and the tool search (as ToolSearch).
// A child agent (the client's x-openai-subagent header says collab_spawn)
// loses AskUserQuestion, EnterPlanMode, ExitPlanMode and TaskOutput and gets
// the child-agent prompt. The list is sorted by Claude Code's fixed rank.
// Descriptions and schemas are ours, in prompts/pack/claude-code/tools.json.
//
// # Messages wire
//
// {"model","messages","system":[3 blocks],"tools","thinking"?,
// "context_management"?,"output_config"?,"metadata":{"user_id"},
// "temperature"?,"max_tokens","stream":true} to /messages?beta=true with
// anthropic-version, the profile's anthropic-beta, Claude Code's user
// agent, x-app, x-stainless-* and x-claude-code-session-id (the
// conversation key).
//
//   - system: the billing block (no cache mark; its version suffix from the
//     first user text, its hash over the body), the agent line and the
//     system prompt (both with an ephemeral mark);
//   - max_tokens 64000 for opus 4.6 and later, 32000 otherwise; thinking
//     adaptive for opus and sonnet 4.6 and later (and mythos), else enabled
//     with a budget of max_tokens-1, none for a child agent or the effort
//     "none"; context_management clears old thinking when thinking is on;
//     output_config effort "high" in Bare, the requested effort in Full
//     when the model's table entry lists it; temperature 1 for a child;
//   - messages: consecutive roles merged, signed reasoning as thinking
//     blocks, calls as tool_use (bridged client calls shown as the native
//     calls; Edit inputs get replace_all and lose trailing blanks in
//     new_string), results as tool_result blocks in call order (exec
//     framing taken off; is_error true on failure, false for Bash; Bash
//     output trimmed; failures the client reported wrapped in
//     <tool_use_error>); developer messages only as the skills block (Full:
//     a Skill reminder without file paths; Bare: as it is; child: none);
//     in Full (not a child, not the variant fork) Claude Code 2.1.332's
//     layout: the attribution reminder (attribution_reminder.tmpl) and,
//     with project instructions, the project-memory reminder
//     (memory_reminder.tmpl) lead the first user prompt, and a role
//     "system" message with the environment (environment.tmpl: cwd, git
//     state, platform, shell, model, date), carrying the turn's effort as
//     its own output_config, follows it — the system prompt then has no
//     environment; otherwise (Bare, a child, the variant fork) a date
//     reminder leads the first user prompt and the Full system prompt
//     carries its environment section (env_section.tmpl); the Responses
//     and Chat wires append the environment text to the instructions
//     instead of a mid-conversation system message; a task reminder after every
//     ten steps without a task-list call (Full); one cache mark on the last
//     non-empty text or tool_result block; a lone uncached user text as a
//     string;
//   - a session's first request (every input item a user or developer
//     message) with tools also carries a title request: the title model,
//     our title instructions, <session>FIRST USER TEXT</session>, JSON
//     output {title}, temperature 1. The proxy sends it first and ignores
//     its answer.
//
// Not emulated: the HEAD probe of the base URL on a session's first
// request, the environment overrides of the fork (allowed supplemental
// tools, device and session ids), the title request's own anthropic-beta
// (it goes with the main request's headers), auto-memory, and the git
// status (a proxy does not see the client's repository).
package claudecode

import (
	"fmt"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/internal/claudestyle"
	"github.com/harnessflow/harnessflow/pipeline"
)

func init() {
	harness.MustRegister(Spec(harness.NameClaudeCode))
	harness.MustRegister(Spec(harness.NameClaudeCodeBare))
}

// Spec returns the harness of a profile's config name ("claude-code" for
// Full, "claude-code-bare" for Bare). The profile of a turn is its route's.
func Spec(name string) harness.Spec {
	desc := "Claude Code (Full profile): its system prompt and tool set, native tool use on Messages"
	if name == harness.NameClaudeCodeBare {
		desc = "Claude Code (Bare profile): a two-line system prompt, Bash, Edit and Read"
	}
	return harness.Spec{
		Name:        name,
		Description: desc,
		Wires:       []harness.Wire{harness.WireResponses, harness.WireChat, harness.WireMessages},
		Routes: map[harness.Wire]harness.RouteKind{harness.WireResponses: harness.RouteClaudeCodeResponses,
			harness.WireChat: harness.RouteClaudeCodeChat},
		Request: RequestGraph,
		Bridge:  Bridge,
		Variants: []harness.VariantSpec{{Name: "request", Values: []string{VariantFork},
			Doc: "fork sends the request of the Codex fork where it differs from Claude Code's"}},
	}
}

// Bridge maps claude-code's shell and file tools onto the client's tools.
var Bridge = claudestyle.Table(claudestyle.ToolBash, claudestyle.ToolRead, claudestyle.ToolWrite,
	claudestyle.ToolEdit, claudestyle.ToolGlob, claudestyle.ToolGrep)

// RequestGraph returns the request graph of env.Wire for the route's
// profile.
func RequestGraph(env *harness.Env) (*pipeline.Graph, error) {
	shape, err := NewShape(env)
	if err != nil {
		return nil, fmt.Errorf("claude-code: %w", err)
	}
	switch env.Wire {
	case harness.WireMessages:
		return messagesGraph(env, shape)
	case harness.WireResponses:
		return responsesGraph(shape)
	case harness.WireChat:
		return chatGraph(env, shape)
	}
	return nil, fmt.Errorf("claude-code: no request graph for wire %q", env.Wire)
}
