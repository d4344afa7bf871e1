package chatin

import (
	"net/http"

	"github.com/harnessflow/harnessflow/protocol"
)

// AppendError appends OpenAI's error body:
// {"error":{"message","type","param","code"}}; param and code are null
// when "".
func AppendError(b []byte, msg, typ, param, code string) []byte {
	b = append(b, `{"error":{"message":`...)
	b = protocol.AppendString(b, msg)
	b = append(b, `,"type":`...)
	b = protocol.AppendString(b, typ)
	b = append(b, `,"param":`...)
	b = appendStrOrNull(b, param)
	b = append(b, `,"code":`...)
	b = appendStrOrNull(b, code)
	return append(b, "}}"...)
}

func appendStrOrNull(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return protocol.AppendString(b, s)
}

// ErrorType is OpenAI's error type of an HTTP status.
func ErrorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusNotFound:
		return "not_found_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}
