package benchmark

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Shape of CodexRequest: what a real Codex CLI request of a working
// session weighs (issue 23 measured ~37 KB with 10 tools).
const (
	// CodexRequestItems is the number of input items of CodexRequest.
	CodexRequestItems = 50
	// CodexRequestTools is the number of tools of CodexRequest.
	CodexRequestTools = 10
)

// CodexRequest returns a deterministic Codex-sized Responses request
// (about 37 KB): instructions, the permissions and environment messages,
// nine turns of user message, reasoning, shell call, call output and
// assistant answer, then a follow-up call and the new user message — 50
// input items — with 10 tools in the shapes Codex sends (function tools,
// the custom apply_patch, web_search, a namespaced MCP function). The
// wording is ours; the names and shapes are Codex's. model names the
// model; stream sets "stream".
func CodexRequest(model string, stream bool) ([]byte, error) {
	r := rand.New(rand.NewPCG(2026, 23))
	words := []string{"read", "the", "decoder", "file", "and", "fix", "stream", "test", "go", "module", "error",
		"café", "naïve", "中文", "\"quoted\"", "<tag>", "tab\t", "path/to/file.go", "return", "proxy", "latency"}
	sentence := sentences(r, words)
	text := messageItem
	call := func(id string) (map[string]any, map[string]any) {
		cmd, _ := json.Marshal(map[string]any{"cmd": "rg -n " + words[r.IntN(len(words))] + " server/", "workdir": "/work/project", "yield_time_ms": 10000})
		return map[string]any{"type": "function_call", "call_id": id, "name": "exec_command", "arguments": string(cmd)},
			map[string]any{"type": "function_call_output", "call_id": id,
				"output": "Chunk ID: 5e6f7a\nWall time: 0.0200 seconds\nProcess exited with code 0\nOutput:\n" + sentence(60+r.IntN(60)) + "\n"}
	}
	input := []any{
		text("developer", "input_text", "<permissions instructions>\n"+sentence(120)+"\n</permissions instructions>"),
		text("user", "input_text", "<environment_context>\n  <cwd>/work/project</cwd>\n  <shell>bash</shell>\n  <current_date>2026-12-01</current_date>\n  <timezone>Etc/UTC</timezone>\n</environment_context>"),
	}
	for t := range 9 {
		c, out := call(fmt.Sprintf("call_bench_%d", t))
		input = append(input,
			text("user", "input_text", sentence(20+r.IntN(30))),
			map[string]any{"type": "reasoning", "summary": []any{map[string]any{"type": "summary_text", "text": "**" + sentence(6) + "**\n\n" + sentence(30)}},
				"content": nil, "encrypted_content": "gAAAAB" + strings.Repeat("Q29kZXhCZW5jaA", 30+r.IntN(20))},
			c, out,
			text("assistant", "output_text", sentence(30+r.IntN(50))),
		)
	}
	c, out := call("call_bench_9")
	input = append(input, c, out, text("user", "input_text", sentence(25)))
	if len(input) != CodexRequestItems {
		return nil, fmt.Errorf("benchmark: codex request: %d items, want %d", len(input), CodexRequestItems)
	}
	tools := codexSessionTools()
	if len(tools) != CodexRequestTools {
		return nil, fmt.Errorf("benchmark: codex request: %d tools, want %d", len(tools), CodexRequestTools)
	}
	req := map[string]any{
		"model":               model,
		"instructions":        sentence(1400),
		"input":               input,
		"tools":               tools,
		"tool_choice":         "auto",
		"parallel_tool_calls": false,
		"reasoning":           map[string]any{"effort": "medium", "summary": "auto"},
		"store":               false,
		"stream":              stream,
		"include":             []string{"reasoning.encrypted_content"},
		"prompt_cache_key":    "bench-codex-session",
	}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("benchmark: codex request: %w", err)
	}
	return b, nil
}

// codexSessionTools are CodexRequest's ten tools: codexTools' four and
// six more of the kinds Codex sends (descriptions ours).
func codexSessionTools() []any {
	obj := func(required []string, props map[string]any) map[string]any {
		return map[string]any{"type": "object", "additionalProperties": false, "required": required, "properties": props}
	}
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	fn := func(name, desc string, params map[string]any) map[string]any {
		return map[string]any{"type": "function", "name": name, "description": desc, "strict": false, "parameters": params}
	}
	return append(codexTools(),
		fn("write_stdin", "Send characters to a running command's standard input and read what it printed since.",
			obj([]string{"session_id"}, map[string]any{"session_id": map[string]any{"type": "number", "description": "The running command's session."},
				"chars": str("What to write (may be empty to only poll)."), "yield_time_ms": map[string]any{"type": "number", "description": "How long to wait for output."}})),
		fn("list_mcp_resources", "List the resources the connected MCP servers offer.",
			obj(nil, map[string]any{"server": str("Only this server's resources."), "cursor": str("Where a previous page ended.")})),
		fn("list_mcp_resource_templates", "List the resource templates the connected MCP servers offer.",
			obj(nil, map[string]any{"server": str("Only this server's templates."), "cursor": str("Where a previous page ended.")})),
		fn("read_mcp_resource", "Read one resource of an MCP server.",
			obj([]string{"server", "uri"}, map[string]any{"server": str("The server's name."), "uri": str("The resource's URI.")})),
		map[string]any{"type": "web_search"},
		fn("mcp__docs__search", "Search the project documentation server for pages matching a query.",
			obj([]string{"query"}, map[string]any{"query": str("Words to look for."), "limit": map[string]any{"type": "integer", "description": "At most this many pages."}})),
	)
}
