package request

import (
	"context"
	"strings"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
)

// BaseMessage is the index of the developer message that carries the
// engine's base prompt (docs/request-shaping.md#the-engines-base-instructions),
// or -1: the first message of the input, when it is a developer message
// that comes before any user or assistant message and is not made of
// contextual developer fragments alone. Items that are not messages (an
// additional_tools item) are passed over. Codex 0.171 sends its base
// prompt there and no instructions.
func BaseMessage(items []protocol.ResponseItem) int {
	for i, it := range items {
		m, ok := it.(*protocol.Message)
		if !ok || m == nil {
			continue
		}
		if m.Role != protocol.RoleDeveloper {
			return -1
		}
		texts, contextual := 0, 0
		for _, c := range m.Content {
			if c.Type != protocol.ContentInputText && c.Type != protocol.ContentOutputText {
				continue
			}
			if strings.TrimSpace(c.Text) == "" {
				continue
			}
			texts++
			if IsContextualDeveloperText(c.Text) {
				contextual++
			}
		}
		if texts == 0 || contextual == texts {
			return -1
		}
		return i
	}
	return -1
}

// MessageText joins the text items of a message with a blank line.
func MessageText(m *protocol.Message) string {
	var texts []string
	for _, c := range m.Content {
		if c.Type == protocol.ContentInputText || c.Type == protocol.ContentOutputText {
			texts = append(texts, c.Text)
		}
	}
	return strings.Join(texts, "\n\n")
}

// BaseSystem returns the request.system stage of the native chat route
// (docs/request-shaping.md#system-message): the request's instructions,
// when not blank, are the system message; otherwise the base message
// ([BaseMessage]), when there is one, is the system message and leaves
// the history (the stage replaces Shaping.Request with a copy whose input
// lacks it; the client's request is not changed).
func BaseSystem() pipeline.Stage[*Shaping, *Shaping] {
	return stage(func(_ context.Context, s *Shaping) error {
		if strings.TrimSpace(s.Request.Instructions) != "" {
			s.Transcript = append(s.Transcript, Message{Role: RoleSystem, Content: TextParts(s.Request.Instructions)})
			return nil
		}
		i := BaseMessage(s.Request.Input)
		if i < 0 {
			return nil
		}
		s.Transcript = append(s.Transcript, Message{Role: RoleSystem, Content: TextParts(MessageText(s.Request.Input[i].(*protocol.Message)))})
		req := *s.Request
		req.Input = make(protocol.Items, 0, len(s.Request.Input)-1)
		req.Input = append(append(req.Input, s.Request.Input[:i]...), s.Request.Input[i+1:]...)
		s.Request = &req
		return nil
	})
}

// BaseSystemNode returns the request.system node of BaseSystem.
func BaseSystemNode() pipeline.Node {
	return pipeline.StageNode(NodeSystem, BaseSystem(),
		pipeline.Describe("instructions, else the base developer message → the system message"))
}
