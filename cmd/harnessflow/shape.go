package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/harnessflow/harnessflow/codec"
	"io"
	"os"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/protocol"
)

// shapeSynopsis is the short usage of shape.
const shapeSynopsis = "Usage: harnessflow shape [--harness NAME] --wire chat|messages|responses [--upstream URL] [--prompts DIR] [--model-caps FILE] [FILE|-]"

// runShape implements `harnessflow shape [--harness NAME] --wire
// chat|messages|responses [FILE|-]`: one engine Responses request in, one
// JSON object out (docs/architecture.md#harnessflow-shape):
//
//	{"path":"/chat/completions","body":{…},"title_request":null,"tool_kinds":{…}}
//
// Bad flags or bad input: one line on stderr naming the input and the
// problem, exit status 2.
func runShape(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("shape", flag.ContinueOnError)
	fs.SetOutput(stderr)
	harnessName := fs.String("harness", "", "harness `NAME` to emulate (default: the native translation)")
	wireName := fs.String("wire", "", "upstream wire: "+codec.Choices()+" (required)")
	upstream := fs.String("upstream", "", "the upstream's base `URL`, as given to serve (chooses the provider quirks)")
	var layer layerFlags
	layer.register(fs)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, shapeSynopsis)
		fmt.Fprintln(w, "Reads an engine request (Responses JSON, what Codex sends) and prints the upstream request the")
		fmt.Fprintln(w, `harness sends: {"path","body","title_request","tool_kinds"}. Bad input: one error line, exit status 2.`)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, shapeSynopsis, args); !ok {
		return code
	}
	switch {
	case *wireName == "":
		return usageError(stderr, "shape", shapeSynopsis, "missing --wire (the upstream's wire: %s)", codec.Choices())
	case fs.NArg() > 1:
		return usageError(stderr, "shape", shapeSynopsis, "%s", extraArgs(fs, 1))
	}
	wire, err := harness.ParseWire(*wireName)
	if err != nil {
		return fail(stderr, "shape", exitUsage, "--wire: %v", err)
	}
	if err := checkHarness(wire, *harnessName); err != nil {
		return fail(stderr, "shape", exitUsage, "%v", err)
	}
	name, data, err := readRequestInput(fs.Arg(0), stdin)
	if err != nil {
		return fail(stderr, "shape", exitUsage, "%s: %v", name, err)
	}
	req, err := protocol.DecodeRequest(data)
	if err != nil {
		return fail(stderr, "shape", exitUsage, "%s: %v", name, err)
	}
	cfg, err := layer.config(wire, *upstream)
	if err != nil {
		return fail(stderr, "shape", exitUsage, "%v", err)
	}
	turn, err := harness.Plan(ctx, cfg, *harnessName, req, nil)
	if err != nil {
		if ctx.Err() != nil {
			return fail(stderr, "shape", exitError, "%s: %v", name, err)
		}
		return fail(stderr, "shape", exitUsage, "%s: %v", name, err)
	}
	return writeJSONResult(stdout, stderr, "shape", name, turn.Shaped)
}

// writeJSONResult writes v to stdout as one line of JSON, without HTML
// escaping (bodies hold prompts full of '<' and '>'); a failure is cmd's
// error, src naming the input.
func writeJSONResult(stdout, stderr io.Writer, cmd, src string, v any) int {
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fail(stderr, cmd, exitError, "%s: encode result: %v", src, err)
	}
	if _, err := stdout.Write(out.Bytes()); err != nil {
		return fail(stderr, cmd, exitError, "write output: %v", err)
	}
	return exitOK
}

// loadRequest reads the engine request a translated stream answers.
func loadRequest(path string) (*protocol.ResponsesRequest, error) {
	name, data, err := readRequestInput(path, nil)
	if err != nil {
		return nil, fmt.Errorf("--request %s: %w", name, err)
	}
	req, err := protocol.DecodeRequest(data)
	if err != nil {
		return nil, fmt.Errorf("--request %s: %w", name, err)
	}
	return req, nil
}

// readRequestInput reads FILE, or stdin for "" and "-". It returns the name
// to show in messages.
func readRequestInput(path string, stdin io.Reader) (string, []byte, error) {
	if path == "" || path == "-" {
		if stdin == nil {
			return "stdin", nil, errors.New("no input")
		}
		data, err := io.ReadAll(stdin)
		return "stdin", data, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
	}
	return path, data, err
}
