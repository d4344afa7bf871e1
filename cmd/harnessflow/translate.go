package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/sinks"
	"github.com/harnessflow/harnessflow/sources"
)

func runTranslate(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("translate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	wireName := fs.String("wire", "", "upstream wire of the input: chat, messages or responses (required)")
	harnessName := fs.String("harness", "", "harness whose response postprocessing applies (default: none)")
	requestFile := fs.String("request", "", "the engine request (Responses JSON) this stream answers: tools → tool kinds")
	unary := fs.Bool("unary", false, "the input is one non-streaming JSON response, not SSE")
	modeName := fs.String("mode", "fused", "execution mode: fused or async")
	maxEvent := fs.Int("max-event-bytes", 0, "cap on one SSE line or event (default 32 MiB)")
	var ext extensionFlags
	ext.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: harnessflow translate --wire chat|messages|responses [--harness NAME] [--request FILE] [--unary] [--mode fused|async]\n       [--redact] [--redact-pattern RE]... [--log-events] [--record DIR] [FILE|-]")
		fmt.Fprintln(stderr, "Reads an upstream model response (a recorded SSE stream, or with --unary a JSON body) and prints")
		fmt.Fprintln(stderr, "one engine event per line as JSON. Bad input: one error line, exit status 2.")
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
		return fail(stderr, "translate", exitUsage, "--wire: %v", err)
	}
	mode, err := pipeline.ParseMode(*modeName)
	if err != nil {
		return fail(stderr, "translate", exitUsage, "--mode: %v", err)
	}
	h, ok := harness.Lookup(*harnessName)
	if !ok {
		return fail(stderr, "translate", exitUsage, "unknown harness %q (known: %s)", *harnessName, strings.Join(harnessNames(), ", "))
	}
	if h.ResponseGraph == nil {
		return fail(stderr, "translate", exitUsage, "harness %s has no response graph", h.Name)
	}
	opts := harness.ResponseOptions{Unary: *unary, MaxEventBytes: *maxEvent}
	if *requestFile != "" {
		req, kinds, err := loadRequest(*requestFile, h, wire)
		if err != nil {
			return fail(stderr, "translate", exitUsage, "%v", err)
		}
		opts.Request, opts.ToolKinds = req, kinds
	}
	g, err := h.ResponseGraph(wire, opts)
	if err != nil {
		return fail(stderr, "translate", exitUsage, "%v", err)
	}
	g, closeExt, err := ext.apply(g, string(wire), stderr)
	if err != nil {
		return fail(stderr, "translate", exitUsage, "%v", err)
	}
	defer closeExt()

	name := "-"
	var src pipeline.Source[[]byte]
	if fs.NArg() == 1 && fs.Arg(0) != "-" {
		name = fs.Arg(0)
		src = sources.File(name)
	} else {
		src = sources.Reader(stdin, sources.WithName("stdin"))
		name = "stdin"
	}
	// Standard input may be a live stream: show every event at once.
	sink := sinks.JSONLines(stdout, name == "stdin")
	if err := pipeline.Run(ctx, g, src, sink, pipeline.WithMode(mode)); err != nil {
		_ = sink.Flush() // keep the events that came before the error
		return fail(stderr, "translate", exitUsage, "%s: %v", name, err)
	}
	return exitOK
}
