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
			s.Body.Messages = append(s.Body.Messages, chat.Message{
				Role:    chat.RoleSystem,
				Content: chat.Text(s.Request.Instructions),
			})
		}
		return nil
	})
}

// SystemNode returns the request.system node.
func SystemNode() pipeline.Node {
	return pipeline.StageNode(NodeSystem, System(),
		pipeline.Describe("instructions → the system message"))
}

// Encode returns the request.encode stage of the chat graphs: the chat body
// is encoded, and the result carries the path, the title request and the
// ToolKinds (an empty map when request.tools did not run).
func Encode() pipeline.Stage[*Shaping, Shaped] {
	return pipeline.Func[*Shaping, Shaped](func(_ context.Context, s *Shaping, emit func(Shaped)) error {
		if s == nil || s.Request == nil {
			return fmt.Errorf("no request to shape")
		}
		body, err := s.Body.AppendJSON(nil)
		if err != nil {
			return err
		}
		kinds := s.ToolKinds
		if kinds == nil {
			kinds = protocol.ToolKinds{}
		}
		path := s.Path
		if path == "" {
			path = chat.Path
		}
		emit(Shaped{Path: path, Body: body, TitleRequest: s.TitleRequest, ToolKinds: kinds})
		return nil
	})
}

// EncodeNode returns the request.encode node of the chat graphs.
func EncodeNode() pipeline.Node {
	return pipeline.StageNode(NodeEncode, Encode(),
		pipeline.Describe("chat body → bytes, with path, title request and tool kinds"))
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
		emit(Shaped{Path: PathResponses, Body: body, TitleRequest: s.TitleRequest, ToolKinds: protocol.ToolKinds{}})
		return nil
	})
}

// ResponsesEncodeNode returns the request.encode node of the Responses wire.
func ResponsesEncodeNode() pipeline.Node {
	return pipeline.StageNode(NodeEncode, ResponsesEncode(),
		pipeline.Describe("the engine request, as it is, → /responses"))
}
