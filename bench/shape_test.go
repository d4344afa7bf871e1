package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/harnessflow/harnessflow/benchmark"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

// processCPU returns the user+system CPU time of the process so far (0
// where the platform does not say).
func processCPU() time.Duration {
	ns, _ := benchmark.ProcessCPU()
	return time.Duration(ns)
}

// shapeItems is the history length of the request-shaping benchmark.
const shapeItems = 2000

// codexLikeRequest builds a Codex-shaped follow-up request: a 20 KB base
// prompt, 10 tools (functions, a namespace, a custom tool, built-ins) and a
// history of n items cycling through the turns a coding session has — user
// prompts, reasoning, assistant text, function calls with shell output,
// namespaced calls, apply_patch custom calls.
func codexLikeRequest(n int) *protocol.ResponsesRequest {
	params := json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string","description":"Shell command to execute."},` +
		`"workdir":{"type":"string"},"yield_time_ms":{"type":"number"},"max_output_tokens":{"type":"number"}},` +
		`"required":["cmd"],"additionalProperties":false}`)
	tools := []protocol.ToolSpec{
		{Type: "function", Name: "exec_command", Description: "Runs a command in a PTY.", Parameters: params},
		{Type: "function", Name: "write_stdin", Description: "Writes to an exec session.", Parameters: params},
		{Type: "function", Name: "view_image", Description: "View a local image.", Parameters: params},
		{Type: "function", Name: "get_goal", Description: "Get the goal.", Parameters: params},
		{Type: "custom", Name: "apply_patch", Description: "Edit files with a patch.",
			Format: &protocol.ToolFormat{Type: "grammar", Syntax: "lark", Definition: "start: begin_patch hunk+ end_patch"}},
		{Type: "namespace", Name: "multi_agent_v1", Description: "Agents.", Tools: []protocol.ToolSpec{
			{Type: "function", Name: "spawn_agent", Description: "Start an agent.", Parameters: params},
			{Type: "function", Name: "wait", Description: "Wait for agents.", Parameters: params},
		}},
		{Type: "tool_search", Execution: "client", Description: "Search tools.", Parameters: params},
		{Type: "web_search"},
	}
	base := strings.Repeat("You are a coding agent. Read code before changing it; keep changes small. ", 280)
	output := strings.Repeat("drwxr-xr-x  2 user user 4096 Sep  1 12:00 some-directory-name\n", 8)
	patch := "*** Begin Patch\n*** Update File: src/main.go\n@@ func main() {\n-\tfmt.Println(\"hi\")\n+\tfmt.Println(\"hello, world\")\n*** End Patch\n"
	enc := "gAAAAABo" + strings.Repeat("x", 200)

	items := make(protocol.Items, 0, n+2)
	items = append(items,
		&protocol.Message{Role: "developer", Content: []protocol.ContentItem{protocol.InputText(base)}},
		protocol.UserMessage("<environment_context>\n  <cwd>/tmp/work</cwd>\n  <shell>bash</shell>\n</environment_context>"))
	for i := 0; len(items) < n; i++ {
		id := fmt.Sprintf("call_%d", i)
		switch i % 6 {
		case 0:
			items = append(items, protocol.UserMessage(fmt.Sprintf("Step %d: please look at the failing test and fix it.", i)))
		case 1:
			items = append(items,
				&protocol.Reasoning{Summary: []protocol.SummaryText{{Type: "summary_text", Text: "Looking at files"}},
					Content: []protocol.ReasoningContent{{Type: "reasoning_text", Text: "I should list the directory first."}}, EncryptedContent: &enc},
				&protocol.FunctionCall{ID: "fc_" + id, Name: "exec_command", Arguments: `{"cmd":"ls -la src","yield_time_ms":1000}`, CallID: id},
				&protocol.FunctionCallOutput{CallID: id, Output: protocol.TextPayload(output)})
		case 2:
			items = append(items, protocol.AssistantMessage("The listing shows the source files; the test lives in src/main_test.go. "))
		case 3:
			items = append(items,
				&protocol.CustomToolCall{Status: "completed", CallID: id, Name: "apply_patch", Input: patch},
				&protocol.CustomToolCallOutput{CallID: id, Output: protocol.TextPayload("Success. Updated the following files:\nM src/main.go\n")})
		case 4:
			items = append(items,
				&protocol.FunctionCall{Name: "wait", Namespace: "multi_agent_v1", Arguments: `{"ids":["a1"]}`, CallID: id},
				&protocol.FunctionCallOutput{CallID: id, Output: protocol.FunctionCallOutputPayload{Items: []protocol.FunctionCallOutputContentItem{
					{Type: "input_text", Text: "agent a1 finished: all tests pass"}}}})
		case 5:
			items = append(items, protocol.AssistantMessage("Done: the test passes now, and `go vet` is clean."))
		}
	}
	return &protocol.ResponsesRequest{
		Model: "my-proxy-model", Input: items[:n], Tools: tools, ToolChoice: json.RawMessage(`"auto"`),
		ParallelToolCalls: new(true), Reasoning: &protocol.ReasoningConfig{Effort: "medium"}, Stream: true,
		Include: []string{"reasoning.encrypted_content"}, PromptCacheKey: "thread-1",
		Text: &protocol.TextConfig{Verbosity: "low"},
	}
}

// BenchmarkShape measures request shaping: a 2,000-item Codex-shaped
// history with tools → the chat body (the whole native chat graph, run once
// per request). Target: ≤ 2 ms per request.
//
//	go test ./bench -run '^$' -bench 'BenchmarkShape' -benchmem
//
// openai-go-encode is a peer for scale only: encoding an equivalent chat body
// already held in openai-go's ChatCompletionNewParams (no conversion at all).
func BenchmarkShape(b *testing.B) {
	req := codexLikeRequest(shapeItems)
	g, err := request.NewChatGraph(request.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	first, err := request.Shape(ctx, g, req)
	if err != nil {
		b.Fatal(err)
	}
	if !json.Valid(first.Body) || len(first.ToolKinds) != 9 {
		b.Fatalf("bad result: %d tool kinds, %d body bytes", len(first.ToolKinds), len(first.Body))
	}
	for _, mode := range []pipeline.Mode{pipeline.Fused, pipeline.Async} {
		name := fmt.Sprintf("native-%d-items", shapeItems)
		if mode == pipeline.Async {
			name += "-async"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(first.Body)))
			cpu := processCPU()
			for b.Loop() {
				out, err := request.Shape(ctx, g, req, pipeline.WithMode(mode))
				if err != nil {
					b.Fatal(err)
				}
				if len(out.Body) != len(first.Body) {
					b.Fatalf("body of %d bytes, want %d", len(out.Body), len(first.Body))
				}
			}
			// CPU time of the whole process per request, the garbage
			// collector's background work included: a cross-check of the
			// wall time when other processes compete for the cores.
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
	b.Run(fmt.Sprintf("openai-go-encode-%d-items", shapeItems), func(b *testing.B) {
		var params openai.ChatCompletionNewParams
		if err := json.Unmarshal(first.Body, &params); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.SetBytes(int64(len(first.Body)))
		for b.Loop() {
			if _, err := json.Marshal(params); err != nil {
				b.Fatal(err)
			}
		}
	})
}
