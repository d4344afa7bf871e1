package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/harnessflow/harnessflow/internal/promtext"
)

// Admission control (Config.MaxStreams): past saturation every stream's
// latency grows together, so the proxy serves at most MaxStreams proxied
// requests at once; one over the bound waits up to QueueTimeout for a slot
// and is then answered HTTP 503 with Retry-After, which Codex and the SDKs
// retry. README "Serving real clients" says how to size the bound.

// DefaultQueueTimeout is how long a request over Config.MaxStreams waits
// for a slot before its 503 (Config.QueueTimeout).
const DefaultQueueTimeout = 100 * time.Millisecond

// retryAfterSeconds is the Retry-After of an overload 503: the smallest
// whole number of seconds the header can say.
const retryAfterSeconds = 1

// admission bounds the proxied requests in flight. The zero value (no
// semaphore) admits every request.
type admission struct {
	sem      *semaphore.Weighted // nil: no bound
	max      int64
	wait     time.Duration // 0: no wait
	active   atomic.Int64  // requests holding a slot
	rejected atomic.Uint64 // requests answered 503
	queued   atomic.Uint64 // requests admitted after waiting
}

// newAdmission returns the admission control of cfg.
func newAdmission(cfg Config) *admission {
	a := &admission{}
	if cfg.MaxStreams <= 0 {
		return a
	}
	a.max = int64(cfg.MaxStreams)
	a.sem = semaphore.NewWeighted(a.max)
	switch {
	case cfg.QueueTimeout == 0:
		a.wait = DefaultQueueTimeout
	case cfg.QueueTimeout > 0:
		a.wait = cfg.QueueTimeout
	}
	return a
}

// admitStream takes a slot for request r, waiting up to the queue timeout.
// Admitted, it returns the slot's release (call it once the request is
// served). Otherwise it returns the answer: 503 with Retry-After when the
// proxy stayed full, the cancellation when the client went away while
// waiting.
func (s *Server) admitStream(r *http.Request) (release func(), e *answerError) {
	a := s.admit
	if a == nil || a.sem == nil {
		return func() {}, nil
	}
	if !a.sem.TryAcquire(1) {
		if err := a.acquireWithin(r.Context()); err != nil {
			if r.Context().Err() != nil {
				return nil, cancelledAnswer(nil)
			}
			a.rejected.Add(1)
			e := failure(http.StatusServiceUnavailable, "server_error", "server_overloaded",
				fmt.Sprintf("harnessflow is serving its maximum of %d streams; retry in %d s", a.max, retryAfterSeconds), outcomeOverloaded, nil)
			e.retryAfter = strconv.Itoa(retryAfterSeconds)
			return nil, e
		}
		a.queued.Add(1)
	}
	a.active.Add(1)
	var once atomic.Bool
	return func() {
		if once.CompareAndSwap(false, true) {
			a.active.Add(-1)
			a.sem.Release(1)
		}
	}, nil
}

// acquireWithin waits up to the queue timeout for a slot.
func (a *admission) acquireWithin(ctx context.Context) error {
	if a.wait <= 0 {
		return context.DeadlineExceeded
	}
	ctx, cancel := context.WithTimeout(ctx, a.wait)
	defer cancel()
	return a.sem.Acquire(ctx, 1)
}

// collect writes the admission families (none without a bound).
func (a *admission) collect(pw *promtext.Writer) {
	if a == nil || a.sem == nil {
		return
	}
	pw.Gauge("harnessflow_max_streams", "The bound on proxied requests served at once (--max-streams).")
	pw.Sample("harnessflow_max_streams", uint64(a.max))
	pw.Gauge("harnessflow_admitted_streams", "Proxied requests holding a slot now.")
	pw.Sample("harnessflow_admitted_streams", uint64(a.active.Load()))
	pw.Counter("harnessflow_queued_streams_total", "Proxied requests admitted after waiting for a slot.")
	pw.Sample("harnessflow_queued_streams_total", a.queued.Load())
	pw.Counter("harnessflow_rejected_streams_total", "Proxied requests answered 503 because the proxy stayed full for the queue timeout.")
	pw.Sample("harnessflow_rejected_streams_total", a.rejected.Load())
}
