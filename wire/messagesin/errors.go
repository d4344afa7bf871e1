package messagesin

import (
	"net/http"

	"github.com/harnessflow/harnessflow/protocol"
)

// Error types of the Messages API's error bodies.
const (
	ErrInvalidRequest = "invalid_request_error"
	ErrAuthentication = "authentication_error"
	ErrPermission     = "permission_error"
	ErrNotFound       = "not_found_error"
	ErrTooLarge       = "request_too_large"
	ErrRateLimit      = "rate_limit_error"
	ErrAPI            = "api_error"
	ErrOverloaded     = "overloaded_error"
	ErrTimeout        = "timeout_error"
)

// StatusOverloaded is the API's status for overloaded_error.
const StatusOverloaded = 529

// ErrorType is the error type the API gives an HTTP status.
func ErrorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return ErrInvalidRequest
	case http.StatusUnauthorized:
		return ErrAuthentication
	case http.StatusForbidden:
		return ErrPermission
	case http.StatusNotFound:
		return ErrNotFound
	case http.StatusRequestEntityTooLarge:
		return ErrTooLarge
	case http.StatusTooManyRequests:
		return ErrRateLimit
	case http.StatusServiceUnavailable, StatusOverloaded:
		return ErrOverloaded
	case http.StatusGatewayTimeout, http.StatusRequestTimeout:
		return ErrTimeout
	}
	if status >= 500 {
		return ErrAPI
	}
	return ErrInvalidRequest
}

// Status is the status a Messages client gets for an error answer of the
// proxy's: the API's 529 for an overloaded server (503), the status as it
// is otherwise.
func Status(status int) int {
	if status == http.StatusServiceUnavailable {
		return StatusOverloaded
	}
	return status
}

// AppendError appends the API's error body:
// {"type":"error","error":{"type":TYPE,"message":MSG}}.
func AppendError(b []byte, typ, msg string) []byte {
	b = append(b, `{"type":"error","error":{"type":`...)
	b = protocol.AppendString(b, typ)
	b = append(b, `,"message":`...)
	b = protocol.AppendString(b, msg)
	return append(b, "}}"...)
}

// StreamErrorType is the error type of a stream that failed: the
// upstream's type when it is one of the API's, else by its HTTP status
// and code.
func StreamErrorType(e *protocol.StreamError) string {
	switch e.Type {
	case ErrInvalidRequest, ErrAuthentication, ErrPermission, ErrNotFound, ErrTooLarge, ErrRateLimit, ErrAPI, ErrOverloaded, ErrTimeout:
		return e.Type
	}
	switch e.Code {
	case "rate_limit_exceeded", "insufficient_quota", "rate_limit_error":
		return ErrRateLimit
	case "server_is_overloaded", "slow_down", "overloaded_error", "server_shutdown":
		return ErrOverloaded
	case "context_length_exceeded", "invalid_prompt", "invalid_request_error":
		return ErrInvalidRequest
	case "upstream_idle_timeout", "upstream_timeout", "timeout":
		return ErrTimeout
	}
	if e.HTTPStatus >= 400 {
		return ErrorType(e.HTTPStatus)
	}
	return ErrAPI
}
