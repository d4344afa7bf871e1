package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// chatBody is the part of an upstream chat body the harness checks read.
type chatBody struct {
	Messages []struct {
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		ToolCalls []struct {
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	MaxTokens      int             `json:"max_tokens"`
	PromptCacheKey string          `json:"prompt_cache_key"`
	Temperature    json.RawMessage `json:"temperature"`
}

func decodeChat(body []byte) (chatBody, error) {
	var b chatBody
	err := json.Unmarshal(body, &b)
	return b, err
}

func (b chatBody) toolNames() []string {
	var names []string
	for _, t := range b.Tools {
		names = append(names, t.Function.Name)
	}
	return names
}

// checkKimiCLIBody: kimi-cli's system prompt, max_tokens, the conversation
// key as prompt_cache_key, and Codex's exec_command among the tools.
func checkKimiCLIBody(body []byte) error {
	b, err := decodeChat(body)
	if err != nil {
		return err
	}
	if len(b.Messages) == 0 || b.Messages[0].Role != "system" || !bytes.Contains(b.Messages[0].Content, []byte("You are Kimi CLI")) {
		return errors.New("the first message is not kimi-cli's system prompt")
	}
	if b.MaxTokens != 32000 || b.PromptCacheKey == "" {
		return fmt.Errorf("max_tokens %d, prompt_cache_key %q; want 32000 and the conversation key", b.MaxTokens, b.PromptCacheKey)
	}
	if !slices.Contains(b.toolNames(), "exec_command") {
		return fmt.Errorf("tools %v lack the client's exec_command", b.toolNames())
	}
	return nil
}

// checkQwenCodeBody: qwen-code's system prompt, then the first user
// message led by four reminders — skills, setup, deferred tools, date —
// before the task, max_tokens 32000 (Qwen Code 0.24.4 as captured).
func checkQwenCodeBody(body []byte) error {
	b, err := decodeChat(body)
	if err != nil {
		return err
	}
	if len(b.Messages) < 2 || b.Messages[0].Role != "system" || !bytes.Contains(b.Messages[0].Content, []byte("You are Qwen Code")) {
		return errors.New("the first message is not qwen-code's system prompt")
	}
	var parts []struct{ Type, Text string }
	if err := json.Unmarshal(b.Messages[1].Content, &parts); err != nil || len(parts) < 5 {
		return fmt.Errorf("the first user message is not four reminders and the task: %s", b.Messages[1].Content)
	}
	for i, p := range parts[:4] {
		if !strings.HasPrefix(p.Text, "<system-reminder>") {
			return fmt.Errorf("part %d of the first user message is not a reminder: %q", i, p.Text)
		}
	}
	if !strings.Contains(parts[0].Text, "skill") || !strings.Contains(parts[1].Text, "Qwen Code") ||
		!strings.Contains(parts[2].Text, "tool_search") {
		return fmt.Errorf("the reminders are not skills, setup, deferred tools: %q, %q, %q", parts[0].Text, parts[1].Text, parts[2].Text)
	}
	if b.Messages[1].Role != "user" || b.MaxTokens != 32000 {
		return fmt.Errorf("second message %s, max_tokens %d; want the first user message and 32000", b.Messages[1].Role, b.MaxTokens)
	}
	return nil
}

// checkOpenCodeBodies: the title request first (no tools), then the main
// request with opencode's own tools and no temperature (opencode 1.18.33), then the follow-up in which the
// model's bash call is shown again as bash with its output unwrapped.
func checkOpenCodeBodies(bodies [][]byte) error {
	if len(bodies) != 3 {
		return fmt.Errorf("%d upstream requests, want the title request and two turns", len(bodies))
	}
	title, err := decodeChat(bodies[0])
	if err != nil {
		return err
	}
	if len(title.Tools) != 0 || len(title.Messages) != 3 || title.Messages[0].Role != "system" {
		return fmt.Errorf("the first request is not the title request:\n%s", bodies[0])
	}
	var titleSystem string
	if err := json.Unmarshal(title.Messages[0].Content, &titleSystem); err != nil || !strings.HasSuffix(titleSystem, "\n") {
		return fmt.Errorf("the title prompt does not keep its final newline as opencode 1.18 sends it: %.40q… (%v)", titleSystem, err)
	}
	main, err := decodeChat(bodies[1])
	if err != nil {
		return err
	}
	names := main.toolNames()
	if !slices.Contains(names, "bash") || !slices.Contains(names, "read") || slices.Contains(names, "exec_command") || len(main.Temperature) != 0 {
		return fmt.Errorf("the main request is not opencode's: tools %v, temperature %s", names, main.Temperature)
	}
	next, err := decodeChat(bodies[2])
	if err != nil {
		return err
	}
	var call, output bool
	for _, m := range next.Messages {
		for _, c := range m.ToolCalls {
			call = call || c.Function.Name == "bash"
		}
		if m.Role == "tool" {
			output = !bytes.Contains(m.Content, []byte("Chunk ID:")) && bytes.Contains(m.Content, []byte("route ok"))
		}
	}
	if !call || !output {
		return fmt.Errorf("the follow-up does not show the bash call (%v) and its unwrapped output (%v):\n%s", call, output, bodies[2])
	}
	return nil
}

// checkKimiCodeBodies: Kimi Code 2.1.0's request — its system prompt, the
// date and auto-permission reminders after the prompt, its own tools (no
// exec_command), session_ cache key — then, in the follow-up, the Bash
// call shown again with Kimi Code's result text (wall time, no Codex
// framing).
func checkKimiCodeBodies(bodies [][]byte) error {
	if len(bodies) != 2 {
		return fmt.Errorf("%d upstream requests, want two turns", len(bodies))
	}
	b, err := decodeChat(bodies[0])
	if err != nil {
		return err
	}
	if len(b.Messages) < 4 || b.Messages[0].Role != "system" || !bytes.Contains(b.Messages[0].Content, []byte("You are Kimi Code CLI")) {
		return errors.New("the first message is not kimi-code's system prompt")
	}
	if !bytes.Contains(b.Messages[2].Content, []byte("Today's date is")) || !bytes.Contains(b.Messages[3].Content, []byte("Auto permission mode")) {
		return fmt.Errorf("the prompt is not followed by the date and auto-permission reminders: %s / %s", b.Messages[2].Content, b.Messages[3].Content)
	}
	names := b.toolNames()
	if !slices.Contains(names, "Bash") || !slices.Contains(names, "WaitFor") || slices.Contains(names, "exec_command") || !strings.HasPrefix(b.PromptCacheKey, "session_") {
		return fmt.Errorf("tools %v, prompt_cache_key %q: not Kimi Code's", names, b.PromptCacheKey)
	}
	next, err := decodeChat(bodies[1])
	if err != nil {
		return err
	}
	var call, output bool
	for _, m := range next.Messages {
		for _, c := range m.ToolCalls {
			call = call || c.Function.Name == "Bash"
		}
		if m.Role == "tool" {
			output = bytes.HasPrefix(m.Content, []byte(`"Wall time: `)) && !bytes.Contains(m.Content, []byte("Chunk ID:")) && bytes.Contains(m.Content, []byte("route ok"))
		}
	}
	if !call || !output {
		return fmt.Errorf("the follow-up does not show the Bash call (%v) and Kimi Code's result text (%v):\n%s", call, output, bodies[1])
	}
	return nil
}

// checkDeepSeekTUIBodies: the fork's deepseek-tui request — its system
// prompt sections, the 84 tools with exec_shell, <turn_meta> on the
// prompt, max_tokens 64000 — then the exec_shell call shown again with its
// output unwrapped and "(reasoning omitted)" on the call.
func checkDeepSeekTUIBodies(bodies [][]byte) error {
	if len(bodies) != 2 {
		return fmt.Errorf("%d upstream requests, want two turns", len(bodies))
	}
	b, err := decodeChat(bodies[0])
	if err != nil {
		return err
	}
	if len(b.Messages) < 2 || b.Messages[0].Role != "system" || !bytes.Contains(b.Messages[0].Content, []byte("## Project Context Pack")) ||
		!bytes.Contains(b.Messages[0].Content, []byte("deepseek_version: 0.8.44")) {
		return errors.New("the first message is not deepseek-tui's system prompt")
	}
	if !bytes.HasPrefix(b.Messages[1].Content, []byte(`"\u003cturn_meta\u003e`)) && !bytes.HasPrefix(b.Messages[1].Content, []byte(`"<turn_meta>`)) {
		return fmt.Errorf("the prompt does not start with its turn metadata: %s", b.Messages[1].Content)
	}
	if names := b.toolNames(); len(names) != 84 || !slices.Contains(names, "exec_shell") || b.MaxTokens != 64000 {
		return fmt.Errorf("tools %d (exec_shell %v), max_tokens %d: not deepseek-tui's", len(names), slices.Contains(names, "exec_shell"), b.MaxTokens)
	}
	next, err := decodeChat(bodies[1])
	if err != nil {
		return err
	}
	var call, output bool
	for _, m := range next.Messages {
		for _, c := range m.ToolCalls {
			call = call || c.Function.Name == "exec_shell"
		}
		if m.Role == "tool" {
			output = !bytes.Contains(m.Content, []byte("Chunk ID:")) && bytes.Contains(m.Content, []byte("route ok"))
		}
	}
	if !call || !output {
		return fmt.Errorf("the follow-up does not show the exec_shell call (%v) and its unwrapped output (%v):\n%s", call, output, bodies[1])
	}
	return nil
}
