package harness

import (
	"github.com/harnessflow/harnessflow/protocol"
)

// The harness.post contract. A post node sees the engine events of one
// upstream answer and emits engine events. It may:
//
//   - pass events through unchanged;
//   - add a synthesized tool call (a local_shell_call with argv, timeout,
//     workdir and env, or a custom_tool_call) right after the assistant
//     message it came from — harness.bridge then maps it onto the client's
//     shell tool;
//   - add a follow-up user message ([FollowupEvents]) — the completed event
//     then carries end_turn:false, so the client records the message and
//     samples again at once;
//   - withhold a rejected turn: nothing of it leaks.
//
// A stream still ends with exactly one completed or failed event.

// FollowupEvents returns the events of a follow-up user message: its
// output_item.added and output_item.done.
func FollowupEvents(id, text string) []protocol.ResponseEvent {
	m := &protocol.Message{ID: id, Role: protocol.RoleUser,
		Content: []protocol.ContentItem{{Type: protocol.ContentInputText, Text: text}}}
	return []protocol.ResponseEvent{protocol.Added(m), protocol.Done(m)}
}

// IsFollowup reports whether ev is the done event of a follow-up user
// message.
func IsFollowup(ev protocol.ResponseEvent) bool {
	if ev.Type != protocol.EventOutputItemDone {
		return false
	}
	m, ok := ev.Item.(*protocol.Message)
	return ok && m != nil && m.Role == protocol.RoleUser
}

// ContinueTurn marks a completed event as not ending the turn
// (end_turn:false).
func ContinueTurn(ev *protocol.ResponseEvent) {
	f := false
	ev.EndTurn = &f
}

// WantsFollowup reports whether a completed event asks the client to sample
// again (end_turn:false).
func WantsFollowup(ev protocol.ResponseEvent) bool {
	return ev.Type == protocol.EventCompleted && ev.EndTurn != nil && !*ev.EndTurn
}
