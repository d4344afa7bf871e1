package terminus2

import (
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/harness/internal/textreply"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
)

// execWaitBudget is how many seconds of waiting a batch may spend when the
// client's shell is Codex's exec_command, whose wait for a command's output
// ends at 30 s: a batch that ends in time comes back whole.
const execWaitBudget = float64(bridge.DefaultYieldMaxMS-8000) / 1000

// PostNode returns the harness.post node of the turn described by env.
func PostNode(env *harness.Env) (pipeline.Node, error) { return postNode(env, DefaultOptions()) }

// turnState is what the post stage knows of the turn, read from the
// request it answers.
type turnState struct {
	t       *texts
	kind    RequestKind
	pending bool   // a completion waits for its confirmation
	screen  string // what the terminal shows now
	shell   shellOptions
}

func postNode(env *harness.Env, o Options) (pipeline.Node, error) {
	o, err := optionsFor(env, o)
	if err != nil {
		return pipeline.Node{}, err
	}
	t, err := newTexts(env.Prompts, o.Variant)
	if err != nil {
		return pipeline.Node{}, err
	}
	var items []protocol.ResponseItem
	if env.Request != nil {
		items = env.Request.Input
	}
	c := analyze(t, items, env.Workspace.Cwd)
	st := &turnState{t: t, kind: c.kind, screen: c.screen(c.entries)}
	if c.kind.Kind == KindAction {
		if _, st.pending, err = c.messages(); err != nil {
			return pipeline.Node{}, err
		}
	}
	st.shell = shellOptions{workdir: c.kind.Workdir, n: c.nextCall, exec: o.Exec}
	if st.shell.workdir == "" {
		st.shell.workdir = c.home
	}
	if env.Client.Kind == bridge.ShellExecCommand {
		st.shell.waitBudget = execWaitBudget
	}
	return textreply.Node(textreply.Options{
		New:      func() textreply.Protocol { return &postStage{st: st} },
		Announce: true,
		Describe: "terminus-2: the reply → tmux shell call, parse-error or confirmation follow-up, or the next hand-off prompt",
	}), nil
}

// postStage is terminus-2's decision on the assistant reply of one answer
// (run by the text-protocol reply stage). The reply passes as it is; what
// it leads to is added just before the completed event, once it is known
// whether the reply was cut short:
//
//   - Summary → the questions prompt for the next agent, made from the
//     summary (a follow-up user message; the turn continues);
//   - Questions → the request to answer those questions;
//   - AnswerQuestions → the handoff prompt with the answers;
//   - Action and Handoff → the reply is parsed: an error → the parse-error
//     prompt; a completion while one waits for confirmation → nothing, the
//     turn ends; a first completion with commands → the commands run (their
//     output comes back as the confirmation question), without commands →
//     the confirmation question at once; otherwise the commands run (an
//     empty list only looks at the screen);
//   - a reply cut at the output limit (Action, Handoff) → no command runs:
//     a follow-up says so (an XML reply whose commands were complete is
//     used when it parses cleanly).
//
// The first assistant message of the answer with text is the reply; a
// failed stream gets nothing added.
type postStage struct {
	st    *turnState
	reply *string
}

var _ textreply.Protocol = (*postStage)(nil)

// Message implements textreply.Protocol: the first reply with text is kept.
func (p *postStage) Message(text string) (textreply.Decision, error) {
	if p.reply == nil && text != "" {
		p.reply = &text
	}
	return textreply.Decision{}, nil
}

// Completed implements textreply.Protocol.
func (p *postStage) Completed(ev protocol.ResponseEvent) (textreply.Decision, error) {
	if p.reply == nil {
		return textreply.Decision{}, nil
	}
	reply := *p.reply
	p.reply = nil
	return p.st.act(reply, ev.FinishReason == protocol.FinishLength, ev.ResponseID)
}

// followup is the decision to add a follow-up user message with text.
func followup(responseID, text string) textreply.Decision {
	id := "terminus-2-followup"
	if responseID != "" {
		id += "-" + responseID
	}
	return textreply.Decision{Action: textreply.Followup, ID: id, Text: text}
}

// act decides what a reply leads to.
func (st *turnState) act(reply string, truncated bool, responseID string) (textreply.Decision, error) {
	t := st.t
	var text string
	var err error
	switch st.kind.Kind {
	case KindSummary:
		text, err = t.render(tmplQuestion, map[string]any{"Instruction": st.kind.Instruction, "Summary": reply, "Screen": st.kind.Screen})
	case KindQuestions:
		text, err = t.render(tmplAnswerRequest, map[string]any{"Questions": reply})
	case KindAnswerQuestions:
		text, err = t.render(tmplHandoff, map[string]any{"Answers": reply})
	default:
		return st.actOnCommands(reply, truncated, responseID)
	}
	if err != nil {
		return textreply.Decision{}, err
	}
	return followup(responseID, text), nil
}

func (st *turnState) actOnCommands(reply string, truncated bool, responseID string) (textreply.Decision, error) {
	t := st.t
	r := Parse(reply, t.variant)
	if truncated {
		if s, ok := salvage(reply, t.variant); ok {
			r = s
		} else {
			text, err := t.render(tmplOutputLimit, map[string]any{"Warning": r.Warning()})
			if err != nil {
				return textreply.Decision{}, err
			}
			return followup(responseID, text), nil
		}
	}
	switch {
	case !r.OK():
		text, err := t.render(tmplParseError, map[string]any{"Error": r.Error, "Warning": r.Warning()})
		if err != nil {
			return textreply.Decision{}, err
		}
		return followup(responseID, text), nil
	case r.TaskComplete && st.pending:
		return textreply.Decision{}, nil
	case r.TaskComplete && len(r.Commands) == 0:
		text, err := t.render(tmplConfirm, map[string]any{"State": st.screen})
		if err != nil {
			return textreply.Decision{}, err
		}
		return followup(responseID, text), nil
	}
	return textreply.Decision{Action: textreply.Call, Item: t.shellCall(r.Commands, st.shell)}, nil
}

// salvage reads an XML reply that was cut short after its commands: the
// text up to the </response> after </commands>, when that parses without
// error and without the several-blocks warning.
func salvage(reply string, v Variant) (Result, bool) {
	if v != VariantXML {
		return Result{}, false
	}
	i := strings.Index(reply, "</commands>")
	if i < 0 {
		return Result{}, false
	}
	j := strings.Index(reply[i:], "</response>")
	if j < 0 {
		return Result{}, false
	}
	r := ParseXML(reply[:i+j+len("</response>")])
	if !r.OK() {
		return Result{}, false
	}
	for _, w := range r.Warnings {
		if strings.HasPrefix(w, "IMPORTANT: Only issue one") {
			return Result{}, false
		}
	}
	return r, true
}
