package protocol

import "encoding/json"

// Extra holds the fields of a JSON object that the Go type does not model. Decoding fills it;
// encoding writes it back (sorted by key, after the known fields) so nothing is lost. Keys that
// collide with a known field of the type are ignored when encoding.
type Extra map[string]json.RawMessage

// Item type tags (the "type" field of a [ResponseItem]).
const (
	TypeMessage              = "message"
	TypeReasoning            = "reasoning"
	TypeLocalShellCall       = "local_shell_call"
	TypeFunctionCall         = "function_call"
	TypeFunctionCallOutput   = "function_call_output"
	TypeCustomToolCall       = "custom_tool_call"
	TypeCustomToolCallOutput = "custom_tool_call_output"
	TypeToolSearchCall       = "tool_search_call"
	TypeToolSearchOutput     = "tool_search_output"
	TypeWebSearchCall        = "web_search_call"
)

// Message roles.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleDeveloper = "developer"
	RoleSystem    = "system"
)

// Content item type tags (the "type" field of a [ContentItem] or
// [FunctionCallOutputContentItem]).
const (
	ContentInputText        = "input_text"
	ContentInputImage       = "input_image"
	ContentInputAudio       = "input_audio"
	ContentInputVideo       = "input_video"
	ContentOutputText       = "output_text"
	ContentEncryptedContent = "encrypted_content"
)

// Reasoning content type tags (the "type" field of [SummaryText] and [ReasoningContent]).
const (
	SummaryTypeText      = "summary_text"
	ReasoningTypeText    = "reasoning_text"
	ReasoningTypeRawText = "text"
)

// ResponseItem is one item of conversation history or model output. It is a sealed interface:
// the implementations are the pointer types of this package (*Message, *Reasoning,
// *LocalShellCall, *FunctionCall, *FunctionCallOutput, *CustomToolCall,
// *CustomToolCallOutput, *ToolSearchCall, *ToolSearchOutput, *WebSearchCall, *OtherItem).
type ResponseItem interface {
	// ItemType returns the item's "type" tag.
	ItemType() string
	isResponseItem()
}

// Message is a "message" item: a user, assistant, developer or system turn.
type Message struct {
	ID      string        // optional
	Role    string        // user | assistant | developer | system
	Content []ContentItem // always serialized (nil as [])
	Phase   string        // optional: commentary | final_answer
	Extra   Extra
}

// ContentItem is one entry of a message's content, tagged by Type. Which fields are used
// depends on Type: input_text/output_text use Text; input_image uses ImageURL and Detail;
// input_audio uses AudioURL. Unknown types keep all their fields in Extra.
type ContentItem struct {
	Type     string // input_text | input_image | input_audio | output_text | ...
	Text     string
	ImageURL string
	Detail   string // optional: auto | low | high | original
	AudioURL string
	Extra    Extra
}

// Reasoning is a "reasoning" item. Summary is always serialized (nil as []).
// EncryptedContent is always serialized (nil as null). Content follows the reference quirk:
// nil is serialized as "content":null, a non-nil slice without any reasoning_text entry is
// omitted, and otherwise it is serialized.
type Reasoning struct {
	ID               string
	Summary          []SummaryText
	Content          []ReasoningContent
	EncryptedContent *string
	Extra            Extra
}

// SummaryText is one reasoning summary entry ({"type":"summary_text","text":...}).
type SummaryText struct {
	Type string // "summary_text"
	Text string
}

// ReasoningContent is one reasoning content entry (reasoning_text or text).
type ReasoningContent struct {
	Type string // reasoning_text | text
	Text string
}

// LocalShellCall is a "local_shell_call" item. CallID is always serialized (nil as null).
type LocalShellCall struct {
	ID     string
	CallID *string
	Status string // completed | in_progress | incomplete
	Action LocalShellAction
	Extra  Extra
}

// LocalShellAction is the action of a [LocalShellCall]. Every optional field is serialized
// (as null when nil).
type LocalShellAction struct {
	Type             string // "exec" (an empty Type is written as "exec")
	Command          []string
	TimeoutMS        *uint64
	WorkingDirectory *string
	Env              map[string]string // nil => null
	User             *string
	Extra            Extra
}

// FunctionCall is a "function_call" item. Arguments is a string that holds JSON.
type FunctionCall struct {
	ID                    string // optional
	Name                  string
	Namespace             string // optional
	Arguments             string
	CallID                string
	EncryptedFunctionArgs string // optional
	Extra                 Extra
}

// FunctionCallOutput is a "function_call_output" item.
type FunctionCallOutput struct {
	ID     string // optional
	CallID string
	Output FunctionCallOutputPayload
	Extra  Extra
}

// CustomToolCall is a "custom_tool_call" item (a freeform tool such as apply_patch). Input is
// the raw tool input.
type CustomToolCall struct {
	ID        string // optional
	Status    string // optional
	CallID    string
	Name      string
	Namespace string // optional
	Input     string
	Extra     Extra
}

// CustomToolCallOutput is a "custom_tool_call_output" item.
type CustomToolCallOutput struct {
	ID     string // optional
	CallID string
	Name   string // optional
	Output FunctionCallOutputPayload
	Extra  Extra
}

// ToolSearchCall is a "tool_search_call" item. Arguments is any JSON (nil is written as null).
type ToolSearchCall struct {
	ID        string // optional
	CallID    string // optional
	Status    string // optional
	Execution string // e.g. "client" or "server"
	Arguments json.RawMessage
	Extra     Extra
}

// ToolSearchOutput is a "tool_search_output" item. Tools holds any JSON values (nil as []).
type ToolSearchOutput struct {
	ID        string // optional
	CallID    string // optional
	Status    string
	Execution string
	Tools     []json.RawMessage
	Extra     Extra
}

// WebSearchCall is a "web_search_call" item.
type WebSearchCall struct {
	ID     string           // optional
	Status string           // optional
	Action *WebSearchAction // optional
	Extra  Extra
}

// WebSearchAction is the action of a [WebSearchCall]: search{query?,queries?},
// open_page{url?} or find_in_page{url?,pattern?}. Optional fields are omitted when empty.
type WebSearchAction struct {
	Type    string // search | open_page | find_in_page
	Query   string
	Queries []string
	URL     string
	Pattern string
	Extra   Extra
}

// OtherItem is an item of any type this package does not model (image_generation_call,
// compaction, agent_message, or anything unknown). Raw holds the whole JSON object, compacted;
// it is written back verbatim. If Raw is empty, the item is written as {"type":Type}.
type OtherItem struct {
	Type string
	Raw  json.RawMessage
}

// Items is a list of ResponseItems that (un)marshals as a JSON array of items. A nil Items
// encodes as [].
type Items []ResponseItem

// ItemType returns "message".
func (*Message) ItemType() string { return TypeMessage }

// ItemType returns "reasoning".
func (*Reasoning) ItemType() string { return TypeReasoning }

// ItemType returns "local_shell_call".
func (*LocalShellCall) ItemType() string { return TypeLocalShellCall }

// ItemType returns "function_call".
func (*FunctionCall) ItemType() string { return TypeFunctionCall }

// ItemType returns "function_call_output".
func (*FunctionCallOutput) ItemType() string { return TypeFunctionCallOutput }

// ItemType returns "custom_tool_call".
func (*CustomToolCall) ItemType() string { return TypeCustomToolCall }

// ItemType returns "custom_tool_call_output".
func (*CustomToolCallOutput) ItemType() string { return TypeCustomToolCallOutput }

// ItemType returns "tool_search_call".
func (*ToolSearchCall) ItemType() string { return TypeToolSearchCall }

// ItemType returns "tool_search_output".
func (*ToolSearchOutput) ItemType() string { return TypeToolSearchOutput }

// ItemType returns "web_search_call".
func (*WebSearchCall) ItemType() string { return TypeWebSearchCall }

// ItemType returns the item's original type tag.
func (o *OtherItem) ItemType() string { return o.Type }

func (*Message) isResponseItem()              {}
func (*Reasoning) isResponseItem()            {}
func (*LocalShellCall) isResponseItem()       {}
func (*FunctionCall) isResponseItem()         {}
func (*FunctionCallOutput) isResponseItem()   {}
func (*CustomToolCall) isResponseItem()       {}
func (*CustomToolCallOutput) isResponseItem() {}
func (*ToolSearchCall) isResponseItem()       {}
func (*ToolSearchOutput) isResponseItem()     {}
func (*WebSearchCall) isResponseItem()        {}
func (*OtherItem) isResponseItem()            {}

// UserMessage returns a user message with a single input_text entry.
func UserMessage(text string) *Message {
	return &Message{Role: RoleUser, Content: []ContentItem{{Type: ContentInputText, Text: text}}}
}

// AssistantMessage returns an assistant message with a single output_text entry.
func AssistantMessage(text string) *Message {
	return &Message{Role: RoleAssistant, Content: []ContentItem{{Type: ContentOutputText, Text: text}}}
}

// InputText returns an input_text content item.
func InputText(text string) ContentItem { return ContentItem{Type: ContentInputText, Text: text} }

// OutputText returns an output_text content item.
func OutputText(text string) ContentItem { return ContentItem{Type: ContentOutputText, Text: text} }
