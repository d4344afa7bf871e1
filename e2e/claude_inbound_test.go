package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/scripted"
)

// claudeEnv names the environment variable that enables the Claude Code
// tests: the path of a Claude Code binary (`claude`), e.g. of
// `npm install --prefix /tmp/hf-claude --save-exact @anthropic-ai/claude-code@2.1.332`.
const claudeEnv = "HARNESSFLOW_CLAUDE"

// claudeTimeout bounds one `claude -p` run.
const claudeTimeout = 150 * time.Second

// claudeScript makes the model think, then call Claude Code's Bash tool to
// write out.txt, then answer.
func claudeScript() *scripted.Script {
	yes, no := true, false
	return &scripted.Script{Turns: []scripted.Turn{
		{When: &scripted.Match{Tools: &yes, ToolResult: &no, HasTool: "Bash"}, Reasoning: "The user wants a file. I will use Bash.", Text: "Creating the file.",
			ToolCalls: []scripted.ToolCall{{Name: "Bash", Arguments: json.RawMessage(`{"command":"echo hello > out.txt","description":"Write out.txt"}`)}}},
		{When: &scripted.Match{ToolResult: &yes}, Text: "done: {{tool_output}}"},
		{Text: "no Bash tool was offered"},
	}}
}

// TestClaudeCodeInbound runs the real Claude Code (`claude -p`, its Bash
// tool allowed) with ANTHROPIC_BASE_URL at the proxy's /v1/messages, to the
// scripted chat model: once with the model's tool calls in the chat
// tool_calls field, once written as text in qwen3_coder markup (the proxy
// recovers them); and to the scripted Messages model, where the request
// and the answer pass through as they are. Each run must write out.txt through Claude Code's own
// Bash tool, show the model's reasoning_content as a thinking block, and
// end with the model's final text; every request must be a completed
// /v1/messages stream whose key reached the upstream.
func TestClaudeCodeInbound(t *testing.T) {
	bin := os.Getenv(claudeEnv)
	if bin == "" {
		t.Skipf("set %s to a Claude Code binary to run", claudeEnv)
	}
	for _, c := range []struct {
		name, textTools string
		wire            harness.Wire
	}{{"chat tool_calls", "", ""}, {"chat qwen3_coder text", "qwen3_coder", ""}, {"messages pass-through", "", harness.WireMessages}} {
		t.Run(c.name, func(t *testing.T) {
			model, err := scripted.NewWithOptions(claudeScript(), scripted.Options{TextToolFormat: c.textTools})
			if err != nil {
				t.Fatal(err)
			}
			p := startProxyFor(t, model, withWire(c.wire))
			work, out := runClaude(t, bin, p.url)
			data, err := os.ReadFile(filepath.Join(work, "out.txt"))
			if err != nil || string(data) != "hello\n" {
				t.Fatalf("out.txt %q (%v)\n%s", data, err, out)
			}
			var thinking, final string
			for line := range strings.SplitSeq(out, "\n") {
				var ev struct {
					Type    string `json:"type"`
					Result  string `json:"result"`
					Message struct {
						Content []struct{ Type, Thinking string } `json:"content"`
					} `json:"message"`
				}
				if json.Unmarshal([]byte(line), &ev) != nil {
					continue
				}
				for _, b := range ev.Message.Content {
					if ev.Type == "assistant" && b.Type == "thinking" {
						thinking = b.Thinking
					}
				}
				if ev.Type == "result" {
					final = ev.Result
				}
			}
			if thinking != "The user wants a file. I will use Bash." {
				t.Errorf("thinking %q, want the model's reasoning", thinking)
			}
			if !strings.HasPrefix(final, "done:") {
				t.Errorf("final result %q\n%s", final, out)
			}
			p.stop(t)
			recs := p.log.records()
			if len(recs) < 2 {
				t.Fatalf("%d requests, want the tool call and the answer: %+v", len(recs), recs)
			}
			for _, r := range recs {
				if r.path != "/v1/messages" || r.status != 200 || r.outcome != "completed" {
					t.Errorf("request %+v, want a completed /v1/messages stream", r)
				}
			}
			p.mu.Lock()
			defer p.mu.Unlock()
			for _, u := range p.upstream {
				if !strings.HasSuffix(u, "auth-ok=true") {
					t.Errorf("upstream request %s: Claude Code's key did not arrive as the bearer key", u)
				}
			}
		})
	}
}

// runClaude runs `claude -p` with ANTHROPIC_BASE_URL at baseURL in fresh
// HOME and work directories (stream-json output on stdout), the Bash,
// Write, Edit and Read tools allowed, no nonessential traffic; it returns
// the work directory and the output.
func runClaude(t *testing.T, bin, baseURL string) (string, string) {
	t.Helper()
	root := t.TempDir()
	home, work := filepath.Join(root, "home"), filepath.Join(root, "work")
	for _, d := range []string{home, work} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), claudeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-p", "--output-format", "stream-json", "--verbose",
		"--allowedTools", "Bash,Write,Edit,Read", "--", "Create a file out.txt containing hello using the Bash tool, then say done.")
	cmd.Dir = work
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"),
		"ANTHROPIC_BASE_URL=" + baseURL,
		"ANTHROPIC_API_KEY=" + apiKey,
		"DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1", "DISABLE_BUG_COMMAND=1", "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY=1",
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	ownProcessGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	if cmd.Process != nil {
		reapGroup(t, cmd.Process.Pid)
	}
	t.Logf("claude -p ran %v", time.Since(start).Round(time.Millisecond))
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("claude -p did not finish in %v\nstdout:\n%s\nstderr:\n%s", claudeTimeout, stdout.String(), stderr.String())
	case errors.As(err, &exitErr):
		t.Fatalf("claude -p exited %d\nstdout:\n%s\nstderr:\n%s", exitErr.ExitCode(), stdout.String(), stderr.String())
	case err != nil:
		t.Fatal(err)
	}
	return work, stdout.String()
}
