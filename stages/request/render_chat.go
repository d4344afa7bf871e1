package request

import (
	"encoding/json"
	"strings"

	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/wire/chat"
)

// ChatStyle is how a harness renders transcript content on the chat wire.
// The zero value is the native conversion's rendering.
type ChatStyle struct {
	// ImageDetail carries an image's detail in image_url.
	ImageDetail bool
	// AudioText, when set, replaces audio parts by a text part holding it
	// (for servers without audio input).
	AudioText string
	// OutputParts renders tool outputs given as content items as content
	// parts (text, image_url; other kinds as a placeholder text), one text
	// collapsing to a string and none to ""; without it they are the JSON
	// text of the item array, exactly as the engine writes it.
	OutputParts bool

	// ImageNullID gives every image_url an "id": null beside its url (the
	// shape of Moonshot's chat API).
	ImageNullID bool
	// AudioURL sends audio as {"type":"input_audio","audio_url"} as it
	// is, instead of splitting a data URL into data and format.
	AudioURL bool
	// OutputMedia, with OutputParts, sends the audio and video items of a
	// tool output as parts ({"type":"input_audio","audio_url"},
	// {"type":"video_url","video_url":{"url","id"}}) instead of
	// placeholder texts.
	OutputMedia bool
	// EmptyOutputParts, with OutputParts, sends a tool output of no items
	// as [] instead of "".
	EmptyOutputParts bool
	// OutputTextParts sends a tool output that renders as a string as one
	// text part instead: [{"type":"text","text":…}].
	OutputTextParts bool
	// TrimReasoning, when set, is the set of characters trimmed from the
	// end of every reasoning_content.
	TrimReasoning string
	// AssistantReasoning writes reasoning_content on every assistant
	// message, "" when it has none (Kimi Code's thinking mode).
	AssistantReasoning bool
	// NullCallContent sends an assistant message with tool calls and no
	// content as "content": null instead of leaving the key out (pi's
	// shape).
	NullCallContent bool
}

// Placeholder texts of content a chat message cannot carry.
const (
	OmittedAudio     = "[audio content omitted]"
	OmittedVideo     = "[video content omitted]"
	OmittedEncrypted = "[encrypted content omitted]"
)

// RenderChat renders transcript messages as chat messages, appended to dst.
func RenderChat(dst []chat.Message, msgs []Message, style ChatStyle) ([]chat.Message, error) {
	if cap(dst)-len(dst) < len(msgs) {
		grown := make([]chat.Message, len(dst), len(dst)+len(msgs))
		copy(grown, dst)
		dst = grown
	}
	for i := range msgs {
		m := &msgs[i]
		cm := chat.Message{Role: m.Role, ReasoningContent: m.Reasoning, ToolCallID: m.CallID}
		if style.TrimReasoning != "" {
			cm.ReasoningContent = strings.TrimRight(cm.ReasoningContent, style.TrimReasoning)
		}
		cm.ReasoningSet = style.AssistantReasoning && m.Role == RoleAssistant
		if m.Output != nil {
			c, err := style.output(m.Output)
			if err != nil {
				return nil, err
			}
			if style.OutputTextParts && c.Kind == chat.ContentText {
				c = chat.Parts(chat.TextPart(c.Text))
			}
			cm.Content = c
		} else {
			cm.Content = style.content(m.Content, m.Blank)
			if m.AsParts && cm.Content.Kind == chat.ContentText {
				cm.Content = chat.Parts(chat.TextPart(cm.Content.Text))
			}
		}
		if len(m.Calls) > 0 {
			if style.NullCallContent && cm.Content.Kind == chat.ContentNone {
				cm.Content = chat.Content{Kind: chat.ContentNull}
			}
			cm.ToolCalls = make([]chat.ToolCall, len(m.Calls))
			for j, c := range m.Calls {
				cm.ToolCalls[j] = chat.ToolCall{ID: c.ID, Type: chat.ToolTypeFunction,
					Function: chat.FunctionCall{Name: c.Name, Arguments: c.Arguments}}
			}
		}
		dst = append(dst, cm)
	}
	return dst, nil
}

// content renders message content: none, a plain string for one text, or
// parts.
func (st ChatStyle) content(parts []Part, blank bool) chat.Content {
	switch {
	case len(parts) == 0 && blank:
		return chat.Text("")
	case len(parts) == 0:
		return chat.Content{}
	case len(parts) == 1 && parts[0].Kind == PartText:
		return chat.Text(parts[0].Text)
	case len(parts) == 1 && parts[0].Kind == PartAudio && st.AudioText != "":
		return chat.Text(st.AudioText)
	}
	out := make([]chat.Part, len(parts))
	for i := range parts {
		out[i] = st.part(&parts[i])
	}
	return chat.Parts(out...)
}

func (st ChatStyle) part(p *Part) chat.Part {
	switch p.Kind {
	case PartImage:
		return chat.Part{Type: chat.PartImageURL, ImageURL: st.image(p.URL, p.Detail)}
	case PartAudio:
		if st.AudioText != "" {
			return chat.TextPart(st.AudioText)
		}
		if st.AudioURL {
			return chat.Part{Type: chat.PartInputAudio, AudioURL: p.URL}
		}
		if data, format, ok := audioDataURL(p.URL); ok {
			return chat.Part{Type: chat.PartInputAudio, InputAudio: &chat.InputAudio{Data: data, Format: format}}
		}
		return chat.Part{Type: chat.PartInputAudio, AudioURL: p.URL}
	}
	return chat.TextPart(p.Text)
}

// output renders a tool result.
func (st ChatStyle) output(o *Output) (chat.Content, error) {
	if o.IsText() {
		return chat.Text(o.Text), nil
	}
	if !st.OutputParts {
		text, err := outputItemsText(o)
		if err != nil {
			return chat.Content{}, err
		}
		return chat.Text(text), nil
	}
	parts := make([]chat.Part, 0, len(o.Items))
	for i := range o.Items {
		it := &o.Items[i]
		switch it.Type {
		case protocol.ContentInputText:
			parts = append(parts, chat.TextPart(it.Text))
		case protocol.ContentInputImage:
			parts = append(parts, chat.Part{Type: chat.PartImageURL, ImageURL: st.image(it.ImageURL, it.Detail)})
		case protocol.ContentInputAudio:
			if st.OutputMedia {
				parts = append(parts, chat.Part{Type: chat.PartInputAudio, AudioURL: it.AudioURL})
				continue
			}
			parts = append(parts, chat.TextPart(OmittedAudio))
		case "input_video":
			if st.OutputMedia {
				parts = append(parts, videoPart(it))
				continue
			}
			parts = append(parts, chat.TextPart(OmittedVideo))
		case "encrypted_content":
			parts = append(parts, chat.TextPart(OmittedEncrypted))
		}
	}
	switch {
	case len(parts) == 0 && st.EmptyOutputParts:
		return chat.Parts(), nil
	case len(parts) == 0:
		return chat.Text(""), nil
	case len(parts) == 1 && parts[0].Type == chat.PartText:
		return chat.Text(parts[0].Text), nil
	}
	return chat.Parts(parts...), nil
}

// image is the image_url of an image part in the style.
func (st ChatStyle) image(url, detail string) *chat.ImageURL {
	img := &chat.ImageURL{URL: url}
	if st.ImageDetail {
		img.Detail = detail
	}
	if st.ImageNullID {
		img.Extra = chat.Extra{"id": nullJSON}
	}
	return img
}

var nullJSON = json.RawMessage("null")

// videoPart is {"type":"video_url","video_url":{"url","id"}} for a video
// item of a tool output (id null when the item has none).
func videoPart(it *protocol.FunctionCallOutputContentItem) chat.Part {
	b := append([]byte(`{"url":`), chat.AppendString(nil, it.VideoURL)...)
	b = append(b, `,"id":`...)
	if it.ID == "" {
		b = append(b, "null"...)
	} else {
		b = chat.AppendString(b, it.ID)
	}
	return chat.Part{Type: "video_url", Extra: chat.Extra{"video_url": json.RawMessage(append(b, '}'))}}
}

// outputItemsText is the JSON text of an item-form output, exactly as the
// engine writes it.
func outputItemsText(o *Output) (string, error) {
	if b, ok := appendOutputItems(nil, o.Items); ok {
		return string(b), nil
	}
	p := o.payload
	if p == nil {
		p = &protocol.FunctionCallOutputPayload{Items: o.Items}
	}
	b, err := p.MarshalJSON()
	if err != nil {
		return "", err
	}
	return string(b), nil
}
