package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/scripted"
)

// opencodeEnv names the environment variable that enables the opencode
// tests: the path of an opencode binary, e.g. of
// `npm install --save-exact opencode-ai@1.18.33`. opencode wants ripgrep on
// PATH (Codex's npm package bundles one).
const opencodeEnv = "HARNESSFLOW_OPENCODE"

// opencodeTimeout bounds one `opencode run`.
const opencodeTimeout = 150 * time.Second

// opencodeScript makes the model think, call opencode's bash tool to
// write out.txt, then answer; a request without tools (opencode's title
// request) gets a title.
func opencodeScript() *scripted.Script {
	yes, no := true, false
	return &scripted.Script{Turns: []scripted.Turn{
		{When: &scripted.Match{Tools: &yes, ToolResult: &no, HasTool: "bash"}, Reasoning: "I should use the bash tool.", Text: "Creating the file.",
			ToolCalls: []scripted.ToolCall{{Name: "bash", Command: "echo hello > out.txt"}}},
		{When: &scripted.Match{ToolResult: &yes}, Text: "done: the file is written."},
		{Text: "A title"},
	}}
}

// TestOpencodeInbound runs the real opencode (`opencode run`, its
// OpenAI-compatible provider) against the proxy's /v1/chat/completions:
// to the scripted chat model, to the scripted model speaking the Messages
// wire (the chat request goes to the Messages upstream through the neutral
// request, its answer back as a chat stream), and to a Responses upstream
// (a second proxy, whose /v1/responses fronts the scripted model). Each run must write
// out.txt through opencode's own bash tool and print the model's final
// text; every request must be a completed /v1/chat/completions stream.
func TestOpencodeInbound(t *testing.T) {
	bin := os.Getenv(opencodeEnv)
	if bin == "" {
		t.Skipf("set %s to an opencode binary to run", opencodeEnv)
	}
	if _, err := exec.LookPath("rg"); err != nil {
		t.Skip("opencode needs ripgrep (rg) on PATH")
	}
	for _, c := range []struct {
		name string
		wire harness.Wire
	}{{"chat upstream", ""}, {"messages upstream", harness.WireMessages}, {"responses upstream", harness.WireResponses}} {
		t.Run(c.name, func(t *testing.T) {
			var p *proxy
			if c.wire == harness.WireResponses {
				inner := startProxy(t, opencodeScript())
				p = startProxyFor(t, inner.srv.Handler(), withWire(harness.WireResponses))
			} else {
				p = startProxy(t, opencodeScript(), withWire(c.wire))
			}
			work, out := runOpencode(t, bin, p.url+"/v1")
			data, err := os.ReadFile(filepath.Join(work, "out.txt"))
			if err != nil || string(data) != "hello\n" {
				t.Fatalf("out.txt %q (%v)\n%s", data, err, out)
			}
			if !strings.Contains(out, "done: the file is written.") {
				t.Errorf("output:\n%s", out)
			}
			p.stop(t)
			recs := p.log.records()
			if len(recs) < 2 {
				t.Fatalf("%d requests: %+v", len(recs), recs)
			}
			for _, r := range recs {
				if r.path != "/v1/chat/completions" || r.status != 200 || r.outcome != "completed" {
					t.Errorf("request %+v, want a completed /v1/chat/completions stream", r)
				}
			}
			want := map[harness.Wire]string{"": "/v1/chat/completions", harness.WireMessages: "/v1/messages", harness.WireResponses: "/v1/responses"}[c.wire]
			p.mu.Lock()
			defer p.mu.Unlock()
			for _, u := range p.upstream {
				if !strings.HasPrefix(u, "POST "+want+" ") || !strings.HasSuffix(u, "auth-ok=true") {
					t.Errorf("upstream request %s, want POST %s with opencode's key", u, want)
				}
			}
		})
	}
}

// runOpencode runs `opencode run` with a provider at baseURL in fresh
// HOME, XDG and work directories, bash and edit allowed, nothing fetched;
// it returns the work directory and the output.
func runOpencode(t *testing.T, bin, baseURL string) (string, string) {
	t.Helper()
	root := t.TempDir()
	home, work := filepath.Join(root, "home"), filepath.Join(root, "work")
	for _, d := range []string{home, work} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	config := fmt.Sprintf(`{
  "autoupdate": false, "share": "disabled", "model": "hf/test-model", "small_model": "hf/test-model",
  "permission": {"bash": "allow", "edit": "allow", "webfetch": "deny"},
  "provider": {"hf": {"npm": "@ai-sdk/openai-compatible", "name": "harnessflow",
    "options": {"baseURL": %q, "apiKey": %q},
    "models": {"test-model": {"name": "Test Model", "tool_call": true, "reasoning": true, "limit": {"context": 128000, "output": 8192}}}}}
}`, baseURL, apiKey)
	cfgPath := filepath.Join(root, "opencode.json")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), opencodeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--pure", "-m", "hf/test-model", "Create a file out.txt containing hello using the bash tool, then say done.")
	cmd.Dir = work
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_DATA_HOME=" + filepath.Join(home, ".local/share"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "XDG_STATE_HOME=" + filepath.Join(home, ".local/state"),
		"OPENCODE_CONFIG=" + cfgPath,
		"OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1",
		"OPENCODE_DISABLE_SHARE=1", "OPENCODE_DISABLE_DEFAULT_PLUGINS=1", "OPENCODE_DISABLE_CLAUDE_CODE=1",
		"OPENCODE_DISABLE_EXTERNAL_SKILLS=1",
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
	t.Logf("opencode run ran %v", time.Since(start).Round(time.Millisecond))
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("opencode run did not finish in %v\nstdout:\n%s\nstderr:\n%s", opencodeTimeout, stdout.String(), stderr.String())
	case errors.As(err, &exitErr):
		t.Fatalf("opencode run exited %d\nstdout:\n%s\nstderr:\n%s", exitErr.ExitCode(), stdout.String(), stderr.String())
	case err != nil:
		t.Fatal(err)
	}
	return work, stdout.String() + stderr.String()
}
