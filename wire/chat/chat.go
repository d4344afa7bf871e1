// Package chat holds the request body of the OpenAI Chat Completions wire
// (POST {base}/chat/completions): the request, its messages, content parts,
// tools and tool calls.
//
// Only the fields harnessflow sets or rewrites are modelled. Every other field
// of a decoded body is kept in an [Extra] map and written back, so a body
// that passes through (a proxy forwarding a client's chat request, a
// provider-quirk stage editing one) loses nothing.
//
// Encoding is hand-written and reflection-free: [Request.AppendJSON] writes
// the known fields in a fixed order, then the Extra fields sorted by key.
// Strings are escaped exactly as encoding/json does with SetEscapeHTML(false).
// Raw JSON values (tool parameters, tool_choice, Extra) are validated and
// compacted on the way out; an invalid one is an error naming the field.
package chat

import "encoding/json"

// Path is the request path of the Chat Completions endpoint, relative to the
// provider's base URL.
const Path = "/chat/completions"

// Message roles.
const (
	RoleSystem    = "system"
	RoleDeveloper = "developer"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Content part types.
const (
	PartText       = "text"
	PartImageURL   = "image_url"
	PartInputAudio = "input_audio"
)

// ToolTypeFunction is the only tool (and tool call) type of the chat wire.
const ToolTypeFunction = "function"

// Extra holds the fields of a JSON object that the Go type does not model.
// Decoding fills it; encoding writes it back after the known fields, sorted by
// key. A key that collides with a known field of the type is not written.
type Extra map[string]json.RawMessage

// Request is a Chat Completions request body. Optional fields are omitted
// when zero (nil pointer, empty string, nil raw value, empty slice).
type Request struct {
	Model               string
	Messages            []Message // always written (nil as [])
	Stream              *bool
	StreamOptions       json.RawMessage
	MaxTokens           *int64
	MaxCompletionTokens *int64
	Tools               []Tool // omitted when empty
	ToolChoice          json.RawMessage
	ParallelToolCalls   *bool
	ResponseFormat      *ResponseFormat
	ServiceTier         string
	Store               *bool
	ReasoningEffort     string
	Thinking            json.RawMessage // provider extension: {"type":"enabled"|"disabled"}
	Verbosity           string
	PromptCacheKey      string
	Extra               Extra
}

// Message is one chat message. Content is omitted when it is absent
// ([ContentNone]); the other optional fields are omitted when empty.
type Message struct {
	Role             string
	Content          Content
	ReasoningContent string // provider extension (DeepSeek, Kimi, …)
	// ReasoningSet writes reasoning_content even when it is "" (Kimi Code
	// sends "" on every assistant message of a thinking model); decoding
	// sets it when the key is present.
	ReasoningSet bool
	ToolCalls    []ToolCall
	ToolCallID   string
	Name         string
	Extra        Extra
}

// ContentKind says which form a message's content takes.
type ContentKind uint8

// The forms of [Content].
const (
	ContentNone  ContentKind = iota // no "content" key (or null)
	ContentText                     // a plain string, possibly ""
	ContentParts                    // an array of parts, possibly []
	// ContentNull writes "content": null (an assistant message with tool
	// calls, as some agents send it); decoding gives ContentNone.
	ContentNull
)

// Content is a message's content: absent, a plain string, or an array of
// parts.
type Content struct {
	Kind  ContentKind
	Text  string // ContentText
	Parts []Part // ContentParts
}

// Text returns a plain-string content.
func Text(s string) Content { return Content{Kind: ContentText, Text: s} }

// Parts returns an array content.
func Parts(parts ...Part) Content { return Content{Kind: ContentParts, Parts: parts} }

// IsEmpty reports whether the content carries nothing: absent, "", or [].
func (c Content) IsEmpty() bool {
	switch c.Kind {
	case ContentText:
		return c.Text == ""
	case ContentParts:
		return len(c.Parts) == 0
	}
	return true
}

// Part is one entry of an array content, tagged by Type:
//
//	text:        {"type":"text","text"}
//	image_url:   {"type":"image_url","image_url":{"url","detail"?}}
//	input_audio: {"type":"input_audio","input_audio":{"data","format"}}  (OpenAI)
//	             {"type":"input_audio","audio_url"}                      (URL form, when no data is at hand)
//
// Parts of other types keep their fields in Extra.
type Part struct {
	Type       string
	Text       string
	ImageURL   *ImageURL
	InputAudio *InputAudio
	AudioURL   string
	Extra      Extra
}

// TextPart returns a text part.
func TextPart(s string) Part { return Part{Type: PartText, Text: s} }

// ImageURL is the image of an image_url part.
type ImageURL struct {
	URL    string
	Detail string // optional: auto | low | high
	Extra  Extra
}

// InputAudio is the audio of an input_audio part: base64 data and its format
// ("wav", "mp3").
type InputAudio struct {
	Data   string
	Format string
	Extra  Extra
}

// ToolCall is one entry of an assistant message's tool_calls.
type ToolCall struct {
	ID       string
	Type     string // "function"; an empty Type is written as "function"
	Function FunctionCall
	Extra    Extra
}

// FunctionCall is the function of a [ToolCall]. Arguments is a string that
// holds JSON.
type FunctionCall struct {
	Name      string
	Arguments string
	Extra     Extra
}

// Tool is one entry of the request's tools.
type Tool struct {
	Type     string // "function"; an empty Type is written as "function"
	Function FunctionDef
	Extra    Extra
}

// FunctionDef describes a function tool. Parameters is a JSON Schema; nil is
// written as {"type":"object","properties":{}}.
type FunctionDef struct {
	Name        string
	Description string // omitted when empty
	Parameters  json.RawMessage
	Strict      *bool
	Extra       Extra
}

// ResponseFormat is the structured-output format:
// {"type":"json_schema","json_schema":{"name","schema","strict"}}, or
// {"type":"json_object"} / {"type":"text"} without JSONSchema.
type ResponseFormat struct {
	Type       string
	JSONSchema *JSONSchema
	Extra      Extra
}

// JSONSchema is the json_schema of a [ResponseFormat]. Schema nil is written
// as null; Strict is omitted when nil.
type JSONSchema struct {
	Name        string
	Description string
	Schema      json.RawMessage
	Strict      *bool
	Extra       Extra
}
