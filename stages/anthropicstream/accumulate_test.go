package anthropicstream

import (
	"context"
	"testing"

	"github.com/harnessflow/harnessflow/protocol"
)

// accumulate runs events through a fresh Accumulator and returns its
// terminal event.
func accumulate(t *testing.T, events ...Event) protocol.ResponseEvent {
	t.Helper()
	a := NewAccumulator(Options{})
	var out []protocol.ResponseEvent
	emit := func(e protocol.ResponseEvent) { out = append(out, e) }
	for _, e := range events {
		if err := a.Push(context.Background(), e, emit); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Finish(context.Background(), emit); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 || !out[len(out)-1].IsTerminal() {
		t.Fatalf("no terminal event last: %v", out)
	}
	return out[len(out)-1]
}

func TestFinishReason(t *testing.T) {
	start := Event{Type: TypeMessageStart, Message: &MessageInfo{ID: "msg_1"}}
	tool := []Event{
		{Type: TypeContentBlockStart, Index: 0, Block: &Block{Type: BlockToolUse, ID: "toolu_1", Name: "bash"}},
		{Type: TypeContentBlockStop, Index: 0},
	}
	server := []Event{
		{Type: TypeContentBlockStart, Index: 0, Block: &Block{Type: "server_tool_use", ID: "srvtoolu_1", Name: "web_search"}},
		{Type: TypeContentBlockStop, Index: 0},
	}
	for _, tc := range []struct {
		stop   string
		blocks []Event
		want   string
	}{
		{"end_turn", nil, protocol.FinishStop},
		{"stop_sequence", nil, protocol.FinishStop},
		{"pause_turn", server, protocol.FinishPauseTurn},
		{"max_tokens", nil, protocol.FinishLength},
		{"max_tokens", tool, protocol.FinishLength},
		{"model_context_window_exceeded", nil, protocol.FinishLength},
		{"tool_use", tool, protocol.FinishToolCalls},
		{"refusal", nil, protocol.FinishContentFilter},
		{"end_turn", tool, protocol.FinishStop},
		{"", tool, protocol.FinishToolCalls},
		{"", server, ""},
		{"", nil, ""},
		{"something_new", tool, "something_new"},
	} {
		events := append([]Event{start}, tc.blocks...)
		events = append(events, Event{Type: TypeMessageDelta, StopReason: tc.stop}, Event{Type: TypeMessageStop})
		got := accumulate(t, events...)
		if got.Type != protocol.EventCompleted || got.FinishReason != tc.want || got.ResponseID != "msg_1" {
			t.Errorf("stop_reason %q with %d block events: %s %q (response %q), want completed %q", tc.stop, len(tc.blocks), got.Type, got.FinishReason, got.ResponseID, tc.want)
		}
		if (got.EndTurn != nil) != (tc.stop == "pause_turn") {
			t.Errorf("stop_reason %q: end_turn %v", tc.stop, got.EndTurn)
		}
	}
}

// TestFailedResponseID: a failure carries the message id once message_start
// gave one.
func TestFailedResponseID(t *testing.T) {
	start := Event{Type: TypeMessageStart, Message: &MessageInfo{ID: "msg_1"}}
	errEvent := Event{Type: TypeError, Error: &APIError{Type: "overloaded_error", Message: "Overloaded"}}
	for _, tc := range []struct {
		name   string
		events []Event
		kind   string
		want   string
	}{
		{"error", []Event{start, errEvent}, protocol.ErrKindUpstream, "msg_1"},
		{"error before message_start", []Event{errEvent}, protocol.ErrKindUpstream, ""},
		{"end of input", []Event{start}, protocol.ErrKindTruncated, "msg_1"},
		{"cut mid-event", []Event{start, {Type: TypeEndOfStream, Offset: 9}}, protocol.ErrKindTruncated, "msg_1"},
		{"nothing", nil, protocol.ErrKindTruncated, ""},
	} {
		got := accumulate(t, tc.events...)
		if got.Type != protocol.EventFailed || got.Error.Kind != tc.kind || got.ResponseID != tc.want || got.FinishReason != "" {
			t.Errorf("%s: %s %+v response %q finish %q, want failed %s response %q", tc.name, got.Type, got.Error, got.ResponseID, got.FinishReason, tc.kind, tc.want)
		}
	}
}
