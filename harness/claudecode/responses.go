package claudecode

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

// functionTools flattens the shape's tools into Responses function tools:
// {"type":"function","name","description","parameters":input_schema}.
func functionTools(shape *Shape) []protocol.ToolSpec {
	out := make([]protocol.ToolSpec, len(shape.Tools))
	f := false
	for i, t := range shape.Tools {
		out[i] = protocol.ToolSpec{Type: protocol.ToolTypeFunction, Name: t.Name, Description: t.Description,
			Parameters: t.Parameters, Strict: t.Strict}
		if out[i].Strict == nil {
			out[i].Strict = &f
		}
	}
	return out
}

// nativeInput returns the history with the client calls the bridge made
// shown as the native calls the model made (function calls; an apply_patch
// output then answers a function call) and the client's exec framing taken
// off their outputs. Everything else is as the client sent it.
func nativeInput(items protocol.Items) protocol.Items {
	out := make(protocol.Items, len(items))
	reversed := map[string]bool{}
	for i, it := range items {
		out[i] = it
		callID, id := "", ""
		switch v := it.(type) {
		case *protocol.FunctionCall:
			if v == nil {
				continue
			}
			callID, id = v.CallID, v.ID
		case *protocol.CustomToolCall:
			if v == nil {
				continue
			}
			callID, id = v.CallID, v.ID
		case *protocol.LocalShellCall:
			if v == nil {
				continue
			}
			id = v.ID
			callID = v.ID
			if v.CallID != nil && *v.CallID != "" {
				callID = *v.CallID
			}
		default:
			continue
		}
		tool, args, ok := Bridge.ReverseItem(it)
		if !ok || callID == "" {
			continue
		}
		out[i] = &protocol.FunctionCall{ID: id, Name: tool, Arguments: args, CallID: callID}
		reversed[callID] = true
	}
	for i, it := range out {
		switch v := it.(type) {
		case *protocol.FunctionCallOutput:
			if v != nil && reversed[v.CallID] {
				o := *v
				o.Output = unwrapped(v.Output)
				out[i] = &o
			}
		case *protocol.CustomToolCallOutput:
			if v != nil && reversed[v.CallID] {
				out[i] = &protocol.FunctionCallOutput{ID: v.ID, CallID: v.CallID, Output: unwrapped(v.Output)}
			}
		}
	}
	return out
}

// unwrapped is an output without the client's exec framing.
func unwrapped(p protocol.FunctionCallOutputPayload) protocol.FunctionCallOutputPayload {
	if s, ok := p.TextContent(); ok {
		if out, _, _, framed := bridge.UnwrapOutput(s); framed {
			return protocol.FunctionCallOutputPayload{Text: &out, Success: p.Success}
		}
	}
	return p
}

// responsesGraph is the request graph of the Responses wire: the client's
// request with four fields replaced — instructions (the profile's system
// prompt), tools (the profile's tools as function tools), input (the
// history, bridged calls shown as native ones) and parallel_tool_calls (as
// the client asked).
func responsesGraph(shape *Shape) (*pipeline.Graph, error) {
	return pipeline.New("request.claude-code.responses",
		pipeline.StageNode(request.NodeEncode, pipeline.Func[*request.Shaping, request.Shaped](
			func(_ context.Context, s *request.Shaping, emit func(request.Shaped)) error {
				if s == nil || s.Request == nil {
					return fmt.Errorf("no request to shape")
				}
				body := *s.Request
				body.Instructions = shape.Instructions()
				body.Tools = functionTools(shape)
				body.Input = nativeInput(s.Request.Input)
				data, err := body.MarshalJSON()
				if err != nil {
					return err
				}
				emit(request.Shaped{Path: request.PathResponses, Body: data, ToolKinds: protocol.ToolKinds{}})
				return nil
			}),
			pipeline.Describe("the client's request with claude-code's instructions, function tools and native calls → /responses")),
	)
}

// chatRequest is the Responses-shaped request the Chat wire converts:
// model, instructions, input (bridged calls shown as native ones), tools,
// tool_choice auto, parallel_tool_calls, reasoning null, store false,
// stream true, prompt_cache_key.
func chatRequest(req *protocol.ResponsesRequest, shape *Shape) *protocol.ResponsesRequest {
	store := false
	return &protocol.ResponsesRequest{
		Store:             &store,
		Model:             req.Model,
		Instructions:      shape.Instructions(),
		Input:             nativeInput(req.Input),
		Tools:             functionTools(shape),
		ToolChoice:        json.RawMessage(`"auto"`),
		ParallelToolCalls: req.ParallelToolCalls,
		Stream:            true,
		PromptCacheKey:    req.PromptCacheKey,
	}
}

// chatGraph is the request graph of the Chat wire: the claude-code
// Responses-shaped request, converted by the native chat conversion
// (request.system → request.tools → request.history → request.options →
// request.provider → request.encode).
func chatGraph(env *harness.Env, shape *Shape) (*pipeline.Graph, error) {
	opts := env.RequestOptions()
	return pipeline.New("request.claude-code.chat",
		pipeline.StageNode(request.NodeSystem, request.Update(func(s *request.Shaping) error {
			s.Request = chatRequest(s.Request, shape) // a new request; the client's is not changed
			if text := shape.Instructions(); text != "" {
				s.Transcript = append(s.Transcript, request.Message{Role: request.RoleSystem, Content: request.TextParts(text)})
			}
			return nil
		}), pipeline.Describe("the claude-code Responses request; its instructions → the system message")),
		request.ToolsNode(opts),
		request.HistoryNode(opts, request.NativePolicy()),
		request.OptionsNode(opts),
		request.ProviderNode(opts),
		request.EncodeNode(),
	)
}
