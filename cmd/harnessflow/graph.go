package main

import (
	"context"
	"flag"
	"fmt"
	"github.com/harnessflow/harnessflow/codec"
	"io"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/pipeline"
)

// graphSynopsis is the short usage of graph.
const graphSynopsis = "Usage: harnessflow graph NAME [--direction request|response] [--wire chat|messages|responses] [--format text|mermaid|dot]"

// runGraph implements `harnessflow graph NAME`: the stage graph of a route.
func runGraph(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("graph", flag.ContinueOnError)
	fs.SetOutput(stderr)
	direction := fs.String("direction", "response", "request or response")
	wireName := fs.String("wire", "", "upstream wire: "+codec.Choices()+" (default: chat, or the first wire the harness shapes)")
	format := fs.String("format", "text", "text, mermaid or dot")
	var layer layerFlags
	layer.register(fs)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, graphSynopsis)
		fmt.Fprintln(w, "NAME is a harness name (see 'harnessflow harnesses'); \"native\" is the no-harness translation.")
		fmt.Fprintln(w, "The graph is the one the proxy runs for NAME on that wire; without --wire, chat or the first wire")
		fmt.Fprintln(w, "the harness shapes.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, graphSynopsis, args); !ok {
		return code
	}
	switch {
	case fs.NArg() == 0:
		return usageError(stderr, "graph", graphSynopsis, "missing NAME (a harness: %s)", strings.Join(harnessNames(), ", "))
	case fs.NArg() > 1:
		return usageError(stderr, "graph", graphSynopsis, "unexpected argument %q (one harness name)", fs.Arg(1))
	}
	name := fs.Arg(0)
	if err := harness.CheckName(name); err != nil {
		return fail(stderr, "graph", exitUsage, "%v", err)
	}
	if *wireName == "" {
		*wireName = string(harness.WireChat)
		if s, _ := harness.Lookup(name); len(s.Wires) > 0 && !s.Supports(harness.WireChat) {
			*wireName = string(s.Wires[0])
		}
	}
	wire, err := harness.ParseWire(*wireName)
	if err != nil {
		return fail(stderr, "graph", exitUsage, "--wire: %v", err)
	}
	if err := checkHarness(wire, name); err != nil {
		return fail(stderr, "graph", exitUsage, "%v", strings.TrimPrefix(err.Error(), "--harness: "))
	}
	cfg, err := layer.config(wire, "")
	if err != nil {
		return fail(stderr, "graph", exitUsage, "%v", err)
	}
	// An empty request is shaped so that the response graph is the one the
	// body asks for (unary for harnesses whose bodies do not stream).
	ex, err := harness.Open(context.Background(), cfg, harness.Opening{Harness: name, Fallback: harness.FallbackPrepare})
	if err != nil {
		return fail(stderr, "graph", exitUsage, "%v", err)
	}
	var g *pipeline.Graph
	switch *direction {
	case "response":
		if g, err = ex.Graph(); err != nil {
			return fail(stderr, "graph", exitUsage, "%v", err)
		}
	case "request":
		g = ex.Turn.RequestGraph
	default:
		return fail(stderr, "graph", exitUsage, "unknown direction %q (want request or response)", *direction)
	}
	out, err := formatGraph(g, *format)
	if err != nil {
		return fail(stderr, "graph", exitUsage, "%v", err)
	}
	fmt.Fprint(stdout, out)
	return exitOK
}

// formatGraph renders g for --format: text (Describe), mermaid or dot.
func formatGraph(g *pipeline.Graph, format string) (string, error) {
	render := map[string]func(*pipeline.Graph) string{
		"text": (*pipeline.Graph).Describe, "": (*pipeline.Graph).Describe,
		"mermaid": (*pipeline.Graph).Mermaid, "dot": (*pipeline.Graph).DOT,
	}
	if r, ok := render[format]; ok {
		return r(g), nil
	}
	return "", fmt.Errorf("unknown graph format %q (want text, mermaid or dot)", format)
}

// runHarnesses implements `harnessflow harnesses`: the registered harnesses,
// the wires each shapes and a one-line description.
func runHarnesses(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("harnesses", flag.ContinueOnError)
	fs.SetOutput(stderr)
	const synopsis = "Usage: harnessflow harnesses"
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, synopsis)
		fmt.Fprintln(w, "Lists the harnesses of this build, one per line: the name (the NAME of the proxy's")
		fmt.Fprintln(w, "/h/NAME/v1/responses route and of --harness), the upstream wires whose requests it shapes")
		fmt.Fprintln(w, "(serve --upstream-wire), and what the model sees; below a harness, its variants")
		fmt.Fprintln(w, "(--variant HARNESS=VALUE,…). It takes no flags or arguments.")
	}
	if code, ok := parseFlags(fs, synopsis, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "harnesses", synopsis, "%s", extraArgs(fs, 0))
	}
	for _, h := range harness.All() {
		wires := make([]string, len(h.Wires))
		for i, w := range h.Wires {
			wires[i] = string(w)
		}
		fmt.Fprintf(stdout, "%-18s %-26s %s\n", h.Name, strings.Join(wires, ","), h.Description)
		for _, v := range h.Variants {
			fmt.Fprintf(stdout, "  variant %-9s %-26s %s\n", v.Name, strings.Join(v.MarkedValues("*"), "|"), v.Doc)
		}
	}
	return exitOK
}

func harnessNames() []string {
	var names []string
	for _, h := range harness.All() {
		names = append(names, h.Name)
	}
	return names
}

// flagStatus maps a flag parse error to an exit status (--help is success).
func flagStatus(err error) int {
	if err == flag.ErrHelp {
		return exitOK
	}
	return exitUsage
}

// reorder moves flags after positional arguments to the front, so that
// "graph native --format dot" works like "graph --format dot native".
func reorder(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) > 1 && a[0] == '-' {
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if strings.Contains(name, "=") {
				continue
			}
			if f := fs.Lookup(name); f != nil {
				if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
					continue
				}
				if i+1 < len(args) {
					flags = append(flags, args[i+1])
					i++
				}
			}
			continue
		}
		pos = append(pos, a)
	}
	return append(flags, pos...)
}
