package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/harnessflow/harnessflow/harness"
)

// titleRequest sends the turn's title request (docs/architecture.md#title-requests: opencode, and
// claude-code on the messages wire, ask for a conversation title before the
// first turn's main request) to the main request's path, with the same
// credentials and headers, reads the whole answer and drops it. A failure —
// the upstream unreachable, a non-2xx status, a stream broken off — is
// logged at warn (without content) and counted, and the turn goes on. A
// cancelled request is neither: the caller stops.
func (s *Server) titleRequest(ctx context.Context, r *http.Request, t *target, turn *harness.Turn) {
	start := time.Now()
	status, err := s.sendTitle(ctx, r, t, turn)
	if r.Context().Err() != nil {
		return
	}
	attrs := []slog.Attr{
		slog.String("path", r.URL.Path),
		slog.String("harness", turn.Spec.Name),
		slog.String("route", turn.Route.String()),
		slog.Int("upstream_status", status),
		slog.Duration("duration", time.Since(start)),
	}
	if err != nil {
		s.proxyMetrics.titleRequest(titleFailed)
		s.log.LogAttrs(r.Context(), slog.LevelWarn, "harnessflow title request failed; the turn goes on",
			append(attrs, slog.String("error", err.Error()))...)
		return
	}
	s.proxyMetrics.titleRequest(titleOK)
	s.log.LogAttrs(r.Context(), slog.LevelDebug, "harnessflow title request", attrs...)
}

// sendTitle sends the title request and drains its answer. Its error never
// quotes the upstream's bytes.
func (s *Server) sendTitle(ctx context.Context, r *http.Request, t *target, turn *harness.Turn) (int, error) {
	up, err := s.upstreamRequest(ctx, r, t, turn.Shaped, turn.Shaped.TitleRequest, bodyStreams(turn.Shaped.TitleRequest))
	if err != nil {
		return 0, err
	}
	resp, err := s.do(t, up, requestTitle)
	if err != nil {
		if te, ok := errors.AsType[*TimeoutError](err); ok {
			return 0, te
		}
		return 0, errors.New("upstream unreachable: " + redactURLError(err))
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("upstream returned HTTP %d", resp.StatusCode)
	}
	if err != nil {
		return resp.StatusCode, fmt.Errorf("reading the answer: %w", err)
	}
	return resp.StatusCode, nil
}
