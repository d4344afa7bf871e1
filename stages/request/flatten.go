package request

import (
	"errors"
	"fmt"
	"slices"

	"github.com/harnessflow/harnessflow/protocol"
)

// TextRule says what an assistant text does to the turn being built.
type TextRule uint8

// Text rules.
const (
	// TextMerge holds the text and merges it with the texts before it (two
	// single texts join with no separator); the pending turn is emitted
	// when a tool result or another role's message arrives.
	TextMerge TextRule = iota
	// TextImmediate emits the text as an assistant message at once, with
	// the pending reasoning; while tool calls are pending it is appended to
	// their content instead, joined with [FlattenPolicy.TextJoin].
	TextImmediate
)

// UnansweredRule says what happens to tool calls that no output answers by
// the end of the history.
type UnansweredRule uint8

// Unanswered-call rules.
const (
	// UnansweredAbort answers each with a tool message holding
	// [FlattenPolicy.AbortedText] (the chat wire refuses an unanswered call).
	UnansweredAbort UnansweredRule = iota
	// UnansweredKeep emits the calls with no answer.
	UnansweredKeep
	// UnansweredDrop leaves out the calls still pending at the end (the
	// pending assistant text is still sent, without them).
	UnansweredDrop
)

// DeveloperRule says how developer messages of the history are carried.
type DeveloperRule uint8

// Developer rules.
const (
	// DeveloperAsUser carries them as user messages.
	DeveloperAsUser DeveloperRule = iota
	// DeveloperKeep keeps the developer role (the encoder or a provider
	// quirk may still change it).
	DeveloperKeep
	// DeveloperDrop leaves them out of the transcript.
	DeveloperDrop
	// DeveloperFlush leaves them out of the transcript, but each ends the
	// pending assistant turn as a user message does (it is flushed, and
	// with DiscardUnanswered the unanswered calls are discarded).
	DeveloperFlush
)

// FlattenPolicy is what differs between harnesses when the engine history is
// flattened into a transcript: the machinery is one ([Flatten]); a harness
// is a policy value. [NativePolicy] is the native conversion.
type FlattenPolicy struct {
	// Text is the assistant text rule.
	Text TextRule
	// TextJoin joins the texts that arrive while calls are pending
	// (TextImmediate).
	TextJoin string
	// Defer holds user, developer and system messages that arrive while
	// calls are unanswered until the last of those calls is answered.
	Defer bool
	// Unanswered is the rule for calls never answered.
	Unanswered UnansweredRule
	// AbortedText answers an aborted call (UnansweredAbort); "" means
	// [AbortedOutput].
	AbortedText string
	// Developer is the developer message rule.
	Developer DeveloperRule
	// SkipContextual leaves out user messages that are contextual
	// fragments (the environment block, AGENTS.md instructions, …; see
	// [IsContextualUser]).
	SkipContextual bool
	// BlankCallContent gives an assistant turn with tool calls and no text
	// the empty text as content, instead of no content.
	BlankCallContent bool
	// DropTrailingReasoning leaves out reasoning that no assistant turn
	// took by the end (the native conversion emits it as an assistant
	// message with empty content).
	DropTrailingReasoning bool
	// CallName names a function call on the wire; nil uses the names of
	// the converted tools (namespaced functions flattened, naming rules in
	// [ChatToolName]).
	CallName func(namespace, name string) string
	// LocalShellName and LocalShellArguments render a local_shell_call;
	// nil gives the native form: tool "local_shell" with
	// {"command":[…],"timeout_ms":n|null,"workdir":s|null}.
	LocalShellName      string
	LocalShellArguments func(a *protocol.LocalShellAction) string
	// MapCall, when set, may rewrite each call before it is held (argument
	// re-serialisation, the tool bridge's reverse mapping).
	MapCall func(c *Call)
	// MapOutput, when set, may rewrite each tool output before it is
	// emitted.
	MapOutput func(o *Output)

	// TextReplace makes an assistant text replace the pending one instead
	// of joining it: always with TextMerge, while calls are pending with
	// TextImmediate.
	TextReplace bool
	// ContentText reduces message content to its text parts concatenated
	// into one text (images and audio are dropped); a message without any
	// text part has no content.
	ContentText bool
	// DropReasoning leaves every reasoning item out.
	DropReasoning bool
	// DiscardUnanswered makes a user or developer message, and with
	// TextImmediate an assistant text that is sent at once, first discard
	// the calls not answered yet: the pending calls are dropped, the calls
	// already sent stop waiting for their outputs, and the pending
	// reasoning is cleared. The pending assistant text is then sent on its
	// own, or dropped with DiscardText.
	DiscardUnanswered bool
	// DiscardText makes a discard (DiscardUnanswered) drop the pending
	// assistant text too.
	DiscardText bool
	// DropOrphans leaves out a tool output whose call is not waiting for
	// one: never made, discarded, already answered, or (CallEndsWait) no
	// longer waited for. Pending calls are sent when an output arrives, so
	// the calls waiting are those sent and neither answered nor discarded.
	DropOrphans bool
	// CallEndsWait makes a new call stop the wait for the outputs of the
	// calls sent before it.
	CallEndsWait bool
	// CallSendsText makes a call first send the pending assistant text as
	// an assistant message of its own, with the pending reasoning.
	CallSendsText bool
	// SkipDeveloperFragments, with SkipContextual, also leaves out user
	// messages with an item that is a contextual developer fragment (see
	// [IsContextualDeveloperText]).
	SkipDeveloperFragments bool
	// SkipEmpty leaves out user and developer messages without content
	// (after they have ended the pending turn).
	SkipEmpty bool
	// MapUserContent, when set, rewrites the content of each user message
	// (not of developer messages carried as user messages) before it is
	// held or emitted.
	MapUserContent func(parts []Part) []Part
	// FirstUser, when set, rewrites the content of the first user message
	// that is kept (after SkipContextual; developer messages carried as
	// user messages do not count), after MapUserContent: a harness's
	// instance prompt around the task.
	FirstUser func(parts []Part) []Part
	// SkipContextualDeveloper leaves out developer messages whose text
	// items are all contextual developer fragments (see
	// [IsContextualDeveloperText]), whatever the Developer rule.
	SkipContextualDeveloper bool
}

// NativePolicy returns the native chat conversion's policy (docs/request-shaping.md#history-flattening): texts
// merged and held, user turns deferred while calls are open, unanswered
// calls aborted, developer messages as user messages.
func NativePolicy() *FlattenPolicy { return &FlattenPolicy{Defer: true} }

// flattener is the accumulate-and-flush state of one history conversion.
type flattener struct {
	p         *FlattenPolicy
	callName  func(ns, name string) string
	names     map[ToolRef]string // wire names of namespaced functions (request.tools)
	out       []Message
	reasoning string                // pending reasoning, taken by the next flush
	ritems    []*protocol.Reasoning // the reasoning items of reasoning, taken with it
	content   []Part                // pending assistant content
	calls     []Call                // pending tool calls (a window of arena)
	arena     []Call                // backing store of every call group
	ids       []string              // calls whose outputs have not been seen
	deferred  []Message
	userSeen  bool // a user message was kept (FirstUser)
}

// Flatten appends the engine history items to out as transcript messages,
// following policy p. names gives the wire names of namespaced functions
// (from the converted tools); it may be nil.
func Flatten(out []Message, items []protocol.ResponseItem, p *FlattenPolicy, names map[ToolRef]string) ([]Message, error) {
	if p == nil {
		p = NativePolicy()
	}
	f := flattener{p: p, out: out, names: names}
	f.callName = p.CallName
	if f.callName == nil {
		f.callName = func(ns, name string) string {
			if ns == "" {
				return name
			}
			if n, ok := names[ToolRef{Namespace: ns, Name: name}]; ok {
				return n
			}
			return ChatToolName(ns, name)
		}
	}
	if need := len(f.out) + len(items) + 1; cap(f.out) < need {
		grown := make([]Message, len(f.out), need)
		copy(grown, f.out)
		f.out = grown
	}
	calls := 0
	for _, it := range items {
		switch it.(type) {
		case *protocol.FunctionCall, *protocol.CustomToolCall, *protocol.LocalShellCall, *protocol.ToolSearchCall:
			calls++
		}
	}
	f.arena = make([]Call, 0, calls)
	for i, it := range items {
		if err := f.item(it); err != nil {
			return nil, fmt.Errorf("input[%d]: %w", i, err)
		}
	}
	f.finish()
	return f.out, nil
}

var errNilItem = errors.New("nil item")

// wireName is the name a namespaced function is offered under: the name
// request.tools gave it, else the joined and sanitised name (a search
// result names tools by what the model can call, whatever CallName does).
func (f *flattener) wireName(ns, name string) string {
	if n, ok := f.names[ToolRef{Namespace: ns, Name: name}]; ok {
		return n
	}
	return ChatToolName(ns, name)
}

func (f *flattener) item(it protocol.ResponseItem) error {
	switch v := it.(type) {
	case *protocol.Message:
		if v == nil {
			return errNilItem
		}
		f.message(v)
	case *protocol.FunctionCall:
		if v == nil {
			return errNilItem
		}
		f.call(Call{ID: v.CallID, Name: f.callName(v.Namespace, v.Name), Arguments: v.Arguments, Item: v})
	case *protocol.CustomToolCall:
		if v == nil {
			return errNilItem
		}
		f.call(Call{ID: v.CallID, Name: v.Name, Arguments: customArguments(v.Input), Item: v})
	case *protocol.LocalShellCall:
		if v == nil {
			return errNilItem
		}
		id := v.ID
		if v.CallID != nil && *v.CallID != "" {
			id = *v.CallID
		}
		if id == "" {
			return fmt.Errorf("local_shell_call has neither call_id nor id")
		}
		name, args := ToolNameLocalShell, ""
		if f.p.LocalShellName != "" {
			name = f.p.LocalShellName
		}
		if f.p.LocalShellArguments != nil {
			args = f.p.LocalShellArguments(&v.Action)
		} else {
			args = localShellArguments(&v.Action)
		}
		f.call(Call{ID: id, Name: name, Arguments: args, Item: v})
	case *protocol.ToolSearchCall:
		if v == nil {
			return errNilItem
		}
		id := v.CallID
		if id == "" {
			id = ToolNameToolSearch
		}
		args, err := searchCallArguments(v.Arguments)
		if err != nil {
			return fmt.Errorf("tool_search_call arguments: %w", err)
		}
		f.call(Call{ID: id, Name: ToolNameToolSearch, Arguments: args, Item: v})
	case *protocol.FunctionCallOutput:
		if v == nil {
			return errNilItem
		}
		f.output(v.CallID, newOutput(&v.Output, v))
	case *protocol.CustomToolCallOutput:
		if v == nil {
			return errNilItem
		}
		f.output(v.CallID, newOutput(&v.Output, v))
	case *protocol.ToolSearchOutput:
		if v == nil {
			return errNilItem
		}
		id := v.CallID
		if id == "" {
			id = ToolNameToolSearch
		}
		text, err := searchOutputText(v, f.wireName)
		if err != nil {
			return err
		}
		f.output(id, &Output{Text: text, Item: v})
	case *protocol.Reasoning:
		if v == nil {
			return errNilItem
		}
		if f.p.DropReasoning {
			return nil
		}
		for _, c := range v.Content {
			if c.Type == protocol.ReasoningTypeText || c.Type == protocol.ReasoningTypeRawText {
				f.reasoning += c.Text
			}
		}
		f.ritems = append(f.ritems, v)
	case nil:
		return errNilItem
	}
	// Everything else (web_search_call, image generation, compaction,
	// additional_tools, unknown items) has no transcript form.
	return nil
}

func (f *flattener) message(v *protocol.Message) {
	parts := contentParts(v.Content)
	if f.p.ContentText {
		parts = textOnly(parts)
	}
	if v.Role == protocol.RoleAssistant {
		if len(parts) == 0 || (len(parts) == 1 && parts[0].Kind == PartText && parts[0].Text == "") {
			return
		}
		switch {
		case f.p.Text == TextMerge && f.p.TextReplace:
			f.content = parts
		case f.p.Text == TextMerge:
			f.content = mergeParts(f.content, parts)
		case len(f.calls) > 0:
			if len(f.content) == 0 || f.p.TextReplace {
				f.content = parts
			} else {
				f.content = TextParts(JoinText(f.content, "") + f.p.TextJoin + JoinText(parts, ""))
			}
		default:
			if f.p.DiscardUnanswered {
				f.endTurn()
			}
			f.out = append(f.out, Message{Role: RoleAssistant, Content: parts, Reasoning: f.reasoning})
			f.reasoning = ""
			f.out[len(f.out)-1].ReasoningItems, f.ritems = f.ritems, nil
		}
		return
	}
	role := v.Role
	switch {
	case role == protocol.RoleDeveloper && f.p.SkipContextualDeveloper && allContextualDeveloper(v):
		return
	case role == protocol.RoleDeveloper && f.p.Developer == DeveloperDrop:
		return
	case role == protocol.RoleDeveloper && f.p.Developer == DeveloperFlush:
		f.endTurn()
		return
	case role == protocol.RoleDeveloper && f.p.Developer == DeveloperAsUser:
		role = RoleUser
	case v.Role == protocol.RoleUser && f.p.SkipContextual &&
		(IsContextualUser(v) || f.p.SkipDeveloperFragments && hasDeveloperFragment(v)):
		return
	}
	if v.Role == protocol.RoleUser && f.p.MapUserContent != nil {
		parts = f.p.MapUserContent(parts)
	}
	if v.Role == protocol.RoleUser && !f.userSeen {
		f.userSeen = true
		if f.p.FirstUser != nil {
			parts = f.p.FirstUser(parts)
		}
	}
	m := Message{Role: role, Content: parts}
	if f.p.Defer && len(f.ids) > 0 {
		f.deferred = append(f.deferred, m)
		return
	}
	f.endTurn()
	if f.p.SkipEmpty && len(parts) == 0 {
		return
	}
	f.out = append(f.out, m)
}

// endTurn ends the pending assistant turn before another message: with
// DiscardUnanswered the unanswered calls are discarded first, then the
// pending turn is flushed.
func (f *flattener) endTurn() {
	if f.p.DiscardUnanswered {
		f.calls = nil
		f.ids = f.ids[:0]
		f.reasoning = ""
		f.ritems = nil
		if f.p.DiscardText {
			f.content = nil
		}
	}
	f.flush()
}

// textOnly is content reduced to its text parts, concatenated into one
// text; nil when there is no text part.
func textOnly(parts []Part) []Part {
	if len(parts) == 1 && parts[0].Kind == PartText {
		return parts
	}
	text, found := "", false
	for _, p := range parts {
		if p.Kind == PartText {
			text += p.Text
			found = true
		}
	}
	if !found {
		return nil
	}
	return TextParts(text)
}

// hasDeveloperFragment reports whether a text item of m is a contextual
// developer fragment.
func hasDeveloperFragment(m *protocol.Message) bool {
	for i := range m.Content {
		c := &m.Content[i]
		if (c.Type == protocol.ContentInputText || c.Type == protocol.ContentOutputText) && IsContextualDeveloperText(c.Text) {
			return true
		}
	}
	return false
}

func (f *flattener) call(c Call) {
	if f.p.MapCall != nil {
		f.p.MapCall(&c)
	}
	if f.p.CallSendsText && len(f.content) > 0 {
		f.out = append(f.out, Message{Role: RoleAssistant, Content: f.content, Reasoning: f.reasoning})
		f.content, f.reasoning = nil, ""
		f.out[len(f.out)-1].ReasoningItems, f.ritems = f.ritems, nil
	}
	if f.p.CallEndsWait {
		k := 0
		for _, id := range f.ids {
			if slices.ContainsFunc(f.calls, func(p Call) bool { return p.ID == id }) {
				f.ids[k] = id
				k++
			}
		}
		f.ids = f.ids[:k]
	}
	f.ids = append(f.ids, c.ID)
	f.arena = append(f.arena, c)
	start := len(f.arena) - len(f.calls) - 1
	f.calls = f.arena[start:len(f.arena):len(f.arena)]
}

func (f *flattener) output(id string, o *Output) {
	f.flush()
	if f.p.DropOrphans && !slices.Contains(f.ids, id) {
		return
	}
	if f.p.MapOutput != nil {
		f.p.MapOutput(o)
	}
	f.out = append(f.out, Message{Role: RoleTool, CallID: id, Output: o})
	k := 0
	for _, p := range f.ids {
		if p != id {
			f.ids[k] = p
			k++
		}
	}
	f.ids = f.ids[:k]
	if k == 0 && len(f.deferred) > 0 {
		f.out = append(f.out, f.deferred...)
		f.deferred = f.deferred[:0]
	}
}

// flush emits the pending assistant content and tool calls as one assistant
// message, with the pending reasoning. With nothing but reasoning pending it
// does nothing.
func (f *flattener) flush() {
	if len(f.content) == 0 && len(f.calls) == 0 {
		return
	}
	m := Message{Role: RoleAssistant, Content: f.content, Reasoning: f.reasoning, Calls: f.calls}
	m.ReasoningItems, f.ritems = f.ritems, nil
	if len(f.calls) > 0 && f.p.BlankCallContent {
		m.Blank = true
	}
	f.out = append(f.out, m)
	f.content, f.reasoning, f.calls = nil, "", nil
}

func (f *flattener) finish() {
	if f.p.Unanswered == UnansweredDrop {
		f.calls = nil
		f.ids = f.ids[:0]
	}
	f.flush()
	if f.p.Unanswered == UnansweredAbort {
		text := f.p.AbortedText
		if text == "" {
			text = AbortedOutput
		}
		for _, id := range f.ids {
			f.out = append(f.out, Message{Role: RoleTool, CallID: id, Output: &Output{Text: text}})
		}
	}
	f.ids = f.ids[:0]
	f.out = append(f.out, f.deferred...)
	f.deferred = nil
	if f.reasoning != "" && !f.p.DropTrailingReasoning {
		f.out = append(f.out, Message{Role: RoleAssistant, Blank: true, Reasoning: f.reasoning, ReasoningItems: f.ritems})
	}
	f.reasoning = ""
	f.ritems = nil
}

// newOutput is the transcript output of an engine tool result.
func newOutput(p *protocol.FunctionCallOutputPayload, item protocol.ResponseItem) *Output {
	o := &Output{Success: p.Success, Item: item, payload: p}
	if s, ok := p.TextContent(); ok {
		o.Text = s
		return o
	}
	o.Items = p.Items
	if o.Items == nil {
		o.Items = []protocol.FunctionCallOutputContentItem{}
	}
	return o
}

// ToolRef names an engine tool: a namespaced function by namespace and name,
// a flat tool by name alone.
type ToolRef struct{ Namespace, Name string }

// String gives "namespace.name", or the name of a flat tool.
func (r ToolRef) String() string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "." + r.Name
}
