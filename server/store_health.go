package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// What the proxy does when its response store fails (README "Running
// several replicas"):
//
//   - A response the client expects kept (its request did not set "store":
//     false) whose Put fails ends with response.failed, code
//     store_unavailable, retryable (a non-streaming client gets HTTP 503
//     with Retry-After) — never with a response.completed that cannot be
//     continued. How long a Put tries before it fails is the store's
//     business (the Redis store retries for a few seconds).
//   - After a store failure the store is known to be down: a new request
//     that would be kept gets HTTP 503 store_unavailable at once, unless it
//     set "store": false. Such a request probes the store (a lookup of an
//     id nobody has, at most one at a time and one per storeProbeInterval);
//     the first call that reaches the store again ends the outage.
//   - The ids of the responses that could not be kept are remembered (the
//     last maxUnstored), so that a later previous_response_id or
//     item_reference naming one gets a 400 saying why it is not there.

// Bounds of the outage handling.
const (
	// maxUnstored is how many ids (of responses and their items) the
	// proxy remembers as not kept.
	maxUnstored = 4096
	// storeProbeInterval is the least time between two probes of a store
	// that is down.
	storeProbeInterval = 250 * time.Millisecond
	// storeProbeTimeout bounds one probe.
	storeProbeTimeout = 2 * time.Second
	// storeRetryAfter is the Retry-After of a store_unavailable answer.
	storeRetryAfter = time.Second
)

// The store scope and id a probe looks up: no credential hashes to this
// scope (CredentialScope is hex), so the answer is a miss when the store
// works.
const (
	probeScope = "harnessflow health probe"
	probeID    = "resp_harnessflow_probe"
)

// Reasons a response the client expected kept was not (the reason label
// of harnessflow_store_unstored_total).
const (
	unstoredUnavailable = "store_unavailable" // the store failed
	unstoredRefused     = "refused"           // the store would not keep it (over its byte limit)
	unstoredCancelled   = "cancelled"         // the request ended while it was being kept
)

// storeState is what the proxy knows of its store's health and of the
// responses it could not keep. The zero value is ready.
type storeState struct {
	mu        sync.Mutex
	down      bool      // the last call that reached a verdict failed
	since     time.Time // when the store went down
	cause     string    // the failure that took it down
	probing   bool      // a probe is under way
	lastProbe time.Time // when the last probe started

	unstored map[string]unstoredID // scopedKey(scope, id)
	ring     []string              // the keys of unstored, in the order they came (maxUnstored at most)
	next     int                   // where the next key goes in ring once it is full
}

// unstoredID is a response (or an item of one) that was not kept.
type unstoredID struct {
	response string    // the response's id
	at       time.Time // when it was to be kept
	reason   string    // unstored*
	err      string    // the store's error
}

// failed records a store failure.
func (st *storeState) failed(err error, now time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.down {
		st.down, st.since = true, now
	}
	st.cause = err.Error()
}

// reached records a call that reached the store (a hit or a miss).
func (st *storeState) reached() {
	st.mu.Lock()
	st.down = false
	st.mu.Unlock()
}

// healthy reports whether the store is not known to be down.
func (st *storeState) healthy() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return !st.down
}

// remember records that the response id (and its items) was not kept
// under scope, dropping the oldest ids beyond maxUnstored.
func (st *storeState) remember(scope, id string, itemIDs []string, u unstoredID) {
	u.response = id
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.unstored == nil {
		st.unstored = map[string]unstoredID{}
	}
	for _, k := range append([]string{id}, itemIDs...) {
		if k == "" {
			continue
		}
		key := scopedKey(scope, k)
		if _, ok := st.unstored[key]; !ok {
			if len(st.ring) < maxUnstored {
				st.ring = append(st.ring, key)
			} else {
				delete(st.unstored, st.ring[st.next])
				st.ring[st.next] = key
				st.next = (st.next + 1) % maxUnstored
			}
		}
		st.unstored[key] = u
	}
}

// lookupUnstored returns what remember recorded of id under scope.
func (st *storeState) lookupUnstored(scope, id string) (unstoredID, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	u, ok := st.unstored[scopedKey(scope, id)]
	return u, ok
}

// storeWritable returns nil when a response can be expected to be kept
// now, or why not: the store is down and a probe (when one is due) did not
// reach it.
func (s *Server) storeWritable(ctx context.Context) error {
	st := &s.storeState
	st.mu.Lock()
	if !st.down {
		st.mu.Unlock()
		return nil
	}
	now := time.Now()
	downErr := fmt.Errorf("the response store is unavailable (since %s: %s)", st.since.UTC().Format("15:04:05 UTC"), st.cause)
	if st.probing || now.Sub(st.lastProbe) < storeProbeInterval {
		st.mu.Unlock()
		return downErr
	}
	st.probing, st.lastProbe = true, now
	st.mu.Unlock()

	pctx, cancel := context.WithTimeout(ctx, storeProbeTimeout)
	_, err := s.store.Get(pctx, probeScope, probeID)
	cancel()
	st.mu.Lock()
	st.probing = false
	st.mu.Unlock()
	switch {
	case err == nil || errors.Is(err, ErrNotStored):
		st.reached()
		return nil
	case ctx.Err() != nil:
		return downErr // the request went away: no verdict
	}
	st.failed(err, now)
	return fmt.Errorf("the response store is unavailable (since %s: %s)", st.sinceText(), err)
}

func (st *storeState) sinceText() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.since.UTC().Format("15:04:05 UTC")
}

// storeStatus records the verdict of a store call for ctx that returned
// err (none when ctx ended: the call was cut short, not refused).
func (s *Server) storeStatus(ctx context.Context, err error) {
	switch {
	case err == nil || errors.Is(err, ErrNotStored):
		s.storeState.reached()
	case ctx.Err() == nil:
		s.storeState.failed(err, time.Now())
	}
}
