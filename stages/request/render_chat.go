package request

import (
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
		if m.Output != nil {
			c, err := style.output(m.Output)
			if err != nil {
				return nil, err
			}
			cm.Content = c
		} else {
			cm.Content = style.content(m.Content, m.Blank)
		}
		if len(m.Calls) > 0 {
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
		img := &chat.ImageURL{URL: p.URL}
		if st.ImageDetail {
			img.Detail = p.Detail
		}
		return chat.Part{Type: chat.PartImageURL, ImageURL: img}
	case PartAudio:
		if st.AudioText != "" {
			return chat.TextPart(st.AudioText)
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
			img := &chat.ImageURL{URL: it.ImageURL}
			if st.ImageDetail {
				img.Detail = it.Detail
			}
			parts = append(parts, chat.Part{Type: chat.PartImageURL, ImageURL: img})
		case protocol.ContentInputAudio:
			parts = append(parts, chat.TextPart(OmittedAudio))
		case "input_video":
			parts = append(parts, chat.TextPart(OmittedVideo))
		case "encrypted_content":
			parts = append(parts, chat.TextPart(OmittedEncrypted))
		}
	}
	switch {
	case len(parts) == 0:
		return chat.Text(""), nil
	case len(parts) == 1 && parts[0].Type == chat.PartText:
		return chat.Text(parts[0].Text), nil
	}
	return chat.Parts(parts...), nil
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
