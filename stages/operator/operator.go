// Package operator is the registry of the stages an operator switches on
// (docs/architecture.md#operator-stages): each kind has a name, a
// constructor reading its options, and an anchor saying where its stage
// goes in a response graph. The CLI's flags (--redact, --log-events,
// --record) and the serve configuration's [[stage]] tables both make their
// stages here, so that a kind means the same in both.
package operator

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/harnessflow/harnessflow/pipeline"
)

// Place is where an anchor puts a stage.
type Place int

const (
	// Append puts the stage after the last node.
	Append Place = iota
	// Prepend puts the stage before the first node.
	Prepend
	// Before puts the stage just before the node Anchor.Node.
	Before
	// After puts the stage just after the node Anchor.Node.
	After
	// Around wraps every node with the kind's middleware.
	Around
)

// Anchor is where a kind's stage goes in a graph.
type Anchor struct {
	Place Place
	// Node names the node of Before and After.
	Node string
}

func (a Anchor) String() string {
	switch a.Place {
	case Append:
		return "append"
	case Prepend:
		return "prepend"
	case Before:
		return "before " + a.Node
	case After:
		return "after " + a.Node
	case Around:
		return "around every node"
	}
	return fmt.Sprintf("Place(%d)", int(a.Place))
}

// Stream is what a stage may know of the stream it is made for.
type Stream struct {
	// Wire is the upstream wire ("chat", "messages", "responses").
	Wire string
	// Log is where a stage writes what the operator should see (the
	// recording's file name, the event log); nil discards it.
	Log io.Writer
}

func (s Stream) log() io.Writer {
	if s.Log == nil {
		return io.Discard
	}
	return s.Log
}

// Maker is a kind's stage made from its options, ready for any number of
// streams: Node makes the node placed at the kind's anchor, Middleware
// (for Around) the middleware wrapping every node. Either is called once
// per stream and must be safe for concurrent use.
type Maker struct {
	Node       func(s Stream) pipeline.Node
	Middleware func(s Stream) pipeline.Middleware
}

// Kind is one operator stage kind.
type Kind struct {
	// Name is how flags and [[stage]] tables name the kind.
	Name string
	// Doc is one line on what the stage does.
	Doc string
	// Anchor is where the stage goes.
	Anchor Anchor
	// New reads the options (through o, which reports unknown and
	// ill-typed ones) and makes the stage. It is called once per
	// configuration, not per stream: expensive work (compiling patterns)
	// belongs here.
	New func(o *Options) (Maker, error)
}

var (
	mu    sync.RWMutex
	kinds = map[string]Kind{}
)

// Register adds a kind. It panics on an empty or taken name, a nil New, or
// a Before/After anchor without a node: registration is a program's own
// setup, not input.
func Register(k Kind) {
	if k.Name == "" || k.New == nil {
		panic("operator: Register: a kind needs a name and New")
	}
	if (k.Anchor.Place == Before || k.Anchor.Place == After) && k.Anchor.Node == "" {
		panic("operator: Register: kind " + k.Name + ": anchor " + k.Anchor.String() + " names no node")
	}
	mu.Lock()
	defer mu.Unlock()
	if _, ok := kinds[k.Name]; ok {
		panic("operator: Register: kind " + k.Name + " is registered twice")
	}
	kinds[k.Name] = k
}

// Lookup returns the kind called name.
func Lookup(name string) (Kind, bool) {
	mu.RLock()
	defer mu.RUnlock()
	k, ok := kinds[name]
	return k, ok
}

// Kinds returns the registered kinds by name.
func Kinds() []Kind {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]Kind, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b Kind) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func names() string {
	var ns []string
	for _, k := range Kinds() {
		ns = append(ns, k.Name)
	}
	return strings.Join(ns, ", ")
}

// Stage is a kind made with its options.
type Stage struct {
	kind  Kind
	maker Maker
}

// New makes a stage of the kind called name from its options (nil for
// none). An unknown kind, an unknown option or an ill-typed one is an
// error naming the kind and the option.
func New(name string, options map[string]any) (*Stage, error) {
	k, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("operator: unknown stage kind %q (want one of %s)", name, names())
	}
	o := &Options{kind: name, m: options, used: map[string]bool{}}
	m, err := k.New(o)
	if err == nil {
		err = o.unused()
	}
	if err != nil {
		return nil, err
	}
	if k.Anchor.Place == Around && m.Middleware == nil || k.Anchor.Place != Around && m.Node == nil {
		return nil, fmt.Errorf("operator: stage %q: its kind made no %s", name, map[bool]string{true: "middleware", false: "node"}[k.Anchor.Place == Around])
	}
	return &Stage{kind: k, maker: m}, nil
}

// Kind returns the stage's kind.
func (s *Stage) Kind() Kind { return s.kind }

// Edit returns the edit putting the stage, made for stream st, at its
// kind's anchor.
func (s *Stage) Edit(st Stream) pipeline.Edit {
	return func(g *pipeline.Graph) (*pipeline.Graph, error) {
		var err error
		a := s.kind.Anchor
		switch a.Place {
		case Append:
			g, err = g.Append(s.maker.Node(st))
		case Prepend:
			g, err = g.Prepend(s.maker.Node(st))
		case Before:
			g, err = g.InsertBefore(a.Node, s.maker.Node(st))
		case After:
			g, err = g.InsertAfter(a.Node, s.maker.Node(st))
		case Around:
			g, err = g.WrapAll(s.maker.Middleware(st))
		default:
			err = fmt.Errorf("unknown anchor %s", a)
		}
		if err != nil {
			return nil, fmt.Errorf("operator: stage %q (%s): %w", s.kind.Name, a, err)
		}
		return g, nil
	}
}

// Edits returns the edits of stages for stream st, in order.
func Edits(st Stream, stages ...*Stage) []pipeline.Edit {
	out := make([]pipeline.Edit, len(stages))
	for i, s := range stages {
		out[i] = s.Edit(st)
	}
	return out
}
