package sweagent

import (
	"fmt"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/harness/internal/textreply"
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

// PostNode returns the harness.post node of a turn: the text-protocol
// reply stage (harness/internal/textreply) deciding as [Post] says.
func PostNode(env *harness.Env) (pipeline.Node, error) {
	cfg, err := newPostConfig(env)
	if err != nil {
		return pipeline.Node{}, err
	}
	return textreply.Node(textreply.Options{
		New:       func() textreply.Protocol { return &Post{cfg: cfg} },
		TimeoutMS: Timeout,
		Workdir:   cfg.workdir,
		Describe:  "assistant text → one shell call (or swe_agent_command), else a format-correction follow-up",
	}), nil
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

// Post is swe-agent's decision on the replies of one stream. After the
// done of each assistant message whose text (its output_text parts joined
// with "\n") is not empty, it adds what the text asks for:
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
	cfg *postConfig
	n   int
}

var _ textreply.Protocol = (*Post)(nil)

// Completed implements textreply.Protocol: nothing waits for the end.
func (p *Post) Completed(protocol.ResponseEvent) (textreply.Decision, error) {
	return textreply.Decision{}, nil
}

// Message implements textreply.Protocol.
func (p *Post) Message(text string) (textreply.Decision, error) {
	if text == "" {
		return textreply.Decision{}, nil
	}
	p.n++
	n := p.cfg.base + p.n
	cmd, _, ok := Extract(text, p.cfg.parser.Fence)
	if !ok {
		return textreply.Decision{Action: textreply.Followup, ID: fmt.Sprintf("swe-agent-format-error-%d", n), Text: p.cfg.correction}, nil
	}
	custom := textreply.Decision{Action: textreply.Custom, ID: fmt.Sprintf("swe-agent-command-%d", n), Tool: ToolName, Input: cmd}
	switch p.cfg.parser.Classify(cmd) {
	case KindShell:
		return textreply.Decision{Action: textreply.Shell, ID: fmt.Sprintf("swe-agent-bash-%d", n), Script: cmd}, nil
	case KindSubmit:
		if p.cfg.reviewed || p.cfg.shell {
			return textreply.Decision{}, nil
		}
		return custom, nil
	case KindEditor:
		if !p.cfg.shell {
			return custom, nil
		}
		return textreply.Decision{Action: textreply.Shell, ID: custom.ID, Script: EditorCommand(cmd)}, nil
	}
	return textreply.Decision{}, nil
}
