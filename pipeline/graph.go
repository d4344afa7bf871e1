package pipeline

import (
	"fmt"
	"reflect"
	"slices"
)

// Graph is an immutable blueprint: an ordered list of named nodes whose
// types line up at every joint. Edits return a new Graph; the receiver is
// never changed, so a Graph may be shared freely between goroutines and runs.
type Graph struct {
	name  string
	nodes []Node
}

// New builds a graph from nodes, checking names and the types at every joint.
func New(name string, nodes ...Node) (*Graph, error) {
	return build("new", name, slices.Clone(nodes))
}

// Must returns g, or panics with err. It is meant for package-level graphs
// built from constant declarations, where an error is a programming mistake.
func Must(g *Graph, err error) *Graph {
	if err != nil {
		panic(err)
	}
	return g
}

func build(op, name string, nodes []Node) (*Graph, error) {
	if len(nodes) == 0 {
		return nil, &GraphError{Op: op, Err: ErrEmptyGraph}
	}
	seen := make(map[string]bool, len(nodes))
	for i, n := range nodes {
		if n.info.Name == "" {
			return nil, &GraphError{Op: op, Err: fmt.Errorf("%w (node %d)", ErrBadName, i)}
		}
		if n.factory == nil {
			return nil, &GraphError{Op: op, Node: n.info.Name, Err: fmt.Errorf("%w (node %d)", ErrNilFactory, i)}
		}
		if seen[n.info.Name] {
			return nil, &GraphError{Op: op, Node: n.info.Name, Err: ErrDuplicateNode}
		}
		seen[n.info.Name] = true
		if i > 0 {
			prev := nodes[i-1]
			if prev.info.Out != n.info.In {
				return nil, &GraphError{Op: op, Node: n.info.Name, Err: fmt.Errorf("%w: %s emits %v, %s takes %v",
					ErrTypeMismatch, prev.info.Name, prev.info.Out, n.info.Name, n.info.In)}
			}
		}
	}
	return &Graph{name: name, nodes: nodes}, nil
}

// Name returns the graph's name.
func (g *Graph) Name() string { return g.name }

// In is the type of the graph's input elements.
func (g *Graph) In() reflect.Type { return g.nodes[0].info.In }

// Out is the type of the graph's output elements.
func (g *Graph) Out() reflect.Type { return g.nodes[len(g.nodes)-1].info.Out }

// Len returns the number of nodes.
func (g *Graph) Len() int { return len(g.nodes) }

// Nodes describes the nodes in order.
func (g *Graph) Nodes() []NodeInfo {
	out := make([]NodeInfo, len(g.nodes))
	for i, n := range g.nodes {
		out[i] = n.info
	}
	return out
}

// Names lists the node names in order.
func (g *Graph) Names() []string {
	out := make([]string, len(g.nodes))
	for i, n := range g.nodes {
		out[i] = n.info.Name
	}
	return out
}

// Node returns the node called name.
func (g *Graph) Node(name string) (Node, bool) {
	i := g.index(name)
	if i < 0 {
		return Node{}, false
	}
	return g.nodes[i], true
}

func (g *Graph) index(name string) int {
	return slices.IndexFunc(g.nodes, func(n Node) bool { return n.info.Name == name })
}

// Renamed returns a copy of g under another name.
func (g *Graph) Renamed(name string) *Graph { c := *g; c.name = name; return &c }

func (g *Graph) edit(op, anchor string, f func(nodes []Node, i int) ([]Node, error)) (*Graph, error) {
	i := -1
	if anchor != "" {
		if i = g.index(anchor); i < 0 {
			return nil, &GraphError{Op: op, Node: anchor, Err: ErrUnknownNode}
		}
	}
	nodes, err := f(slices.Clone(g.nodes), i)
	if err != nil {
		return nil, &GraphError{Op: op, Node: anchor, Err: err}
	}
	return build(op, g.name, nodes)
}

// nodesEdit adapts an edit that cannot fail to edit.
func nodesEdit(f func(nodes []Node, i int) []Node) func([]Node, int) ([]Node, error) {
	return func(ns []Node, i int) ([]Node, error) { return f(ns, i), nil }
}

// InsertBefore returns a graph with nodes inserted just before the node called anchor.
func (g *Graph) InsertBefore(anchor string, nodes ...Node) (*Graph, error) {
	if anchor == "" {
		return nil, &GraphError{Op: "insert-before", Err: ErrUnknownNode}
	}
	return g.edit("insert-before", anchor, nodesEdit(func(ns []Node, i int) []Node { return slices.Insert(ns, i, nodes...) }))
}

// InsertAfter returns a graph with nodes inserted just after the node called anchor.
func (g *Graph) InsertAfter(anchor string, nodes ...Node) (*Graph, error) {
	if anchor == "" {
		return nil, &GraphError{Op: "insert-after", Err: ErrUnknownNode}
	}
	return g.edit("insert-after", anchor, nodesEdit(func(ns []Node, i int) []Node { return slices.Insert(ns, i+1, nodes...) }))
}

// Append returns a graph with nodes added at the end.
func (g *Graph) Append(nodes ...Node) (*Graph, error) {
	return g.edit("append", "", nodesEdit(func(ns []Node, _ int) []Node { return append(ns, nodes...) }))
}

// Prepend returns a graph with nodes added at the start.
func (g *Graph) Prepend(nodes ...Node) (*Graph, error) {
	return g.edit("prepend", "", nodesEdit(func(ns []Node, _ int) []Node { return slices.Insert(ns, 0, nodes...) }))
}

// Replace returns a graph where the node called name is replaced by node.
func (g *Graph) Replace(name string, node Node) (*Graph, error) {
	if name == "" {
		return nil, &GraphError{Op: "replace", Err: ErrUnknownNode}
	}
	return g.edit("replace", name, nodesEdit(func(ns []Node, i int) []Node { ns[i] = node; return ns }))
}

// Remove returns a graph without the node called name. The neighbours of the
// removed node must still fit together.
func (g *Graph) Remove(name string) (*Graph, error) {
	if name == "" {
		return nil, &GraphError{Op: "remove", Err: ErrUnknownNode}
	}
	return g.edit("remove", name, nodesEdit(func(ns []Node, i int) []Node { return slices.Delete(ns, i, i+1) }))
}

// Wrap returns a graph where middleware decorates the node called name.
// Middleware added later wraps around earlier middleware (and around typed
// wraps, see WrapStage). A nil mw is ErrNilMiddleware; an unknown name
// ErrUnknownNode.
func (g *Graph) Wrap(name string, mw Middleware) (*Graph, error) {
	if mw == nil {
		return nil, &GraphError{Op: "wrap", Node: name, Err: ErrNilMiddleware}
	}
	if name == "" {
		return nil, &GraphError{Op: "wrap", Err: ErrUnknownNode}
	}
	return g.edit("wrap", name, nodesEdit(func(ns []Node, i int) []Node {
		ns[i].wraps = append(slices.Clip(ns[i].wraps), wrapper{mw: mw})
		return ns
	}))
}

// WrapAll returns a graph where middleware decorates every node.
func (g *Graph) WrapAll(mw Middleware) (*Graph, error) {
	if mw == nil {
		return nil, &GraphError{Op: "wrap", Err: ErrNilMiddleware}
	}
	return g.edit("wrap", "", nodesEdit(func(ns []Node, _ int) []Node {
		for i := range ns {
			ns[i].wraps = append(slices.Clip(ns[i].wraps), wrapper{mw: mw})
		}
		return ns
	}))
}

// Configure returns a graph where opts (Describe, AsyncBoundary) apply to
// the node called name.
func (g *Graph) Configure(name string, opts ...NodeOption) (*Graph, error) {
	if name == "" {
		return nil, &GraphError{Op: "configure", Err: ErrUnknownNode}
	}
	return g.edit("configure", name, nodesEdit(func(ns []Node, i int) []Node {
		ns[i] = ns[i].With(opts...)
		return ns
	}))
}

// Concat returns a graph running g and then each of more, checked at every joint.
func (g *Graph) Concat(more ...*Graph) (*Graph, error) {
	nodes := slices.Clone(g.nodes)
	for _, m := range more {
		nodes = append(nodes, m.nodes...)
	}
	return build("concat", g.name, nodes)
}

// InputReusable reports whether a fused run of g leaves its source free to
// reuse an element's memory as soon as emitting it returned: the first
// node keeps no reference to its input (KeepsNoInput) and no middleware
// wraps it. In the async mode an element is still queued when the emit
// returns, so a source may not reuse it whatever this reports.
func (g *Graph) InputReusable() bool {
	return g != nil && len(g.nodes) > 0 && g.nodes[0].info.KeepsNoInput && len(g.nodes[0].wraps) == 0
}
