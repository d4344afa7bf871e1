package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/harnessflow/harnessflow/codec"
	"io"
	"os"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/sinks"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/operator"
)

// translateSynopsis is the short usage of translate.
const translateSynopsis = "Usage: harnessflow translate --wire chat|messages|responses [--harness NAME] [--request FILE] [--unary] [--mode fused|async] [FILE|-]"

// runTranslate implements `harnessflow translate`: an upstream response in,
// engine events out as JSON Lines (docs/architecture.md).
func runTranslate(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("translate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	wireName := fs.String("wire", "", "upstream wire of the input: "+codec.Choices()+" (required)")
	harnessName := fs.String("harness", "", "harness `NAME` whose response graph applies, as serve runs it (default: the wire's protocol layer alone)")
	requestFile := fs.String("request", "", "the engine request `FILE` (Responses JSON) this stream answers: tools → tool kinds")
	unary := fs.Bool("unary", false, "the input is one non-streaming JSON response, not SSE")
	modeName := fs.String("mode", "fused", "execution mode: fused or async")
	maxEvent := fs.Int("max-event-bytes", 0, "cap on one SSE line or event, in bytes `N` (default 32 MiB)")
	upstream := fs.String("upstream", "", "the upstream's base `URL`, as given to serve (chooses the provider quirks)")
	var layer layerFlags
	layer.register(fs)
	var ext extensionFlags
	ext.register(fs)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, translateSynopsis+"\n       [--redact] [--redact-pattern RE]... [--log-events] [--record DIR]")
		fmt.Fprintln(w, "Reads an upstream model response (a recorded SSE stream, or with --unary a JSON body) and prints")
		fmt.Fprintln(w, "one engine event per line as JSON. Bad input (not SSE, not the wire's JSON, another wire's")
		fmt.Fprintln(w, "stream, malformed data): one error line, exit status 2.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, translateSynopsis, args); !ok {
		return code
	}
	switch {
	case *wireName == "":
		return usageError(stderr, "translate", translateSynopsis, "missing --wire (the input's wire: %s)", codec.Choices())
	case fs.NArg() > 1:
		return usageError(stderr, "translate", translateSynopsis, "%s", extraArgs(fs, 1))
	}
	wire, err := harness.ParseWire(*wireName)
	if err != nil {
		return fail(stderr, "translate", exitUsage, "--wire: %v", err)
	}
	if err := checkHarness(wire, *harnessName); err != nil {
		return fail(stderr, "translate", exitUsage, "%v", err)
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
	open := harness.Opening{Harness: *harnessName, Fallback: harness.FallbackLayer}
	if *requestFile != "" {
		if open.Request, err = loadRequest(*requestFile); err != nil {
			return fail(stderr, "translate", exitUsage, "%v", err)
		}
	}
	ex, err := harness.Open(ctx, cfg, open)
	if err != nil {
		if *requestFile != "" {
			return fail(stderr, "translate", exitUsage, "--request %s: %v", *requestFile, err)
		}
		return fail(stderr, "translate", exitUsage, "%v", err)
	}
	ex.Unary, ex.Options.MaxEventBytes = *unary, *maxEvent
	stages, err := ext.stages()
	if err != nil {
		return fail(stderr, "translate", exitUsage, "%v", err)
	}
	g, err := ex.Graph(operator.Edits(operator.Stream{Wire: string(wire), Log: stderr}, stages...)...)
	if err != nil {
		return fail(stderr, "translate", exitUsage, "%v", err)
	}

	name, in := "stdin", stdin
	if fs.NArg() == 1 && fs.Arg(0) != "-" {
		name = fs.Arg(0)
		f, err := os.Open(name)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return fail(stderr, "translate", exitUsage, "%s: %v", name, err)
		}
		defer f.Close()
		in = f
	}
	in, err = sniffInput(in, wire, *unary)
	if err != nil {
		return fail(stderr, "translate", exitUsage, "%s: %v", name, err)
	}
	src := sources.Reader(in, sources.WithName(name))
	// Standard input may be a live stream: show every event at once.
	sink := sinks.JSONLines(stdout, name == "stdin")
	if err := pipeline.Run(ctx, g, src, sink, pipeline.WithMode(mode)); err != nil {
		_ = sink.Flush() // keep the events that came before the error
		return fail(stderr, "translate", exitUsage, "%s: %v", name, err)
	}
	return exitOK
}
