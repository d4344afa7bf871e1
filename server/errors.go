package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/wire/errcode"
)

// redactURLError drops the URL from a transport error (it may carry
// credentials in its query) and keeps the cause.
func redactURLError(err error) string {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner.Error()
		}
	}
	return err.Error()
}

// upstreamError is the answer to an upstream's error status: the
// upstream's status and an OpenAI-style error body holding its message.
func (s *Server) upstreamError(resp *http.Response) *answerError {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody)) // a short read still gives a message
	msg, typ, code, param := parseUpstreamError(data)
	status := resp.StatusCode
	if status < 400 { // a 1xx or an unfollowed 3xx: not a status to pass on
		status, msg, typ, code, param = http.StatusBadGateway, "", "server_error", nil, nil
	}
	if msg == "" {
		msg = strings.TrimSpace(string(data))
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
		msg = "upstream returned HTTP " + strconv.Itoa(resp.StatusCode) + ": " + msg
	}
	msg = s.redactKey(msg) // an upstream that quotes the key it was sent
	// The errors the engine treats specially get its code, the upstream's
	// message kept (docs/errors.md).
	mapped := errcode.Classify(resp.StatusCode, typ, codeText(code), msg)
	if mapped != "" {
		code = codeJSON(mapped)
		if mapped == errcode.ServerOverloaded && status != http.StatusServiceUnavailable {
			status = http.StatusServiceUnavailable // the status Codex reads an overload from
		}
	}
	if typ == "" {
		typ = errorType(resp.StatusCode)
	}
	return &answerError{status: status, typ: typ, code: code, param: param, msg: msg, outcome: outcomeUpstreamError,
		retryAfter: resp.Header.Get("Retry-After"), inStream: errcode.InStream(mapped)}
}

// codeText is an error code's text: a JSON string's value, a number's
// digits, "" for null or nothing.
func codeText(code json.RawMessage) string {
	var s string
	if json.Unmarshal(code, &s) == nil {
		return s
	}
	if t := strings.TrimSpace(string(code)); t != "null" {
		return t
	}
	return ""
}

// failInStream answers e, an error the engine reads only in a
// response.failed event (docs/errors.md#where-the-answer-goes), as a
// stream that fails at once — when the client asked for a stream; it
// reports false (nothing written) otherwise.
func (s *Server) failInStream(w http.ResponseWriter, x *exchange, model string, e *answerError) (int, string, bool) {
	if e == nil || !e.inStream || x.conv == nil || x.conv.unary {
		return 0, "", false
	}
	if x.stream == nil {
		x.stream = s.metrics.StartStream()
	}
	x.failure = &protocol.StreamError{Kind: protocol.ErrKindUpstream, Type: e.typ, Code: codeText(e.code), Message: e.msg,
		HTTPStatus: e.status}
	noteReason(w, e.msg)
	sink := s.startClient(w, x, model)
	_ = sink.Fail(x.failure) // a failed write means the client went away
	x.events = sink.Events()
	return http.StatusOK, outcomeUpstreamError, true
}

// parseUpstreamError reads the usual error bodies: OpenAI
// {"error":{"message","type","code","param"}}, {"error":"text"}, Anthropic
// {"type":"error","error":{"type","message"}}, {"message":"text"}.
func parseUpstreamError(data []byte) (msg, typ string, code, param json.RawMessage) {
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(data, &body) != nil {
		return "", "", nil, nil
	}
	var text string
	if json.Unmarshal(body.Error, &text) == nil && text != "" {
		return text, "", nil, nil
	}
	var obj struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Param   json.RawMessage `json:"param"`
	}
	if json.Unmarshal(body.Error, &obj) == nil && obj.Message != "" {
		return obj.Message, obj.Type, obj.Code, obj.Param
	}
	return body.Message, "", nil, nil
}

func errorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

// writeErrorBody writes an OpenAI-style error body and returns the status;
// Server.answer is its caller for every error answer of a request.
func writeErrorBody(w http.ResponseWriter, status int, typ string, code json.RawMessage, msg string, param json.RawMessage) int {
	if len(code) == 0 {
		code = json.RawMessage("null")
	}
	if len(param) == 0 {
		param = json.RawMessage("null")
	}
	var b []byte
	b = append(b, `{"error":{"message":`...)
	b = protocol.AppendString(b, msg)
	b = append(b, `,"type":`...)
	b = protocol.AppendString(b, typ)
	b = append(b, `,"param":`...)
	b = append(b, compact(param)...)
	b = append(b, `,"code":`...)
	b = append(b, compact(code)...)
	b = append(b, "}}\n"...)
	noteReason(w, msg)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(b) // a failed write means the client went away
	return status
}

func compact(raw json.RawMessage) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return []byte("null")
	}
	return buf.Bytes()
}
