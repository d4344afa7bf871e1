package request

import (
	"github.com/harnessflow/harnessflow/protocol"
)

// Transcript roles. They are the engine's message roles plus RoleTool for
// tool results; an encoder maps them to its wire (the chat wire keeps them,
// the Messages wire moves system text into its system blocks).
const (
	RoleSystem    = protocol.RoleSystem
	RoleDeveloper = protocol.RoleDeveloper
	RoleUser      = protocol.RoleUser
	RoleAssistant = protocol.RoleAssistant
	RoleTool      = "tool"
)

// Message is one turn of the wire-neutral transcript that request graphs
// build: system and user text, assistant turns (text, reasoning, tool calls)
// and tool results. request.history fills it from the engine history with a
// [FlattenPolicy]; request.encode renders it for one wire.
type Message struct {
	// Role is one of the transcript roles.
	Role string
	// Content is the message's content. With Blank unset, no parts means the
	// message has no content at all; with Blank set it is the empty text.
	Content []Part
	// Blank says the content is present and empty ("" on the chat wire)
	// when Content has no parts.
	Blank bool
	// AsParts sends content of a single text part as an array of parts,
	// not as a plain string.
	AsParts bool
	// Reasoning is the reasoning text that goes with an assistant turn.
	Reasoning string
	// ReasoningItems are the history's reasoning items whose text is in
	// Reasoning, in order (for wires that send reasoning back as signed
	// blocks, which need each item's encrypted content).
	ReasoningItems []*protocol.Reasoning
	// Calls are the tool calls of an assistant turn, in order.
	Calls []Call
	// CallID is the call a tool result answers.
	CallID string
	// Output is the result of a tool message.
	Output *Output
}

// HasContent reports whether the message carries content (possibly the
// empty text).
func (m *Message) HasContent() bool { return len(m.Content) > 0 || m.Blank }

// PartKind says what a content part holds.
type PartKind uint8

// Content part kinds.
const (
	PartText PartKind = iota
	PartImage
	PartAudio
)

// Part is one piece of message content.
type Part struct {
	Kind   PartKind
	Text   string // PartText
	URL    string // PartImage, PartAudio
	Detail string // PartImage: auto | low | high, when given
}

// TextParts returns content made of one text part.
func TextParts(s string) []Part { return []Part{{Kind: PartText, Text: s}} }

// Call is one tool call of an assistant turn, as the upstream model sees it:
// its id, the tool name on the wire and the arguments JSON text.
type Call struct {
	ID        string
	Name      string
	Arguments string
	// Item is the history item the call came from (nil for calls a harness
	// makes up), for policies that rewrite calls.
	Item protocol.ResponseItem
}

// Output is the result of a tool call.
type Output struct {
	// Text is the result text when the tool answered with text.
	Text string
	// Items is the result when the tool answered with content items; nil
	// for text.
	Items []protocol.FunctionCallOutputContentItem
	// Success is the tool's own verdict, when it gave one.
	Success *bool
	// Item is the history item the result came from.
	Item protocol.ResponseItem

	payload *protocol.FunctionCallOutputPayload // the engine's, for its exact JSON
}

// CallID is the call id of the output's item (a function or custom tool
// call output); "" for another item.
func (o *Output) CallID() string {
	switch v := o.Item.(type) {
	case *protocol.FunctionCallOutput:
		return v.CallID
	case *protocol.CustomToolCallOutput:
		return v.CallID
	}
	return ""
}

// IsText reports whether the output is plain text.
func (o *Output) IsText() bool { return o.Items == nil }

// contentParts converts an engine message's content items to transcript
// parts: text (input and output), images and audio. Items of unknown types
// are left out.
func contentParts(items []protocol.ContentItem) []Part {
	n := 0
	for i := range items {
		if contentKnown(items[i].Type) {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	parts := make([]Part, 0, n)
	for i := range items {
		c := &items[i]
		switch c.Type {
		case protocol.ContentInputText, protocol.ContentOutputText:
			parts = append(parts, Part{Kind: PartText, Text: c.Text})
		case protocol.ContentInputImage:
			parts = append(parts, Part{Kind: PartImage, URL: c.ImageURL, Detail: c.Detail})
		case protocol.ContentInputAudio:
			parts = append(parts, Part{Kind: PartAudio, URL: c.AudioURL})
		}
	}
	return parts
}

func contentKnown(t string) bool {
	switch t {
	case protocol.ContentInputText, protocol.ContentOutputText, protocol.ContentInputImage, protocol.ContentInputAudio:
		return true
	}
	return false
}

// mergeParts adds next to the pending assistant content: two single texts
// join into one text; otherwise the parts are concatenated.
func mergeParts(cur, next []Part) []Part {
	if len(cur) == 0 {
		return next
	}
	if len(cur) == 1 && len(next) == 1 && cur[0].Kind == PartText && next[0].Kind == PartText {
		return TextParts(cur[0].Text + next[0].Text)
	}
	out := make([]Part, 0, len(cur)+len(next))
	return append(append(out, cur...), next...)
}

// JoinText returns the text of the text parts, concatenated with sep.
func JoinText(parts []Part, sep string) string {
	if len(parts) == 1 && parts[0].Kind == PartText {
		return parts[0].Text
	}
	s := ""
	first := true
	for _, p := range parts {
		if p.Kind != PartText {
			continue
		}
		if !first {
			s += sep
		}
		s += p.Text
		first = false
	}
	return s
}
