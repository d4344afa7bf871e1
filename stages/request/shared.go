package request

import (
	"context"
	"log/slog"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
)

// FixedSystem returns a request.system stage that starts the transcript
// with a system message holding text (a harness's own system prompt; the
// request's instructions are not used). Blank text adds nothing.
func FixedSystem(text string) pipeline.Stage[*Shaping, *Shaping] {
	return stage(func(_ context.Context, s *Shaping) error {
		if text != "" {
			s.Transcript = append(s.Transcript, Message{Role: RoleSystem, Content: TextParts(text)})
		}
		return nil
	})
}

// FixedSystemNode returns the request.system node of FixedSystem.
func FixedSystemNode(text string) pipeline.Node {
	return pipeline.StageNode(NodeSystem, FixedSystem(text),
		pipeline.Describe("the harness's own system prompt"))
}

// FunctionTools returns a request.tools stage for harnesses that carry only
// the client's function tools: each function tool of the request becomes a
// wire tool (description defaulting to the name, parameters to the empty
// object schema), and every tool name of the request maps to the function
// kind. The tools of a namespace are the client's functions too (MCP
// servers, and the whole tool surface of Codex's code mode): they are
// converted as request.tools converts them — namespace_name functions of
// kind namespaced_function, inner custom tools as {"input"} functions of
// kind custom. The client's tool_search tool is emulated as request.tools
// emulates it, and the tools the history's tool_search_output items loaded
// are carried like the request's own; a tool marked defer_loading waits
// for a search to load it (docs/request-shaping.md#tool-search). Other
// kinds are left out.
func FunctionTools() pipeline.Stage[*Shaping, *Shaping] {
	return stage(func(_ context.Context, s *Shaping) error {
		s.Tools = s.Tools[:0]
		s.ToolKinds = make(protocol.ToolKinds, len(s.Request.Tools))
		loaded, err := searchLoadedTools(s.Request.Input)
		if err != nil {
			return err
		}
		specs := make([]sourcedTool, 0, len(s.Request.Tools)+len(loaded))
		for i := range s.Request.Tools {
			specs = append(specs, sourcedTool{item: -1, index: i, spec: &s.Request.Tools[i]})
		}
		specs = append(specs, loaded...)
		var nested []sourcedTool
		emitted := map[string]bool{}
		for _, st := range specs {
			t := st.spec
			if t.Type == protocol.ToolTypeNamespace {
				nested = append(nested, st)
				continue
			}
			name := t.Name
			if name == "" {
				name = t.Type
			}
			if _, set := s.ToolKinds[name]; name != "" && !st.loaded && !set {
				s.ToolKinds[name] = protocol.ToolOutputKind{Kind: protocol.KindFunction}
			}
			switch {
			case t.Type == protocol.ToolTypeToolSearch && !emitted[ToolNameToolSearch]:
				emitted[ToolNameToolSearch] = true
				s.ToolKinds[ToolNameToolSearch] = protocol.ToolOutputKind{Kind: protocol.KindToolSearch}
				s.Tools = append(s.Tools, Tool{Name: ToolNameToolSearch, Description: orDefault(t.Description, toolSearchDescription),
					Parameters: orRaw(t.Parameters, toolSearchSchema)})
				continue
			case t.Type != protocol.ToolTypeFunction || t.Name == "" || st.deferred(t) || emitted[t.Name]:
				continue
			}
			emitted[t.Name] = true
			s.ToolKinds[t.Name] = protocol.ToolOutputKind{Kind: protocol.KindFunction}
			params := t.Parameters
			if len(params) == 0 {
				params = []byte(emptyObjectSchema)
			}
			s.Tools = append(s.Tools, Tool{Name: t.Name, Description: orDefault(t.Description, t.Name), Parameters: params})
		}
		if len(nested) == 0 {
			return nil
		}
		// Flat names are reserved so that a flattened name never takes one.
		for _, st := range specs {
			if t := st.spec; t.Type != protocol.ToolTypeNamespace && t.Name != "" {
				nested = append(nested, sourcedTool{item: -1, index: st.index, spec: &protocol.ToolSpec{Type: protocol.ToolTypeFunction, Name: t.Name}})
			}
		}
		t := convertTools(nested, slog.Default(), nil)
		if t.err != nil {
			return t.err
		}
		for _, tool := range t.tools {
			k := t.kinds[tool.Name]
			if k.Kind == protocol.KindFunction { // a reservation above, not a tool
				continue
			}
			s.Tools = append(s.Tools, tool)
			s.ToolKinds[tool.Name] = k
		}
		s.ToolNames = t.names
		return nil
	})
}

// FunctionToolsNode returns the request.tools node of FunctionTools.
func FunctionToolsNode() pipeline.Node {
	return pipeline.StageNode(NodeTools, FunctionTools(),
		pipeline.Describe("the client's function tools → wire tools; every name → function kind"))
}

// Update returns a stage that edits the shaping state with f, for
// harness-specific body fields.
func Update(f func(s *Shaping) error) pipeline.Stage[*Shaping, *Shaping] {
	return stage(func(_ context.Context, s *Shaping) error { return f(s) })
}

// ThinkingSwitch returns the thinking field of a ThinkingToggle model for a
// request's effort: {"type":"disabled"} for "none", {"type":"enabled"}
// otherwise (including no effort).
func ThinkingSwitch(req *protocol.ResponsesRequest) []byte {
	if req.Reasoning != nil && normalizeEffort(req.Reasoning.Effort) == "none" {
		return thinkingDisabled
	}
	return thinkingEnabled
}
