package server

import (
	"net/http"
	"strconv"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/wire/responses"
)

// startClient starts the answer to the client: its SSE stream (headers
// written now) or, for a request without "stream": true, a writer that only
// builds the Response object (nothing is written until the turn is over;
// concludeClient writes it). The response objects echo the client's
// request, and a response the client may refer to later is kept before its
// terminal event (Options.Keep). On the Responses wire the upstream's item
// ids are kept (they are unique already); on the others every item gets an
// id of its own.
func (s *Server) startClient(w http.ResponseWriter, x *exchange, model string) clientSink {
	opts := responses.Options{ResponseID: x.responseID, Model: model, KeepItemIDs: x.wire(s) == harness.WireResponses}
	if t := x.target; t != nil {
		opts.MaxText = int(t.limits.Text)
	}
	if c := x.conv; c != nil {
		opts.Request, opts.Store = c.request, c.keep
		if c.keep {
			opts.Keep = func(out []protocol.ResponseItem) (bool, *protocol.StreamError) { return s.keepResponse(c.ctx, x, out) }
		}
		if c.unary && x.in == nil {
			return responses.NewWriter(nil, opts)
		}
	}
	if x.in != nil {
		return s.startInbound(w, x, opts) // inbound.go
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	sendHeaders(w)
	opts.Flush = http.NewResponseController(w).Flush
	return responses.NewWriter(w, opts)
}

// concludeClient ends the answer to the client after the run that fed sink
// returned err (see conclude) and returns the status and outcome. A
// non-streaming client then gets the Response object as its JSON body
// (HTTP 200, also for status "incomplete"), or, when the response failed,
// an error body with the status that fits the failure (failureStatus).
func (s *Server) concludeClient(w http.ResponseWriter, r *http.Request, x *exchange, sink clientSink, err error) (int, string) {
	status, outcome := s.conclude(r, x, sink, err)
	if k, ok := sink.(*inboundSink); ok {
		return s.concludeInbound(w, x, k, status, outcome) // inbound.go
	}
	if x.conv == nil || !x.conv.unary {
		return status, outcome
	}
	return s.answerUnary(w, x, sink, outcome, sink.AppendResponse)
}

// answerUnary answers a client that did not stream, once sink's response
// ended: the error body that fits a failed response (failureStatus), else
// HTTP 200 with the body appendBody builds (the Response object, or an
// inbound wire's own body).
func (s *Server) answerUnary(w http.ResponseWriter, x *exchange, sink clientSink, outcome string, appendBody func([]byte) []byte) (int, string) {
	if f := sink.Failure(); f != nil || sink.Terminal() == responses.EventFailed {
		if f == nil {
			f = &protocol.StreamError{Kind: protocol.ErrKindUpstream, Message: "the response failed"}
		}
		e := &answerError{status: failureStatus(f), typ: f.Type, msg: f.Message, outcome: outcome}
		if f.RetryAfterMS > 0 {
			e.retryAfter = strconv.FormatInt((f.RetryAfterMS+999)/1000, 10)
		}
		if e.typ == "" {
			e.typ = errorType(e.status)
		}
		if f.Code != "" {
			e.code = codeJSON(f.Code)
		}
		return s.answer(w, x, e)
	}
	body := append(appendBody(make([]byte, 0, 4096)), '\n')
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body) // a failed write means the client went away
	return http.StatusOK, outcome
}

// failureStatus is the HTTP status of a failed response for a client that
// did not stream: the upstream's status when it sent one, else by the
// error's code and kind — 429 for rate limits and quotas, 400 for a
// request the model refused, 503 when the server is overloaded or shutting
// down, 504 for an upstream timeout, 502 for an upstream that failed or
// broke off.
func failureStatus(f *protocol.StreamError) int {
	if f.HTTPStatus >= 400 && f.HTTPStatus <= 599 {
		return f.HTTPStatus
	}
	switch f.Code {
	case "rate_limit_exceeded", "insufficient_quota", "rate_limit_error":
		return http.StatusTooManyRequests
	case "context_length_exceeded", "invalid_prompt", "invalid_request_error", "invalid_request":
		return http.StatusBadRequest
	case "server_is_overloaded", "slow_down", "overloaded_error", "cancelled", "server_shutdown", "store_unavailable":
		return http.StatusServiceUnavailable
	case "upstream_idle_timeout", "upstream_timeout", "timeout":
		return http.StatusGatewayTimeout
	}
	return http.StatusBadGateway
}
