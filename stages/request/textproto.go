package request

import (
	"context"
	"fmt"
	"strings"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
)

// TextProtocol is the history rendering shared by the harnesses whose model
// writes its actions as text instead of calling tools (swe-agent,
// mini-swe-agent's text mode, terminus-2). Such a model never sees a tool
// call or a tool message, so [FlattenText] renders the engine history like
// this:
//
//   - an assistant message goes back as its text (the text parts joined
//     with "\n"; an empty text adds nothing). The calls that follow it —
//     the harness synthesized them from that text — are not rendered: the
//     text already holds the action;
//   - each tool output (function_call_output, custom_tool_call_output) goes
//     back as a user message, the observation: its text with the client's
//     output framing taken off by Unwrap (for Codex: bridge.UnwrapOutput),
//     then rendered by the harness's Observation hook;
//   - one user message is the task ([TaskRule]) and is rendered by
//     RenderTask (the harness's instance prompt); the other user messages
//     go as they are, unless SkipContextual leaves them out;
//   - developer messages follow Developer and SkipContextualDeveloper;
//     system messages go as they are;
//   - reasoning, tool calls of any kind and items without a transcript form
//     are dropped;
//   - with Retry, a failed attempt (an assistant turn and the correction
//     that answered it) is left out once a later assistant turn exists.
//
// The zero value renders every user message as it is, developer messages as
// user messages and each observation as its unwrapped text. A TextProtocol
// is read-only once in use; its hooks must be safe for concurrent calls.
type TextProtocol struct {
	// Task says which user message is the task.
	Task TaskRule
	// Candidate reports whether a user message's text (its text parts
	// joined with "\n") may be the task (TaskCollect only); nil accepts
	// every text. [IsTaskCandidate] is the usual choice.
	Candidate func(text string) bool
	// RenderTask renders the task's text as the content of its user
	// message; nil keeps the text (TaskFirst keeps the message's own parts).
	RenderTask func(task string) (string, error)
	// SkipContextual leaves out user messages that are contextual fragments
	// ([IsContextualUser]) and user messages with any contextual developer
	// fragment ([IsContextualDeveloperText]); they are never the task.
	SkipContextual bool
	// Developer is the rule for developer messages: DeveloperAsUser (the
	// zero value), DeveloperKeep or DeveloperDrop.
	Developer DeveloperRule
	// SkipContextualDeveloper leaves out the developer messages whose texts
	// are all contextual developer fragments.
	SkipContextualDeveloper bool
	// Unwrap takes the client's framing off a tool output's text: it
	// returns the output, the exit code when the framing gives one, and ok
	// when it recognised the framing. nil leaves the text as it is.
	// bridge.UnwrapOutput has this signature.
	Unwrap func(text string) (out string, exitCode int, hasExit, ok bool)
	// Observation renders one tool output as the text of its user message;
	// keep false leaves the output out. nil sends Observation.Text.
	Observation func(o *Observation) (text string, keep bool, err error)
	// Retry, when set, recognises the text of a user message that corrected
	// a malformed assistant turn (a format error the harness sent). Such a
	// message and the assistant turn just before it are left out when a
	// later assistant turn exists.
	Retry func(text string) bool
}

// TaskRule says which user message of a text-protocol history is the task.
type TaskRule uint8

// Task rules.
const (
	// TaskFirst: the first user message kept is the task, rendered in
	// place (mini-swe-agent).
	TaskFirst TaskRule = iota
	// TaskCollect: the user messages before the first assistant turn or
	// tool output are held; the last one Candidate accepts is the task, and
	// the others are dropped. The task message (RenderTask of that text, or
	// of "" when no message was accepted) is emitted just before that first
	// assistant turn or tool output, or at the end (swe-agent, terminus-2).
	TaskCollect
)

// Observation is one tool output of a text-protocol history, as the
// Observation hook of a [TextProtocol] sees it.
type Observation struct {
	// Turn is the text of the assistant message the output answers: the
	// last assistant text of the history, "" when a user message came
	// after it or there is none. A harness re-reads its action from it.
	Turn string
	// Call is the history item of the call the output answers
	// (function_call, custom_tool_call or local_shell_call with the same
	// call id), nil when the history has none.
	Call protocol.ResponseItem
	// Output is the tool output as the history has it.
	Output *Output
	// Text is the output's text with the client's framing taken off: the
	// text output, or the texts of its content items joined with "\n".
	Text string
	// Framed says that Unwrap recognised the client's framing. ExitCode and
	// HasExit are what the framing said about the exit status; a process
	// still running has none.
	Framed   bool
	ExitCode int
	HasExit  bool
}

// taskCandidateExclusions start the user texts that are never the task: the
// engine's permission, skill, plugin and collaboration notices and its
// environment block (matched after leading white space, exactly).
var taskCandidateExclusions = []string{
	"<permissions instructions>", "<skills_instructions>", "<environment_context>", "<plugins_instructions>",
	"<collaboration_mode>",
}

// IsTaskCandidate reports whether a user text may be the task of a
// text-protocol agent: it does not start (after leading white space) with
// one of the engine's notices — <permissions instructions>,
// <skills_instructions>, <environment_context>, <plugins_instructions>,
// <collaboration_mode>.
func IsTaskCandidate(text string) bool {
	t := strings.TrimLeft(text, " \t\r\n\v\f")
	for _, p := range taskCandidateExclusions {
		if strings.HasPrefix(t, p) {
			return false
		}
	}
	return true
}

// TextHistory returns the request.history stage of a text-protocol harness:
// the engine history is rendered with tp (see [TextProtocol]) and appended
// to the transcript.
func TextHistory(tp *TextProtocol) pipeline.Stage[*Shaping, *Shaping] {
	return stage(func(_ context.Context, s *Shaping) error {
		out, err := FlattenText(s.Transcript, s.Request.Input, tp)
		if err != nil {
			return err
		}
		s.Transcript = out
		return nil
	})
}

// TextHistoryNode returns the request.history node of TextHistory.
func TextHistoryNode(tp *TextProtocol) pipeline.Node {
	return pipeline.StageNode(NodeHistory, TextHistory(tp),
		pipeline.Describe("history items → text-protocol transcript (assistant text kept, outputs as observations)"))
}

// textFlattener is the state of one FlattenText run.
type textFlattener struct {
	tp      *TextProtocol
	out     []Message
	base    int                              // len(out) on entry: messages before it are not ours
	calls   map[string]protocol.ResponseItem // call id → call item
	turn    string                           // the last assistant text since the last user message
	started bool                             // an assistant turn or observation was emitted
	task    string                           // TaskCollect: the accepted task text
	tasked  bool                             // TaskFirst: the task was rendered
}

// FlattenText appends the engine history items to out as a text-protocol
// transcript (see [TextProtocol]); tp nil is the zero TextProtocol.
func FlattenText(out []Message, items []protocol.ResponseItem, tp *TextProtocol) ([]Message, error) {
	if tp == nil {
		tp = &TextProtocol{}
	}
	f := textFlattener{tp: tp, out: out, base: len(out)}
	for i, it := range items {
		if err := f.item(it); err != nil {
			return nil, fmt.Errorf("input[%d]: %w", i, err)
		}
	}
	if err := f.start(); err != nil {
		return nil, err
	}
	if tp.Retry != nil {
		f.out = f.prune()
	}
	return f.out, nil
}

func (f *textFlattener) item(it protocol.ResponseItem) error {
	switch v := it.(type) {
	case *protocol.Message:
		if v == nil {
			return errNilItem
		}
		return f.message(v)
	case *protocol.FunctionCall:
		if v == nil {
			return errNilItem
		}
		f.call(v.CallID, v)
	case *protocol.CustomToolCall:
		if v == nil {
			return errNilItem
		}
		f.call(v.CallID, v)
	case *protocol.LocalShellCall:
		if v == nil {
			return errNilItem
		}
		id := v.ID
		if v.CallID != nil && *v.CallID != "" {
			id = *v.CallID
		}
		f.call(id, v)
	case *protocol.FunctionCallOutput:
		if v == nil {
			return errNilItem
		}
		return f.output(v.CallID, newOutput(&v.Output, v))
	case *protocol.CustomToolCallOutput:
		if v == nil {
			return errNilItem
		}
		return f.output(v.CallID, newOutput(&v.Output, v))
	case nil:
		return errNilItem
	}
	// Reasoning, tool search, web search, compaction, unknown items: no
	// text-protocol form.
	return nil
}

func (f *textFlattener) call(id string, item protocol.ResponseItem) {
	if id == "" {
		return
	}
	if f.calls == nil {
		f.calls = map[string]protocol.ResponseItem{}
	}
	f.calls[id] = item
}

// start emits the held task (TaskCollect) before the first assistant turn
// or observation, once.
func (f *textFlattener) start() error {
	if f.started {
		return nil
	}
	f.started = true
	if f.tp.Task != TaskCollect {
		return nil
	}
	text := f.task
	if f.tp.RenderTask != nil {
		var err error
		if text, err = f.tp.RenderTask(text); err != nil {
			return fmt.Errorf("task prompt: %w", err)
		}
	}
	f.out = append(f.out, Message{Role: RoleUser, Content: TextParts(text)})
	return nil
}

func (f *textFlattener) message(v *protocol.Message) error {
	switch v.Role {
	case protocol.RoleAssistant:
		text := JoinText(contentParts(v.Content), "\n")
		if text == "" {
			return nil
		}
		if err := f.start(); err != nil {
			return err
		}
		f.out = append(f.out, Message{Role: RoleAssistant, Content: TextParts(text)})
		f.turn = text
		return nil
	case protocol.RoleDeveloper:
		if f.tp.Developer == DeveloperDrop || f.tp.SkipContextualDeveloper && allContextualDeveloper(v) {
			return nil
		}
		role := RoleUser
		if f.tp.Developer == DeveloperKeep {
			role = RoleDeveloper
		}
		f.out = append(f.out, Message{Role: role, Content: contentParts(v.Content)})
		return nil
	case protocol.RoleUser:
		return f.user(v)
	}
	f.out = append(f.out, Message{Role: v.Role, Content: contentParts(v.Content)})
	return nil
}

func (f *textFlattener) user(v *protocol.Message) error {
	if f.tp.SkipContextual && (IsContextualUser(v) || hasContextualDeveloper(v)) {
		return nil
	}
	parts := contentParts(v.Content)
	switch {
	case f.tp.Task == TaskCollect && !f.started:
		text := JoinText(parts, "\n")
		if f.tp.Candidate == nil || f.tp.Candidate(text) {
			f.task = text
		}
		return nil
	case f.tp.Task == TaskFirst && !f.tasked:
		f.tasked = true
		if f.tp.RenderTask != nil {
			text, err := f.tp.RenderTask(JoinText(parts, "\n"))
			if err != nil {
				return fmt.Errorf("task prompt: %w", err)
			}
			parts = TextParts(text)
		}
	}
	f.turn = ""
	f.out = append(f.out, Message{Role: RoleUser, Content: parts})
	return nil
}

func (f *textFlattener) output(id string, o *Output) error {
	if err := f.start(); err != nil {
		return err
	}
	obs := &Observation{Turn: f.turn, Call: f.calls[id], Output: o}
	if o.IsText() {
		obs.Text = o.Text
	} else {
		var texts []string
		for i := range o.Items {
			if o.Items[i].Type == protocol.ContentInputText {
				texts = append(texts, o.Items[i].Text)
			}
		}
		obs.Text = strings.Join(texts, "\n")
	}
	if f.tp.Unwrap != nil {
		if out, code, hasExit, ok := f.tp.Unwrap(obs.Text); ok {
			obs.Text, obs.Framed, obs.ExitCode, obs.HasExit = out, true, code, hasExit
		}
	}
	text, keep := obs.Text, true
	if f.tp.Observation != nil {
		var err error
		if text, keep, err = f.tp.Observation(obs); err != nil {
			return fmt.Errorf("observation of call %q: %w", id, err)
		}
	}
	if keep {
		f.out = append(f.out, Message{Role: RoleUser, Content: TextParts(text)})
	}
	return nil
}

// prune leaves out each (assistant, correction) pair that a later assistant
// turn follows.
func (f *textFlattener) prune() []Message {
	msgs := f.out[f.base:]
	last := -1
	for i := range msgs {
		if msgs[i].Role == RoleAssistant {
			last = i
		}
	}
	keep := f.out[:f.base]
	for i := 0; i < len(msgs); i++ {
		if i+1 < last && msgs[i].Role == RoleAssistant && msgs[i+1].Role == RoleUser &&
			f.tp.Retry(JoinText(msgs[i+1].Content, "\n")) {
			i++
			continue
		}
		keep = append(keep, msgs[i])
	}
	return keep
}

// allContextualDeveloper reports whether every text item of a developer
// message is a contextual developer fragment (and it has at least one).
func allContextualDeveloper(m *protocol.Message) bool {
	n := 0
	for i := range m.Content {
		c := &m.Content[i]
		if c.Type != protocol.ContentInputText && c.Type != protocol.ContentOutputText {
			continue
		}
		if !IsContextualDeveloperText(c.Text) {
			return false
		}
		n++
	}
	return n > 0
}

// hasContextualDeveloper reports whether any text item of a message is a
// contextual developer fragment.
func hasContextualDeveloper(m *protocol.Message) bool {
	for i := range m.Content {
		c := &m.Content[i]
		if (c.Type == protocol.ContentInputText || c.Type == protocol.ContentOutputText) && IsContextualDeveloperText(c.Text) {
			return true
		}
	}
	return false
}
