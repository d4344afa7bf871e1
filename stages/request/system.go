package request

import (
	"context"
	"fmt"
	"strings"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/wire/chat"
)

// System returns the request.system stage: when the request's instructions
// are not blank, the first message is {"role":"system","content":instructions}
// (the instructions as they are, untrimmed).
func System() pipeline.Stage[*Shaping, *Shaping] {
	return stage(func(_ context.Context, s *Shaping) error {
		if strings.TrimSpace(s.Request.Instructions) != "" {
			s.Transcript = append(s.Transcript, Message{Role: RoleSystem, Content: TextParts(s.Request.Instructions)})
		}
		return nil
	})
}

// SystemNode returns the request.system node.
func SystemNode() pipeline.Node {
	return pipeline.StageNode(NodeSystem, System(),
		pipeline.Describe("instructions → the system message"))
}

// Encode returns the request.encode stage of the chat graphs, rendering
// with the native style.
func Encode() pipeline.Stage[*Shaping, Shaped] { return ChatEncode(ChatStyle{}) }

// ChatEncode returns the request.encode stage of a chat graph: the
// transcript and tools are rendered in style into the chat body, the body
// is encoded, and the result carries the path, query, headers, title
// request and ToolKinds (an empty map when request.tools did not run).
func ChatEncode(style ChatStyle) pipeline.Stage[*Shaping, Shaped] {
	return pipeline.Func[*Shaping, Shaped](func(_ context.Context, s *Shaping, emit func(Shaped)) error {
		if s == nil || s.Request == nil {
			return fmt.Errorf("no request to shape")
		}
		msgs, err := RenderChat(s.Body.Messages, s.Transcript, style)
		if err != nil {
			return err
		}
		body := s.Body
		body.Messages = msgs
		if len(s.Tools) > 0 {
			body.Tools = make([]chat.Tool, 0, len(body.Tools)+len(s.Tools))
			body.Tools = append(body.Tools, s.Body.Tools...)
			for _, t := range s.Tools {
				body.Tools = append(body.Tools, chat.Tool{Type: chat.ToolTypeFunction,
					Function: chat.FunctionDef{Name: t.Name, Description: t.Description, Parameters: t.Parameters, Strict: t.Strict}})
			}
		}
		data, err := body.AppendJSON(nil)
		if err != nil {
			return err
		}
		emit(s.result(data))
		return nil
	})
}

// result is the Shaped of s with body data.
func (s *Shaping) result(data []byte) Shaped {
	kinds := s.ToolKinds
	if kinds == nil {
		kinds = protocol.ToolKinds{}
	}
	path := s.Path
	if path == "" {
		path = chat.Path
	}
	return Shaped{Path: path, Body: data, TitleRequest: s.TitleRequest, ToolKinds: kinds, Query: s.Query, Headers: s.Headers}
}

// EncodeNode returns the request.encode node of the native chat graph.
func EncodeNode() pipeline.Node { return ChatEncodeNode(ChatStyle{}) }

// ChatEncodeNode returns the request.encode node of a chat graph rendering
// in style.
func ChatEncodeNode(style ChatStyle) pipeline.Node {
	return pipeline.StageNode(NodeEncode, ChatEncode(style),
		pipeline.Describe("transcript + tools → chat body bytes, with path, title request and tool kinds"))
}

// ResponsesEncode returns the request.encode stage of the Responses wire: the
// engine request is encoded as it is and goes to "/responses".
func ResponsesEncode() pipeline.Stage[*Shaping, Shaped] {
	return pipeline.Func[*Shaping, Shaped](func(_ context.Context, s *Shaping, emit func(Shaped)) error {
		if s == nil || s.Request == nil {
			return fmt.Errorf("no request to shape")
		}
		body, err := s.Request.MarshalJSON()
		if err != nil {
			return err
		}
		emit(Shaped{Path: PathResponses, Body: body, TitleRequest: s.TitleRequest, ToolKinds: protocol.ToolKinds{},
			Query: s.Query, Headers: s.Headers})
		return nil
	})
}

// ResponsesEncodeNode returns the request.encode node of the Responses wire.
func ResponsesEncodeNode() pipeline.Node {
	return pipeline.StageNode(NodeEncode, ResponsesEncode(),
		pipeline.Describe("the engine request, as it is, → /responses"))
}
