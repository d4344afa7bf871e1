package pipeline

import (
	"errors"
	"fmt"
)

// StageError is a fatal error raised by one node of a run. Seq is the 1-based
// sequence number of the input the node was handling; while finishing
// (Finish set) it is the number of the node's last input. The source has no
// sequence numbers (Seq 0).
type StageError struct {
	Stage  string
	Seq    uint64
	Finish bool
	// Lifecycle is "open" or "close" for an error of the stage's, source's
	// or sink's per-run Resource, and empty otherwise.
	Lifecycle string
	Err       error
}

// Lifecycle phases of StageError.
const (
	LifecycleOpen  = "open"
	LifecycleClose = "close"
)

// Error returns e.g. "stage chat.decode: input 3: ...", "stage X: finish:
// ..." or "stage tap.record: open: ...".
func (e *StageError) Error() string {
	if e.Lifecycle != "" {
		return fmt.Sprintf("stage %s: %s: %v", e.Stage, e.Lifecycle, e.Err)
	}
	if e.Finish {
		return fmt.Sprintf("stage %s: finish: %v", e.Stage, e.Err)
	}
	if e.Seq == 0 {
		return fmt.Sprintf("stage %s: %v", e.Stage, e.Err)
	}
	return fmt.Sprintf("stage %s: input %d: %v", e.Stage, e.Seq, e.Err)
}

// Unwrap returns the stage's own error.
func (e *StageError) Unwrap() error { return e.Err }

// PanicError is a panic raised inside a stage, source or sink, turned into an error.
type PanicError struct {
	Value any
	Stack []byte
}

// Error returns "panic: VALUE".
func (p *PanicError) Error() string { return fmt.Sprintf("panic: %v", p.Value) }

// GraphError reports an invalid graph or graph edit.
type GraphError struct {
	Op   string // "new", "insert-before", "replace", ...
	Node string
	Err  error
}

// Error returns e.g. `pipeline: insert-after "x": type mismatch at joint: ...`.
func (e *GraphError) Error() string {
	if e.Node == "" {
		return fmt.Sprintf("pipeline: %s: %v", e.Op, e.Err)
	}
	return fmt.Sprintf("pipeline: %s %q: %v", e.Op, e.Node, e.Err)
}

// Unwrap returns the cause.
func (e *GraphError) Unwrap() error { return e.Err }

// Sentinel causes of GraphError, for errors.Is. ErrTypeMismatch is also
// the cause of a run error when a middleware, a go-streams connector or an
// untyped run (Graph.AsFlow) hands a stage a value of the wrong type.
var (
	ErrUnknownNode   = errors.New("no node with this name")
	ErrDuplicateNode = errors.New("a node with this name already exists")
	ErrTypeMismatch  = errors.New("type mismatch at joint")
	ErrEmptyGraph    = errors.New("graph has no nodes")
	ErrBadName       = errors.New("node name must be non-empty")
	ErrNilFactory    = errors.New("node has no stage factory")
	ErrNilMiddleware = errors.New("middleware is nil")
)

// SourceName and SinkName name the non-node parts of a run in StageError.Stage.
const (
	SourceName = "source"
	SinkName   = "sink"
)
