// Package sinks provides the outputs of pipeline runs: an in-memory
// collector, a channel, a function and a JSON Lines writer of events. The
// Responses event writer is in wire/responses.
package sinks

import (
	"context"

	"github.com/harnessflow/harnessflow/pipeline"
)

// Collector keeps every element it accepts. Elements that implement
// pipeline.Borrowed are copied with Own first, so they stay valid.
type Collector[T any] struct {
	items []T
	own   func(T) T
}

// Collect returns an empty Collector.
func Collect[T any]() *Collector[T] {
	return &Collector[T]{own: pipeline.OwnFunc[T]()}
}

// Accept appends v.
func (c *Collector[T]) Accept(v T) error {
	if c.own != nil {
		v = c.own(v)
	}
	c.items = append(c.items, v)
	return nil
}

// Items returns what was collected so far.
func (c *Collector[T]) Items() []T { return c.items }

// Reset forgets what was collected.
func (c *Collector[T]) Reset() { c.items = c.items[:0] }

// ChanSink sends every element on a channel, giving up when ctx is done.
type ChanSink[T any] struct {
	ctx context.Context
	ch  chan<- T
}

// Chan returns a sink sending on ch. It does not close ch.
func Chan[T any](ctx context.Context, ch chan<- T) *ChanSink[T] {
	return &ChanSink[T]{ctx: ctx, ch: ch}
}

// Accept sends v, or returns the context's error.
func (s *ChanSink[T]) Accept(v T) error {
	select {
	case s.ch <- v:
		return nil
	case <-s.ctx.Done():
		return s.ctx.Err()
	}
}

// Func returns a sink calling fn for every element.
func Func[T any](fn func(T) error) pipeline.Sink[T] { return pipeline.SinkFunc[T](fn) }

// Discard returns a sink that drops everything (for benchmarks).
func Discard[T any]() pipeline.Sink[T] { return pipeline.SinkFunc[T](func(T) error { return nil }) }
