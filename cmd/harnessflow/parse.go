package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/harnessflow/harnessflow/harness"
)

// runParse implements `harnessflow parse --harness NAME [--variant V]
// [FILE|-]`: one model reply through the harness's text-protocol parser,
// one JSON object out (docs/architecture.md#harnessflow-parse).
func runParse(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("parse", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("harness", "", "text-protocol harness: swe-agent, mini-swe-agent or terminus-2 (required)")
	variant := fs.String("variant", "", "parser variant, where the harness has several")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: harnessflow parse --harness NAME [--variant V] [FILE|-]")
		fmt.Fprintln(stderr, "Reads one model reply (text) and prints the action the harness's parser extracts, as one JSON object.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(reorder(fs, args)); err != nil {
		return flagStatus(err)
	}
	if *name == "" || fs.NArg() > 1 {
		fs.Usage()
		return exitUsage
	}
	src, data, err := readRequestInput(fs.Arg(0), stdin)
	if err != nil {
		return fail(stderr, "parse", exitUsage, "%s: %v", src, err)
	}
	out, err := harness.Parse(ctx, *name, string(data), *variant)
	if err != nil {
		return fail(stderr, "parse", exitUsage, "%s: %v", src, err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return fail(stderr, "parse", exitError, "%s: encode result: %v", src, err)
	}
	if _, err := stdout.Write(buf.Bytes()); err != nil {
		return fail(stderr, "parse", exitError, "write output: %v", err)
	}
	return exitOK
}
