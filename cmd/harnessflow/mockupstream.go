package main

import (
	"context"
	"flag"
	"fmt"
	"github.com/harnessflow/harnessflow/internal/httpserve"
	"io"
	"net"
	"sync"

	"github.com/harnessflow/harnessflow/scripted"
)

// defaultMockAddr is where mock-upstream listens by default.
const defaultMockAddr = "127.0.0.1:8788"

// runMockUpstream implements `harnessflow mock-upstream [--listen ADDR]
// [--script FILE]`: the scripted model alone (Chat Completions and Messages), until ctx is
// cancelled (Ctrl-C).
func runMockUpstream(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mock-upstream", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", defaultMockAddr, "address to listen on (port 0 picks a free port; the address is printed)")
	scriptFile := fs.String("script", "", "a script `FILE` (JSON; see package scripted) instead of the built-in script")
	textTools := fs.String("text-tools", "", "write tool calls as text in the answer's content, in `FORMAT` hermes, qwen3_coder, llama3_json (bare JSON calls) or qwen3_thinking (hermes calls after reasoning the prompt opened, closed by </think>), as a server without a tool parser passes them on")
	rejectTools := fs.Bool("reject-tools", false, "answer a request that carries tools with HTTP 400 \"tools are not supported\"; calls are then written as text (--text-tools, hermes by default)")
	const synopsis = "Usage: harnessflow mock-upstream [--listen 127.0.0.1:8788] [--script FILE] [--text-tools hermes|qwen3_coder|llama3_json|qwen3_thinking] [--reject-tools]"
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, synopsis)
		fmt.Fprintln(w, "Serves a deterministic scripted model as an OpenAI Chat Completions endpoint")
		fmt.Fprintln(w, "(POST /v1/chat/completions) and an Anthropic Messages endpoint (POST /v1/messages), streamed or")
		fmt.Fprintln(w, "not, until interrupted (Ctrl-C).")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, synopsis, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "mock-upstream", synopsis, "%s", extraArgs(fs, 0))
	}
	script, err := loadScript(*scriptFile)
	if err != nil {
		return fail(stderr, "mock-upstream", exitUsage, "%v", err)
	}
	model, err := scripted.NewWithOptions(script, scripted.Options{TextToolFormat: *textTools, RejectTools: *rejectTools})
	if err != nil {
		return fail(stderr, "mock-upstream", exitUsage, "--text-tools: %v", err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", *listen)
	if err != nil {
		return fail(stderr, "mock-upstream", exitError, "%v", listenError(err, *listen))
	}
	fmt.Fprintf(stdout, "harnessflow mock-upstream: serving the scripted model at http://%s/v1 (POST /v1/chat/completions, POST /v1/messages)\n", ln.Addr())
	if err := httpserve.Serve(ctx, ln, model, stderr); err != nil {
		return fail(stderr, "mock-upstream", exitError, "%v", err)
	}
	return exitOK
}

// loadScript loads a script file, or returns nil (the default script) for "".
func loadScript(path string) (*scripted.Script, error) {
	if path == "" {
		return nil, nil
	}
	return scripted.Load(path)
}

// syncWriter serializes writes from concurrent requests' loggers.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
