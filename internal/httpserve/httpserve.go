// Package httpserve runs an http.Handler on a listener for the length of
// a context: what the commands' helper servers (the scripted model, the
// debug endpoints, the load test's upstream and pass-through) share.
package httpserve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Grace bounds the graceful shutdown once the context ends; the requests
// still running then are cut.
const Grace = 5 * time.Second

// Serve serves h on ln until ctx is cancelled, then shuts down gracefully
// (Grace at most). The requests' contexts are ctx's, so streams end with
// it. The server's own errors are logged to stderr. It closes ln.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, stderr io.Writer) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 30 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(slog.NewTextHandler(stderr, nil), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), Grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close() // requests still running after the grace period
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	}
	return nil
}
