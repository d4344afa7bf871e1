package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
)

// parseSynopsis is the short usage of parse.
const parseSynopsis = "Usage: harnessflow parse --harness NAME [--variant V] [FILE|-]"

// parserNames lists the registered harnesses that have a text-protocol
// parser.
func parserNames() []string {
	var names []string
	for _, s := range harness.All() {
		if s.Parse != nil {
			names = append(names, s.Name)
		}
	}
	return names
}

// runParse implements `harnessflow parse --harness NAME [--variant V]
// [FILE|-]`: one model reply through the harness's text-protocol parser,
// one JSON object out (docs/architecture.md#harnessflow-parse).
func runParse(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("parse", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("harness", "", "text-protocol harness: swe-agent, mini-swe-agent or terminus-2 (required)")
	variant := fs.String("variant", "", "parser variant, where the harness has several")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, parseSynopsis)
		fmt.Fprintln(w, "Reads one model reply (text) and prints the action the harness's parser extracts, as one JSON object.")
		fmt.Fprintln(w, "Harnesses with a text-protocol parser: "+strings.Join(parserNames(), ", ")+".")
		fmt.Fprintln(w, "--variant: swe-agent fork (the first fenced block); mini-swe-agent text; terminus-2 json (default) or xml.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, parseSynopsis, args); !ok {
		return code
	}
	switch {
	case *name == "":
		return usageError(stderr, "parse", parseSynopsis, "missing --harness (one of: %s)", strings.Join(parserNames(), ", "))
	case fs.NArg() > 1:
		return usageError(stderr, "parse", parseSynopsis, "%s", extraArgs(fs, 1))
	}
	if err := harness.CheckName(*name); err != nil {
		return fail(stderr, "parse", exitUsage, "--harness: %v", err)
	}
	if s, _ := harness.Lookup(*name); s.Parse == nil {
		return fail(stderr, "parse", exitUsage, "--harness: %s writes its tool calls as function calls and has no text-protocol parser; the harnesses with one: %s", *name, strings.Join(parserNames(), ", "))
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
