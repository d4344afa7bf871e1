package server

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/harnessflow/harnessflow/protocol"
)

// Upstream timeouts (Config.UpstreamHeaderTimeout, UpstreamIdleTimeout).
//
// The header timeout bounds the wait for the upstream's response headers. A
// streaming model server sends them as soon as it accepts the request,
// before the first token, so two minutes only trip on an upstream that hangs,
// a dead connection, or a gateway that holds the headers until the first
// byte of a model that is loading or reading a long prompt. An upstream
// request that does not stream (its body has no "stream": true: unary
// harness turns, some title requests) gets its headers only with the whole
// answer; it waits up to the idle timeout when that is longer.
//
// The idle timeout bounds the silence inside the body: the time one read of
// the upstream's body waits without a byte. It is counted only while the
// proxy waits for the upstream, never while a slow client holds the stream
// back. Five minutes is what Codex CLI itself waits on a silent stream by
// default (stream_idle_timeout_ms), so the proxy never gives up on a
// reasoning model that thinks silently before Codex would; a stalled upstream
// then ends in a clear response.failed instead of a client-side idle error.
const (
	// DefaultUpstreamHeaderTimeout is the default of
	// Config.UpstreamHeaderTimeout.
	DefaultUpstreamHeaderTimeout = 120 * time.Second
	// DefaultUpstreamIdleTimeout is the default of Config.UpstreamIdleTimeout.
	DefaultUpstreamIdleTimeout = 300 * time.Second
)

// Upstream timeout phases: the values of TimeoutError.Phase and of the
// phase label of harnessflow_upstream_timeouts_total.
const (
	// TimeoutHeaders is an upstream that sent no response headers in time.
	TimeoutHeaders = "headers"
	// TimeoutIdle is an upstream that sent no byte of its body for too long.
	TimeoutIdle = "idle"
)

// TimeoutError is an upstream request the proxy gave up on: no response
// headers within the header timeout (Phase TimeoutHeaders), or no byte of
// the body within the idle timeout (Phase TimeoutIdle).
type TimeoutError struct {
	// Phase is TimeoutHeaders or TimeoutIdle.
	Phase string
	// After is the timeout that ran out.
	After time.Duration
}

// Error says what the upstream did not do in time.
func (e *TimeoutError) Error() string {
	if e.Phase == TimeoutIdle {
		return "the upstream sent nothing for " + e.After.String() + " in the middle of its answer (upstream idle timeout)"
	}
	return "the upstream sent no response headers within " + e.After.String() + " (upstream header timeout)"
}

// Timeout reports true: a TimeoutError is a timeout (net.Error style).
func (e *TimeoutError) Timeout() bool { return true }

func (c Config) headerTimeout() time.Duration {
	switch {
	case c.UpstreamHeaderTimeout < 0:
		return 0
	case c.UpstreamHeaderTimeout == 0:
		return DefaultUpstreamHeaderTimeout
	}
	return c.UpstreamHeaderTimeout
}

func (c Config) idleTimeout() time.Duration {
	switch {
	case c.UpstreamIdleTimeout < 0:
		return 0
	case c.UpstreamIdleTimeout == 0:
		return DefaultUpstreamIdleTimeout
	}
	return c.UpstreamIdleTimeout
}

// do sends an upstream request to t under its timeouts; request is
// requestMain or requestTitle, for the timeout counters. A
// header timeout returns a *TimeoutError. The returned body's reads fail
// with a *TimeoutError when the idle timeout runs out; closing the body
// releases the request's resources.
func (s *Server) do(t *target, up *http.Request, request string) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(up.Context())
	limit := t.header
	if idle := t.idle; up.Header.Get("Accept") != "text/event-stream" && limit > 0 && (idle == 0 || idle > limit) {
		limit = idle // a unary answer's headers come with the whole answer
	}
	var timer *time.Timer
	if limit > 0 {
		timer = time.AfterFunc(limit, func() { cancel(&TimeoutError{Phase: TimeoutHeaders, After: limit}) })
	}
	resp, err := t.client.Do(up.WithContext(ctx))
	if timer != nil && !timer.Stop() {
		// The timer fired: while the request waited, or just after it
		// returned; either way it is a header timeout.
		if te, ok := errors.AsType[*TimeoutError](context.Cause(ctx)); ok {
			if resp != nil {
				resp.Body.Close()
			}
			cancel(nil)
			s.proxyMetrics.upstreamTimeout(te.Phase, request)
			return nil, te
		}
	}
	if err != nil {
		cancel(nil)
		return nil, err
	}
	if re := redirectOf(resp); re != nil { // redirect.go: never followed
		resp.Body.Close()
		cancel(nil)
		s.guards.redirect(request)
		return nil, re
	}
	b := &idleBody{body: resp.Body, ctx: ctx, cancel: cancel, after: t.idle, count: func() {
		s.proxyMetrics.upstreamTimeout(TimeoutIdle, request)
	}}
	if b.after > 0 {
		b.watch()
	}
	resp.Body = b
	if err := boundBody(resp, t.limits); err != nil { // bounds.go
		resp.Body.Close()
		return nil, err
	}
	return resp, nil
}

// idleChecks is how many times per idle timeout an idleBody's watchdog
// looks at the reads: a read that waits is ended between the timeout and a
// quarter of it later.
const idleChecks = 4

// idleBody is an upstream body whose reads are bounded by the idle timeout:
// only time a Read spends waiting counts, so time the proxy spends writing
// to a slow client does not. A Read costs two uncontended atomic additions,
// not a timer reset: a watchdog timer, armed once per body, wakes every
// after/idleChecks and ends the request when it finds the same read still
// waiting idleChecks times in a row.
type idleBody struct {
	body    io.ReadCloser
	ctx     context.Context
	cancel  context.CancelCauseFunc
	after   time.Duration
	timer   *time.Timer // the watchdog; nil: no idle timeout
	count   func()
	counted atomic.Bool

	// reads counts the start and the end of every Read: odd while one
	// waits.
	reads atomic.Uint64
	// The watchdog's own state (its runs never overlap).
	seen    uint64 // reads at its last look
	strikes int    // looks in a row that found the same read waiting
}

// watch arms the watchdog of a body with an idle timeout.
func (b *idleBody) watch() {
	// Armed only once b.timer is set: check reads it.
	b.timer = time.AfterFunc(time.Hour, b.check)
	b.timer.Reset(b.after / idleChecks)
}

// check is the watchdog: it ends the request when the same read has been
// waiting for idleChecks looks in a row, and looks again later otherwise.
func (b *idleBody) check() {
	r := b.reads.Load()
	if r%2 == 1 && r == b.seen {
		b.strikes++
	} else {
		b.strikes = 0
	}
	b.seen = r
	if b.strikes >= idleChecks {
		b.cancel(&TimeoutError{Phase: TimeoutIdle, After: b.after})
		return
	}
	if b.ctx.Err() == nil {
		b.timer.Reset(b.after / idleChecks)
	}
}

// Read reads from the upstream body; it returns a *TimeoutError once the
// idle timeout ran out.
func (b *idleBody) Read(p []byte) (int, error) {
	b.reads.Add(1)
	n, err := b.body.Read(p)
	b.reads.Add(1)
	if err != nil && err != io.EOF {
		if te, ok := errors.AsType[*TimeoutError](context.Cause(b.ctx)); ok {
			if !b.counted.Swap(true) {
				b.count()
			}
			return n, te
		}
	}
	return n, err
}

// Close closes the upstream body and releases the request's context.
func (b *idleBody) Close() error {
	if b.timer != nil {
		b.timer.Stop()
	}
	err := b.body.Close()
	b.cancel(nil)
	return err
}

// timeoutFailure returns the stream error of a run that ended because the
// upstream went idle, or nil when err is not one.
func timeoutFailure(err error) *protocol.StreamError {
	te, ok := errors.AsType[*TimeoutError](err)
	if !ok {
		return nil
	}
	return &protocol.StreamError{Kind: protocol.ErrKindTruncated, Code: "upstream_idle_timeout",
		Message: "harnessflow ended the stream: " + te.Error(), Retryable: true}
}
