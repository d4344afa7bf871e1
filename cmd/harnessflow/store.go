package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/harnessflow/harnessflow/server"
	"github.com/harnessflow/harnessflow/server/redisstore"
)

// storeFlagHelp is the usage of serve's --store.
const storeFlagHelp = "the response store for previous_response_id and item_reference: memory (in this process), none, " +
	"or a Redis `URL` shared by replicas, redis://[:PASSWORD@]HOST:PORT[/DB][?ttl=1h&max_responses=N&max_bytes=N&prefix=P] " +
	"(rediss:// for TLS, unix:///path.sock; the limits default to the in-memory store's)"

// storePingTimeout bounds serve's check that a Redis store answers.
const storePingTimeout = 2 * time.Second

// serveStore is the response store serve runs with.
type serveStore struct {
	store  server.Store // nil: the in-memory default (or none)
	none   bool         // --store none
	desc   string       // for the startup line
	closer io.Closer    // the Redis client, or nil
}

// close releases the store's connections.
func (s serveStore) close() {
	if s.closer != nil {
		_ = s.closer.Close() // the process is ending
	}
}

// openStore reads serve's --store value. It does not connect (see
// checkStore).
func openStore(value string) (serveStore, error) {
	defaults := server.StoreLimits{MaxResponses: server.DefaultStoreMaxResponses, MaxBytes: server.DefaultStoreMaxBytes, TTL: server.DefaultStoreTTL}
	switch v := strings.TrimSpace(value); {
	case v == "" || v == "memory":
		return serveStore{desc: fmt.Sprintf("in memory (ttl %s, at most %d responses, %d MiB)", defaults.TTL, defaults.MaxResponses, defaults.MaxBytes>>20)}, nil
	case v == "none":
		return serveStore{none: true, desc: "none (previous_response_id is refused)"}, nil
	case strings.HasPrefix(v, "redis://") || strings.HasPrefix(v, "rediss://") || strings.HasPrefix(v, "unix://"):
		rs, err := redisstore.Open(v, defaults)
		if err != nil {
			return serveStore{}, fmt.Errorf("--store: %w", err)
		}
		return serveStore{store: rs, desc: rs.String(), closer: rs}, nil
	}
	return serveStore{}, fmt.Errorf("--store %q: want memory, none, or a Redis URL (redis://HOST:PORT/DB, rediss://…, unix:///path.sock)", server.RedactURL(value))
}

// checkStore pings a Redis store and warns when it does not answer: serve
// starts anyway, and the requests that need the store get HTTP 503 until
// Redis answers.
func checkStore(ctx context.Context, s serveStore, warn io.Writer) {
	rs, ok := s.store.(*redisstore.Store)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, storePingTimeout)
	defer cancel()
	if err := rs.Ping(ctx); err != nil {
		fmt.Fprintf(warn, "harnessflow serve: warning: the response store does not answer (%v); requests that need it get HTTP 503 until it does\n", err)
	}
}
