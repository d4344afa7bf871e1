package main

import (
	"context"
	"flag"
	"fmt"
	"io"

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
	upstream := fs.String("upstream", "", "the upstream's base `URL`, as given to serve (chooses the provider quirks)")
	var layer layerFlags
	layer.register(fs)
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
	cfg, err := layer.config(wire, *upstream)
	if err != nil {
		return fail(stderr, "translate", exitUsage, "%v", err)
	}
	// With --harness or --request the stream is translated by the graph
	// the proxy would run for the same request on the same route; without
	// either, by the wire's protocol layer alone.
	var turn *harness.Turn
	var g *pipeline.Graph
	switch {
	case *harnessName == "" && *requestFile == "":
		if g, err = harness.ProtocolGraph(wire, harness.ResponseOptions{Unary: *unary, MaxEventBytes: *maxEvent}); err != nil {
			return fail(stderr, "translate", exitUsage, "%v", err)
		}
	case *requestFile != "":
		req, err := loadRequest(*requestFile)
		if err != nil {
			return fail(stderr, "translate", exitUsage, "%v", err)
		}
		turn, err = harness.Plan(ctx, cfg, *harnessName, req, nil)
		if err != nil {
			return fail(stderr, "translate", exitUsage, "--request %s: %v", *requestFile, err)
		}
	default:
		if turn, err = harness.Prepare(cfg, *harnessName, nil, nil); err != nil {
			return fail(stderr, "translate", exitUsage, "%v", err)
		}
	}
	if turn != nil {
		if g, err = turn.ResponseGraph(harness.ResponseOptions{Unary: *unary, MaxEventBytes: *maxEvent}); err != nil {
			return fail(stderr, "translate", exitUsage, "%v", err)
		}
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
