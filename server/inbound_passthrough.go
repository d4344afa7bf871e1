package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/harnessflow/harnessflow/wire/anthropic"
)

// routePassThrough is the route of a Messages client's request that goes
// to a Messages upstream as it is (the log's route field).
const routePassThrough = "MessagesPassThrough"

// passesThrough reports whether x is a Messages client's request, on no
// harness route, whose upstreams all speak the Messages wire: its body
// then goes upstream as the client sent it (docs/inbound.md#messages).
func passesThrough(x *exchange, targets []*target) bool {
	if x.in == nil || !x.in.codec.Inbound.PassThrough || x.harness != "" || len(targets) == 0 {
		return false
	}
	for _, t := range targets {
		if t.wire != x.in.codec.Wire || t.harness != "" {
			return false
		}
	}
	return true
}

// passThrough sends the Messages client's body to each upstream in turn
// (the next only when one failed before the client got a byte), with the
// model renamed when the route or Config.Model says so (model is the
// request's after Config.Model), the client's anthropic-version and
// anthropic-beta, the upstream's credentials; the answer goes back as it
// came — thinking signatures, cache marks, server tools and all. The
// upstream's error statuses pass through in the Messages shape.
func (s *Server) passThrough(ctx context.Context, w http.ResponseWriter, r *http.Request, x *exchange, targets []*target, model string) (int, string, *answerError) {
	x.route = routePassThrough
	for i, t := range targets {
		x.target = t
		last := i == len(targets)-1
		body := x.in.body
		rename := t.model
		if rename == "" && s.cfg.Model != "" {
			rename = model
		}
		if rename != "" {
			var err error
			if body, err = renameModel(body, rename); err != nil {
				return 0, "", failure(http.StatusBadRequest, "invalid_request_error", "", "invalid Messages request: "+err.Error(), outcomeBadRequest, err)
			}
		}
		up, err := http.NewRequestWithContext(ctx, http.MethodPost, t.base+anthropic.Path, bytes.NewReader(body))
		if err != nil {
			return 0, "", failure(http.StatusInternalServerError, "server_error", "", "server: upstream request: "+err.Error(), outcomeConfigError, err)
		}
		up.URL.RawQuery = r.URL.RawQuery // ?beta=true
		up.Header.Set("Content-Type", "application/json")
		up.Header.Set("Accept", "application/json")
		if x.in.stream {
			up.Header.Set("Accept", "text/event-stream")
		}
		up.Header.Set("User-Agent", "harnessflow")
		up.Header.Set("Accept-Encoding", "gzip")
		s.setCredentials(t, up.Header, r)
		for _, h := range []string{anthropic.HeaderVersion, anthropic.HeaderBeta} {
			if v := r.Header.Get(h); v != "" {
				up.Header.Set(h, v)
			}
		}
		for k, v := range t.headers {
			up.Header.Set(k, v)
		}
		start := time.Now()
		resp, err := s.do(t, up, requestMain)
		if err != nil {
			x.err = err
			if r.Context().Err() != nil {
				return 0, "", cancelledAnswer(err)
			}
			result, retryable := attemptResult(err, 0)
			if s.noteAttempt(r, x, result, 0, start, retryable && !last) {
				continue
			}
			if te, ok := errors.AsType[*TimeoutError](err); ok {
				return 0, "", failure(http.StatusGatewayTimeout, "server_error", "upstream_timeout", "harnessflow: "+te.Error(), outcomeUpstreamTimeout, err)
			}
			if re, ok := errors.AsType[*RedirectError](err); ok { // redirect.go
				x.upstreamStatus = re.Status
				return 0, "", failure(http.StatusBadGateway, "server_error", "upstream_redirect", "harnessflow: "+re.Error(), outcomeUpstreamError, err)
			}
			return 0, "", failure(http.StatusBadGateway, "server_error", "upstream_unreachable", "upstream unreachable: "+redactURLError(err), outcomeUpstreamUnreachable, err)
		}
		x.upstreamStatus = resp.StatusCode
		result, retryable := attemptResult(nil, resp.StatusCode)
		if s.noteAttempt(r, x, result, resp.StatusCode, start, retryable && !last) {
			resp.Body.Close()
			continue
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			defer resp.Body.Close()
			return 0, "", s.upstreamError(resp)
		}
		defer resp.Body.Close()
		if x.stream == nil {
			// Counted as any stream, by how it ended (endStream), though no
			// graph runs: the answer is copied as it came.
			x.stream = s.metrics.StartStream()
		}
		status, outcome := s.copyAnswer(w, r, resp)
		return status, outcome, nil
	}
	return 0, "", failure(http.StatusBadGateway, "server_error", "", "harnessflow: no upstream answered", outcomeUpstreamError, nil)
}

// copyAnswer copies an upstream's 2xx answer to the client, flushing
// after every read.
func (s *Server) copyAnswer(w http.ResponseWriter, r *http.Request, resp *http.Response) (int, string) {
	hdr := w.Header()
	for _, h := range []string{"Content-Type", "Request-Id", "Anthropic-Organization-Id"} {
		if v := resp.Header.Get(h); v != "" {
			hdr.Set(h, v)
		}
	}
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no")
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return resp.StatusCode, outcomeClientClosed
			}
			_ = rc.Flush() // a failed flush shows at the next write
		}
		if err == io.EOF {
			return resp.StatusCode, outcomeCompleted
		}
		if err != nil {
			if r.Context().Err() != nil {
				return resp.StatusCode, outcomeClientClosed
			}
			return resp.StatusCode, outcomeFailed
		}
	}
}

// renameModel returns body with its model replaced.
func renameModel(body []byte, model string) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	name, err := json.Marshal(model)
	if err != nil {
		return nil, err
	}
	m["model"] = name
	return json.Marshal(m)
}
