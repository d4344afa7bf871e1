// Package deepseektui registers the "deepseek-tui" harness: the request the
// Codex fork's deepseek-tui harness sends (an emulation of DeepSeek TUI
// 0.8.44, whose real tool is in no registry reachable here), with the
// fork's open questions decided as docs/request-shaping.md#deepseek-tui
// says.
//
// # Body
//
// {"model","messages","stream":true,"stream_options":{"include_usage":
// true},"max_tokens":64000,"tools":[84],"tool_choice":"auto"}; no
// thinking, effort or cache key.
//
// # System prompt
//
// Ten sections, each trimmed and joined by a blank line (our wording,
// prompts/pack/deepseek-tui): the base rules (base.tmpl, naming the
// model), the voice, the YOLO mode and the automatic approvals, the
// project instructions, the project context pack, the environment, the
// context-management notes, the compaction outline and the authority
// recap. The project instructions are the deepest AGENTS.md the client
// sent, as <project_instructions source="PATH">; without one, an overview
// generated from the workspace listing (structure.tmpl) under the source
// CWD/.codewhale/instructions.md. The fork also writes that overview into
// the workspace; a proxy never writes into a workspace, so it is only
// rendered. The context pack is JSON (project name, the directory
// structure to depth 2, the README's path without its text — no file of
// the workspace is read —, key source files, counts). The listing is read
// only under the workspace policy local.
//
// # Messages
//
// The kimi family's flattening (harness/internal/kimistyle) with the
// fork's options: an assistant text waits for the calls that follow and
// becomes their content; arguments compacted; an empty tool output stays
// "". Then: every tool-call message without reasoning gets
// "(reasoning omitted)" (and "" as content when it has none); every user
// prompt starts with a <turn_meta> block (turn_meta.tmpl: the date and the
// working set) — the fork tags only the latest one, so the earlier ones
// change from turn to turn, against its own cache advice (docs/request-shaping.md#deepseek-tui); and
// the output "Plan updated" of an update_plan call is replaced by a count
// of the plan's steps and the plan as JSON.
//
// # Tools and bridge
//
// DeepSeek TUI's 84 tools (tools.json), names and parameters as the fork
// sends them, descriptions ours. Table bridges exec_shell and
// task_shell_start (timeout in milliseconds), read_file, write_file,
// edit_file, grep_files, file_search, list_dir, apply_patch, git_status,
// git_diff, diagnostics and checklist_write/todo_write onto the client's
// shell; update_plan and request_user_input are left to the client's own
// tools of those names; every other tool is answered with a clear tool
// error. In the history the client's shell calls are shown again as the
// DeepSeek TUI calls they came from (any other shell call as exec_shell)
// and their outputs rendered as the fork renders them ("(no output)", a
// failure with its exit code — not the fork's "Some(1)" —, long output
// compacted).
//
// # Compaction
//
// Codex's own compaction turn (a request without tools whose last user
// text holds the marker "CONTEXT CHECKPOINT COMPACTION", the fork's
// trigger) is answered with the fork's handoff request instead of the
// turn's: our briefing prompt as the system message, then the flattened
// conversation (the fork sends none, which leaves nothing to summarise),
// then the briefing request with the cycle state (workspace, the last
// checklist of the history, the working set) in place of Codex's prompt;
// "max_tokens":4096, "temperature":0.2, no stream, the request's model
// (the fork's fixed deepseek-v4-flash is a bug behind a proxy). Its answer
// streams back to Codex as the compaction turn's answer, which Codex keeps
// as the summary.
package deepseektui

import (
	"fmt"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/internal/kimistyle"
	"github.com/harnessflow/harnessflow/harness/internal/packtools"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

func init() { harness.MustRegister(Spec()) }

// Version is the DeepSeek TUI release the fork emulates.
const Version = "0.8.44"

// Body limits of the main and the compaction request.
const (
	MaxTokens           = 64000
	CompactionMaxTokens = 4096
)

// CompactionTemperature is the compaction request's temperature.
const CompactionTemperature = "0.2"

// NodePost is the node of the post-passes (reasoning placeholder, turn
// metadata, plan outputs).
const NodePost = "request.deepseek"

// Spec returns the deepseek-tui harness.
func Spec() harness.Spec {
	return harness.Spec{
		Name:        harness.NameDeepSeekTUI,
		Description: "DeepSeek TUI (the fork's emulation): its layered system prompt, turn metadata, 84 tools bridged to the client's shell, its compaction handoff",
		Wires:       []harness.Wire{harness.WireChat},
		RouteName:   "DeepSeekTui",
		Request:     RequestGraph,
		Bridge:      Table(),
	}
}

// IsCompaction reports whether the request is Codex's compaction turn as
// the fork recognises it: no tools, and the first text item of the last
// user message with text holds the marker.
func IsCompaction(env *harness.Env) bool {
	if len(env.Request.Tools) != 0 {
		return false
	}
	marker := marker(env, "compaction")
	if marker == "" {
		return false
	}
	items := env.Request.Input
	for i := len(items) - 1; i >= 0; i-- {
		m, ok := items[i].(*protocol.Message)
		if !ok || m == nil || m.Role != protocol.RoleUser {
			continue
		}
		for _, c := range m.Content {
			if c.Type == protocol.ContentInputText {
				return strings.Contains(c.Text, marker)
			}
		}
	}
	return false
}

// RequestGraph returns the deepseek-tui request graph (chat only):
// request.system → request.tools → request.history → request.deepseek →
// request.options → request.provider → request.encode.
func RequestGraph(env *harness.Env) (*pipeline.Graph, error) {
	if IsCompaction(env) {
		return compactionGraph(env)
	}
	ws := readWorkspace(env)
	system, err := SystemPrompt(env, ws)
	if err != nil {
		return nil, fmt.Errorf("deepseek-tui: system prompt: %w", err)
	}
	tools, err := packtools.Load(env.Prompts, harness.NameDeepSeekTUI, "tools.json")
	if err != nil {
		return nil, fmt.Errorf("deepseek-tui: %w", err)
	}
	meta, err := turnMeta(env, ws)
	if err != nil {
		return nil, fmt.Errorf("deepseek-tui: %w", err)
	}
	opts := env.RequestOptions()
	return pipeline.New("request.deepseek-tui",
		request.FixedSystemNode(system),
		pipeline.StageNode(request.NodeTools, request.Update(func(s *request.Shaping) error {
			s.Tools = append(s.Tools[:0], tools...)
			s.ToolKinds = make(protocol.ToolKinds, len(tools))
			for _, t := range tools {
				s.ToolKinds[t.Name] = protocol.ToolOutputKind{Kind: protocol.KindFunction}
			}
			return nil
		}), pipeline.Describe("DeepSeek TUI's 84 tools, bridged to the client's shell")),
		historyNode(env),
		pipeline.StageNode(NodePost, request.Update(func(s *request.Shaping) error {
			omittedReasoning(s.Transcript, marker(env, "reasoning_omitted"))
			tagPrompts(s.Transcript, meta, marker(env, "turn_meta"))
			planOutputs(s.Transcript, s.Request.Input, marker(env, "plan_updated"))
			return nil
		}), pipeline.Describe("(reasoning omitted) on tool-call turns, <turn_meta> on every prompt, update_plan outputs counted")),
		request.ChatBodyNode(request.ChatBody{Stream: true, MaxTokens: MaxTokens, ToolChoice: `"auto"`},
			"model, max_tokens 64000, stream with usage, tool_choice auto"),
		request.ProviderNode(opts),
		request.ChatEncodeNode(styleOf()),
	)
}

// Policy returns deepseek-tui's flatten policy: the kimi family's, with an
// assistant text held for the calls that follow (their content), arguments
// compacted and an empty tool output kept empty.
func Policy() request.FlattenPolicy {
	p := kimistyle.Policy()
	p.Text = request.TextMerge
	p.CallSendsText = false
	p.MapCall = func(c *request.Call) { c.Arguments = compactArguments(c.Arguments) }
	p.MapOutput = emptyKept
	return p
}

// emptyKept is the kimi family's output rule, except that an empty text
// output stays "".
func emptyKept(o *request.Output) {
	if o.IsText() && o.Text == "" {
		return
	}
	kimistyle.SystemTexts(o)
}

// omittedReasoning gives every assistant message with calls and no
// reasoning the placeholder (and "" as content when it has none).
func omittedReasoning(ts []request.Message, placeholder string) {
	for i := range ts {
		m := &ts[i]
		if m.Role != request.RoleAssistant || len(m.Calls) == 0 || m.Reasoning != "" {
			continue
		}
		m.Reasoning = placeholder
		if !m.HasContent() {
			m.Blank = true
		}
	}
}

// tagPrompts puts the turn-metadata block before every user prompt whose
// text does not already start with the marker (after leading white space).
func tagPrompts(ts []request.Message, meta, marker string) {
	if meta == "" {
		return
	}
	for i := range ts {
		m := &ts[i]
		if m.Role != request.RoleUser || m.Output != nil || len(m.Content) == 0 || m.Content[0].Kind != request.PartText {
			continue
		}
		if strings.HasPrefix(strings.TrimLeft(m.Content[0].Text, " \t\r\n"), marker) {
			continue
		}
		parts := append([]request.Part(nil), m.Content...)
		parts[0].Text = meta + "\n" + parts[0].Text
		m.Content = parts
	}
}

// marker is a marker of the pack's deepseek-tui markers.json ("" when the
// pack has none of that name: the pass it drives is then off).
func marker(env *harness.Env, name string) string {
	m, err := env.Prompts.Marker(harness.NameDeepSeekTUI, name)
	if err != nil {
		return ""
	}
	return m
}

// styleOf is deepseek-tui's chat rendering: the kimi family's.
func styleOf() request.ChatStyle { return kimistyle.Style() }
