package server

import (
	"net/http"
	"strings"
	"unicode/utf8"
)

// The reason of an error answer, for the request log: every HTTP 4xx or
// 5xx the proxy writes is logged with the message its body carries
// (reason="…"), so a log reader sees why without the client's copy. The
// message is what the client is told: our own text, or an upstream's
// error message with the proxy's API key redacted; never a header value.
// It is cut at maxReasonBytes, and the client's own credential (its bearer
// token or x-api-key, passed upstream without client keys) is redacted
// from it too: an upstream may quote the key it was sent.

// maxReasonBytes caps a logged reason.
const maxReasonBytes = 300

// reasonWriter records the message of the error body written through it.
type reasonWriter struct {
	http.ResponseWriter
	reason string
}

// Unwrap returns the client's ResponseWriter, for http.ResponseController.
func (w *reasonWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// noteReason records msg as the reason of the answer written to w, when w
// records reasons.
func noteReason(w http.ResponseWriter, msg string) {
	if rw, ok := w.(*reasonWriter); ok {
		rw.reason = cutReason(msg)
	}
}

// cutReason cuts a reason to maxReasonBytes, on a character boundary.
func cutReason(msg string) string {
	if len(msg) <= maxReasonBytes {
		return msg
	}
	cut := maxReasonBytes
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + "…"
}

// logReason is the reason the request log gives: the error answer's
// message for an HTTP error status, the failure's message for a stream
// the server ended with response.failed.
func (x *exchange) logReason() string {
	switch {
	case x.status >= 400 && x.reason != "":
		return x.reason
	case x.failure != nil:
		return cutReason(x.failure.Message)
	}
	return ""
}

// reasonFor is the logged reason of an answer to r: recorded, with the
// credentials of the proxy and of the client redacted.
func (s *Server) reasonFor(r *http.Request, reason string) string {
	if reason == "" {
		return ""
	}
	reason = s.redactKey(reason)
	for _, v := range []string{r.Header.Get("Authorization"), r.Header.Get("x-api-key")} {
		_, token, found := strings.Cut(strings.TrimSpace(v), " ")
		if !found {
			token = v
		}
		if token = strings.TrimSpace(token); len(token) >= 8 {
			reason = strings.ReplaceAll(reason, token, redacted)
		}
	}
	return reason
}
