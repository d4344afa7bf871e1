package bridge

import (
	"context"
	"encoding/json"
	"math"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
)

// NodeBridge is the node name of the response-side bridge stage.
const NodeBridge = "harness.bridge"

// Options configure the bridge stage.
type Options struct {
	Client ClientShell // from DetectShell over the client's request tools
	Table  Table
	// OnUnbridged is called once per finished call (at its output_item.done)
	// that goes to the client under a name the client did not advertise: a
	// function call to a native tool without a mapping, a mapped call whose
	// arguments or shell item could not be built, and a local_shell_call for
	// a client without any shell tool. The caller counts them. May be nil.
	OnUnbridged func(tool string)
}

// Node returns the bridge node (NodeBridge), a fresh Stage per run.
func Node(opts Options) pipeline.Node {
	return pipeline.NewNode(NodeBridge, func() pipeline.Stage[protocol.ResponseEvent, protocol.ResponseEvent] {
		return Stage(opts)
	}, pipeline.Describe("map harness-native tool calls onto the client's shell tool"))
}

// Stage returns a new bridge stage (one per stream). It rewrites calls
// between what the model called and what the client runs:
//
//   - a function_call (without namespace) of a tool with a Mapping becomes
//     the client's shell item (ClientShell.Item of Mapping.Build), with the
//     call's call id and item id;
//   - a local_shell_call becomes the client's shell item when the client's
//     shell is exec_command-like or argv-like; it passes as it is to a
//     local_shell client;
//   - everything else passes unchanged, in order.
//
// The output_item.added of a call that may be rewritten is held back until
// its output_item.done, and the call's tool_call_input.delta events (matched
// by item id or call id) with it. At the done the call is decided: rewritten,
// the held deltas are dropped (their text would not match the new
// arguments), and an added of the new item (arguments empty, or status
// in_progress) is emitted before its done (not for a local_shell_call
// without item id, which could not be paired with it); not rewritten (bad arguments, or
// a client item that cannot be built), the held events are emitted unchanged
// before the done, and OnUnbridged is called, so a call is never dropped. A
// done without an added gives just the done. Held events of calls that get
// no done are released unchanged before completed or failed and at Finish.
// Deltas without ids are never held.
//
//	in : added(read) delta delta text… done(read) completed
//	out: text… added(exec_command) done(exec_command) completed
func Stage(opts Options) pipeline.Stage[protocol.ResponseEvent, protocol.ResponseEvent] {
	return &stage{opts: opts}
}

type stage struct {
	opts Options
	held []heldEvent
}

type heldEvent struct {
	id, call string
	ev       protocol.ResponseEvent
}

var (
	_ pipeline.Stage[protocol.ResponseEvent, protocol.ResponseEvent] = (*stage)(nil)
	_ pipeline.Finisher[protocol.ResponseEvent]                      = (*stage)(nil)
)

// Push handles one event; see Stage.
func (s *stage) Push(_ context.Context, ev protocol.ResponseEvent, emit func(protocol.ResponseEvent)) error {
	switch ev.Type {
	case protocol.EventOutputItemAdded:
		if s.mayRewrite(ev.Item) {
			id, call := callKey(ev.Item)
			s.held = append(s.held, heldEvent{id: id, call: call, ev: ev})
			return nil
		}
	case protocol.EventOutputItemDone:
		s.done(ev, emit)
		return nil
	case protocol.EventToolCallInputDelta:
		if s.holds(ev.ItemID, ev.CallID) {
			s.held = append(s.held, heldEvent{id: ev.ItemID, call: ev.CallID, ev: ev})
			return nil
		}
	case protocol.EventCompleted, protocol.EventFailed:
		s.release(emit)
	}
	emit(ev)
	return nil
}

// Finish releases the events of calls that never got their done.
func (s *stage) Finish(_ context.Context, emit func(protocol.ResponseEvent)) error {
	s.release(emit)
	return nil
}

func (s *stage) release(emit func(protocol.ResponseEvent)) {
	for _, h := range s.held {
		emit(h.ev)
	}
	s.held = s.held[:0]
}

// mayRewrite reports whether an added item may be rewritten at its done.
func (s *stage) mayRewrite(item protocol.ResponseItem) bool {
	switch v := item.(type) {
	case *protocol.FunctionCall:
		if v.Namespace != "" || s.opts.Client.Kind == ShellNone && !s.opts.Client.Patches() {
			return false
		}
		_, ok := s.opts.Table.Lookup(v.Name)
		return ok
	case *protocol.LocalShellCall:
		k := s.opts.Client.Kind
		return k == ShellExecCommand || k == ShellArgv
	}
	return false
}

func callKey(item protocol.ResponseItem) (id, call string) {
	switch v := item.(type) {
	case *protocol.FunctionCall:
		return v.ID, v.CallID
	case *protocol.LocalShellCall:
		if v.CallID != nil {
			return v.ID, *v.CallID
		}
		return v.ID, ""
	}
	return "", ""
}

func sameCall(h *heldEvent, id, call string) bool {
	return id != "" && h.id == id || call != "" && h.call == call
}

// holds reports whether a delta with these ids belongs to a held call.
func (s *stage) holds(id, call string) bool {
	for i := range s.held {
		if h := &s.held[i]; h.ev.Type == protocol.EventOutputItemAdded && sameCall(h, id, call) {
			return true
		}
	}
	return false
}

// take removes and returns the held events of the call with these ids (for
// a call without ids: its first held added only).
func (s *stage) take(id, call string) []heldEvent {
	var out []heldEvent
	keep := s.held[:0]
	anon := id == "" && call == ""
	for _, h := range s.held {
		match := sameCall(&h, id, call)
		if anon && len(out) == 0 && h.id == "" && h.call == "" && h.ev.Type == protocol.EventOutputItemAdded {
			match = true
		}
		if match {
			out = append(out, h)
		} else {
			keep = append(keep, h)
		}
	}
	clear(s.held[len(keep):])
	s.held = keep
	return out
}

func (s *stage) done(ev protocol.ResponseEvent, emit func(protocol.ResponseEvent)) {
	var held []heldEvent
	switch ev.Item.(type) {
	case *protocol.FunctionCall, *protocol.LocalShellCall:
		held = s.take(callKey(ev.Item))
	}
	item, unbridged := s.rewrite(ev.Item)
	if item != nil {
		for _, h := range held {
			if h.ev.Type == protocol.EventOutputItemAdded && pairable(item) {
				emit(protocol.Added(announced(item)))
				break
			}
		}
		ev.Item = item
		emit(ev)
		return
	}
	for _, h := range held {
		emit(h.ev)
	}
	if unbridged != "" && s.opts.OnUnbridged != nil {
		s.opts.OnUnbridged(unbridged)
	}
	emit(ev)
}

// rewrite returns the client's item for a finished item, or nil and the
// tool name to report as unbridged ("" when the item passes as it should).
func (s *stage) rewrite(item protocol.ResponseItem) (protocol.ResponseItem, string) {
	c := s.opts.Client
	switch v := item.(type) {
	case *protocol.FunctionCall:
		if v.Namespace == "" {
			if m, ok := s.opts.Table.Lookup(v.Name); ok {
				if out, ok := c.patchRewrite(m, v); ok {
					return out, ""
				}
				sc, err := m.Build(json.RawMessage(v.Arguments))
				if err != nil {
					return nil, v.Name
				}
				sc.CallID, sc.ItemID = v.CallID, v.ID
				out, err := c.Item(sc)
				if err != nil {
					return nil, v.Name
				}
				return out, ""
			}
		}
		if !c.Advertised(v.Name, v.Namespace) {
			return nil, v.Name
		}
	case *protocol.LocalShellCall:
		switch c.Kind {
		case ShellLocal:
			return nil, ""
		case ShellNone:
			return nil, protocol.ToolTypeLocalShell
		}
		sc := ShellCall{ItemID: v.ID, Argv: v.Action.Command, Env: v.Action.Env}
		if sc.Argv == nil {
			sc.Argv = []string{}
		}
		if v.CallID != nil && *v.CallID != "" {
			sc.CallID = *v.CallID
		} else {
			sc.CallID = v.ID
		}
		if v.Action.WorkingDirectory != nil {
			sc.Workdir = *v.Action.WorkingDirectory
		}
		if t := v.Action.TimeoutMS; t != nil {
			sc.TimeoutMS = int64(min(*t, math.MaxInt64))
		}
		out, err := c.Item(sc)
		if err != nil {
			return nil, protocol.ToolTypeLocalShell
		}
		return out, ""
	}
	return nil, ""
}

// pairable reports whether a consumer can pair a separate added and done
// of item: by item id, or by call id for a function call. A local shell call
// without an id gets no added of its own; its done alone announces it.
func pairable(item protocol.ResponseItem) bool {
	switch v := item.(type) {
	case *protocol.LocalShellCall:
		return v.ID != ""
	}
	return true
}

// announced is the item of the output_item.added before a rewritten done:
// a function call without its arguments, a local shell call in progress.
func announced(item protocol.ResponseItem) protocol.ResponseItem {
	switch v := item.(type) {
	case *protocol.FunctionCall:
		c := *v
		c.Arguments = ""
		return &c
	case *protocol.LocalShellCall:
		c := *v
		c.Status = "in_progress"
		return &c
	case *protocol.CustomToolCall:
		c := *v
		c.Input, c.Status = "", "in_progress"
		return &c
	}
	return item
}
