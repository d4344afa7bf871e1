// Package anthropic holds the request body of the Anthropic Messages wire
// (POST {base}/messages): the request, its system blocks, messages and their
// content blocks, tools, and the thinking, output_config,
// context_management and metadata objects.
//
// Only the fields harnessflow sets or reads are modelled. Every other field of
// a decoded body is kept in an [Extra] map and written back, so a body that
// passes through loses nothing.
//
// Encoding is hand-written and reflection-free, like wire/chat:
// [Request.AppendJSON] writes the known fields in a fixed order, then the Extra
// fields sorted by key. Strings are escaped exactly as encoding/json does with
// SetEscapeHTML(false). Raw JSON values (tool schemas, tool inputs,
// tool_choice, Extra) are validated and compacted on the way out; an invalid
// one is an error naming the field. The same request always encodes to the
// same bytes.
//
// A content block is one struct ([Block]) tagged by Type; which fields it
// writes depends on the type:
//
//	text               {"type","text","cache_control"?}
//	thinking           {"type","thinking","signature"}
//	redacted_thinking  {"type","data"}
//	tool_use           {"type","id","name","input","cache_control"?}
//	tool_result        {"type","tool_use_id","content"?,"is_error"?,"cache_control"?}
//	image              {"type","source","cache_control"?}
//
// A block of any other type writes every field that is set, then its Extra.
package anthropic

import "encoding/json"

// Path is the request path of the Messages endpoint, relative to a base URL
// that ends in the API version ("https://api.anthropic.com/v1").
const Path = "/messages"

// Version is the anthropic-version header value every request carries.
const Version = "2023-06-01"

// Header names of the Messages wire.
const (
	HeaderVersion = "anthropic-version"
	HeaderBeta    = "anthropic-beta"
	HeaderAPIKey  = "x-api-key"
)

// Message roles. RoleSystem is accepted inside messages only by servers with
// the per-turn-control beta (Claude Code 2.1 sends it); the usual place of
// system text is the request's System blocks.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleSystem    = "system"
)

// Content block types.
const (
	BlockText             = "text"
	BlockThinking         = "thinking"
	BlockRedactedThinking = "redacted_thinking"
	BlockToolUse          = "tool_use"
	BlockToolResult       = "tool_result"
	BlockImage            = "image"
)

// CacheEphemeral is the type of the only cache mark: {"type":"ephemeral"}.
const CacheEphemeral = "ephemeral"

// Extra holds the fields of a JSON object that the Go type does not model.
// Decoding fills it; encoding writes it back after the known fields, sorted by
// key. A key that collides with a known field of the type is not written.
type Extra map[string]json.RawMessage

// Request is a Messages request body. MaxTokens is always written (the
// server requires it); the other optional fields are omitted when zero.
type Request struct {
	Model             string
	Messages          []Message // always written (nil as [])
	System            Content   // a string, or an array of text blocks
	Tools             []Tool    // omitted when empty
	ToolChoice        json.RawMessage
	Thinking          *Thinking
	ContextManagement *ContextManagement
	OutputConfig      *OutputConfig
	Metadata          *Metadata
	Temperature       *float64
	MaxTokens         int64
	Stream            *bool
	Extra             Extra
}

// Message is one turn of the conversation: a role and its content (a string
// or an array of blocks).
type Message struct {
	Role    string
	Content Content
	Extra   Extra
}

// ContentKind says which form a content takes.
type ContentKind uint8

// The forms of [Content].
const (
	ContentNone   ContentKind = iota // absent (or null)
	ContentText                      // a plain string, possibly ""
	ContentBlocks                    // an array of blocks, possibly []
)

// Content is a message's content, a tool result's content or the system
// prompt: absent, a plain string, or an array of blocks.
type Content struct {
	Kind   ContentKind
	Text   string  // ContentText
	Blocks []Block // ContentBlocks
}

// Text returns a plain-string content.
func Text(s string) Content { return Content{Kind: ContentText, Text: s} }

// Blocks returns an array content.
func Blocks(blocks ...Block) Content { return Content{Kind: ContentBlocks, Blocks: blocks} }

// IsEmpty reports whether the content carries nothing: absent, "", or [].
func (c Content) IsEmpty() bool {
	switch c.Kind {
	case ContentText:
		return c.Text == ""
	case ContentBlocks:
		return len(c.Blocks) == 0
	}
	return true
}

// Block is one content block, tagged by Type (see the package doc for the
// fields each type writes).
type Block struct {
	Type string
	// Text is the text of a text block.
	Text string
	// Thinking and Signature are a thinking block's text and the opaque
	// signature that lets the server check it on replay.
	Thinking  string
	Signature string
	// Data is the opaque content of a redacted_thinking block.
	Data string
	// ID, Name and Input are a tool_use block's call id, tool name and input
	// object (raw JSON; nil is written as {}).
	ID    string
	Name  string
	Input json.RawMessage
	// ToolUseID, Content and IsError are a tool_result block's call id,
	// result (a string or blocks; absent when Kind is ContentNone) and error
	// flag.
	ToolUseID string
	Content   *Content
	IsError   *bool
	// Source is an image block's source object (raw JSON).
	Source json.RawMessage
	// CacheControl marks a cache breakpoint after the block.
	CacheControl *CacheControl
	Extra        Extra
}

// TextBlock returns a text block.
func TextBlock(s string) Block { return Block{Type: BlockText, Text: s} }

// CacheControl is a block's or tool's cache mark: {"type":"ephemeral",
// "ttl"?}.
type CacheControl struct {
	Type  string
	TTL   string
	Extra Extra
}

// Ephemeral returns a new ephemeral cache mark.
func Ephemeral() *CacheControl { return &CacheControl{Type: CacheEphemeral} }

// Tool is one entry of the request's tools. A client tool has no Type (or
// "custom") and an input_schema; server tools (web_search_…, bash_…) have a
// versioned Type and keep their own fields in Extra.
type Tool struct {
	Type        string // omitted when empty
	Name        string
	Description string          // omitted when empty
	InputSchema json.RawMessage // written for client tools; nil as {"type":"object","properties":{}}
	// Strict asks the server to hold tool inputs to the schema.
	Strict *bool
	// DeferLoading leaves the tool out of the prompt until a tool search
	// finds it.
	DeferLoading *bool
	CacheControl *CacheControl
	Extra        Extra
}

// IsClient reports whether the tool is a client tool (one with an input
// schema the model fills), not a server tool.
func (t *Tool) IsClient() bool { return t.Type == "" || t.Type == "custom" }

// Thinking is the thinking switch: {"type":"enabled","budget_tokens"},
// {"type":"adaptive"} or {"type":"disabled"}, with an optional "display".
type Thinking struct {
	Type         string
	BudgetTokens *int64
	Display      string
	Extra        Extra
}

// ContextManagement is the context_management object: a list of edits the
// server applies to the context, e.g. {"type":"clear_thinking_20251015",
// "keep":"all"}.
type ContextManagement struct {
	Edits []ContextEdit
	Extra Extra
}

// ContextEdit is one context-management edit. Keep is raw JSON ("all", or an
// object such as {"type":"thinking_turns","value":2}).
type ContextEdit struct {
	Type  string
	Keep  json.RawMessage
	Extra Extra
}

// OutputConfig is the output_config object: the effort level and an optional
// structured-output format (raw JSON, e.g. {"type":"json_schema","schema":…}).
type OutputConfig struct {
	Effort string
	Format json.RawMessage
	Extra  Extra
}

// Metadata is the metadata object; UserID is an opaque string (Claude Code
// puts a JSON document in it).
type Metadata struct {
	UserID string
	Extra  Extra
}
