package server_test

import (
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/benchmark"
	"github.com/harnessflow/harnessflow/scripted"
	"github.com/harnessflow/harnessflow/server"
)

// streamStackBudget is the goroutine stack a stream's handler may grow to.
// Go stacks double when they grow: a handler that needs 16.1 KiB once (the
// deepest call of its life) holds 32 KiB for as long as its connection
// lives, so with thousands of streams every frame on the hot path counts
// (docs/performance.md).
const streamStackBudget = 16 << 10

// stackChildEnv marks the process TestStreamStackBudget runs itself in.
const stackChildEnv = "HARNESSFLOW_STACK_BUDGET_CHILD"

// A stream's handler goroutine — the request's decoding and shaping, the
// upstream call, and the fused response chain down to the client's socket,
// headers included — fits in streamStackBudget, for a one-line request and a
// Codex-sized one, natively and through harnesses (claude-code's answer ends
// in a tool call its bridge maps at the bottom of the chain). The check runs in a child
// process under debug.SetMaxStack: a goroutine that outgrows the budget
// kills the child with the offending stack, which this test prints.
func TestStreamStackBudget(t *testing.T) {
	if raceBuild || testing.CoverMode() != "" {
		t.Skip("the race detector and coverage make every frame larger")
	}
	if os.Getenv(stackChildEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStreamStackBudget$", "-test.count=1", "-test.v")
		// Every goroutine starts at the smallest stack and grows through the
		// limit check: with the runtime's adaptive starting size, a goroutine
		// could start big enough never to grow, and the check would not run.
		cmd.Env = append(os.Environ(), stackChildEnv+"=1", "GODEBUG=adaptivestackstart=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("a stream outgrew %d bytes of stack (%v):\n%s", streamStackBudget, err, out)
		}
		if !strings.Contains(string(out), "--- PASS: TestStreamStackBudget") {
			t.Fatalf("the child process did not run the check:\n%s", out)
		}
		return
	}
	codex, err := benchmark.CodexRequest("m", true)
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, newUpstream(t, scripted.New(nil)), server.Config{})
	small := `{"model":"m","stream":true,"input":"hello there"}`
	requests := []struct{ path, body string }{
		{"/v1/responses", small},
		{"/v1/responses", string(codex)},
		{"/h/minimal/v1/responses", string(codex)},
		{"/h/claude-code/v1/responses", string(codex)},
	}
	run := func(path, body string) {
		t.Helper()
		// A new connection each time: a handler goroutine of its own,
		// starting small.
		resp := p.post(t, path, body, map[string]string{"Connection": "close"})
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != 200 || !strings.Contains(string(b), "response.completed") {
			t.Fatalf("%s: status %d, %v:\n%s", path, resp.StatusCode, err, b)
		}
	}
	// First once without the limit: one-time work (type caches, lazily
	// compiled templates) is not a stream's.
	for _, r := range requests {
		run(r.path, r.body)
	}
	old := debug.SetMaxStack(streamStackBudget)
	defer debug.SetMaxStack(old)
	for _, r := range requests {
		run(r.path, r.body)
	}
}
