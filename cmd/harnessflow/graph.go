package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
)

func runGraph(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("graph", flag.ContinueOnError)
	fs.SetOutput(stderr)
	direction := fs.String("direction", "response", "request or response")
	wireName := fs.String("wire", "chat", "upstream wire: chat, messages or responses")
	format := fs.String("format", "text", "text, mermaid or dot")
	var layer layerFlags
	layer.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: harnessflow graph NAME [--direction request|response] [--wire chat|messages|responses] [--format text|mermaid|dot]")
		fmt.Fprintln(stderr, "NAME is a harness name (see 'harnessflow harnesses'); \"native\" is the no-harness translation.")
		fmt.Fprintln(stderr, "The graph is the one the proxy runs for NAME on that wire (the route may be served by native).")
		fs.PrintDefaults()
	}
	if err := fs.Parse(reorder(fs, args)); err != nil {
		return flagStatus(err)
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	name := fs.Arg(0)
	if _, ok := harness.Lookup(name); !ok {
		return fail(stderr, "graph", exitUsage, "unknown harness %q (known: %s)", name, strings.Join(harnessNames(), ", "))
	}
	wire, err := harness.ParseWire(*wireName)
	if err != nil {
		return fail(stderr, "graph", exitUsage, "%v", err)
	}
	cfg, err := layer.config(wire, "")
	if err != nil {
		return fail(stderr, "graph", exitUsage, "%v", err)
	}
	// An empty request is shaped so that the response graph is the one the
	// body asks for (unary for harnesses whose bodies do not stream).
	turn, err := harness.Plan(context.Background(), cfg, name, &protocol.ResponsesRequest{Stream: true}, nil)
	if err != nil {
		if turn, err = harness.Prepare(cfg, name, nil, nil); err != nil {
			return fail(stderr, "graph", exitUsage, "%v", err)
		}
	}
	var g *pipeline.Graph
	switch *direction {
	case "response":
		if g, err = turn.ResponseGraph(harness.ResponseOptions{Unary: turn.Unary()}); err != nil {
			return fail(stderr, "graph", exitUsage, "%v", err)
		}
	case "request":
		g = turn.RequestGraph
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

func runHarnesses(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("harnesses", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return flagStatus(err)
	}
	for _, h := range harness.All() {
		wires := make([]string, len(h.Wires))
		for i, w := range h.Wires {
			wires[i] = string(w)
		}
		fmt.Fprintf(stdout, "%-18s %-26s %s\n", h.Name, strings.Join(wires, ","), h.Description)
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
