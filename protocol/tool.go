package protocol

import "encoding/json"

// Tool type tags (the "type" field of a [ToolSpec]).
const (
	ToolTypeFunction        = "function"
	ToolTypeNamespace       = "namespace"
	ToolTypeCustom          = "custom"
	ToolTypeToolSearch      = "tool_search"
	ToolTypeLocalShell      = "local_shell"
	ToolTypeImageGeneration = "image_generation"
	ToolTypeWebSearch       = "web_search"
)

// ToolSpec is one Responses-API tool, tagged by Type (docs/protocol.md#toolspec):
//
//	function:    name, description, strict, defer_loading?, parameters
//	namespace:   name, description, tools (function or custom entries)
//	custom:      name, description, defer_loading?, format {type:"grammar",syntax,definition}
//	tool_search: execution, description, parameters
//
// A function tool's Strict is always written (nil as false; decoding an absent strict gives
// false); a function or tool_search tool without Parameters gets {"type":"object",
// "properties":{}}, on decode and on encode.
//
// Other types (local_shell, image_generation, web_search, unknown) keep all their fields in
// Extra. Decoding sets Raw to the original object (compacted). Encoding writes the typed fields
// and Extra; Raw is only written verbatim when Type is empty (a tool built from raw JSON).
type ToolSpec struct {
	Type         string
	Name         string
	Description  string
	Strict       *bool // function: always written (nil as false)
	DeferLoading *bool // optional
	Parameters   json.RawMessage
	Tools        []ToolSpec  // namespace
	Format       *ToolFormat // custom
	Execution    string      // tool_search
	Raw          json.RawMessage
	Extra        Extra
}

// ToolFormat is the format of a custom (freeform) tool, e.g.
// {"type":"grammar","syntax":"lark","definition":"..."}.
type ToolFormat struct {
	Type       string
	Syntax     string
	Definition string
}

// ToolName returns the tool's name: Name for function, custom and namespace tools; the type
// literal for tool_search, local_shell, image_generation and web_search; for unknown types
// Name if set, else the type.
func (t ToolSpec) ToolName() string {
	switch t.Type {
	case ToolTypeFunction, ToolTypeCustom, ToolTypeNamespace:
		return t.Name
	case ToolTypeToolSearch, ToolTypeLocalShell, ToolTypeImageGeneration, ToolTypeWebSearch:
		return t.Type
	}
	if t.Name != "" {
		return t.Name
	}
	return t.Type
}

// ToolOutputKind kinds.
const (
	KindFunction           = "function"
	KindNamespacedFunction = "namespaced_function"
	KindCustom             = "custom"
	// KindToolSearch is the emulated tool_search function of a chat or
	// Messages upstream: its call goes back as a tool_search_call item
	// (execution "client") for the client to run the search
	// (docs/request-shaping.md#tool-search).
	KindToolSearch = "tool_search"
	// KindToolCall is a dispatcher tool whose arguments {"name",
	// "arguments"} call another tool of the table by its wire name (Qwen
	// Code's tool_call runs a tool its tool_search found): the call goes
	// back as the call of that tool (docs/request-shaping.md#tool-search).
	KindToolCall = "tool_call"
)

// ToolOutputKind tells how a chat tool call maps back to a ResponseItem (docs/request-shaping.md#tool-kinds): a plain
// function_call, a function_call with a namespace (Name is the real function name), a
// custom_tool_call, a tool_search_call, or the call a dispatcher names. JSON: {"kind":"function"} | {"kind":"namespaced_function","name":..,
// "namespace":..} | {"kind":"custom"} | {"kind":"tool_search"} | {"kind":"tool_call"}.
type ToolOutputKind struct {
	Kind      string // KindFunction | KindNamespacedFunction | KindCustom | KindToolSearch | KindToolCall
	Name      string // namespaced_function only
	Namespace string // namespaced_function only
}

// ToolKinds maps a chat tool name to its [ToolOutputKind].
type ToolKinds map[string]ToolOutputKind
