package responses

import (
	"slices"

	"github.com/harnessflow/harnessflow/protocol"
)

// The Writer's copies of items: the caller's items are never modified.

// withAnnotations returns content with "annotations":[] on every
// output_text part that lacks them (copying only when needed).
func withAnnotations(content []protocol.ContentItem) []protocol.ContentItem {
	out := slices.Clone(content)
	for i := range out {
		c := &out[i]
		if c.Type != protocol.ContentOutputText {
			continue
		}
		if _, ok := c.Extra["annotations"]; ok {
			continue
		}
		extra := make(protocol.Extra, len(c.Extra)+1)
		for k, v := range c.Extra {
			extra[k] = v
		}
		extra["annotations"] = emptyAnnotations
		c.Extra = extra
	}
	return out
}

var emptyAnnotations = []byte(`[]`)

// announced returns the item of an output_item.added event: a copy with
// the client's id and status in_progress; an assistant message with no
// content (its part is announced by content_part.added), a reasoning item
// with no summary or content (announced part by part), tool calls with
// empty arguments/input.
func announced(item protocol.ResponseItem, id string) protocol.ResponseItem {
	item = protocol.WithItemID(item, id)
	switch v := item.(type) {
	case *protocol.Message:
		if v.Role == protocol.RoleAssistant {
			v.Content = []protocol.ContentItem{}
		}
	case *protocol.Reasoning:
		v.Summary, v.Content = []protocol.SummaryText{}, []protocol.ReasoningContent{}
	case *protocol.FunctionCall:
		v.Arguments = ""
	case *protocol.CustomToolCall:
		v.Input = ""
	}
	return protocol.WithStatus(item, protocol.StatusInProgress, false)
}

// nilItem reports whether an event's item is missing (nil, or a nil
// pointer of an item type): such an event is ignored.
func nilItem(it protocol.ResponseItem) bool {
	switch v := it.(type) {
	case nil:
		return true
	case *protocol.Message:
		return v == nil
	case *protocol.Reasoning:
		return v == nil
	case *protocol.FunctionCall:
		return v == nil
	case *protocol.CustomToolCall:
		return v == nil
	case *protocol.LocalShellCall:
		return v == nil
	case *protocol.FunctionCallOutput:
		return v == nil
	case *protocol.CustomToolCallOutput:
		return v == nil
	case *protocol.ToolSearchCall:
		return v == nil
	case *protocol.ToolSearchOutput:
		return v == nil
	case *protocol.WebSearchCall:
		return v == nil
	case *protocol.OtherItem:
		return v == nil
	}
	return false
}

// completedItem returns the item of an output_item.done event: a copy with
// the client's id, annotations on output_text parts and status completed
// where the Responses API has one.
func completedItem(item protocol.ResponseItem, id string) protocol.ResponseItem {
	item = protocol.WithItemID(item, id)
	if m, ok := item.(*protocol.Message); ok {
		m.Content = withAnnotations(m.Content)
	}
	return protocol.WithStatus(item, protocol.StatusCompleted, true)
}
