package pipeline

import (
	"sync"
	"time"
)

// NodeStats is the running total of one node's observations.
type NodeStats struct {
	Node    string
	In      uint64
	Out     uint64
	Errors  uint64
	Elapsed time.Duration
}

// Stats is an Observer that totals observations per node. It is safe for
// concurrent use and may be shared by many runs.
type Stats struct {
	mu    sync.Mutex
	order []string
	nodes map[string]*NodeStats
}

// NewStats returns an empty Stats.
func NewStats() *Stats { return &Stats{nodes: map[string]*NodeStats{}} }

// Observe adds one observation.
func (s *Stats) Observe(o Observation) {
	s.mu.Lock()
	n := s.nodes[o.Node]
	if n == nil {
		n = &NodeStats{Node: o.Node}
		s.nodes[o.Node] = n
		s.order = append(s.order, o.Node)
	}
	if !o.Finish {
		n.In++
	}
	n.Out += uint64(o.Outputs)
	if o.Err != nil {
		n.Errors++
	}
	n.Elapsed += o.Elapsed
	s.mu.Unlock()
}

// Snapshot returns the totals in the order nodes were first seen.
func (s *Stats) Snapshot() []NodeStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]NodeStats, 0, len(s.order))
	for _, name := range s.order {
		out = append(out, *s.nodes[name])
	}
	return out
}
