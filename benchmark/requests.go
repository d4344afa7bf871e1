package benchmark

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// DefaultRequests is the number of requests GenerateRequests makes by default.
const DefaultRequests = 48

// GenerateRequests returns n deterministic synthetic client requests
// (Responses JSON, shaped like Codex's): instructions, a developer
// message, the environment block, and a history of 1 to 12 turns — a
// user message, a reasoning item, a shell call with its framed output, an
// assistant answer — then a new user message, with Codex's function and
// custom tools. Request i has 1 + i%12 turns, so the corpus mixes short
// and long conversations.
func GenerateRequests(n int) (Corpus, error) {
	if n < 1 {
		return Corpus{}, fmt.Errorf("benchmark: generate requests: %d requests, want at least 1", n)
	}
	r := rand.New(rand.NewPCG(2026, 7))
	words := []string{"read", "the", "decoder", "file", "and", "fix", "stream", "test", "go", "module", "error",
		"café", "naïve", "中文", "\"quoted\"", "<tag>", "tab\t", "😀", "path/to/file.go", "return"}
	sentence := sentences(r, words)
	text := messageItem
	c := Corpus{Name: fmt.Sprintf("generated requests, %d", n)}
	instructions := sentence(400)
	for i := range n {
		input := []any{
			text("developer", "input_text", "<permissions instructions>\n"+sentence(40)+"\n</permissions instructions>"),
			text("user", "input_text", "<environment_context>\n  <cwd>/work/project</cwd>\n  <shell>bash</shell>\n  <current_date>2026-01-02</current_date>\n  <timezone>Etc/UTC</timezone>\n</environment_context>"),
		}
		for t := range 1 + i%12 {
			callID := fmt.Sprintf("call_%d_%d", i, t)
			cmd, _ := json.Marshal(map[string]any{"cmd": "grep -rn " + words[r.IntN(len(words))] + " .", "workdir": "/work/project"})
			input = append(input,
				text("user", "input_text", sentence(12+r.IntN(30))),
				map[string]any{"type": "reasoning", "summary": []any{map[string]any{"type": "summary_text", "text": sentence(20)}},
					"content": nil, "encrypted_content": "gAAAAB" + strings.Repeat("QkVOQ0g", 40+r.IntN(40))},
				map[string]any{"type": "function_call", "id": "fc_" + callID, "call_id": callID, "name": "exec_command", "arguments": string(cmd), "status": "completed"},
				map[string]any{"type": "function_call_output", "call_id": callID,
					"output": "Chunk ID: 1a2b3c\nWall time: 0.0100 seconds\nProcess exited with code 0\nOriginal token count: 40\nOutput:\n" + sentence(30+r.IntN(200)) + "\n"},
				text("assistant", "output_text", sentence(10+r.IntN(60))),
			)
		}
		input = append(input, text("user", "input_text", sentence(15)))
		req := map[string]any{
			"model":               "gpt-5.1-codex",
			"instructions":        instructions,
			"input":               input,
			"tools":               codexTools(),
			"tool_choice":         "auto",
			"parallel_tool_calls": false,
			"reasoning":           map[string]any{"effort": "medium", "summary": "auto"},
			"store":               false,
			"stream":              true,
			"include":             []string{"reasoning.encrypted_content"},
			"prompt_cache_key":    fmt.Sprintf("conv-%04d", i),
		}
		b, err := json.Marshal(req)
		if err != nil {
			return Corpus{}, fmt.Errorf("benchmark: generate requests: %w", err)
		}
		c.Inputs = append(c.Inputs, b)
	}
	c.Events = n
	return c, nil
}

// sentences returns a maker of sentences of k words drawn from words
// with r.
func sentences(r *rand.Rand, words []string) func(k int) string {
	return func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = words[r.IntN(len(words))]
		}
		return strings.Join(ws, " ")
	}
}

// messageItem is a Responses message item of one content part.
func messageItem(role, kind, s string) map[string]any {
	return map[string]any{"type": "message", "role": role, "content": []any{map[string]any{"type": kind, "text": s}}}
}

// codexTools returns the tools of a generated request, in the shape Codex
// sends them (our own descriptions).
func codexTools() []any {
	return []any{
		map[string]any{"type": "function", "name": "exec_command", "description": "Run a shell command and return its output.", "strict": false,
			"parameters": map[string]any{"type": "object", "additionalProperties": false, "required": []string{"cmd"}, "properties": map[string]any{
				"cmd":           map[string]any{"type": "string", "description": "The command line."},
				"workdir":       map[string]any{"type": "string", "description": "Directory to run it in."},
				"yield_time_ms": map[string]any{"type": "number", "description": "How long to wait for output, in milliseconds."},
			}}},
		map[string]any{"type": "custom", "name": "apply_patch", "description": "Edit files with a patch.",
			"format": map[string]any{"type": "grammar", "syntax": "lark", "definition": "start: /(.|\\n)+/"}},
		map[string]any{"type": "function", "name": "update_plan", "description": "Record the plan.", "strict": false,
			"parameters": map[string]any{"type": "object", "additionalProperties": false, "required": []string{"plan"}, "properties": map[string]any{
				"explanation": map[string]any{"type": "string"},
				"plan": map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{
					"step": map[string]any{"type": "string"}, "status": map[string]any{"type": "string"}}}},
			}}},
		map[string]any{"type": "function", "name": "view_image", "description": "Attach a local image to the conversation.", "strict": false,
			"parameters": map[string]any{"type": "object", "additionalProperties": false, "required": []string{"path"}, "properties": map[string]any{
				"path": map[string]any{"type": "string", "description": "Path of the image file."},
			}}},
	}
}
