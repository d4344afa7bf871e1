package server

import (
	"encoding/json"
	"net/http"

	"github.com/harnessflow/harnessflow/stages/metrics"
)

// Outcomes of a request: the outcome field of its log record, and, for a
// client stream, the outcome it is counted with (the stream outcomes are
// the metrics package's).
const (
	outcomeCompleted    = metrics.OutcomeCompleted
	outcomeIncomplete   = metrics.OutcomeIncomplete
	outcomeFailed       = metrics.OutcomeFailed
	outcomeClientClosed = metrics.OutcomeClientClosed
	outcomeShutdown     = metrics.OutcomeShutdown

	outcomeBadRequest          = "bad_request"
	outcomeConfigError         = "config_error"
	outcomeRouteError          = "route_error"
	outcomeUnknownModel        = "unknown_model"
	outcomeOverloaded          = "overloaded"
	outcomeStoreError          = "store_error"
	outcomeUpstreamError       = "upstream_error"
	outcomeUpstreamUnreachable = "upstream_unreachable"
	outcomeUpstreamTimeout     = "upstream_timeout"
	outcomeConfigured          = "configured"
	outcomeUnauthorized        = "unauthorized"
	outcomeNotFound            = "not_found"
)

// answerError is a request the server answers with an OpenAI-style error
// body instead of a model answer: the HTTP status, the body's type, code,
// param and message, and the outcome logged. [Server.answer] is the one
// writer of these answers; the steps of a request return them.
type answerError struct {
	status  int
	typ     string
	code    json.RawMessage // nil: null
	param   json.RawMessage // nil: null
	msg     string
	outcome string
	// logged is the status logged when it differs from status (499 for a
	// request whose client went away).
	logged int
	// retryAfter is the Retry-After header's value ("": none).
	retryAfter string
	// cause is what went wrong, for the request's debug record (nil:
	// nothing new).
	cause error
	// inStream marks an upstream error the engine reads only in a
	// response.failed event (failInStream).
	inStream bool
}

// Error implements error: the message the client is told.
func (e *answerError) Error() string { return e.msg }

// failure is an answer with a string code ("" for null).
func failure(status int, typ, code, msg, outcome string, cause error) *answerError {
	e := &answerError{status: status, typ: typ, msg: msg, outcome: outcome, cause: cause}
	if code != "" {
		e.code = codeJSON(code)
	}
	return e
}

// cancelledAnswer answers a request whose client is gone, or that the
// server's shutdown cancelled while the client still waits: it must not
// get an empty HTTP 200. The status logged is 499.
func cancelledAnswer(cause error) *answerError {
	e := failure(http.StatusServiceUnavailable, "server_error", "cancelled",
		"request cancelled (client gone or server shutting down)", outcomeClientClosed, cause)
	e.logged = 499
	return e
}

// answer writes e to the client, notes its cause on x (x may be nil) and
// returns the status and outcome to log.
func (s *Server) answer(w http.ResponseWriter, x *exchange, e *answerError) (int, string) {
	if x != nil && e.cause != nil {
		x.err = e.cause
	}
	if e.retryAfter != "" {
		w.Header().Set("Retry-After", e.retryAfter)
	}
	status := writeErrorBody(w, e.status, e.typ, e.code, e.msg, e.param)
	if e.logged != 0 {
		status = e.logged
	}
	return status, e.outcome
}
