package pipeline

import (
	"context"
	"errors"
)

// Then composes two stages into one: every output of a is pushed into b.
// The composed stage is a Resource opening and closing those of a and b.
// The joint is type-checked by the compiler. Finish, when either stage has
// one, flushes a first (its outputs go through b) and then b.
func Then[A, B, C any](a Stage[A, B], b Stage[B, C]) Stage[A, C] {
	return &chained[A, B, C]{a: a, b: b}
}

type chained[A, B, C any] struct {
	a    Stage[A, B]
	b    Stage[B, C]
	ctx  context.Context
	emit func(C)
	err  error
	push func(B) // bound once, so composing costs no allocation per element
}

func (c *chained[A, B, C]) bind(ctx context.Context, emit func(C)) {
	c.ctx, c.emit = ctx, emit
	if c.push == nil {
		c.push = func(v B) {
			if c.err != nil {
				return
			}
			c.err = c.b.Push(c.ctx, v, c.emit)
		}
	}
}

// Push pushes in through a, then every output of a through b.
func (c *chained[A, B, C]) Push(ctx context.Context, in A, emit func(C)) error {
	c.bind(ctx, emit)
	if err := c.a.Push(ctx, in, c.push); err != nil {
		return err
	}
	err := c.err
	c.err = nil
	return err
}

// Finish flushes a (through b), then b.
func (c *chained[A, B, C]) Finish(ctx context.Context, emit func(C)) error {
	c.bind(ctx, emit)
	if f, ok := c.a.(Finisher[B]); ok {
		if err := f.Finish(ctx, c.push); err != nil {
			return err
		}
		if c.err != nil {
			return c.err
		}
	}
	if f, ok := c.b.(Finisher[C]); ok {
		return f.Finish(ctx, emit)
	}
	return nil
}

// Open opens a, then b, when they are Resources (see Resource); when b's
// Open fails, a is closed again.
func (c *chained[A, B, C]) Open(ctx context.Context) error {
	ra, _ := c.a.(Resource)
	rb, _ := c.b.(Resource)
	if ra != nil {
		if err := ra.Open(ctx); err != nil {
			return err
		}
	}
	if rb != nil {
		if err := rb.Open(ctx); err != nil {
			if ra != nil {
				return errors.Join(err, ra.Close())
			}
			return err
		}
	}
	return nil
}

// Close closes b, then a, when they are Resources, and joins their errors.
func (c *chained[A, B, C]) Close() error {
	var errs []error
	if rb, ok := c.b.(Resource); ok {
		errs = append(errs, rb.Close())
	}
	if ra, ok := c.a.(Resource); ok {
		errs = append(errs, ra.Close())
	}
	return errors.Join(errs...)
}
