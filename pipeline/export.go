package pipeline

import (
	"fmt"
	"strings"
)

// Describe renders the graph as indented text, one node per line with its
// types, e.g. for `harnessflow graph NAME`.
func (g *Graph) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %v → %v\n", g.name, g.In(), g.Out())
	for i, n := range g.nodes {
		fmt.Fprintf(&b, "  %d. %-22s %v → %v", i+1, n.info.Name, n.info.In, n.info.Out)
		if n.info.Description != "" {
			fmt.Fprintf(&b, "  — %s", n.info.Description)
		}
		if k := len(n.wraps); k > 0 {
			fmt.Fprintf(&b, "  [+%d middleware]", k)
		}
		if n.info.AsyncBoundary {
			b.WriteString("  [async boundary]")
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Mermaid renders the graph as a Mermaid flowchart.
func (g *Graph) Mermaid() string {
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	for i, n := range g.nodes {
		fmt.Fprintf(&b, "  n%d[\"%s\"]\n", i, mermaidEscape(n.info.Name))
	}
	for i := 1; i < len(g.nodes); i++ {
		fmt.Fprintf(&b, "  n%d -- \"%s\" --> n%d\n", i-1, mermaidEscape(g.nodes[i].info.In.String()), i)
	}
	return b.String()
}

func mermaidEscape(s string) string {
	return strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;").Replace(s)
}

// DOT renders the graph in Graphviz DOT.
func (g *Graph) DOT() string {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %q {\n  rankdir=LR;\n  node [shape=box];\n", g.name)
	for i, n := range g.nodes {
		fmt.Fprintf(&b, "  n%d [label=%q];\n", i, n.info.Name)
	}
	for i := 1; i < len(g.nodes); i++ {
		fmt.Fprintf(&b, "  n%d -> n%d [label=%q];\n", i-1, i, g.nodes[i].info.In.String())
	}
	b.WriteString("}\n")
	return b.String()
}

// Format renders the graph as "text", "mermaid" or "dot".
//
// Deprecated: choosing a rendering by name is the job of the caller (the
// CLI's --format flag); call Describe, Mermaid or DOT.
func (g *Graph) Format(format string) (string, error) {
	switch format {
	case "text", "":
		return g.Describe(), nil
	case "mermaid":
		return g.Mermaid(), nil
	case "dot":
		return g.DOT(), nil
	}
	return "", fmt.Errorf("pipeline: unknown graph format %q (want text, mermaid or dot)", format)
}
