package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/scripted"
)

// messagesBody is the part of an upstream Messages body the checks read.
type messagesBody struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	System []struct {
		Type         string          `json:"type"`
		Text         string          `json:"text"`
		CacheControl json.RawMessage `json:"cache_control"`
	} `json:"system"`
	Tools []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	ToolChoice   json.RawMessage `json:"tool_choice"`
	MaxTokens    int             `json:"max_tokens"`
	Thinking     json.RawMessage `json:"thinking"`
	OutputConfig json.RawMessage `json:"output_config"`
	Metadata     *struct {
		UserID string `json:"user_id"`
	} `json:"metadata"`
	Stream bool `json:"stream"`
}

func decodeMessages(body []byte) (messagesBody, error) {
	var b messagesBody
	err := json.Unmarshal(body, &b)
	return b, err
}

func (b messagesBody) toolNames() []string {
	var names []string
	for _, t := range b.Tools {
		names = append(names, t.Name)
	}
	return names
}

// lastUserHas reports whether the last message is a user message whose
// content holds s (the tool result of the bridged call).
func (b messagesBody) lastUserHas(s string) bool {
	if len(b.Messages) == 0 {
		return false
	}
	m := b.Messages[len(b.Messages)-1]
	return m.Role == "user" && strings.Contains(string(m.Content), s)
}

// checkClaudeCodeBodies: a title request first (the title model, no
// tools), then Claude Code's Messages requests: three system blocks led by
// the billing block, the Full tool set with Bash, metadata.user_id, Claude
// Code 2.1.332's message layout (checkLayout), and in the second request
// the Bash call shown as Bash with its result.
func checkClaudeCodeBodies(bodies [][]byte) error {
	return checkClaude(bodies, "claude-code", []string{"Agent", "Bash", "Edit", "ListAgents", "Read", "ReportFindings",
		"ScheduleWakeup", "Skill", "ToolSearch", "Workflow", "DeferredToolPlaceholder", "Write"})
}

// checkClaudeCodeBareBodies: as checkClaudeCodeBodies, with Bare's Bash,
// Edit and Read (and ToolSearch for Codex's tool_search) only and its
// output_config effort.
func checkClaudeCodeBareBodies(bodies [][]byte) error {
	return checkClaude(bodies, "claude-code-bare", []string{"Bash", "Edit", "Read"})
}

func checkClaude(bodies [][]byte, name string, tools []string) error {
	if len(bodies) != 3 {
		return fmt.Errorf("%d upstream requests, want a title request and two main requests", len(bodies))
	}
	title, err := decodeMessages(bodies[0])
	if err != nil {
		return err
	}
	if title.Model != "claude-haiku-4-5-20251001" || len(title.Tools) != 0 || len(title.Messages) != 1 ||
		!strings.Contains(string(title.Messages[0].Content), "<session>") {
		return fmt.Errorf("the first request is not %s's title request: model %q, %d tools", name, title.Model, len(title.Tools))
	}
	for i, raw := range bodies[1:] {
		b, err := decodeMessages(raw)
		if err != nil {
			return err
		}
		if len(b.System) != 3 || !strings.HasPrefix(b.System[0].Text, "x-anthropic-billing-header: cc_version=") ||
			b.System[0].CacheControl != nil || b.System[1].CacheControl == nil {
			return fmt.Errorf("request %d: not claude-code's three system blocks: %+v", i+1, b.System)
		}
		if got := b.toolNames(); !isSubset(tools, got) || slices.Contains(got, "exec_command") {
			return fmt.Errorf("request %d: tools %v, want %v and not the client's exec_command", i+1, got, tools)
		}
		if name == "claude-code" && !slices.Equal(b.toolNames()[:min(len(tools), len(b.Tools))], tools) {
			return fmt.Errorf("request %d: tools %v: not Claude Code 2.1.332's twelve first, in its order", i+1, b.toolNames())
		}
		if name == "claude-code-bare" && (!isSubset(b.toolNames(), append(tools, "ToolSearch")) || string(b.OutputConfig) != `{"effort":"high"}`) {
			return fmt.Errorf("request %d: tools %v, output_config %s; want Bare's tools (and ToolSearch) and effort high", i+1, b.toolNames(), b.OutputConfig)
		}
		if b.Metadata == nil || !strings.Contains(b.Metadata.UserID, `"session_id"`) || !b.Stream || b.ToolChoice != nil {
			return fmt.Errorf("request %d: metadata %+v, stream %v, tool_choice %s", i+1, b.Metadata, b.Stream, b.ToolChoice)
		}
		if err := b.checkLayout(name); err != nil {
			return fmt.Errorf("request %d: %w", i+1, err)
		}
	}
	second, _ := decodeMessages(bodies[2])
	if !second.lastUserHas(`"type":"tool_result"`) || !strings.Contains(string(bodies[2]), `"name":"Bash"`) ||
		!strings.Contains(string(bodies[2]), "route ok") || strings.Contains(string(bodies[2]), "Chunk ID:") {
		return errors.New("the second request does not show the Bash call and its unwrapped result")
	}
	return nil
}

// checkLayout checks the first messages of a claude-code request: in Full,
// Claude Code 2.1.332's layout — the first user message led by the
// attribution reminder, then a role "system" message with the environment
// (the system prompt then has none); in Bare, the date reminder leads the
// first user message.
func (b messagesBody) checkLayout(name string) error {
	if len(b.Messages) == 0 || b.Messages[0].Role != "user" {
		return fmt.Errorf("%d messages, the first %+v; want the first user message first", len(b.Messages), b.Messages)
	}
	var parts []struct{ Text string }
	_ = json.Unmarshal(b.Messages[0].Content, &parts) // a string content has no parts: caught below
	if len(parts) < 2 || !strings.HasPrefix(parts[0].Text, "<system-reminder>\n") {
		return fmt.Errorf("the first user message is not led by a reminder: %s", b.Messages[0].Content)
	}
	if name == "claude-code-bare" {
		if !strings.Contains(parts[0].Text, "# currentDate") {
			return fmt.Errorf("Bare's first reminder is not the date reminder: %q", parts[0].Text)
		}
		return nil
	}
	if strings.Contains(parts[0].Text, "# currentDate") || len(b.Messages) < 2 || b.Messages[1].Role != "system" ||
		!strings.Contains(string(b.Messages[1].Content), "Working directory: ") ||
		strings.Contains(b.System[2].Text, "Working directory: ") {
		return fmt.Errorf("not Claude Code 2.1.332's layout (the attribution reminder, then the environment as a system message): first reminder %q, messages %.300v",
			parts[0].Text, b.Messages)
	}
	return nil
}

// checkZCodeBody: ZCode's three cached system blocks, its fourteen tools,
// tool_choice auto and max_tokens 64000.
func checkZCodeBody(body []byte) error {
	b, err := decodeMessages(body)
	if err != nil {
		return err
	}
	if len(b.System) != 3 || !strings.Contains(b.System[0].Text, "ZCode") || b.System[2].CacheControl == nil {
		return fmt.Errorf("not zcode's system blocks: %+v", b.System)
	}
	if len(b.Tools) != 14 || !slices.Contains(b.toolNames(), "Bash") || string(b.ToolChoice) != `{"type":"auto"}` || b.MaxTokens != 64000 {
		return fmt.Errorf("tools %v, tool_choice %s, max_tokens %d", b.toolNames(), b.ToolChoice, b.MaxTokens)
	}
	return nil
}

func isSubset(want, got []string) bool {
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}

// TestCodexClaudeCodeWrite: claude-code's Write reaches Codex as an
// apply_patch call (an Add File patch), Codex applies it, and the next
// request shows the model its Write call again, with the patch tool's
// unwrapped output as the result.
func TestCodexClaudeCodeWrite(t *testing.T) {
	bin := os.Getenv(codexEnv)
	if bin == "" {
		t.Skipf("set %s to a Codex CLI binary to run (scripts/e2e-codex.sh does)", codexEnv)
	}
	const content = "written by claude-code through apply_patch\n"
	yes, no := true, false
	args, _ := json.Marshal(map[string]string{"file_path": "proof.txt", "content": content})
	script := &scripted.Script{Turns: []scripted.Turn{
		{When: &scripted.Match{Tools: &yes, ToolResult: &no}, Text: "Writing it.",
			ToolCalls: []scripted.ToolCall{{Name: "Write", Arguments: args}}},
		{When: &scripted.Match{ToolResult: &yes}, Text: "The patch tool said: {{tool_output}}"},
	}}
	p := startProxy(t, script, withWire(harness.WireMessages))
	run := runCodex(t, bin, p.url+"/h/claude-code/v1", true)
	if run.exitCode != 0 {
		t.Fatalf("codex exited with %d, want 0\n%s", run.exitCode, run)
	}
	ev := parseEvents(t, run)
	if data, err := os.ReadFile(filepath.Join(run.workDir, "proof.txt")); err != nil || string(data) != content {
		t.Errorf("work dir proof.txt = %q, %v; want %q", data, err, content)
	}
	final := ev.finalMessage(t)
	if !strings.Contains(final, "The patch tool said: ") || !strings.Contains(final, "proof.txt") {
		t.Errorf("final message does not quote the patch tool's output:\n%s", final)
	}
	p.stop(t)
	p.checkUpstream(t, "/h/claude-code/v1/responses", "claude-code", 2, 3)
	bodies := p.upstreamBodies()
	if len(bodies) == 3 {
		last := string(bodies[2])
		if !strings.Contains(last, `"name":"Write"`) || strings.Contains(last, `"name":"apply_patch"`) || strings.Contains(last, "*** Begin Patch") {
			t.Errorf("the second request does not show the Write call as the model made it:\n%s", last)
		}
	}
	t.Logf("codex final message: %s", final)
}
