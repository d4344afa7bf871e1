// Command harnessflow translates between coding-agent wire protocols: it turns
// upstream model streams into engine events (translate), shapes engine
// requests the way a chosen agent would (shape), shows the stage graphs that
// do it (graph, harnesses), and runs them as a proxy (serve) in front of any
// model server or its own scripted model (mock-upstream).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	_ "github.com/harnessflow/harnessflow/harness/all" // registers every harness: the commands besides serve read the process registry
)

// command is one subcommand of the CLI.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

func commands() map[string]command {
	return map[string]command{
		"translate":     {"upstream stream (SSE or unary JSON) → engine events as JSON Lines", runTranslate},
		"shape":         {"engine Responses request → the upstream request a harness sends", runShape},
		"parse":         {"one model reply → the action a text-protocol harness extracts", runParse},
		"graph":         {"show a harness's stage graph as text, Mermaid or DOT", runGraph},
		"harnesses":     {"list the registered harnesses and the wires each supports", runHarnesses},
		"serve":         {"run the proxy: Responses API for clients such as Codex CLI, any upstream wire", runServe},
		"config":        {"check a serve --config file: every problem as FILE:LINE, or what it routes where", runConfig},
		"mock-upstream": {"serve the embedded scripted model (Chat Completions) alone", runMockUpstream},
		"bench":         {"measure a harness's graph per stage and end to end, fused, async and vs the official SDK", runBench},
		"healthcheck":   {"probe a running serve's /healthz: exit 0 on 200, 1 otherwise (the container image's HEALTHCHECK)", runHealthcheck},
		"version":       {"print the module version and VCS revision of this binary", runVersion},
		"calibrate":     {"run a real agent against a capture endpoint and write a prompt-pack overlay of what it sends", runCalibrate},
	}
}

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1 // a failure that is not the input's fault
	exitUsage = 2 // bad flags or bad input
)

func main() {
	ctx, stop := notifyStop(context.Background())
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// stopKey is the context key of the channel the second stop signal closes.
type stopKey struct{}

// notifyStop returns a context cancelled by the first SIGINT or SIGTERM (a
// command stops gracefully: serve lets its streams finish) whose stopNow
// channel the second one closes (serve stops at once). The returned
// function stops listening for the signals.
func notifyStop(parent context.Context) (context.Context, func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(parent)
	now := make(chan struct{})
	ctx = context.WithValue(ctx, stopKey{}, (<-chan struct{})(now))
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-done:
			return
		}
		select {
		case <-sigs:
			close(now)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}

// stopNow returns the channel notifyStop's second signal closes; nil (never
// ready) for a context without one.
func stopNow(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(stopKey{}).(<-chan struct{})
	return ch
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if args[0] == "--version" || args[0] == "-version" {
		return runVersion(ctx, args[1:], stdin, stdout, stderr)
	}
	cmd, ok := commands()[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "harnessflow: unknown command %q (see harnessflow --help)\n", args[0])
		return exitUsage
	}
	return cmd.run(ctx, args[1:], stdin, stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "harnessflow — wire-protocol translation and agent-harness emulation for coding agents")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: harnessflow COMMAND [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	cmds := commands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-13s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'harnessflow COMMAND --help' for a command's flags; 'harnessflow --version' for the version.")
}

// fail prints one error line for the command and returns the status.
func fail(stderr io.Writer, cmd string, status int, format string, args ...any) int {
	msg := fmt.Sprintf(format, args...)
	msg = strings.ReplaceAll(msg, "\n", " ")
	fmt.Fprintf(stderr, "harnessflow %s: %s\n", cmd, msg)
	return status
}

// runVersion implements `harnessflow version` and `harnessflow --version`.
func runVersion(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	const synopsis = "Usage: harnessflow version   (or harnessflow --version)"
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		fmt.Fprintln(stderr, synopsis)
		fmt.Fprintln(stderr, "Prints the module version, the VCS revision and time of the build (when the build recorded them)")
		fmt.Fprintln(stderr, "and the Go version, from the binary's build information.")
		return exitOK
	}
	if len(args) > 0 {
		return usageError(stderr, "version", synopsis, "unexpected argument %q (this command takes none)", args[0])
	}
	fmt.Fprintln(stdout, versionString())
	return exitOK
}
