package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/harnessflow/harnessflow/harness"
	_ "github.com/harnessflow/harnessflow/harness/native" // registers "native"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

// runShape implements `harnessflow shape [--harness NAME] --wire
// chat|messages|responses [FILE|-]`: one engine Responses request in, one
// JSON object out (DESIGN §6):
//
//	{"path":"/chat/completions","body":{…},"title_request":null,"tool_kinds":{…}}
//
// Bad flags or bad input: one line on stderr naming the input and the
// problem, exit status 2.
func runShape(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("shape", flag.ContinueOnError)
	fs.SetOutput(stderr)
	harnessName := fs.String("harness", "", "harness to emulate (default: the native translation)")
	wireName := fs.String("wire", "", "upstream wire: chat, messages or responses (required)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: harnessflow shape [--harness NAME] --wire chat|messages|responses [FILE|-]")
		fmt.Fprintln(stderr, "Reads an engine request (Responses JSON, what Codex sends) and prints the upstream request the")
		fmt.Fprintln(stderr, `harness sends: {"path","body","title_request","tool_kinds"}. Bad input: one error line, exit status 2.`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(reorder(fs, args)); err != nil {
		return flagStatus(err)
	}
	if *wireName == "" || fs.NArg() > 1 {
		fs.Usage()
		return exitUsage
	}
	wire, err := harness.ParseWire(*wireName)
	if err != nil {
		return fail(stderr, "shape", exitUsage, "--wire: %v", err)
	}
	name, data, err := readRequestInput(fs.Arg(0), stdin)
	if err != nil {
		return fail(stderr, "shape", exitUsage, "%s: %v", name, err)
	}
	req, err := decodeRequest(data)
	if err != nil {
		return fail(stderr, "shape", exitUsage, "%s: %v", name, err)
	}
	shaped, err := shapeRequest(ctx, req, *harnessName, wire)
	if err != nil {
		if ctx.Err() != nil {
			return fail(stderr, "shape", exitError, "%s: %v", name, err)
		}
		return fail(stderr, "shape", exitUsage, "%s: %v", name, err)
	}
	// No HTML escaping: bodies hold prompts full of '<' and '>'.
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(shaped); err != nil {
		return fail(stderr, "shape", exitError, "%s: encode result: %v", name, err)
	}
	if _, err := stdout.Write(out.Bytes()); err != nil {
		return fail(stderr, "shape", exitError, "write output: %v", err)
	}
	return exitOK
}

// shapeRequest routes (wire, harness) and runs the request graph of the
// harness that serves the route.
func shapeRequest(ctx context.Context, req *protocol.ResponsesRequest, harnessName string, wire harness.Wire) (request.Shaped, error) {
	route, err := harness.Resolve(wire, harnessName)
	if err != nil {
		return request.Shaped{}, err
	}
	h, ok := harness.Lookup(route.Harness)
	if !ok {
		return request.Shaped{}, fmt.Errorf("harness %q (route %s) is not available in this build", route.Harness, route)
	}
	if h.RequestGraph == nil {
		return request.Shaped{}, fmt.Errorf("harness %s has no request graph", h.Name)
	}
	g, err := h.RequestGraph(wire)
	if err != nil {
		return request.Shaped{}, err
	}
	return request.Shape(ctx, g, req)
}

// loadRequest reads the engine request a translated stream answers and, on
// the chat wire, shapes it with h to learn the ToolKinds the stream's tool
// calls map back with. On other wires the ToolKinds are empty.
func loadRequest(path string, h harness.Harness, wire harness.Wire) (*protocol.ResponsesRequest, protocol.ToolKinds, error) {
	name, data, err := readRequestInput(path, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("--request %s: %w", name, err)
	}
	req, err := decodeRequest(data)
	if err != nil {
		return nil, nil, fmt.Errorf("--request %s: %w", name, err)
	}
	if wire != harness.WireChat || h.RequestGraph == nil {
		return req, protocol.ToolKinds{}, nil
	}
	g, err := h.RequestGraph(wire)
	if err != nil {
		return nil, nil, fmt.Errorf("--request %s: %w", name, err)
	}
	shaped, err := request.Shape(context.Background(), g, req)
	if err != nil {
		return nil, nil, fmt.Errorf("--request %s: %w", name, err)
	}
	return req, shaped.ToolKinds, nil
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

// decodeRequest decodes an engine request; a JSON syntax error is reported
// with its line, column and byte offset.
func decodeRequest(data []byte) (*protocol.ResponsesRequest, error) {
	var raw json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(data, se.Offset)
			return nil, fmt.Errorf("%d:%d (byte %d): %v", line, col, se.Offset, err)
		}
		return nil, err
	}
	req := new(protocol.ResponsesRequest)
	if err := req.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	return req, nil
}

// position converts a byte offset (the byte after the error) to a 1-based
// line and column.
func position(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off > 0 {
		off-- // SyntaxError.Offset counts the bytes read, including the bad one
	}
	before := data[:off]
	line = 1 + bytes.Count(before, []byte{'\n'})
	col = int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}
