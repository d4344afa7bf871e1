package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/scripted"
	"github.com/harnessflow/harnessflow/server"
)

// textUpstream is a chat server whose model writes its tool calls as text
// in the content field (no tool_calls), as a server with no tool parser
// for the model, or the wrong one, sends them: first a call written by
// render, then, once the request carries the call's output, a final text
// quoting it. With rejectTools it answers a request that has a "tools"
// field with HTTP 400, as a server without tool support does.
type textUpstream struct {
	render      func() string // the markup of the one call
	rejectTools bool
}

// ServeHTTP answers one chat completions request.
func (u textUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Tools    json.RawMessage `json:"tools"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not a chat completions request"}}`, http.StatusBadRequest)
		return
	}
	if u.rejectTools && len(req.Tools) > 0 && string(req.Tools) != "null" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"this server does not support tools","type":"invalid_request_error"}}`)
		return
	}
	var output string
	for _, m := range req.Messages {
		if m.Role == "tool" {
			output = string(m.Content)
		}
		if m.Role == "user" && strings.Contains(string(m.Content), "<tool_response>") { // tools in the prompt
			output = string(m.Content)
		}
	}
	var pieces []string
	if output == "" {
		// The markup cut at awkward places: inside markers and values.
		text := "I will do that.\n" + u.render()
		for len(text) > 0 {
			n := min(7, len(text))
			pieces, text = append(pieces, text[:n]), text[n:]
		}
	} else {
		pieces = []string{"The tool said: ", strings.Trim(output, `"`)}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, p := range pieces {
		c, _ := json.Marshal(p)
		fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-text-%d\",\"object\":\"chat.completion.chunk\",\"model\":\"qwen3-coder\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%s}}]}\n\n", len(req.Messages), c)
	}
	fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-text\",\"object\":\"chat.completion.chunk\",\"model\":\"qwen3-coder\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
}

// The shell and patch calls as each format writes them.
const (
	textShellCommand = "printf 'text %s ok\\n' calls | tee proof.txt"
	textShellOutput  = "text calls ok"
	textPatch        = "*** Begin Patch\n*** Add File: patched.txt\n+patched by a text call\n*** End Patch"
)

func qwen3CoderShell() string {
	return "<tool_call>\n<function=exec_command>\n<parameter=cmd>\n" + textShellCommand + "\n</parameter>\n</function>\n</tool_call>"
}

func qwen3CoderPatch() string {
	return "<tool_call>\n<function=apply_patch>\n<parameter=input>\n" + textPatch + "\n</parameter>\n</function>\n</tool_call>"
}

func hermesPatch() string {
	args, _ := json.Marshal(map[string]string{"input": textPatch})
	return "<tool_call>\n{\"name\": \"apply_patch\", \"arguments\": " + string(args) + "}\n</tool_call>"
}

func hermesShell() string {
	args, _ := json.Marshal(map[string]string{"cmd": textShellCommand})
	return "<tool_call>\n{\"name\": \"exec_command\", \"arguments\": " + string(args) + "}\n</tool_call>"
}

// TestCodexTextToolCalls drives the real Codex through /v1 against chat
// servers that leave the model's tool calls in the text: Qwen3-Coder XML
// and Hermes JSON, for a shell command and for an apply_patch edit
// (a custom tool), and through tools in the prompt against a server that
// rejects a tools field.
func TestCodexTextToolCalls(t *testing.T) {
	bin := os.Getenv(codexEnv)
	if bin == "" {
		t.Skipf("set %s to a Codex CLI binary to run (scripts/e2e-codex.sh does)", codexEnv)
	}
	cases := []struct {
		name     string
		up       textUpstream
		cfg      func(*server.Config)
		patch    bool
		recovers string // the format the metrics must show
	}{
		{name: "qwen3_coder/shell", up: textUpstream{render: qwen3CoderShell}, recovers: "qwen3_coder"},
		{name: "qwen3_coder/apply_patch", up: textUpstream{render: qwen3CoderPatch}, patch: true, recovers: "qwen3_coder"},
		{name: "hermes/shell", up: textUpstream{render: hermesShell}, recovers: "hermes"},
		{name: "hermes/apply_patch", up: textUpstream{render: hermesPatch}, patch: true, recovers: "hermes"},
		{name: "tools_in_prompt/hermes", up: textUpstream{render: hermesShell, rejectTools: true}, recovers: "hermes",
			cfg: func(c *server.Config) { c.ToolsInPrompt, c.ToolFormat = true, "hermes" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := startUpstreamProxy(t, c.up, c.cfg)
			run := runCodex(t, bin, p.url+"/v1", true)
			if run.exitCode != 0 {
				t.Fatalf("codex exited with %d, want 0\n%s", run.exitCode, run)
			}
			ev := parseEvents(t, run)
			final := ev.finalMessage(t)
			if c.patch {
				data, err := os.ReadFile(filepath.Join(run.workDir, "patched.txt"))
				if err != nil || strings.TrimSpace(string(data)) != "patched by a text call" {
					t.Errorf("work dir patched.txt = %q, %v; want the patch applied\n%s", data, err, run)
				}
			} else {
				if cmd := ev.command(t, "proof.txt"); !strings.Contains(cmd.AggregatedOutput, textShellOutput) {
					t.Errorf("command output = %q, want %q", cmd.AggregatedOutput, textShellOutput)
				}
				if !strings.Contains(final, textShellOutput) {
					t.Errorf("final message does not quote the output %q:\n%s", textShellOutput, final)
				}
			}
			p.stop(t)
			if got := p.srv.Metrics().TextCalls[[2]string{c.recovers, "recovered"}]; got != 1 {
				t.Errorf("metrics: %d %s calls recovered, want 1 (%v)", got, c.recovers, p.srv.Metrics().TextCalls)
			}
			t.Logf("codex final message: %s", final)
		})
	}
}

// textVariantScript is the scripted model's script for the variants test:
// a shell command or an apply_patch edit, then a final text quoting the
// tool's output.
func textVariantScript(patch bool) *scripted.Script {
	yes, no := true, false
	call := scripted.ToolCall{Command: textShellCommand}
	if patch {
		args, _ := json.Marshal(map[string]string{"input": textPatch})
		call = scripted.ToolCall{Name: "apply_patch", Arguments: args}
	}
	return &scripted.Script{Turns: []scripted.Turn{
		{When: &scripted.Match{Tools: &yes, ToolResult: &no}, Text: "Doing it.", ToolCalls: []scripted.ToolCall{call}},
		{When: &scripted.Match{ToolResult: &yes}, Text: "The tool said: {{tool_output}}"},
	}}
}

// TestCodexTextToolVariants drives the real Codex through /v1 against the
// scripted model as a chat server without a tool parser whose model
// writes the forms real models write besides the canonical markup: Llama
// 3's bare JSON calls (no <|python_tag|>; the upstream model a Llama's,
// or a name that tells no family)
// and a Qwen3-style reply that starts inside the reasoning block the
// prompt opened (only </think> shows; the upstream model QwQ, whose caps
// entry says its template opens the block) followed by a hermes call —
// for a shell command and for an apply_patch edit each.
func TestCodexTextToolVariants(t *testing.T) {
	bin := os.Getenv(codexEnv)
	if bin == "" {
		t.Skipf("set %s to a Codex CLI binary to run (scripts/e2e-codex.sh does)", codexEnv)
	}
	cases := []struct {
		name, format, model, recovers string
		patch                         bool
	}{
		{"llama3_json/shell", scripted.TextToolsLlama3JSON, "meta-llama/Llama-3.3-70B-Instruct", "llama3_json", false},
		{"llama3_json/apply_patch", scripted.TextToolsLlama3JSON, "meta-llama/Llama-3.3-70B-Instruct", "llama3_json", true},
		// Served under a name that says nothing of the family: the call
		// is known by naming one of the request's tools.
		{"llama3_json/shell/served-as-alias", scripted.TextToolsLlama3JSON, "local-model", "llama3_json", false},
		{"qwen3_thinking/shell", scripted.TextToolsQwen3Thinking, "Qwen/QwQ-32B", "hermes", false},
		{"qwen3_thinking/apply_patch", scripted.TextToolsQwen3Thinking, "Qwen/QwQ-32B", "hermes", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			script := textVariantScript(c.patch)
			if err := script.Check(); err != nil {
				t.Fatal(err)
			}
			model, err := scripted.NewWithOptions(script, scripted.Options{TextToolFormat: c.format})
			if err != nil {
				t.Fatal(err)
			}
			p := startUpstreamProxy(t, model, func(cfg *server.Config) { cfg.Model = c.model })
			run := runCodex(t, bin, p.url+"/v1", true)
			if run.exitCode != 0 {
				t.Fatalf("codex exited with %d, want 0\n%s", run.exitCode, run)
			}
			ev := parseEvents(t, run)
			final := ev.finalMessage(t)
			if c.patch {
				data, err := os.ReadFile(filepath.Join(run.workDir, "patched.txt"))
				if err != nil || strings.TrimSpace(string(data)) != "patched by a text call" {
					t.Errorf("work dir patched.txt = %q, %v; want the patch applied\n%s", data, err, run)
				}
			} else {
				if cmd := ev.command(t, "proof.txt"); !strings.Contains(cmd.AggregatedOutput, textShellOutput) {
					t.Errorf("command output = %q, want %q", cmd.AggregatedOutput, textShellOutput)
				}
				if !strings.Contains(final, textShellOutput) {
					t.Errorf("final message does not quote the output %q:\n%s", textShellOutput, final)
				}
			}
			for _, leak := range []string{"</think>", "The request is clear.", "<tool_call>", `"parameters"`} {
				if strings.Contains(final, leak) {
					t.Errorf("final message shows %q (reasoning or markup left in the text):\n%s", leak, final)
				}
			}
			p.stop(t)
			if got := p.srv.Metrics().TextCalls[[2]string{c.recovers, "recovered"}]; got != 1 {
				t.Errorf("metrics: %d %s calls recovered, want 1 (%v)", got, c.recovers, p.srv.Metrics().TextCalls)
			}
			t.Logf("codex final message: %s", final)
		})
	}
}
