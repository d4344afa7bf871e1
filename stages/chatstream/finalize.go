package chatstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/harnessflow/harnessflow/internal/jsonx"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
)

// FinalizeName is the name of the chat.finalize node.
const FinalizeName = "chat.finalize"

// ExtraContentKey is the key under which a tool call's provider metadata
// ("extra_content", e.g. Gemini's thought_signature) is kept in the Extra of
// the function_call or custom_tool_call item, verbatim, so that a request
// builder can send it back with the call.
const ExtraContentKey = "extra_content"

// slot accumulates one tool call.
type slot struct {
	id, name   string
	args       []byte
	extra      []byte
	cumulative bool // latched into cumulative mode (Options.CumulativeArguments)
	chunk      int  // ordinal of the chunk of the latest fragment
	checked    int  // 1+len(args) when complete() last ran, 0 if never
	whole      bool // its result
	shape      argShape
	done       bool
	used       bool // any fragment touched it
}

// finalizer is chat.finalize: Step → ResponseEvent.
type finalizer struct {
	kinds      protocol.ToolKinds
	cumulative bool
	slots      []slot
	finalized  int // slots [0, finalized) are done
	calls      int // tool calls emitted
	ended      bool
}

// NewFinalizeStage returns a fresh chat.finalize stage. It passes events
// through, assembles tool calls in slots keyed by index, and emits exactly
// one terminal event per stream (see the package documentation).
func NewFinalizeStage(opts Options) pipeline.Stage[Step, protocol.ResponseEvent] {
	return &finalizer{kinds: opts.ToolKinds, cumulative: opts.CumulativeArguments}
}

// Push handles one step.
func (f *finalizer) Push(_ context.Context, s Step, emit func(protocol.ResponseEvent)) error {
	if f.ended {
		return nil
	}
	switch s.Kind {
	case StepEvent:
		emit(s.Event)
	case StepToolCall:
		if s.ToolCall == nil {
			return fmt.Errorf("%s: StepToolCall without ToolCall", FinalizeName)
		}
		return f.fragment(s.ToolCall, s.Chunk, emit)
	case StepEnd:
		if s.End == nil {
			return fmt.Errorf("%s: StepEnd without End", FinalizeName)
		}
		f.ended = true
		if s.End.Err != nil {
			emit(protocol.Failed(f.failure(s.End.Err)))
			return nil
		}
		if err := f.finalizeUntil(len(f.slots), 0, emit); err != nil {
			return err
		}
		done := protocol.Completed(s.End.ResponseID, s.End.Usage)
		done.FinishReason = finishReason(s.End.FinishReason, f.calls > 0)
		emit(done)
	}
	return nil
}

// finishReason normalizes the upstream finish_reason for the completed
// event: a turn that produced tool calls finished with "tool_calls" even when
// the provider said "stop" or nothing (Gemini, some vLLM builds).
func finishReason(native string, calls bool) string {
	if calls && (native == "" || native == protocol.FinishStop || native == "function_call") {
		return protocol.FinishToolCalls
	}
	return native
}

// failure adds the unfinished tool calls being discarded to a truncation
// error's message.
func (f *finalizer) failure(err *protocol.StreamError) *protocol.StreamError {
	if err.Kind != protocol.ErrKindTruncated {
		return err
	}
	var names []string
	for i := f.finalized; i < len(f.slots); i++ {
		if sl := &f.slots[i]; sl.used && !sl.done {
			n := sl.name
			if n == "" {
				n = "#" + strconv.Itoa(i)
			}
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return err
	}
	c := *err
	c.Message += fmt.Sprintf("; %d unfinished tool call(s) discarded (%s)", len(names), strings.Join(names, ", "))
	return &c
}

// Finish checks that a StepEnd arrived; it never emits (see ErrNoEndMarker).
func (f *finalizer) Finish(ctx context.Context, _ func(protocol.ResponseEvent)) error {
	if f.ended {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return fmt.Errorf("%s: %w (no StepEnd)", FinalizeName, ErrNoEndMarker)
}

// fragment applies one tool-call fragment (docs/streams.md#tool-call-slots).
func (f *finalizer) fragment(t *ToolCall, chunk int, emit func(protocol.ResponseEvent)) error {
	idx := f.slotIndex(t)
	if idx > f.finalized && len(t.ID) > 0 && len(t.Name) > 0 {
		// A later call starts: finalize the earlier calls that are already
		// complete and were last touched in an earlier chunk. A call whose
		// arguments are not yet a whole JSON value stays open (parallel calls
		// may interleave, fixture c05); calls of one chunk (a unary
		// response) are all finalized at the end, after the message.
		if err := f.finalizeUntil(idx, chunk, emit); err != nil {
			return err
		}
	}
	for len(f.slots) <= idx {
		f.slots = append(f.slots, slot{})
	}
	sl := &f.slots[idx]
	if sl.done {
		return f.late(idx, t)
	}
	sl.used, sl.chunk = true, chunk
	if len(t.ID) > 0 && sl.id == "" {
		// The id is set once; a repeat (c14, c17) or a different id on an
		// index-keyed slot does not change it.
		sl.id = string(t.ID)
	}
	if n := t.Name; len(n) > 0 && string(n) != sl.name {
		switch {
		case sl.name == "" || bytes.HasPrefix(n, []byte(sl.name)):
			sl.name = string(n) // first fragment, or a cumulative re-send
		default:
			sl.name += string(n) // a genuinely fragmented name
		}
	}
	if len(t.ExtraContent) > 0 {
		sl.extra = append(sl.extra[:0], t.ExtraContent...)
	}
	switch a := t.Arguments; {
	case t.ArgumentsJSON:
		sl.args, sl.shape = append(sl.args[:0], a...), argShape{}
	case len(a) == 0:
	case sl.cumulative:
		sl.args, sl.shape = append(sl.args[:0], a...), argShape{}
	case f.cumulative && len(sl.args) > 0 && len(a) > len(sl.args) && bytes.HasPrefix(a, sl.args):
		sl.cumulative = true // the fragment strictly extends the buffer: latch
		sl.args, sl.shape = append(sl.args[:0], a...), argShape{}
	default:
		sl.args = append(sl.args, a...)
	}
	sl.checked = 0
	return nil
}

// slotIndex picks the slot of a fragment: its index when it has one;
// otherwise the slot holding the same id, a new slot for a new id (Gemini
// sends each index-less call whole, c06), or else the latest slot.
func (f *finalizer) slotIndex(t *ToolCall) int {
	if t.HasIndex {
		return t.Index
	}
	if len(t.ID) > 0 {
		for i := len(f.slots) - 1; i >= 0; i-- {
			if f.slots[i].id == string(t.ID) {
				return i
			}
		}
		if n := len(f.slots); n > 0 {
			if last := &f.slots[n-1]; last.id == "" && !last.done {
				return n - 1 // the latest call had no id yet: this is its id
			}
		}
		return len(f.slots)
	}
	return max(len(f.slots)-1, 0)
}

// late handles a fragment for a call that was already finalized. Repeats
// that add nothing new are ignored; new arguments cannot be honoured and
// fail the run rather than being dropped silently.
func (f *finalizer) late(idx int, t *ToolCall) error {
	sl := &f.slots[idx]
	a := t.Arguments
	if len(a) == 0 || bytes.Equal(a, sl.args) || (f.cumulative && bytes.HasPrefix(sl.args, a)) {
		return nil
	}
	return fmt.Errorf("%s: tool call %d (%s, id %q) got more arguments after it was finalized: %q",
		FinalizeName, idx, sl.name, sl.id, truncateForError(a))
}

func truncateForError(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "..."
	}
	return string(b)
}

// finalizeUntil emits the done items of slots [finalized, n). With a
// chunk ordinal (early finalization) it stops at the first slot whose
// arguments are not yet a complete JSON value or that was touched in that
// chunk; with 0 (end of stream) it finalizes them all.
func (f *finalizer) finalizeUntil(n, chunk int, emit func(protocol.ResponseEvent)) error {
	n = min(n, len(f.slots))
	for f.finalized < n {
		sl := &f.slots[f.finalized]
		if chunk > 0 && sl.used && (sl.chunk >= chunk || !sl.complete()) {
			return nil
		}
		if err := f.finalizeSlot(f.finalized, emit); err != nil {
			return err
		}
		f.finalized++
	}
	return nil
}

// complete reports whether the slot's arguments are one whole JSON object
// or array. The answer is cached until the arguments change, and the
// bracket structure is followed incrementally, so the arguments are
// validated (json.Valid) at most once, when their outer value closes: a
// huge unfinished call is not rescanned each time another call's fragment
// asks (docs/streams.md#cost).
func (sl *slot) complete() bool {
	if sl.checked == len(sl.args)+1 {
		return sl.whole
	}
	p := &sl.shape
	for ; p.n < len(sl.args) && !p.bad; p.n++ {
		switch c := sl.args[p.n]; {
		case p.inStr:
			switch {
			case p.esc:
				p.esc = false
			case c == '\\':
				p.esc = true
			case c == '"':
				p.inStr = false
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		case p.closed:
			p.bad = true // something after the outer value
		case c == '{' || c == '[':
			p.depth++
		case c == '}' || c == ']':
			p.depth--
			p.bad = p.depth < 0
			p.closed = p.depth == 0
		case p.depth == 0:
			p.bad = true // the outer value is not an object or array
		case c == '"':
			p.inStr = true
		}
	}
	if p.closed && !p.bad && !p.validated {
		p.validated, p.valid = true, json.Valid(jsonx.TrimSpace(sl.args))
	}
	sl.whole = p.closed && !p.bad && p.valid
	sl.checked = len(sl.args) + 1
	return sl.whole
}

// argShape follows the bracket structure of a slot's arguments as they
// grow: once the outer object or array closes, later bytes may only be
// whitespace, so its validity, checked once, stays the answer.
type argShape struct {
	n                int // bytes of args followed
	depth            int
	inStr, esc       bool
	closed, bad      bool
	validated, valid bool
}

// finalizeSlot emits the done item of slot i (docs/streams.md#finalizing-a-call).
func (f *finalizer) finalizeSlot(i int, emit func(protocol.ResponseEvent)) error {
	sl := &f.slots[i]
	sl.done = true
	if sl.name == "" {
		if sl.id == "" && len(sl.args) == 0 {
			return nil // an empty slot (a gap in the indices): nothing to emit
		}
		return fmt.Errorf("%s: tool call %d (id %q) is missing its name", FinalizeName, i, sl.id)
	}
	callID := sl.id
	if callID == "" {
		callID = "call_" + strings.ReplaceAll(sl.name, ".", "_")
	}
	var extra protocol.Extra
	if len(sl.extra) > 0 {
		extra = protocol.Extra{ExtraContentKey: json.RawMessage(bytes.Clone(sl.extra))}
	}
	f.calls++
	name, args := sl.name, sl.args
	kind := f.kinds[name]
	if kind.Kind == protocol.KindToolCall {
		if inner, innerArgs, ok := dispatched(args); ok {
			if k, known := f.kinds[inner]; known && k.Kind != protocol.KindToolCall && k.Kind != protocol.KindToolSearch {
				name, args, kind = inner, innerArgs, k
			}
		}
	}
	switch kind.Kind {
	case protocol.KindCustom:
		emit(protocol.Done(&protocol.CustomToolCall{
			CallID: callID,
			Name:   name,
			Input:  customInput(args),
			Extra:  extra,
		}))
	case protocol.KindToolSearch:
		emit(protocol.Done(&protocol.ToolSearchCall{
			CallID:    callID,
			Status:    protocol.StatusCompleted,
			Execution: "client",
			Arguments: SearchArguments(args),
			Extra:     extra,
		}))
	case protocol.KindNamespacedFunction:
		emit(protocol.Done(&protocol.FunctionCall{
			Name:      kind.Name,
			Namespace: kind.Namespace,
			Arguments: string(args),
			CallID:    callID,
			Extra:     extra,
		}))
	default:
		emit(protocol.Done(&protocol.FunctionCall{
			Name:      name,
			Arguments: string(args),
			CallID:    callID,
			Extra:     extra,
		}))
	}
	return nil
}

// dispatched reads the arguments of a dispatcher call (KindToolCall):
// {"name": N, "arguments": A} gives N and A as JSON text (a string A is
// taken as the JSON text it holds; no A is {}).
func dispatched(args []byte) (name string, inner []byte, ok bool) {
	var d struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(args, &d) != nil || d.Name == "" {
		return "", nil, false
	}
	a := jsonx.TrimSpace(d.Arguments)
	switch {
	case len(a) == 0 || string(a) == "null":
		a = []byte("{}")
	case a[0] == '"':
		var s string
		if json.Unmarshal(a, &s) != nil {
			return "", nil, false
		}
		a = []byte(s)
	}
	return d.Name, a, true
}

// SearchArguments returns the arguments of an emulated tool_search call
// as the JSON object a tool_search_call carries: the arguments when they
// are a JSON object (compacted; a max_results member, when there is no
// limit, becomes limit, which the client's search reads), the object a
// JSON string holds, else {"query": <the arguments as text>} — the model
// meant a search, and the client's search reads its query
// (docs/request-shaping.md#tool-search).
func SearchArguments(args []byte) json.RawMessage {
	t := jsonx.TrimSpace(args)
	if len(t) > 0 && t[0] == '"' {
		var s string
		if json.Unmarshal(t, &s) == nil {
			t = jsonx.TrimSpace([]byte(s))
		}
	}
	if len(t) > 0 && t[0] == '{' && json.Valid(t) {
		var obj map[string]json.RawMessage
		if json.Unmarshal(t, &obj) == nil {
			if n, ok := obj["max_results"]; ok && obj["limit"] == nil {
				// Qwen Code's tool_search (and others) say max_results;
				// the client's search reads limit.
				obj["limit"] = n
				delete(obj, "max_results")
				if b, err := json.Marshal(obj); err == nil {
					return b
				}
			}
		}
		var buf bytes.Buffer
		if json.Compact(&buf, t) == nil {
			return buf.Bytes()
		}
	}
	q, _ := json.Marshal(map[string]string{"query": string(jsonx.TrimSpace(args))})
	return q
}

// customInput returns the "input" string of arguments that parse as a JSON
// object holding one, else the raw arguments.
func customInput(args []byte) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) == nil {
		if raw, ok := obj["input"]; ok {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				return s
			}
		}
	}
	return string(args)
}
