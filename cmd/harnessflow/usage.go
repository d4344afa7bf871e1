package main

import (
	"errors"
	"flag"
	"fmt"
	"github.com/harnessflow/harnessflow/internal/cliflag"
	"io"
	"net"
	"runtime/debug"
	"syscall"

	"github.com/harnessflow/harnessflow/harness"
)

// parseFlags parses args (flags may follow the positional arguments) into
// fs, whose output is the command's stderr. --help prints the command's full
// usage (fs.Usage) and ends the command with exit status 0; a bad flag
// prints one line naming it and the short usage (usageError) and ends it
// with exit status 2. ok reports whether the command goes on.
func parseFlags(fs *flag.FlagSet, synopsis string, args []string) (code int, ok bool) {
	out := fs.Output()
	fs.SetOutput(io.Discard) // the flag package's own message and full usage are replaced below
	err := fs.Parse(reorder(fs, args))
	fs.SetOutput(out)
	switch {
	case err == nil:
		return exitOK, true
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return exitOK, false
	}
	return usageError(out, fs.Name(), synopsis, "%s", cliflag.Message(err)), false
}

// usageError prints one line naming the problem, then the command's
// synopsis and where its flags are described; it returns exitUsage.
func usageError(stderr io.Writer, cmd, synopsis, format string, args ...any) int {
	fail(stderr, cmd, exitUsage, format, args...)
	fmt.Fprintln(stderr, synopsis)
	fmt.Fprintf(stderr, "Run 'harnessflow %s --help' for every flag.\n", cmd)
	return exitUsage
}

// extraArgs is the problem of positional arguments beyond the first max.
func extraArgs(fs *flag.FlagSet, max int) string {
	if max == 0 {
		return fmt.Sprintf("unexpected argument %q (this command takes none)", fs.Arg(0))
	}
	return fmt.Sprintf("unexpected argument %q (one input at most)", fs.Arg(max))
}

// checkHarness refuses, for the CLI, a harness name this build does not
// serve and a harness on a wire it does not shape (harness.CheckRoute; the
// wire is chosen by --wire here). It returns nil for "".
func checkHarness(wire harness.Wire, name string) error {
	err := harness.CheckRoute(wire, name)
	var we *harness.WireError
	if errors.As(err, &we) {
		we.Flag = "--wire"
	}
	if err != nil {
		return fmt.Errorf("--harness: %w", err)
	}
	return nil
}

// listenError is the error of a listener that could not start; an address
// in use gets the flag that picks another.
func listenError(err error, addr string) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%w: another process listens on %s; pick another address with --listen (port 0 picks a free one)", err, addr)
	}
	var ae *net.AddrError
	if errors.As(err, &ae) {
		return fmt.Errorf("--listen %s: %w", addr, err)
	}
	return err
}

// versionString is the module version and the VCS revision of the binary,
// from its build information.
func versionString() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "harnessflow (no build information)"
	}
	return formatVersion(info)
}

// formatVersion gives the version line of a build: "harnessflow v1.2.3
// (revision abc… of 2026-01-02T03:04:05Z, modified) go1.26.8".
func formatVersion(info *debug.BuildInfo) string {
	version := info.Main.Version
	if version == "" {
		version = "(devel)"
	}
	var rev, when, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	out := "harnessflow " + version
	if rev != "" {
		out += " (revision " + rev
		if when != "" {
			out += " of " + when
		}
		out += modified + ")"
	} else {
		out += " (no VCS revision recorded: built outside a git checkout or with -buildvcs=false)"
	}
	if info.GoVersion != "" {
		out += " " + info.GoVersion
	}
	return out
}
