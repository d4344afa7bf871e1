package miniswe

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/harness/internal/textreply"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
)

// Timeout is the time limit of a text-mode command, in milliseconds: the
// shell call's timeout_ms, which the bridge turns into exec_command's
// yield_time_ms, so that a command with pauses comes back whole.
const Timeout = 30000

// postTexts are the rendered texts a post stage may send.
type postTexts struct {
	noToolCall string // the no-tool-call follow-up (tool-call mode)
	final      string // the final message without a submission
	submitted  string // the final message of a finished history
}

// PostNode returns the harness.post node of a turn: [FinishedPost] when the
// history already ends with the submission, else [ToolPost] or [TextPost]
// by the variant.
func PostNode(env *harness.Env) (pipeline.Node, error) {
	c, err := newConfig(env)
	if err != nil {
		return pipeline.Node{}, err
	}
	var t postTexts
	if t.noToolCall, err = c.render(env, "no_tool_call", nil); err != nil {
		return pipeline.Node{}, err
	}
	if t.final, err = c.render(env, "final", map[string]any{"Submission": ""}); err != nil {
		return pipeline.Node{}, err
	}
	if t.submitted, err = c.render(env, "final", map[string]any{"Submission": c.submit}); err != nil {
		return pipeline.Node{}, err
	}
	// The text-mode follow-ups depend on the reply; check they render.
	if _, err = c.render(env, "format_error", map[string]any{"Found": 0}); err != nil {
		return pipeline.Node{}, err
	}
	if _, err = c.render(env, "truncated", map[string]any{"Reason": protocol.FinishLength}); err != nil {
		return pipeline.Node{}, err
	}
	switch {
	case c.finished:
		return pipeline.NewNode(harness.NodePost, func() pipeline.Stage[protocol.ResponseEvent, protocol.ResponseEvent] {
			return &FinishedPost{text: t.submitted}
		}, pipeline.Describe("the history ends with the submission: the answer is withheld, a final message ends the task")), nil
	case c.text:
		return textreply.Node(textreply.Options{
			New:       func() textreply.Protocol { return &TextPost{cfg: c, env: env} },
			TimeoutMS: Timeout,
			Workdir:   c.workdir,
			Describe:  "exactly one ```bash block → a shell call; otherwise a format-error follow-up",
		}), nil
	}
	return pipeline.NewNode(harness.NodePost, func() pipeline.Stage[protocol.ResponseEvent, protocol.ResponseEvent] {
		return &ToolPost{cfg: c, texts: t}
	}, pipeline.Describe("hold the turn; a turn with text and no tool call is replaced by the no-tool-call follow-up")), nil
}

// finalEvents are the events of a final assistant message holding text.
func finalEvents(text string) []protocol.ResponseEvent {
	empty := &protocol.Message{ID: "mini-swe-agent-final", Role: protocol.RoleAssistant,
		Content: []protocol.ContentItem{{Type: protocol.ContentOutputText, Text: ""}}}
	full := &protocol.Message{ID: "mini-swe-agent-final", Role: protocol.RoleAssistant,
		Content: []protocol.ContentItem{{Type: protocol.ContentOutputText, Text: text}}}
	return []protocol.ResponseEvent{protocol.Added(empty), protocol.TextDelta(text), protocol.Done(full)}
}

// isCall reports whether an item is a tool call.
func isCall(item protocol.ResponseItem) bool {
	switch item.(type) {
	case *protocol.FunctionCall, *protocol.CustomToolCall, *protocol.LocalShellCall:
		return true
	}
	return false
}

// callCommand returns the shell command a call runs: a function call's
// "cmd" or "command" (a string, or an argv: bash -lc X is X), a custom
// call's input, a local_shell_call's argv.
func callCommand(item protocol.ResponseItem) string {
	argv := func(a []string) string {
		if len(a) == 3 && (a[0] == "bash" || a[0] == "sh") && (a[1] == "-lc" || a[1] == "-c") {
			return a[2]
		}
		return bridge.Join(a)
	}
	switch v := item.(type) {
	case *protocol.FunctionCall:
		var args map[string]json.RawMessage
		if json.Unmarshal([]byte(v.Arguments), &args) != nil {
			return ""
		}
		for _, k := range []string{"cmd", "command"} {
			var s string
			if json.Unmarshal(args[k], &s) == nil && s != "" {
				return s
			}
			var a []string
			if json.Unmarshal(args[k], &a) == nil && len(a) > 0 {
				return argv(a)
			}
		}
	case *protocol.CustomToolCall:
		return v.Input
	case *protocol.LocalShellCall:
		return argv(v.Action.Command)
	}
	return ""
}

// callIDs returns a call's item id and call id.
func callIDs(item protocol.ResponseItem) (id, call string) {
	switch v := item.(type) {
	case *protocol.FunctionCall:
		return v.ID, v.CallID
	case *protocol.CustomToolCall:
		return v.ID, v.CallID
	case *protocol.LocalShellCall:
		if v.CallID != nil {
			return v.ID, *v.CallID
		}
		return v.ID, ""
	}
	return "", ""
}

// ToolPost is the tool-call mode harness.post stage of one stream (the
// no-tool-call rejecter):
//
//   - created passes at once and starts the turn afresh; every other event
//     is held until the turn ends;
//   - completed: a turn with an assistant message and no tool call is
//     dropped whole and replaced by the follow-up user message, completed
//     carrying end_turn:false; a turn whose one call is the bare submit
//     command passes without that call (plus a final message when it had
//     no text), ending the task; any other turn is released in order;
//   - failed passes, and the held events are dropped;
//   - a stream that ends without completed or failed releases what it held.
type ToolPost struct {
	cfg   *config
	texts postTexts

	held      []protocol.ResponseEvent
	assistant bool // an assistant message was done
	text      bool // … with text
	calls     []protocol.ResponseItem
}

var (
	_ pipeline.Stage[protocol.ResponseEvent, protocol.ResponseEvent] = (*ToolPost)(nil)
	_ pipeline.Finisher[protocol.ResponseEvent]                      = (*ToolPost)(nil)
)

func (p *ToolPost) reset() {
	clear(p.held)
	p.held, p.assistant, p.text, p.calls = p.held[:0], false, false, nil
}

// Push implements pipeline.Stage.
func (p *ToolPost) Push(_ context.Context, ev protocol.ResponseEvent, emit func(protocol.ResponseEvent)) error {
	switch ev.Type {
	case protocol.EventCreated:
		p.reset()
		emit(ev)
		return nil
	case protocol.EventFailed:
		p.reset()
		emit(ev)
		return nil
	case protocol.EventCompleted:
		p.complete(ev, emit)
		return nil
	case protocol.EventOutputItemDone:
		if m, ok := ev.Item.(*protocol.Message); ok && m != nil && m.Role == protocol.RoleAssistant {
			p.assistant = true
			p.text = p.text || strings.TrimSpace(textreply.MessageText(m)) != ""
		} else if isCall(ev.Item) {
			p.calls = append(p.calls, ev.Item)
		}
	}
	p.held = append(p.held, ev)
	return nil
}

func (p *ToolPost) complete(ev protocol.ResponseEvent, emit func(protocol.ResponseEvent)) {
	defer p.reset()
	switch {
	case p.assistant && len(p.calls) == 0:
		for _, f := range harness.FollowupEvents(fmt.Sprintf("mini-swe-agent-no-tool-call-%d", p.cfg.base+1), p.texts.noToolCall) {
			emit(f)
		}
		harness.ContinueTurn(&ev)
	case len(p.calls) == 1 && p.cfg.obs.isSubmit(callCommand(p.calls[0])):
		id, call := callIDs(p.calls[0])
		for _, h := range p.held {
			if !belongsTo(h, p.calls[0], id, call) {
				emit(h)
			}
		}
		if !p.text {
			for _, f := range finalEvents(p.texts.final) {
				emit(f)
			}
		}
	default:
		for _, h := range p.held {
			emit(h)
		}
	}
	emit(ev)
}

// belongsTo reports whether a held event is part of the call item (its
// added or done, or an input delta with its ids).
func belongsTo(ev protocol.ResponseEvent, item protocol.ResponseItem, id, call string) bool {
	switch ev.Type {
	case protocol.EventOutputItemAdded, protocol.EventOutputItemDone:
		if ev.Item == item {
			return true
		}
		if !isCall(ev.Item) {
			return false
		}
		i, c := callIDs(ev.Item)
		return id != "" && i == id || call != "" && c == call
	case protocol.EventToolCallInputDelta:
		return id != "" && ev.ItemID == id || call != "" && ev.CallID == call
	}
	return false
}

// Finish releases what is held when the stream ended without completed.
func (p *ToolPost) Finish(_ context.Context, emit func(protocol.ResponseEvent)) error {
	for _, h := range p.held {
		emit(h)
	}
	p.reset()
	return nil
}

// TextPost is mini-swe-agent's text-mode decision on the replies of one
// stream (run by the text-protocol reply stage). After the done of the
// assistant message, exactly one action becomes a local_shell_call bash -lc
// CMD ("mini-swe-agent-bash-N"; an empty action runs `true`), except the
// bare submit command, which adds nothing: the message is the final
// answer. Any other count of actions, or a turn without an assistant
// message, gets at completed one follow-up user message — the format error
// with the count, or the output-limit text when the upstream stopped for
// length (or for tool calls) — and end_turn:false.
type TextPost struct {
	cfg *config
	env *harness.Env

	message bool
	found   int // the actions of a reply that was not one action; -1 after a good reply
	n       int
}

var _ textreply.Protocol = (*TextPost)(nil)

// Message implements textreply.Protocol.
func (p *TextPost) Message(text string) (textreply.Decision, error) {
	p.message = true
	acts := Actions(text)
	if len(acts) != 1 {
		if p.found >= 0 { // a second message after a good one changes nothing
			p.found = len(acts)
		}
		return textreply.Decision{}, nil
	}
	p.found = -1
	cmd := acts[0]
	if p.cfg.obs.isSubmit(cmd) {
		return textreply.Decision{}, nil
	}
	if cmd == "" {
		cmd = "true"
	}
	p.n++
	return textreply.Decision{Action: textreply.Shell, ID: fmt.Sprintf("mini-swe-agent-bash-%d", p.cfg.base+p.n), Script: cmd}, nil
}

// Completed implements textreply.Protocol.
func (p *TextPost) Completed(ev protocol.ResponseEvent) (textreply.Decision, error) {
	if p.message && p.found < 0 {
		return textreply.Decision{}, nil
	}
	var text string
	var err error
	if f := ev.FinishReason; f == protocol.FinishLength || f == protocol.FinishToolCalls {
		text, err = p.cfg.render(p.env, "truncated", map[string]any{"Reason": f})
	} else {
		text, err = p.cfg.render(p.env, "format_error", map[string]any{"Found": max(p.found, 0)})
	}
	if err != nil {
		return textreply.Decision{}, err
	}
	return textreply.Decision{Action: textreply.Followup, ID: fmt.Sprintf("mini-swe-agent-format-error-%d", p.cfg.base+1), Text: text}, nil
}

// FinishedPost is the harness.post stage of a turn whose history already
// ends with the submission: the task is over, so everything the upstream
// answers is withheld (created passes) and one final assistant message
// holding the submission ends the turn, with completed — also when the
// upstream failed.
type FinishedPost struct {
	text string
	done bool
}

var _ pipeline.Stage[protocol.ResponseEvent, protocol.ResponseEvent] = (*FinishedPost)(nil)

// Push implements pipeline.Stage.
func (p *FinishedPost) Push(_ context.Context, ev protocol.ResponseEvent, emit func(protocol.ResponseEvent)) error {
	switch ev.Type {
	case protocol.EventCreated:
		emit(ev)
	case protocol.EventCompleted, protocol.EventFailed:
		if p.done {
			return nil
		}
		p.done = true
		for _, f := range finalEvents(p.text) {
			emit(f)
		}
		end := protocol.ResponseEvent{Type: protocol.EventCompleted, ResponseID: ev.ResponseID, TokenUsage: ev.TokenUsage}
		emit(end)
	}
	return nil
}
