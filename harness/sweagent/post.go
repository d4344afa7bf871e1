package sweagent

import (
	"context"
	"fmt"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

// Timeout is the time limit of one command, in milliseconds: SWE-agent's
// 30 seconds. It is the shell call's timeout_ms, which the bridge turns
// into exec_command's yield_time_ms.
const Timeout = 30000

// postConfig is what every stream of one turn shares (read-only).
type postConfig struct {
	parser     *Parser
	correction string // the format-correction text
	reviewed   bool   // the history holds the submit review: a bare submit ends the run
	shell      bool   // the client has a shell tool: swe_agent_command goes to it
	workdir    string // the client's working directory, "" when unknown
	base       int    // call numbers start after it (the history's length)
}

// PostNode returns the harness.post node of a turn: see [Post].
func PostNode(env *harness.Env) (pipeline.Node, error) {
	cfg, err := newPostConfig(env)
	if err != nil {
		return pipeline.Node{}, err
	}
	return pipeline.NewNode(harness.NodePost, func() pipeline.Stage[protocol.ResponseEvent, protocol.ResponseEvent] {
		return &Post{cfg: cfg}
	}, pipeline.Describe("assistant text → one shell call (or swe_agent_command), else a format-correction follow-up")), nil
}

func newPostConfig(env *harness.Env) (*postConfig, error) {
	p, err := NewParser(env.Prompts, env.Model.Variant(harness.NameSWEAgent))
	if err != nil {
		return nil, err
	}
	correction, err := env.Prompts.Render(harness.NameSWEAgent, "format_error", nil)
	if err != nil {
		return nil, err
	}
	review, err := env.Prompts.Marker(harness.NameSWEAgent, "submit-review")
	if err != nil {
		return nil, err
	}
	cfg := &postConfig{parser: p, correction: correction, shell: env.Client.Kind != bridge.ShellNone,
		workdir: env.Workspace.Cwd}
	if env.Request != nil {
		cfg.reviewed = hasSubmitReview(env.Request.Input, review)
		cfg.base = len(env.Request.Input)
	}
	return cfg, nil
}

// hasSubmitReview reports whether a tool output of the history (text
// output) holds the review marker, "Run the submit command again to
// confirm.".
func hasSubmitReview(items []protocol.ResponseItem, marker string) bool {
	for _, it := range items {
		p := request.OutputPayload(it)
		if p == nil {
			continue
		}
		if s, ok := p.TextContent(); ok && strings.Contains(s, marker) {
			return true
		}
	}
	return false
}

// Post is the swe-agent harness.post stage of one stream. Every event
// passes unchanged; after the done of each assistant message whose text
// (its output_text parts joined with "\n") is not empty, it adds what the
// text asks for:
//
//   - a shell command: a local_shell_call bash -lc CMD with the 30-second
//     timeout and the client's working directory, call id
//     "swe-agent-bash-N" (harness.bridge gives it to the client's
//     exec_command);
//   - a str_replace_editor command: for a client with a shell tool, a
//     local_shell_call running EditorCommand's equivalent command; for a
//     client without one, the custom_tool_call swe_agent_command with the
//     command as its input, call id "swe-agent-command-N";
//   - submit: the run ends — nothing is added, so the assistant message is
//     the final answer and completed ends the turn. (For a client without
//     a shell tool, submit before any review in the history is the custom
//     call swe_agent_command "submit", as in the fork.) A submit after the
//     history showed the review marker always ends the run;
//   - no command: one follow-up user message holding the format
//     correction, and completed gets end_turn:false, so the client asks
//     again; nothing of the text is withheld.
//
// N counts from the history's length, so call ids differ across the
// requests of a conversation without any state between them.
type Post struct {
	cfg      *postConfig
	n        int
	followup bool
}

var _ pipeline.Stage[protocol.ResponseEvent, protocol.ResponseEvent] = (*Post)(nil)

// Push implements pipeline.Stage.
func (p *Post) Push(_ context.Context, ev protocol.ResponseEvent, emit func(protocol.ResponseEvent)) error {
	switch ev.Type {
	case protocol.EventOutputItemDone:
		emit(ev)
		if m, ok := ev.Item.(*protocol.Message); ok && m != nil && m.Role == protocol.RoleAssistant {
			p.message(m, emit)
		}
		return nil
	case protocol.EventCompleted:
		if p.followup {
			harness.ContinueTurn(&ev)
		}
	}
	emit(ev)
	return nil
}

// messageText joins a message's output text parts with "\n".
func messageText(m *protocol.Message) string {
	var parts []string
	for _, c := range m.Content {
		if c.Type == protocol.ContentOutputText || c.Type == protocol.ContentInputText {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func (p *Post) message(m *protocol.Message, emit func(protocol.ResponseEvent)) {
	text := messageText(m)
	if text == "" {
		return
	}
	p.n++
	n := p.cfg.base + p.n
	cmd, _, ok := Extract(text, p.cfg.parser.Fence)
	if !ok {
		p.followup = true
		for _, ev := range harness.FollowupEvents(fmt.Sprintf("swe-agent-format-error-%d", n), p.cfg.correction) {
			emit(ev)
		}
		return
	}
	switch p.cfg.parser.Classify(cmd) {
	case KindShell:
		emit(protocol.Done(p.shellCall(fmt.Sprintf("swe-agent-bash-%d", n), cmd)))
	case KindSubmit:
		if p.cfg.reviewed || p.cfg.shell {
			return
		}
		emit(protocol.Done(p.customCall(n, cmd)))
	case KindEditor:
		if !p.cfg.shell {
			emit(protocol.Done(p.customCall(n, cmd)))
			return
		}
		emit(protocol.Done(p.shellCall(fmt.Sprintf("swe-agent-command-%d", n), EditorCommand(cmd))))
	}
}

// shellCall is the local_shell_call running script with bash -lc.
func (p *Post) shellCall(id, script string) *protocol.LocalShellCall {
	timeout := uint64(Timeout)
	a := protocol.LocalShellAction{Type: "exec", Command: []string{"bash", "-lc", script}, TimeoutMS: &timeout}
	if p.cfg.workdir != "" {
		wd := p.cfg.workdir
		a.WorkingDirectory = &wd
	}
	return &protocol.LocalShellCall{CallID: &id, Status: "in_progress", Action: a}
}

func (p *Post) customCall(n int, cmd string) *protocol.CustomToolCall {
	return &protocol.CustomToolCall{CallID: fmt.Sprintf("swe-agent-command-%d", n), Name: ToolName, Input: cmd}
}
