package protocol

import (
	"encoding/json"
	"maps"
)

// TypeItemReference is the type of an input item that stands for an item of
// an earlier response by its id: {"type":"item_reference","id":"msg_…"}. It
// decodes as an [*OtherItem]; [ReferencedID] reads its id.
const TypeItemReference = "item_reference"

// Item statuses (the "status" field of output items).
const (
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
	StatusIncomplete = "incomplete"
)

// ItemID returns the "id" of an item, "" when it has none.
func ItemID(item ResponseItem) string {
	switch v := item.(type) {
	case *Message:
		return v.ID
	case *Reasoning:
		return v.ID
	case *FunctionCall:
		return v.ID
	case *CustomToolCall:
		return v.ID
	case *LocalShellCall:
		return v.ID
	case *FunctionCallOutput:
		return v.ID
	case *CustomToolCallOutput:
		return v.ID
	case *ToolSearchCall:
		return v.ID
	case *ToolSearchOutput:
		return v.ID
	case *WebSearchCall:
		return v.ID
	case *OtherItem:
		return rawString(v.Raw, "id")
	}
	return ""
}

// ReferencedID returns the id an item_reference input item points to, and
// whether item is one.
func ReferencedID(item ResponseItem) (string, bool) {
	o, ok := item.(*OtherItem)
	if !ok || o == nil || o.Type != TypeItemReference {
		return "", false
	}
	return rawString(o.Raw, "id"), true
}

// rawString returns the string field k of a raw JSON object, "" when it has
// none or is not an object.
func rawString(raw json.RawMessage, k string) string {
	var head map[string]json.RawMessage
	if json.Unmarshal(raw, &head) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(head[k], &s) != nil {
		return ""
	}
	return s
}

// WithItemID returns a copy of item whose id is id; item is not modified
// (the copy is shallow: content, extras and actions are shared). A nil
// item, or an item of an unmodelled type whose raw JSON is not an object,
// is returned as it is.
func WithItemID(item ResponseItem, id string) ResponseItem {
	switch v := item.(type) {
	case *Message:
		if v != nil {
			c := *v
			c.ID = id
			return &c
		}
	case *Reasoning:
		if v != nil {
			c := *v
			c.ID = id
			return &c
		}
	case *FunctionCall:
		if v != nil {
			c := *v
			c.ID = id
			return &c
		}
	case *CustomToolCall:
		if v != nil {
			c := *v
			c.ID = id
			return &c
		}
	case *LocalShellCall:
		if v != nil {
			c := *v
			c.ID = id
			return &c
		}
	case *FunctionCallOutput:
		if v != nil {
			c := *v
			c.ID = id
			return &c
		}
	case *CustomToolCallOutput:
		if v != nil {
			c := *v
			c.ID = id
			return &c
		}
	case *ToolSearchCall:
		if v != nil {
			c := *v
			c.ID = id
			return &c
		}
	case *ToolSearchOutput:
		if v != nil {
			c := *v
			c.ID = id
			return &c
		}
	case *WebSearchCall:
		if v != nil {
			c := *v
			c.ID = id
			return &c
		}
	case *OtherItem:
		if v != nil {
			base := v.Raw
			if len(base) == 0 {
				base = json.RawMessage(append(append([]byte(`{"type":`), AppendString(nil, v.Type)...), '}'))
			}
			if raw, ok := setRawField(base, "id", id); ok {
				return &OtherItem{Type: v.Type, Raw: raw}
			}
		}
	}
	return item
}

// setRawField returns a raw JSON object with string field k set to v.
func setRawField(raw json.RawMessage, k, v string) (json.RawMessage, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return nil, false
	}
	val, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	obj[k] = val
	out, err := json.Marshal(obj)
	return out, err == nil
}

// ItemStatus returns the "status" of an item ("" when it has none): the
// field of the types that model it, the extra field of a message or
// function call.
func ItemStatus(item ResponseItem) string {
	var extra Extra
	switch v := item.(type) {
	case *Message:
		extra = v.Extra
	case *FunctionCall:
		extra = v.Extra
	case *Reasoning:
		extra = v.Extra
	case *CustomToolCall:
		return v.Status
	case *LocalShellCall:
		return v.Status
	case *ToolSearchCall:
		return v.Status
	case *ToolSearchOutput:
		return v.Status
	case *WebSearchCall:
		return v.Status
	case *OtherItem:
		return rawString(v.Raw, "status")
	default:
		return ""
	}
	var s string
	if json.Unmarshal(extra["status"], &s) != nil {
		return ""
	}
	return s
}

// WithStatus returns a copy of item whose status is status, for the output
// items that carry one in the Responses API (message, function_call,
// custom_tool_call, local_shell_call, web_search_call, tool_search_call,
// tool_search_output); other items are returned as they are. With
// onlyIfUnset an item that already has a status keeps it (and is returned
// as it is). item is not modified.
func WithStatus(item ResponseItem, status string, onlyIfUnset bool) ResponseItem {
	if onlyIfUnset && ItemStatus(item) != "" {
		return item
	}
	switch v := item.(type) {
	case *Message:
		if v != nil {
			c := *v
			c.Extra = withExtraString(v.Extra, "status", status)
			return &c
		}
	case *FunctionCall:
		if v != nil {
			c := *v
			c.Extra = withExtraString(v.Extra, "status", status)
			return &c
		}
	case *CustomToolCall:
		if v != nil {
			c := *v
			c.Status = status
			return &c
		}
	case *LocalShellCall:
		if v != nil {
			c := *v
			c.Status = status
			return &c
		}
	case *WebSearchCall:
		if v != nil {
			c := *v
			c.Status = status
			return &c
		}
	case *ToolSearchCall:
		if v != nil {
			c := *v
			c.Status = status
			return &c
		}
	case *ToolSearchOutput:
		if v != nil {
			c := *v
			c.Status = status
			return &c
		}
	}
	return item
}

// withExtraString returns a copy of extra with k set to the JSON string v.
func withExtraString(extra Extra, k, v string) Extra {
	out := make(Extra, len(extra)+1)
	maps.Copy(out, extra)
	out[k] = json.RawMessage(AppendString(nil, v))
	return out
}

// ItemIDPrefix returns the prefix of the ids the Responses API gives items
// of type typ ("msg" for messages, "rs" for reasoning, "fc" for function
// calls, …; "item" for a type it does not know).
func ItemIDPrefix(typ string) string {
	switch typ {
	case TypeMessage:
		return "msg"
	case TypeReasoning:
		return "rs"
	case TypeFunctionCall:
		return "fc"
	case TypeFunctionCallOutput:
		return "fco"
	case TypeCustomToolCall:
		return "ctc"
	case TypeCustomToolCallOutput:
		return "ctco"
	case TypeLocalShellCall:
		return "lsh"
	case TypeWebSearchCall:
		return "ws"
	case TypeToolSearchCall:
		return "tsc"
	case TypeToolSearchOutput:
		return "tso"
	}
	return "item"
}
