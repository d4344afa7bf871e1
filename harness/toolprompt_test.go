package harness_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sinks"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/toolprompt"
)

// toolPromptRequest is a Codex request with a tool and a history of one
// call and its output.
const toolPromptRequest = `{"model":"%s","instructions":"You are a coding agent.","input":[
 {"type":"message","role":"user","content":[{"type":"input_text","text":"List the files."}]},
 {"type":"function_call","call_id":"call_1","name":"exec_command","arguments":"{\"cmd\":\"ls\"}"},
 {"type":"function_call_output","call_id":"call_1","output":"main.go"},
 {"type":"message","role":"user","content":[{"type":"input_text","text":"And now?"}]}],
 "tools":[{"type":"function","name":"exec_command","description":"Run a shell command.","parameters":{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}}],
 "tool_choice":"auto","parallel_tool_calls":true,"stream":true}`

func toolPromptReq(t *testing.T, model string) *protocol.ResponsesRequest {
	t.Helper()
	req := new(protocol.ResponsesRequest)
	if err := json.Unmarshal([]byte(strings.Replace(toolPromptRequest, "%s", model, 1)), req); err != nil {
		t.Fatal(err)
	}
	return req
}

// toolPromptBody checks a body shaped with tools in the prompt: no tools
// field, the tool list in a system message, the call and its output in the
// history as text.
func toolPromptBody(t *testing.T, name string, body []byte, shell, callMarker string) {
	t.Helper()
	var b struct {
		Messages []struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls json.RawMessage `json:"tool_calls"`
		} `json:"messages"`
		Tools             json.RawMessage `json:"tools"`
		ToolChoice        json.RawMessage `json:"tool_choice"`
		ParallelToolCalls json.RawMessage `json:"parallel_tool_calls"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	if b.Tools != nil || b.ToolChoice != nil || b.ParallelToolCalls != nil {
		t.Errorf("%s: tools, tool_choice or parallel_tool_calls sent: %s", name, body)
	}
	system, call, response := false, false, false
	for _, m := range b.Messages {
		c := string(m.Content)
		switch {
		case m.Role == "tool" || m.ToolCalls != nil:
			t.Errorf("%s: a tool message or tool_calls: %s", name, body)
		case m.Role == "system" && strings.Contains(c, "<tools>") && strings.Contains(c, shell):
			system = true
		case m.Role == "assistant" && strings.Contains(c, callMarker) && strings.Contains(c, "ls"):
			call = true
		case m.Role == "user" && strings.Contains(c, `<tool_response>\nmain.go\n</tool_response>`):
			response = true
		}
	}
	if !system || !call || !response {
		t.Errorf("%s: tool list in the system prompt %v, call as text %v, output as text %v:\n%s", name, system, call, response, body)
	}
}

func TestToolsInPrompt(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{harness.NativeName, harness.NameMinimal, harness.NameKimiCLI, harness.NameQwenCode} {
		for _, tt := range []struct{ format, model, want, marker string }{
			{"", "Qwen/Qwen3-Coder-30B-A3B-Instruct", toolprompt.FormatQwen3Coder, "<function=exec_command>"},
			{"auto", "llama-3.3-70b", toolprompt.FormatHermes, `\"name\": \"exec_command\"`},
			{"qwen3_coder", "llama-3.3-70b", toolprompt.FormatQwen3Coder, "<function=exec_command>"},
		} {
			cfg := harness.Config{ToolsInPrompt: true, ToolFormat: tt.format}
			turn, err := harness.Plan(ctx, cfg, name, toolPromptReq(t, tt.model), nil)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !slices.Contains(turn.RequestGraph.Names(), toolprompt.NodeName) {
				t.Errorf("%s: graph %v", name, turn.RequestGraph.Names())
			}
			if turn.Env.Model.ToolFormat != tt.want || !turn.Env.Model.ToolsInPrompt {
				t.Errorf("%s %s: the turn records format %q, want %q", name, tt.model, turn.Env.Model.ToolFormat, tt.want)
			}
			// qwen-code shows the model Qwen Code's own shell tool, bridged
			// onto the client's exec_command.
			shell, marker := "exec_command", tt.marker
			if name == harness.NameQwenCode {
				shell, marker = "run_shell_command", strings.ReplaceAll(marker, "exec_command", "run_shell_command")
			}
			toolPromptBody(t, name+"/"+tt.want, turn.Shaped.Body, shell, marker)
		}
	}
}

func TestToolsInPromptFromCaps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "caps.json")
	if err := os.WriteFile(path, []byte(`[{"match":"plain-server","tools_in_prompt":true,"tool_format":"hermes"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	models, err := harness.LoadModelTable(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := harness.Config{Models: models, ToolFormat: "qwen3_coder"} // the model's format wins
	turn, err := harness.Plan(context.Background(), cfg, harness.NativeName, toolPromptReq(t, "plain-server-7b"), nil)
	if err != nil {
		t.Fatal(err)
	}
	toolPromptBody(t, "caps", turn.Shaped.Body, "exec_command", `\"name\": \"exec_command\"`)
	// Another model of the same table is not touched.
	turn, err = harness.Plan(context.Background(), cfg, harness.NativeName, toolPromptReq(t, "other"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(turn.Shaped.Body), `"tools":[`) || slices.Contains(turn.RequestGraph.Names(), toolprompt.NodeName) {
		t.Errorf("tools in the prompt for a model without the cap: %s", turn.Shaped.Body)
	}
}

func TestToolsInPromptNotApplied(t *testing.T) {
	ctx := context.Background()
	// A harness with tools of its own, and the responses wire: tools go as usual.
	for _, c := range []struct {
		wire harness.Wire
		name string
	}{{harness.WireChat, harness.NameOpenCode}, {harness.WireResponses, harness.NativeName}} {
		turn, err := harness.Plan(ctx, harness.Config{Wire: c.wire, ToolsInPrompt: true}, c.name, toolPromptReq(t, "m"), nil)
		if err != nil {
			t.Fatalf("%s/%s: %v", c.wire, c.name, err)
		}
		if slices.Contains(turn.RequestGraph.Names(), toolprompt.NodeName) || !strings.Contains(string(turn.Shaped.Body), `"tools":[`) {
			t.Errorf("%s/%s: tools in the prompt applied: %v", c.wire, c.name, turn.RequestGraph.Names())
		}
	}
	if harness.ToolsInPromptApplies(harness.WireMessages, harness.NativeName) || !harness.ToolsInPromptApplies(harness.WireChat, harness.NameQwenCode) {
		t.Error("ToolsInPromptApplies")
	}
	_, err := harness.Plan(ctx, harness.Config{ToolsInPrompt: true, ToolFormat: "kimi_k2"}, harness.NativeName, toolPromptReq(t, "m"), nil)
	if err == nil || !strings.Contains(err.Error(), `tools in the prompt: toolprompt: tool format "kimi_k2" cannot carry tools in the prompt`) {
		t.Errorf("unsupported format: %v", err)
	}
}

// chatTextStream is a chat stream whose answer carries content in chunks
// and no tool_calls.
func chatTextStream(chunks ...string) []byte {
	var b strings.Builder
	for i, c := range chunks {
		delta := map[string]string{"content": c}
		if i == 0 {
			delta["role"] = "assistant"
		}
		data, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion.chunk", "model": "m",
			"choices": []any{map[string]any{"index": 0, "delta": delta}}})
		b.WriteString("data: " + string(data) + "\n\n")
	}
	b.WriteString(`data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}

// TestToolsInPromptRoundTrip: a turn planned with tools in the prompt reads
// the model's calls back from the text in the same format — a function
// call of exec_command and the custom apply_patch call.
func TestToolsInPromptRoundTrip(t *testing.T) {
	const reqJSON = `{"model":"%s","stream":true,"input":"add a file","tools":[
	 {"type":"function","name":"exec_command","parameters":{"type":"object","properties":{"cmd":{"type":"string"},"yield_time_ms":{"type":"number"}},"required":["cmd"]}},
	 {"type":"custom","name":"apply_patch","description":"Edit files.","format":{"type":"grammar","syntax":"lark","definition":"start: /.+/"}}]}`
	patch := "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch"
	for _, tt := range []struct {
		model  string
		answer []string
	}{
		{"Qwen/Qwen3-Coder-30B-A3B-Instruct", []string{"I will look.\n<tool_c", "all>\n<function=exec_command>\n<parameter=cmd>\nls\n</parameter>\n<parameter=yield_time_ms>\n500\n</param",
			"eter>\n</function>\n</tool_call>\n<tool_call>\n<function=apply_patch>\n<parameter=input>\n" + patch + "\n</parameter>\n</function>\n</tool_call>"}},
		{"llama-3.3-70b", []string{"I will look.\n<tool_call>\n{\"name\": \"exec_command\", \"argu", "ments\": {\"cmd\": \"ls\", \"yield_time_ms\": 500}}\n</tool_call>\n<tool_call>\n{\"name\": \"apply_patch\", \"arguments\": {\"input\": " +
			jsonString(patch) + "}}\n</tool_call>"}},
	} {
		req, err := protocol.DecodeRequest([]byte(strings.Replace(reqJSON, "%s", tt.model, 1)))
		if err != nil {
			t.Fatal(err)
		}
		turn, err := harness.Plan(context.Background(), harness.Config{ToolsInPrompt: true}, harness.NativeName, req, nil)
		if err != nil {
			t.Fatal(err)
		}
		g, err := turn.ResponseGraph(harness.ResponseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := sinks.Collect[protocol.ResponseEvent]()
		if err := pipeline.Run(context.Background(), g, sources.Slice([][]byte{chatTextStream(tt.answer...)}), c); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ev := range c.Items() {
			if ev.Type != protocol.EventOutputItemDone {
				continue
			}
			switch it := ev.Item.(type) {
			case *protocol.FunctionCall:
				var args map[string]any
				if err := json.Unmarshal([]byte(it.Arguments), &args); err != nil {
					t.Errorf("%s: arguments %s: %v", tt.model, it.Arguments, err)
				}
				got = append(got, "function "+it.Name+" "+compactJSON(args))
			case *protocol.CustomToolCall:
				got = append(got, "custom "+it.Name+" "+jsonString(it.Input))
			case *protocol.Message:
				got = append(got, "message")
			}
		}
		want := []string{"message", `function exec_command {"cmd":"ls","yield_time_ms":500}`, "custom apply_patch " + jsonString(patch)}
		if !slices.Equal(got, want) {
			t.Errorf("%s (%s): items\n%q\nwant\n%q", tt.model, turn.Env.Model.ToolFormat, got, want)
		}
	}
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

func compactJSON(v any) string { b, _ := json.Marshal(v); return string(b) }
