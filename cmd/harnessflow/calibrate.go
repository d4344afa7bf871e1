package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/harnessflow/harnessflow/codec"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/harnessflow/harnessflow/calibrate"
)

// calibrateSynopsis is the short usage of calibrate.
const calibrateSynopsis = "Usage: harnessflow calibrate HARNESS [--out DIR] [--wire W] [--timeout 2m] -- COMMAND [ARGS...]\n" +
	"       harnessflow calibrate --check DIR [HARNESS] [--timeout 2m] -- COMMAND [ARGS...]"

// runCalibrate implements `harnessflow calibrate` (README "Calibrate a
// harness"): run the user's real agent against a loopback capture endpoint
// and write a prompt-pack overlay from what it sent, or (--check) run it
// again and compare it with the harness using the overlay (exit 1 when
// they differ).
func runCalibrate(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	var command []string
	for i, a := range args {
		if a == "--" {
			args, command = args[:i], args[i+1:]
			break
		}
	}
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "harnessflow-calibrated", "overlay `DIR` to write (DIR/HARNESS/…)")
	wire := fs.String("wire", "", "wire to capture: "+codec.Choices()+" (default: the agent's usual one)")
	timeout := fs.Duration("timeout", calibrate.DefaultTimeout, "time limit of the agent run")
	check := fs.String("check", "", "compare the real agent with the harness using the overlay `DIR`")
	asJSON := fs.Bool("json", false, "print the check report as JSON")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, calibrateSynopsis)
		fmt.Fprintln(w, "Runs COMMAND (the real agent, e.g. claude, opencode, qwen) against a capture endpoint on 127.0.0.1 in a")
		fmt.Fprintln(w, "scratch workspace and writes a prompt-pack overlay of what it sent (use it with --prompts DIR).")
		fmt.Fprintf(w, "Harnesses: %s. How each agent is pointed at the endpoint:\n", strings.Join(calibrate.AgentNames(), ", "))
		for _, n := range calibrate.AgentNames() {
			fmt.Fprintf(w, "  %s: %s\n", n, calibrate.Agents[n].Doc)
		}
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, calibrateSynopsis, args); !ok {
		return code
	}
	name := fs.Arg(0)
	switch {
	case fs.NArg() > 1:
		return usageError(stderr, "calibrate", calibrateSynopsis, "%s", extraArgs(fs, 1))
	case len(command) == 0:
		return usageError(stderr, "calibrate", calibrateSynopsis, "missing -- COMMAND (the agent to run)")
	case *timeout <= 0:
		return usageError(stderr, "calibrate", calibrateSynopsis, "--timeout must be positive")
	}
	if *check != "" && name == "" {
		var err error
		if name, err = calibratedHarness(*check); err != nil {
			return fail(stderr, "calibrate", exitUsage, "--check: %v", err)
		}
	}
	if name == "" {
		return usageError(stderr, "calibrate", calibrateSynopsis, "missing HARNESS (one of %s)", strings.Join(calibrate.AgentNames(), ", "))
	}
	if _, ok := calibrate.Agents[name]; !ok {
		return usageError(stderr, "calibrate", calibrateSynopsis, "unknown HARNESS %q (one of %s)", name, strings.Join(calibrate.AgentNames(), ", "))
	}
	o := calibrate.Options{Harness: name, Wire: *wire, Command: command, Timeout: *timeout, Log: stderr}
	if *check != "" {
		rep, err := calibrate.Check(ctx, o, *check)
		if err != nil {
			return calibrateFailure(stderr, err)
		}
		if *asJSON {
			b, _ := json.MarshalIndent(rep, "", "  ") // plain data always marshals
			fmt.Fprintln(stdout, string(b))
		} else {
			rep.WriteText(stdout)
		}
		if rep.Differences() > 0 {
			return exitError
		}
		return exitOK
	}
	c, err := calibrate.RunAgent(ctx, o)
	if err != nil {
		return calibrateFailure(stderr, err)
	}
	cal, err := calibrate.Write(c, *out)
	if err != nil {
		return calibrateFailure(stderr, err)
	}
	fmt.Fprintf(stdout, "calibrated %s from %s %s (wire %s): %d requests captured, %d files written, %d items not mapped\n",
		name, cal.Agent.Name, cal.Agent.Version, cal.Wire, len(cal.Captured), len(cal.Written), len(cal.Unmapped))
	fmt.Fprintf(stdout, "overlay: %s (use --prompts %s); report: %s\n", filepath.Join(*out, name), *out,
		filepath.Join(*out, name, "calibration.json"))
	for _, u := range cal.Unmapped {
		fmt.Fprintf(stdout, "  not mapped: %s — %s\n", u.What, u.Why)
	}
	return exitOK
}

// calibrateFailure prints a calibrate error whole (it may carry the
// agent's output over several lines) and returns exitError.
func calibrateFailure(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "harnessflow calibrate: %s\n", strings.TrimPrefix(err.Error(), "calibrate: "))
	return exitError
}

// calibratedHarness is the one harness DIR holds a calibration of.
func calibratedHarness(dir string) (string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var found []string
	for _, e := range ents {
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "calibration.json")); err == nil {
			found = append(found, e.Name())
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("%s holds no HARNESS/calibration.json", dir)
	}
	return "", fmt.Errorf("%s holds calibrations of %s; name the HARNESS", dir, strings.Join(found, ", "))
}
