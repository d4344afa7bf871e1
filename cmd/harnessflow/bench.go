package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/harnessflow/harnessflow/codec"
	"io"
	"os"
	"strings"

	"github.com/harnessflow/harnessflow/benchmark"
	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
)

// benchSynopsis is the short usage of bench.
const benchSynopsis = "Usage: harnessflow bench [--harness NAME] [--wire chat|messages|responses] [--direction response|request]"

// runBench implements `harnessflow bench`: the graph a harness runs for a
// route (the one serve runs, from harness.Prepare/Plan), measured over a
// corpus per stage and end to end, fused and async, next to the official
// SDK's accumulator on the same bytes.
func runBench(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "proxy" {
		// The proxy load test was `bench proxy`; it is a command of its own.
		return fail(stderr, "bench proxy", exitUsage, "the proxy load test is its own command now: harnessflow-load (go run ./cmd/harnessflow-load --help)")
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	harnessName := fs.String("harness", "", "harness whose graph is measured (default: the native translation)")
	wireName := fs.String("wire", "chat", "upstream wire: "+codec.Choices())
	direction := fs.String("direction", "response", "which graph: response (upstream stream → engine events) or request (client request → upstream request)")
	corpusArg := fs.String("corpus", "generated", "`FILE|DIR|generated`: a recorded SSE body (request direction: a Responses request), a directory of them (*.sse; *.json), or a generated corpus")
	chunks := fs.Int("chunks", benchmark.DefaultChunks, fmt.Sprintf("`N` chunks of a generated stream, at least %d (the default is the corpus of the go test benchmarks in ./bench)", benchmark.MinChunks))
	requests := fs.Int("requests", benchmark.DefaultRequests, "requests of a generated request corpus")
	modeName := fs.String("mode", "both", "execution modes: fused, async or both")
	vs := fs.String("vs", "", "peer measured on the same bytes: openai-go, anthropic-sdk-go or none (default: the wire's official SDK)")
	asJSON := fs.Bool("json", false, "print the report as JSON instead of Markdown")
	svgFile := fs.String("svg", "", "also write the chart to `FILE` (SVG)")
	chartCPU := fs.Bool("chart-cpu", false, "chart CPU ns per event instead of wall-clock ns (steadier on a loaded machine)")
	duration := fs.Duration("duration", 0, fmt.Sprintf("time budget of the measurements (default %v; a slow peer adds to it)", benchmark.DefaultDuration))
	iterations := fs.Int("iterations", 0, "run every variant exactly `N` times (at least 1) over the corpus instead of for a duration")
	wide := fs.Bool("wide", false, "print every column (the spread of the samples, events/s, MB/s, CPU and allocations of every mode); the default table is narrow")
	requestFile := fs.String("request", "", "response direction: the engine request (Responses JSON) the stream answers, planned as serve would (tool kinds)")
	upstream := fs.String("upstream", "", "the upstream's base `URL`, as given to serve (chooses the provider quirks)")
	var layer layerFlags
	layer.register(fs)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, benchSynopsis)
		fmt.Fprintln(w, "       [--corpus FILE|DIR|generated [--chunks N]] [--mode fused|async|both] [--vs openai-go|anthropic-sdk-go|none]")
		fmt.Fprintln(w, "       [--json] [--wide] [--svg FILE [--chart-cpu]] [--duration D | --iterations N]")
		fmt.Fprintln(w, "Measures the graph serve runs for a harness and wire over a corpus: per stage and end to end,")
		fmt.Fprintln(w, "events/s, MB/s, ns/event and allocations/event, fused and async side by side, and the official")
		fmt.Fprintln(w, "SDK's accumulator on the same bytes in the same run. Prints a Markdown table (or JSON). A corpus")
		fmt.Fprintln(w, "directory contributes its .sse files of --wire; files of another wire are skipped and named.")
		fmt.Fprintln(w, "The command harnessflow-load measures serve under load instead (see harnessflow-load --help).")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, benchSynopsis, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "bench", benchSynopsis, "unexpected argument %q (bench takes flags only)", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["iterations"] && *iterations < 1 {
		return fail(stderr, "bench", exitUsage, "--iterations %d: want at least 1 (leave it out to measure for --duration)", *iterations)
	}
	if set["duration"] && *duration <= 0 {
		return fail(stderr, "bench", exitUsage, "--duration %v: want a positive duration (leave it out for the default %v)", *duration, benchmark.DefaultDuration)
	}
	if set["chunks"] && *chunks < benchmark.MinChunks {
		return fail(stderr, "bench", exitUsage, "--chunks %d: want at least %d", *chunks, benchmark.MinChunks)
	}
	if *duration != 0 && *iterations != 0 {
		return fail(stderr, "bench", exitUsage, "--duration and --iterations exclude each other")
	}
	wire, err := harness.ParseWire(*wireName)
	if err != nil {
		return fail(stderr, "bench", exitUsage, "--wire: %v", err)
	}
	modes, err := benchModes(*modeName)
	if err != nil {
		return fail(stderr, "bench", exitUsage, "--mode: %v", err)
	}
	if *direction != "response" && *direction != "request" {
		return fail(stderr, "bench", exitUsage, "--direction: %q: want response or request", *direction)
	}
	if err := checkHarness(wire, *harnessName); err != nil {
		return fail(stderr, "bench", exitUsage, "%v", err)
	}
	cfg, err := layer.config(wire, *upstream)
	if err != nil {
		return fail(stderr, "bench", exitUsage, "%v", err)
	}

	var (
		g      *pipeline.Graph
		corpus benchmark.Corpus
		label  string
	)
	name := *harnessName
	if name == "" {
		name = harness.NativeName
	}
	if *direction == "request" {
		if *requestFile != "" {
			return fail(stderr, "bench", exitUsage, "--request is for the response direction (the request corpus is --corpus)")
		}
		if corpus, err = requestCorpus(*corpusArg, *requests); err != nil {
			return fail(stderr, "bench", exitUsage, "--corpus: %v", err)
		}
		// The graph is built for the first request, as serve builds one per
		// request; every request of the corpus runs through it.
		req, err := protocol.DecodeRequest(corpus.Inputs[0])
		if err != nil {
			return fail(stderr, "bench", exitUsage, "--corpus: first request: %v", err)
		}
		turn, err := harness.Prepare(cfg, *harnessName, req, nil)
		if err != nil {
			return fail(stderr, "bench", exitUsage, "%v", err)
		}
		g = turn.RequestGraph
		label = fmt.Sprintf("%s · %s · request direction (%s)", name, wire, turn.Route)
	} else {
		var (
			route      string
			layerAlone bool
		)
		if g, route, layerAlone, err = responseGraph(ctx, cfg, *harnessName, *requestFile); err != nil {
			return fail(stderr, "bench", exitUsage, "%v", err)
		}
		if corpus, err = streamCorpus(*corpusArg, wire, *chunks, stderr); err != nil {
			return fail(stderr, "bench", exitUsage, "--corpus: %v", err)
		}
		if !layerAlone {
			// A harness's post node or bridge may change what the stream
			// means (a parsed action, a bridged call): check nothing.
			corpus.Expect = nil
		}
		label = fmt.Sprintf("%s · %s · response direction (%s)", name, wire, route)
	}

	opts := benchmark.Options{Modes: modes, Duration: *duration, Iterations: *iterations}
	peer, err := benchPeer(*vs, string(wire), *direction)
	if err != nil {
		return fail(stderr, "bench", exitUsage, "--vs: %v", err)
	}
	if peer != nil {
		opts.Peers = []benchmark.Peer{*peer}
	}

	machine := benchmark.ReadMachine()
	fmt.Fprintf(stderr, "harnessflow bench: %s over %s …\n", g.Name(), corpus.Name)
	res, err := benchmark.Graph(ctx, g, corpus, opts)
	if err != nil {
		if ctx.Err() != nil {
			return fail(stderr, "bench", exitError, "interrupted")
		}
		return fail(stderr, "bench", exitUsage, "%v", err)
	}
	machine.LoadAfter = benchmark.LoadAverage()
	res.Label = label
	report := &benchmark.Report{
		Title:    "harnessflow bench",
		Command:  "harnessflow bench " + strings.Join(args, " "),
		Machine:  machine,
		Results:  []*benchmark.Result{res},
		ChartCPU: *chartCPU,
		Wide:     *wide,
	}
	if *svgFile != "" {
		svg, err := report.SVG()
		if err == nil {
			err = os.WriteFile(*svgFile, svg, 0o644)
		}
		if err != nil {
			return fail(stderr, "bench", exitError, "--svg: %v", err)
		}
	}
	if *asJSON {
		err = report.WriteJSON(stdout)
	} else {
		err = report.WriteMarkdown(stdout)
	}
	if err != nil {
		return fail(stderr, "bench", exitError, "%v", err)
	}
	return exitOK
}

// benchModes parses --mode.
func benchModes(s string) ([]pipeline.Mode, error) {
	if s == "both" {
		return []pipeline.Mode{pipeline.Fused, pipeline.Async}, nil
	}
	if s == "" {
		return nil, errors.New(`want fused, async or both`)
	}
	m, err := pipeline.ParseMode(s)
	if err != nil {
		return nil, err
	}
	return []pipeline.Mode{m}, nil
}

// responseGraph is the response graph of the turn serve would run for the
// harness: planned from the request file when given, else prepared for an
// empty request (no tool kinds). Without a harness, a wire that has no
// native route (messages) is measured by its protocol layer alone. It also
// returns the route's name, and whether the graph is the protocol layer
// alone (no harness.post, no harness.bridge).
func responseGraph(ctx context.Context, cfg harness.Config, name, requestFile string) (g *pipeline.Graph, route string, layerAlone bool, err error) {
	open := harness.Opening{Harness: name, Fallback: harness.FallbackNoRoute}
	if requestFile != "" {
		if open.Request, err = loadRequest(requestFile); err != nil {
			return nil, "", false, err
		}
	}
	ex, err := harness.Open(ctx, cfg, open)
	switch {
	case err != nil && requestFile != "":
		return nil, "", false, fmt.Errorf("--request %s: %w", requestFile, err)
	case err != nil:
		return nil, "", false, err
	case ex.Unary:
		return nil, "", false, fmt.Errorf("harness %s answers this request with one JSON body, not a stream: bench measures streams", ex.Turn.Spec.Name)
	}
	if g, err = ex.Graph(); err != nil {
		return nil, "", false, err
	}
	route = "protocol layer only: no native route"
	if ex.Turn != nil {
		route = ex.Turn.Route.String()
	}
	return g, route, ex.LayerAlone(), nil
}

// streamCorpus loads or generates the corpus of a response graph. A
// recorded stream of another wire is refused: a file alone with an error, a
// directory's by leaving it out (named on stderr), an error when none is
// left.
func streamCorpus(arg string, wire harness.Wire, chunks int, stderr io.Writer) (benchmark.Corpus, error) {
	if arg == "generated" {
		return benchmark.Generate(string(wire), chunks)
	}
	c, err := benchmark.LoadCorpus(arg, ".sse")
	if err != nil {
		return c, err
	}
	names := corpusNames(arg, ".sse", len(c.Inputs))
	var kept [][]byte
	var skipped []string
	for i, in := range c.Inputs {
		w, why := bodyWire(in)
		if w == "" || w == wire {
			kept = append(kept, in)
			continue
		}
		if len(c.Inputs) == 1 {
			return c, fmt.Errorf("%s is a %s stream (%s), not %s: use --wire %s", arg, w, why, wire, w)
		}
		skipped = append(skipped, fmt.Sprintf("%s (%s)", names[i], w))
	}
	if len(kept) == 0 {
		return c, fmt.Errorf("%s has no %s streams (%s): use --wire with their wire", arg, wire, strings.Join(skipped, ", "))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(stderr, "harnessflow bench: --corpus %s: skipping the streams of other wires than %s: %s\n", arg, wire, strings.Join(skipped, ", "))
		c.Inputs = kept
		c.Name = fmt.Sprintf("%s (%d %s stream(s))", arg, len(kept), wire)
	}
	return c, nil
}

// corpusNames lists the files benchmark.LoadCorpus reads from a directory
// (regular, not hidden, with the extension, sorted), to name them; n
// placeholders when the listing does not match the n inputs read.
func corpusNames(dir, ext string, n int) []string {
	var names []string
	if ents, err := os.ReadDir(dir); err == nil {
		for _, e := range ents {
			if name := e.Name(); e.Type().IsRegular() && !strings.HasPrefix(name, ".") && strings.HasSuffix(name, ext) {
				names = append(names, name)
			}
		}
	}
	if len(names) != n {
		names = names[:0]
		for i := range n {
			names = append(names, fmt.Sprintf("input %d", i+1))
		}
	}
	return names
}

// requestCorpus loads or generates the corpus of a request graph.
func requestCorpus(arg string, n int) (benchmark.Corpus, error) {
	if arg == "generated" {
		return benchmark.GenerateRequests(n)
	}
	return benchmark.LoadCorpus(arg, ".json")
}

// benchPeer resolves --vs: "" is the wire's official SDK on the response
// direction and none on the request direction.
func benchPeer(vs, wire, direction string) (*benchmark.Peer, error) {
	switch {
	case vs == "none":
		return nil, nil
	case direction == "request":
		if vs != "" {
			return nil, errors.New("the request direction has no peer")
		}
		return nil, nil
	case vs == "":
		p, ok := benchmark.PeerFor(wire)
		if !ok {
			return nil, nil
		}
		return &p, nil
	}
	p, err := benchmark.PeerByName(vs)
	if err != nil {
		return nil, err
	}
	if want, _ := benchmark.PeerFor(wire); want.Name != p.Name {
		return nil, fmt.Errorf("%s does not read the %s wire", p.Name, wire)
	}
	return &p, nil
}
