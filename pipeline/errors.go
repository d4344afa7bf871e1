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
	Err    error
}

func (e *StageError) Error() string {
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

func (p *PanicError) Error() string { return fmt.Sprintf("panic: %v", p.Value) }

// GraphError reports an invalid graph or graph edit.
type GraphError struct {
	Op   string // "new", "insert-before", "replace", ...
	Node string
	Err  error
}

func (e *GraphError) Error() string {
	if e.Node == "" {
		return fmt.Sprintf("pipeline: %s: %v", e.Op, e.Err)
	}
	return fmt.Sprintf("pipeline: %s %q: %v", e.Op, e.Node, e.Err)
}

// Unwrap returns the cause.
func (e *GraphError) Unwrap() error { return e.Err }

// Sentinel causes of GraphError, for errors.Is.
var (
	ErrUnknownNode   = errors.New("no node with this name")
	ErrDuplicateNode = errors.New("a node with this name already exists")
	ErrTypeMismatch  = errors.New("type mismatch at joint")
	ErrEmptyGraph    = errors.New("graph has no nodes")
	ErrBadName       = errors.New("node name must be non-empty")
)

// ErrSourceStage and ErrSinkStage name the non-node parts of a run in StageError.Stage.
const (
	SourceName = "source"
	SinkName   = "sink"
)
