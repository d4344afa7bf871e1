package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/textcall"
)

// parseSynopsis is the short usage of parse.
const parseSynopsis = "Usage: harnessflow parse --harness NAME [--variant V] [FILE|-]\n       harnessflow parse --tool-format FORMAT [--tools FILE] [--model NAME] [--thinking-open] [FILE|-]"

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
	toolFormat := fs.String("tool-format", "", "read the reply for tool calls and reasoning written as text in `FORMAT` (auto or one of: "+strings.Join(textcall.Names(), ", ")+") instead of a harness's protocol")
	toolsFile := fs.String("tools", "", "with --tool-format: a Responses request or a JSON array of Responses tools (`FILE`) whose schemas type the arguments")
	modelName := fs.String("model", "", "with --tool-format: the model name (auto prefers its family's format)")
	thinkingOpen := fs.Bool("thinking-open", false, "with --tool-format: the prompt opened a reasoning block, so the reply starts inside it (also when the built-in caps entry of --model says its template opens one)")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, parseSynopsis)
		fmt.Fprintln(w, "Reads one model reply (text) and prints the action the harness's parser extracts, as one JSON object.")
		fmt.Fprintln(w, "Harnesses with a text-protocol parser: "+strings.Join(parserNames(), ", ")+".")
		fmt.Fprintln(w, "--variant: swe-agent fork (the first fenced block); mini-swe-agent text; terminus-2 json (default) or xml.")
		fmt.Fprintln(w, "--tool-format prints {\"content\",\"reasoning\",\"calls\":[{\"name\",\"arguments\",\"id\"}]} (docs/text-tool-calls.md).")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, parseSynopsis, args); !ok {
		return code
	}
	if *toolFormat != "" {
		switch {
		case *name != "":
			return usageError(stderr, "parse", parseSynopsis, "--harness and --tool-format: give one")
		case fs.NArg() > 1:
			return usageError(stderr, "parse", parseSynopsis, "%s", extraArgs(fs, 1))
		}
		open := *thinkingOpen || (*modelName != "" && harness.BuiltinModels().Lookup(*modelName).ThinkingOpen)
		return parseToolFormat(ctx, *toolFormat, *toolsFile, *modelName, open, fs.Arg(0), stdin, stdout, stderr)
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
	return writeJSONResult(stdout, stderr, "parse", src, out)
}

// parseToolFormat implements `harnessflow parse --tool-format FORMAT`: one
// whole model reply read for tool calls and reasoning written as text.
func parseToolFormat(ctx context.Context, format, toolsFile, model string, thinkingOpen bool, input string, stdin io.Reader, stdout, stderr io.Writer) int {
	if format == textcall.Off {
		return fail(stderr, "parse", exitUsage, "--tool-format: off reads nothing; give auto or one of: %s", strings.Join(textcall.Names(), ", "))
	}
	if err := textcall.CheckName(format); err != nil {
		return fail(stderr, "parse", exitUsage, "--tool-format: %v", err)
	}
	var schemas textcall.Schemas
	if toolsFile != "" {
		s, err := toolSchemasFile(ctx, toolsFile)
		if err != nil {
			return fail(stderr, "parse", exitUsage, "--tools %s: %v", toolsFile, err)
		}
		schemas = s
	}
	src, data, err := readRequestInput(input, stdin)
	if err != nil {
		return fail(stderr, "parse", exitUsage, "%s: %v", src, err)
	}
	rep, err := textcall.ParseReply(textcall.ReaderOptions{Format: format, Config: textcall.Config{Schemas: schemas, Model: model}, ThinkingOpen: thinkingOpen}, string(data))
	if err != nil {
		return fail(stderr, "parse", exitError, "%s: %v", src, err)
	}
	return writeJSONResult(stdout, stderr, "parse", src, rep)
}

// toolSchemasFile reads the tools of a Responses request, or a JSON array of
// Responses tools, and returns the schemas of the chat tools the native
// route makes of them (the names a model on a chat server sees).
func toolSchemasFile(ctx context.Context, path string) (textcall.Schemas, error) {
	_, data, err := readRequestInput(path, nil)
	if err != nil {
		return nil, err
	}
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '[' {
		data = append(append([]byte(`{"model":"m","input":[],"tools":`), t...), '}')
	}
	req, err := protocol.DecodeRequest(data)
	if err != nil {
		return nil, err
	}
	turn, err := harness.Plan(ctx, harness.Config{Wire: harness.WireChat}, "", req, nil)
	if err != nil {
		return nil, err
	}
	return turn.ToolSchemas(), nil
}
