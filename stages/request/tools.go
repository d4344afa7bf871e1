package request

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
)

// MaxToolNameLen is the longest chat tool name providers accept.
const MaxToolNameLen = 64

// TypeAdditionalTools is the type of the input item in which Codex "responses
// lite" models receive their tools.
const TypeAdditionalTools = "additional_tools"

// Parameter schemas and descriptions of the converted tools.
const (
	emptyObjectSchema = `{"type":"object","properties":{},"additionalProperties":false}`
	customToolSchema  = `{"type":"object","properties":{"input":{"type":"string"}},"required":["input"],"additionalProperties":false}`
	localShellSchema  = `{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}},` +
		`"timeout_ms":{"type":"integer"},"working_directory":{"type":"string"},` +
		`"env":{"type":"object","additionalProperties":{"type":"string"}},"user":{"type":"string"}},` +
		`"required":["command"],"additionalProperties":false}`
	toolSearchSchema = `{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"}},"required":["query"],"additionalProperties":false}`

	localShellDescription = "Run a shell command in the local environment"
	toolSearchDescription = "Find more tools that can help with the task"
)

// Tools returns the request.tools stage: the engine tools (the request's
// "tools", then those of "additional_tools" input items) become the chat
// tools array, and ToolKinds records what each chat name stands for
// (docs/request-shaping.md#tool-conversion):
//
//   - function → a function; kind function;
//   - custom → a function taking {"input": string}; kind custom;
//   - namespace → one function per inner function, named
//     namespace_name, sanitised to [A-Za-z0-9_-], cut to 64 characters and
//     made unique with _2, _3, …; kind namespaced_function. An inner custom
//     tool keeps its plain name, kind custom;
//   - tool_search → a function of that name, kind tool_search (the
//     emulated search, docs/request-shaping.md#tool-search); local_shell →
//     a function of that name, kind function;
//   - hosted tools (HostedToolTypes) are left out, Options.OnHostedTool
//     told of each; tools marked defer_loading wait until a
//     tool_search_output of the history loads them; the tools those
//     outputs loaded are converted after the request's own.
//
// Tools the chat wire cannot carry are dropped with a debug log. A tool
// without a type, or a function, custom or namespace tool without a name, is
// an error. ToolKinds is replaced, never nil afterwards.
func Tools(opts Options) pipeline.Stage[*Shaping, *Shaping] {
	return stage(func(_ context.Context, s *Shaping) error {
		specs, err := engineTools(s.Request)
		if err != nil {
			return err
		}
		t := convertTools(specs, opts.logger(), opts.OnHostedTool)
		if t.err != nil {
			return t.err
		}
		s.Tools, s.ToolKinds, s.ToolNames = t.tools, t.kinds, t.names
		return nil
	})
}

// ToolsNode returns the request.tools node.
func ToolsNode(opts Options) pipeline.Node {
	return pipeline.StageNode(NodeTools, Tools(opts),
		pipeline.Describe("engine tools → chat tools + tool kinds"))
}

// ConvertTools converts engine tools into wire tools and their ToolKinds, as
// request.tools does (without additional_tools items).
func ConvertTools(tools []protocol.ToolSpec, log *slog.Logger) ([]Tool, protocol.ToolKinds, error) {
	if log == nil {
		log = slog.Default()
	}
	specs := make([]sourcedTool, len(tools))
	for i := range tools {
		specs[i] = sourcedTool{item: -1, index: i, spec: &tools[i]}
	}
	t := convertTools(specs, log, nil)
	return t.tools, t.kinds, t.err
}

// ChatToolName returns the chat name of a namespaced function that has no
// converted tool: namespace and name joined with "_" (left out when the
// namespace ends with "_" or the name starts with one), then sanitised. An
// empty namespace gives the name unchanged.
func ChatToolName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return sanitizeToolName(joinNamespace(namespace, name))
}

// toolTable is the converted tool set of one request.
type toolTable struct {
	tools []Tool
	kinds protocol.ToolKinds
	names map[ToolRef]string // (namespace, function) → chat name
	err   error
}

// sourcedTool is one engine tool and where it came from, for messages.
type sourcedTool struct {
	item  int // index of the additional_tools or tool_search_output input item, -1 for the request's tools
	index int
	spec  *protocol.ToolSpec
	// loaded marks a tool of a tool_search_output item: a search loaded
	// it, so it is offered even when marked defer_loading.
	loaded bool
}

func (t sourcedTool) where() string {
	if t.item < 0 {
		return fmt.Sprintf("tools[%d]", t.index)
	}
	return fmt.Sprintf("input[%d].tools[%d]", t.item, t.index)
}

// functionCallName is the wire name of a function call
// (docs/request-shaping.md#history-flattening): the name request.tools gave a namespaced
// function, or the joined and sanitised name.
func (s *Shaping) functionCallName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	if n, ok := s.ToolNames[ToolRef{namespace, name}]; ok {
		return n
	}
	return ChatToolName(namespace, name)
}

type additionalTools struct {
	Tools []protocol.ToolSpec `json:"tools"`
}

// engineTools lists the request's tools, then those of additional_tools items.
func engineTools(req *protocol.ResponsesRequest) ([]sourcedTool, error) {
	specs := make([]sourcedTool, 0, len(req.Tools))
	for i := range req.Tools {
		specs = append(specs, sourcedTool{item: -1, index: i, spec: &req.Tools[i]})
	}
	for i, it := range req.Input {
		o, ok := it.(*protocol.OtherItem)
		if !ok || o == nil || o.Type != TypeAdditionalTools || len(o.Raw) == 0 {
			continue
		}
		var at additionalTools
		if err := json.Unmarshal(o.Raw, &at); err != nil {
			return nil, fmt.Errorf("input[%d]: %s: %w", i, TypeAdditionalTools, err)
		}
		for j := range at.Tools {
			specs = append(specs, sourcedTool{item: i, index: j, spec: &at.Tools[j]})
		}
	}
	loaded, err := searchLoadedTools(req.Input)
	if err != nil {
		return nil, err
	}
	return append(specs, loaded...), nil
}

// searchLoadedTools lists the tools the tool_search_output items of the
// history loaded (docs/request-shaping.md#tool-search), in history order.
func searchLoadedTools(items []protocol.ResponseItem) ([]sourcedTool, error) {
	var specs []sourcedTool
	for i, it := range items {
		o, ok := it.(*protocol.ToolSearchOutput)
		if !ok || o == nil {
			continue
		}
		for j, raw := range o.Tools {
			spec := new(protocol.ToolSpec)
			if err := json.Unmarshal(raw, spec); err != nil {
				return nil, fmt.Errorf("input[%d]: %s tools[%d]: %w", i, protocol.TypeToolSearchOutput, j, err)
			}
			specs = append(specs, sourcedTool{item: i, index: j, spec: spec, loaded: true})
		}
	}
	return specs, nil
}

// SearchLoadedTools returns the tools the tool_search_output items of a
// history loaded, in history order (docs/request-shaping.md#tool-search),
// without their defer_loading marks (a search loaded them). A tool that is
// not valid JSON is an error naming where it is.
func SearchLoadedTools(items []protocol.ResponseItem) ([]protocol.ToolSpec, error) {
	st, err := searchLoadedTools(items)
	if err != nil || len(st) == 0 {
		return nil, err
	}
	out := make([]protocol.ToolSpec, len(st))
	for i := range st {
		t := *st[i].spec
		t.DeferLoading = nil
		if len(t.Tools) > 0 {
			t.Tools = append([]protocol.ToolSpec(nil), t.Tools...)
			for j := range t.Tools {
				t.Tools[j].DeferLoading = nil
			}
		}
		out[i] = t
	}
	return out, nil
}

// deferred reports whether a tool waits for a search to load it: it is
// marked defer_loading and did not come from a tool_search_output.
func (t sourcedTool) deferred(spec *protocol.ToolSpec) bool {
	return !t.loaded && spec.DeferLoading != nil && *spec.DeferLoading
}

// HostedToolTypes are the tool types that run on the Responses API's
// servers, not in the client: a chat or Messages upstream cannot run them
// and the client answers their calls as unsupported, so they are not
// offered (docs/request-shaping.md#hosted-tools).
var HostedToolTypes = map[string]bool{
	protocol.ToolTypeWebSearch: true, "web_search_preview": true, protocol.ToolTypeImageGeneration: true,
	"file_search": true, "code_interpreter": true, "computer_use_preview": true, "computer_use": true, "mcp": true,
}

// convertTools converts specs; hosted, when set, is told of every hosted
// tool left out (HostedToolTypes).
func convertTools(specs []sourcedTool, log *slog.Logger, hosted func(toolType string)) *toolTable {
	t := &toolTable{kinds: protocol.ToolKinds{}}
	// Flat names are reserved first, so that a flattened namespaced name
	// never takes the name of a flat tool, wherever that tool comes.
	reserved := make(map[string]bool, len(specs))
	for _, st := range specs {
		switch s := st.spec; s.Type {
		case protocol.ToolTypeFunction, protocol.ToolTypeCustom:
			if s.Name != "" {
				reserved[s.Name] = true
			}
		case protocol.ToolTypeToolSearch, protocol.ToolTypeLocalShell:
			reserved[s.Type] = true
		}
	}
	emitted := make(map[string]bool, len(specs))
	add := func(name, description string, params json.RawMessage, kind protocol.ToolOutputKind) {
		emitted[name] = true
		t.tools = append(t.tools, Tool{Name: name, Description: description, Parameters: params})
		t.kinds[name] = kind
	}
	drop := func(where string, s *protocol.ToolSpec, reason string) {
		log.Debug("request.tools: tool dropped: the chat wire cannot carry it",
			"where", where, "type", s.Type, "name", s.Name, "reason", reason)
	}
	fail := func(err error) *toolTable {
		return &toolTable{err: err}
	}
	function := protocol.ToolOutputKind{Kind: protocol.KindFunction}
	custom := protocol.ToolOutputKind{Kind: protocol.KindCustom}

	for _, st := range specs {
		s := st.spec
		if HostedToolTypes[s.Type] {
			drop(st.where(), s, "hosted tool: it runs on the Responses API's servers, and neither the upstream nor the client runs it")
			if hosted != nil {
				hosted(s.Type)
			}
			continue
		}
		if s.Type != protocol.ToolTypeNamespace && st.deferred(s) {
			drop(st.where(), s, "defer_loading: offered once a tool_search_output loads it")
			continue
		}
		switch s.Type {
		case "":
			return fail(fmt.Errorf("%s: unsupported chat wire tool type: \"\" (the tool has no type)", st.where()))
		case protocol.ToolTypeFunction, protocol.ToolTypeCustom:
			if s.Name == "" {
				return fail(fmt.Errorf("%s: %s tool without a name", st.where(), s.Type))
			}
			if emitted[s.Name] {
				drop(st.where(), s, "a tool named "+strconv.Quote(s.Name)+" is already declared")
				continue
			}
			if s.Type == protocol.ToolTypeFunction {
				add(s.Name, orDefault(s.Description, s.Name), orRaw(s.Parameters, emptyObjectSchema), function)
			} else {
				add(s.Name, orDefault(s.Description, s.Name), json.RawMessage(customToolSchema), custom)
			}
		case protocol.ToolTypeNamespace:
			if s.Name == "" {
				return fail(fmt.Errorf("%s: namespace tool without a name", st.where()))
			}
			for j := range s.Tools {
				in := &s.Tools[j]
				where := fmt.Sprintf("%s.tools[%d]", st.where(), j)
				switch in.Type {
				case "":
					return fail(fmt.Errorf("%s: unsupported chat wire namespace tool type: \"\" (the tool has no type)", where))
				case protocol.ToolTypeFunction:
					if in.Name == "" {
						return fail(fmt.Errorf("%s: function tool without a name", where))
					}
					if _, dup := t.names[ToolRef{s.Name, in.Name}]; dup {
						continue // loaded again by a later search, or also among the request's tools
					}
					if st.deferred(in) {
						drop(where, in, "defer_loading: offered once a tool_search_output loads it")
						continue
					}
					name := uniqueToolName(sanitizeToolName(joinNamespace(s.Name, in.Name)), reserved)
					add(name, orDefault(in.Description, in.Name), orRaw(in.Parameters, emptyObjectSchema),
						protocol.ToolOutputKind{Kind: protocol.KindNamespacedFunction, Name: in.Name, Namespace: s.Name})
					if t.names == nil {
						t.names = make(map[ToolRef]string)
					}
					t.names[ToolRef{s.Name, in.Name}] = name
				case protocol.ToolTypeCustom:
					if in.Name == "" {
						return fail(fmt.Errorf("%s: custom tool without a name", where))
					}
					if st.loaded && emitted[in.Name] && t.kinds[in.Name] == custom {
						continue // loaded again
					}
					if st.deferred(in) {
						drop(where, in, "defer_loading: offered once a tool_search_output loads it")
						continue
					}
					switch {
					case !validToolName(in.Name):
						drop(where, in, "custom tool name "+strconv.Quote(in.Name)+" in namespace "+strconv.Quote(s.Name)+" is not a valid chat tool name")
						continue
					case reserved[in.Name] || emitted[in.Name]:
						drop(where, in, "custom tool name "+strconv.Quote(in.Name)+" in namespace "+strconv.Quote(s.Name)+" is already taken")
						continue
					}
					reserved[in.Name] = true
					add(in.Name, orDefault(in.Description, in.Name), json.RawMessage(customToolSchema), custom)
				default:
					drop(where, in, "unsupported chat wire namespace tool type: "+in.Type)
				}
			}
		case protocol.ToolTypeToolSearch, protocol.ToolTypeLocalShell:
			if emitted[s.Type] {
				drop(st.where(), s, "a tool named "+strconv.Quote(s.Type)+" is already declared")
				continue
			}
			if s.Type == protocol.ToolTypeToolSearch {
				add(ToolNameToolSearch, orDefault(s.Description, toolSearchDescription), orRaw(s.Parameters, toolSearchSchema),
					protocol.ToolOutputKind{Kind: protocol.KindToolSearch})
			} else {
				add(ToolNameLocalShell, localShellDescription, json.RawMessage(localShellSchema), function)
			}
		default:
			drop(st.where(), s, "unsupported chat wire tool type: "+s.Type)
		}
	}
	return t
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func orRaw(raw json.RawMessage, def string) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage(def)
	}
	return raw
}

// joinNamespace joins a namespace and a name with "_", unless the namespace
// ends with "_" or the name starts with one.
func joinNamespace(namespace, name string) string {
	if (namespace != "" && namespace[len(namespace)-1] == '_') || (name != "" && name[0] == '_') {
		return namespace + name
	}
	return namespace + "_" + name
}

func toolNameChar(c rune) bool {
	return c == '_' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// sanitizeToolName replaces every character outside [A-Za-z0-9_-] with "_";
// an empty result becomes "tool".
func sanitizeToolName(s string) string {
	clean := true
	for _, c := range s {
		if !toolNameChar(c) {
			clean = false
			break
		}
	}
	switch {
	case s == "":
		return "tool"
	case clean:
		return s
	}
	b := make([]byte, 0, len(s))
	for _, c := range s {
		if toolNameChar(c) {
			b = append(b, byte(c))
		} else {
			b = append(b, '_')
		}
	}
	return string(b)
}

func validToolName(s string) bool {
	return s != "" && len(s) <= MaxToolNameLen && sanitizeToolName(s) == s
}

// uniqueToolName cuts base to 64 characters and, when that name is taken,
// adds _2, _3, … cutting the prefix so the whole stays within 64. The name
// returned is reserved.
func uniqueToolName(base string, reserved map[string]bool) string {
	base = truncate(base, MaxToolNameLen)
	if !reserved[base] {
		reserved[base] = true
		return base
	}
	for n := 2; ; n++ {
		suffix := "_" + strconv.Itoa(n)
		name := truncate(base, MaxToolNameLen-len(suffix)) + suffix
		if !reserved[name] {
			reserved[name] = true
			return name
		}
	}
}

// truncate keeps the first n bytes of a sanitised (ASCII) name.
func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
