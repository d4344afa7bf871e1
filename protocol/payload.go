package protocol

import "strings"

// FunctionCallOutputPayload is the "output" of a function_call_output or
// custom_tool_call_output item. On the wire it is either a plain JSON string (Text) or an
// array of content items (Items); decoding is untagged. When encoding, Text wins if it is
// non-nil; otherwise Items is written if non-nil; otherwise the payload is written as "".
// Success is in-memory only (false when the tool failed) and never appears on the wire.
type FunctionCallOutputPayload struct {
	Text    *string
	Items   []FunctionCallOutputContentItem
	Success *bool
}

// FunctionCallOutputContentItem is one entry of an array-form [FunctionCallOutputPayload],
// tagged by Type: input_text{text}, input_image{image_url,detail?}, input_audio{audio_url},
// input_video{video_url,id?}, encrypted_content{encrypted_content}. Unknown types keep their
// fields in Extra.
type FunctionCallOutputContentItem struct {
	Type             string
	Text             string
	ImageURL         string
	Detail           string // optional
	AudioURL         string
	VideoURL         string
	ID               string // optional (input_video)
	EncryptedContent string
	Extra            Extra
}

// TextPayload returns a string-form payload.
func TextPayload(s string) FunctionCallOutputPayload { return FunctionCallOutputPayload{Text: &s} }

// TextContent returns the payload's text and true only for the string form.
func (p FunctionCallOutputPayload) TextContent() (string, bool) {
	if p.Text != nil {
		return *p.Text, true
	}
	if p.Items != nil {
		return "", false
	}
	// Neither form set: the payload is written as "" on the wire.
	return "", true
}

// ToText returns the payload as text: the string form as-is; for the array form the non-blank
// input_text entries joined with "\n", and false if there are none.
func (p FunctionCallOutputPayload) ToText() (string, bool) {
	if s, ok := p.TextContent(); ok {
		return s, true
	}
	var parts []string
	for _, it := range p.Items {
		if it.Type == ContentInputText && strings.TrimSpace(it.Text) != "" {
			parts = append(parts, it.Text)
		}
	}
	if len(parts) == 0 {
		return "", false
	}
	return strings.Join(parts, "\n"), true
}
