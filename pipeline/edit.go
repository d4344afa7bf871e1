package pipeline

// An Edit changes a graph into another: inserts a node, wraps the nodes
// with middleware. It is the one form every layer uses to add stages to a
// graph it did not build (harness.Exchange.Graph, server.Config.Extend,
// the CLI's operator stages). An edit holds no lifetime of its own: a stage
// that needs one per run (a file, a connection) implements [Resource], which
// every run opens and closes.
type Edit func(g *Graph) (*Graph, error)

// Apply returns g with edits applied in order; a nil edit is skipped. The
// first failing edit's error is returned.
func Apply(g *Graph, edits ...Edit) (*Graph, error) {
	for _, e := range edits {
		if e == nil {
			continue
		}
		var err error
		if g, err = e(g); err != nil {
			return nil, err
		}
	}
	return g, nil
}
