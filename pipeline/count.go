package pipeline

import "errors"

// NodeCount is one node's totals in one run.
type NodeCount struct {
	Node    string
	Index   int    // position of the node in the graph
	Inputs  uint64 // elements pushed into the node
	Outputs uint64 // elements the node passed on (emitted before the run failed)
	Failed  bool   // the run ended with this node's error
}

// A Counter takes the per-node totals of a run once, when the run ends (the
// counts of every node, in graph order, also when the run failed). It is
// what a proxy with thousands of streams wants from a run: how many
// elements each node took and gave, at no cost per element — see
// WithCounter.
type Counter interface {
	Count(counts []NodeCount)
}

// WithCounter installs c, called once with the run's per-node totals before
// Run returns. In the fused mode the totals cost no call per element: a
// node's inputs are the count its link keeps anyway, and its outputs are
// the next node's (or the sink's) inputs, so the chain runs as it does
// unobserved. The async mode totals the nodes' observations. It can be
// combined with WithObserver, which still sees every element.
func WithCounter(c Counter) RunOption { return func(cfg *runConfig) { cfg.counter = c } }

// linkCounts returns the totals of a fused run from what its links counted:
// node i's inputs, and as its outputs node i+1's inputs (sinkSeq, the sink's,
// for the last node).
func linkCounts(g *Graph, insts []instance, sinkSeq uint64, err error) []NodeCount {
	counts := make([]NodeCount, len(insts))
	for i, in := range insts {
		counts[i] = NodeCount{Node: g.nodes[i].info.Name, Index: i, Inputs: in.seqNo()}
		if i > 0 {
			counts[i-1].Outputs = counts[i].Inputs
		}
	}
	if n := len(counts); n > 0 {
		counts[n-1].Outputs = sinkSeq
	}
	markFailed(counts, err)
	return counts
}

// markFailed marks the node whose error ended the run.
func markFailed(counts []NodeCount, err error) {
	se, ok := errors.AsType[*StageError](err)
	if !ok {
		return
	}
	for i := range counts {
		if counts[i].Node == se.Stage {
			counts[i].Failed = true
			return
		}
	}
}

// tally totals the observations of an async run per node, and passes each
// on to the run's own observer, if any. Every node's observations come from
// one goroutine (its own or its segment's), so each slot has one writer;
// the totals are read once the run's goroutines are gone.
type tally struct {
	next   Observer
	counts []NodeCount
}

func newTally(g *Graph, next Observer) *tally {
	t := &tally{next: next, counts: make([]NodeCount, len(g.nodes))}
	for i, n := range g.nodes {
		t.counts[i] = NodeCount{Node: n.info.Name, Index: i}
	}
	return t
}

// Observe counts one observation.
func (t *tally) Observe(o Observation) {
	if o.Index >= 0 && o.Index < len(t.counts) {
		c := &t.counts[o.Index]
		if !o.Finish {
			c.Inputs++
		}
		c.Outputs += uint64(o.Outputs)
	}
	if t.next != nil {
		t.next.Observe(o)
	}
}
