// Package textreply is the one harness.post stage of the text-protocol
// harnesses (swe-agent, mini-swe-agent in text mode, terminus-2): agents
// whose model writes its action as text rather than as a tool call. The
// stage runs the loop they share — every event passes; the text of each
// assistant message goes to the harness's [Protocol], and so does the
// completed event; what the protocol decides (a shell call, a custom call,
// a call item of its own, a follow-up user message, or nothing: the reply
// is the final answer) is added to the stream, and a follow-up makes
// completed carry end_turn:false. Each harness keeps only its parser, its
// decision and its templates (docs/text-protocols.md).
package textreply

import (
	"context"
	"fmt"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
)

// Action is what a reply leads to.
type Action int

// The actions.
const (
	// Final adds nothing: the reply is the final answer, or there is
	// nothing (yet) to act on.
	Final Action = iota
	// Shell adds a local_shell_call running Script with bash -lc, with the
	// stage's timeout and working directory (harness.bridge gives it to
	// the client's shell tool).
	Shell
	// Custom adds the custom_tool_call Tool with Input.
	Custom
	// Call adds Item, a call the harness built itself.
	Call
	// Followup adds a user message holding Text; completed then carries
	// end_turn:false, so the client sends it back at once.
	Followup
)

// Decision is what a [Protocol] decided for one message or for the
// completed event.
type Decision struct {
	// Action says what is added.
	Action Action
	// ID is the call id (Shell, Custom) or the message id (Followup).
	ID string
	// Script is the shell script of Shell.
	Script string
	// Tool and Input are the name and input of Custom.
	Tool, Input string
	// Item is the call of Call.
	Item protocol.ResponseItem
	// Text is the text of Followup.
	Text string
}

// Protocol is one text harness's side of one stream; the stage gets a
// fresh one per run, so it may keep what it saw.
type Protocol interface {
	// Message is told the text of each assistant message of the answer
	// (its text parts joined with "\n", possibly empty), just after the
	// message's done passed; what it decides follows the message.
	Message(text string) (Decision, error)
	// Completed is told the completed event before it passes (its finish
	// reason says whether the reply was cut short); what it decides goes
	// just before completed.
	Completed(ev protocol.ResponseEvent) (Decision, error)
}

// Options configure the stage.
type Options struct {
	// New returns the protocol of one run.
	New func() Protocol
	// TimeoutMS is the timeout_ms of a Shell call (0: none).
	TimeoutMS uint64
	// Workdir is the working directory of a Shell call ("": none).
	Workdir string
	// Announce sends the output_item.added of an added call before its
	// done; without it the done goes alone.
	Announce bool
	// Describe is the node's one-line description.
	Describe string
}

// Node returns the harness.post node running o.
func Node(o Options) pipeline.Node {
	return pipeline.NewNode(harness.NodePost, func() pipeline.Stage[protocol.ResponseEvent, protocol.ResponseEvent] {
		return &stage{o: &o, p: o.New()}
	}, pipeline.Describe(o.Describe))
}

// stage is the harness.post stage of one stream.
type stage struct {
	o        *Options
	p        Protocol
	followup bool
}

// Push implements pipeline.Stage.
func (s *stage) Push(_ context.Context, ev protocol.ResponseEvent, emit func(protocol.ResponseEvent)) error {
	switch ev.Type {
	case protocol.EventOutputItemDone:
		emit(ev)
		if m, ok := ev.Item.(*protocol.Message); ok && m != nil && m.Role == protocol.RoleAssistant {
			d, err := s.p.Message(MessageText(m))
			if err != nil {
				return err
			}
			return s.add(d, emit)
		}
		return nil
	case protocol.EventCompleted:
		d, err := s.p.Completed(ev)
		if err != nil {
			return err
		}
		if err := s.add(d, emit); err != nil {
			return err
		}
		if s.followup {
			harness.ContinueTurn(&ev)
		}
	}
	emit(ev)
	return nil
}

// add emits the events of a decision.
func (s *stage) add(d Decision, emit func(protocol.ResponseEvent)) error {
	var call protocol.ResponseItem
	switch d.Action {
	case Final:
		return nil
	case Followup:
		s.followup = true
		for _, ev := range harness.FollowupEvents(d.ID, d.Text) {
			emit(ev)
		}
		return nil
	case Shell:
		call = ShellCall(d.ID, d.Script, s.o.TimeoutMS, s.o.Workdir)
	case Custom:
		call = &protocol.CustomToolCall{CallID: d.ID, Name: d.Tool, Input: d.Input}
	case Call:
		if d.Item == nil {
			return fmt.Errorf("textreply: a call decision without its call")
		}
		call = d.Item
	default:
		return fmt.Errorf("textreply: unknown action %d", d.Action)
	}
	if s.o.Announce {
		emit(protocol.Added(call))
	}
	emit(protocol.Done(call))
	return nil
}

// ShellCall is the local_shell_call running script with bash -lc, call id
// id, in progress; timeoutMS 0 and workdir "" leave those out.
func ShellCall(id, script string, timeoutMS uint64, workdir string) *protocol.LocalShellCall {
	a := protocol.LocalShellAction{Type: "exec", Command: []string{"bash", "-lc", script}}
	if timeoutMS > 0 {
		a.TimeoutMS = &timeoutMS
	}
	if workdir != "" {
		a.WorkingDirectory = &workdir
	}
	return &protocol.LocalShellCall{CallID: &id, Status: "in_progress", Action: a}
}

// MessageText is the text of a message: its input and output text parts,
// joined with "\n".
func MessageText(m *protocol.Message) string { return Text(m.Content) }

// Text joins the input and output text parts of content with "\n".
func Text(content []protocol.ContentItem) string {
	var parts []string
	for _, c := range content {
		if c.Type == protocol.ContentOutputText || c.Type == protocol.ContentInputText {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}
