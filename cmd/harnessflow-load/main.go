// Command harnessflow-load measures `harnessflow serve` under load: a
// scripted chat upstream whose deltas carry their send time, a plain
// reverse proxy and serve, each a process of its own on a loopback port,
// and N concurrent streaming clients through each (package loadtest).
//
//	go build -o bin/ ./cmd/harnessflow ./cmd/harnessflow-load
//	bin/harnessflow-load --streams 100,1000 --targets direct,pass-through,native
//
// Serve runs from the harnessflow binary next to this one (or --bin); the
// upstream and the pass-through run from this binary, as its hidden
// subcommands upstream and passthrough.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/harnessflow/harnessflow/internal/cliflag"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	_ "github.com/harnessflow/harnessflow/harness/all" // registers every harness (--harness)
)

// Exit statuses, those of harnessflow.
const (
	exitOK    = 0
	exitError = 1 // a failure that is not the input's fault
	exitUsage = 2 // bad flags
)

// name is how the command names itself in its messages.
const name = "harnessflow-load"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// childCommands are the hidden subcommands: the processes a load run starts
// from this binary (not for users: undocumented).
func childCommands() map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return map[string]func(context.Context, []string, io.Writer, io.Writer) int{
		"upstream":    runUpstream,
		"passthrough": runPassThrough,
	}
}

// run is the command with its arguments: a load run, or one of its
// processes.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if sub, ok := childCommands()[args[0]]; ok {
			return sub(ctx, args[1:], stdout, stderr)
		}
	}
	return runLoad(ctx, args, stdout, stderr)
}

// fail prints one error line for the command (cmd: a subcommand, or "")
// and returns the status.
func fail(stderr io.Writer, cmd string, status int, format string, args ...any) int {
	prefix := name
	if cmd != "" {
		prefix += " " + cmd
	}
	fmt.Fprintf(stderr, "%s: %s\n", prefix, strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", " "))
	return status
}

// usageError prints the problem, the synopsis and where the flags are
// described; it returns exitUsage.
func usageError(stderr io.Writer, synopsis, format string, args ...any) int {
	fail(stderr, "", exitUsage, format, args...)
	fmt.Fprintln(stderr, synopsis)
	fmt.Fprintf(stderr, "Run '%s --help' for every flag.\n", name)
	return exitUsage
}

// parseFlags parses args into fs (whose output is stderr): --help prints
// the full usage and ends the command with status 0; a bad flag prints one
// line naming it, with the synopsis, and ends it with status 2. ok reports
// whether the command goes on.
func parseFlags(fs *flag.FlagSet, synopsis string, args []string) (code int, ok bool) {
	out := fs.Output()
	fs.SetOutput(io.Discard) // the flag package's message is replaced below
	err := fs.Parse(args)
	fs.SetOutput(out)
	switch {
	case err == nil:
		return exitOK, true
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return exitOK, false
	}
	return usageError(out, synopsis, "%s", cliflag.Message(err)), false
}

// flagStatus maps a flag parse error to an exit status (--help is
// success).
func flagStatus(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	return exitUsage
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
