package codec

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/harnessflow/harnessflow/wire/messagesin"
)

// MessagesErrors wraps a handler of a Messages route (the Messages
// codec's Inbound.Shape): the key of an
// x-api-key header (Claude Code's and the Anthropic SDK's way) is taken as
// the bearer key when no Authorization is sent, and every error answer the
// handler writes in OpenAI's shape goes out in the Messages API's
// ({"type":"error","error":{"type","message"}}), an overloaded proxy's 503
// as the API's 529.
func MessagesErrors(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			if key := strings.TrimSpace(r.Header.Get("X-Api-Key")); key != "" {
				r.Header.Set("Authorization", "Bearer "+key)
			}
		}
		mw := &messagesErrors{ResponseWriter: w}
		defer mw.finish()
		h(mw, r)
	}
}

// messagesErrors holds an error answer (a status of 400 or more with a
// JSON body) until the handler returns, then writes it in the Messages
// API's shape; everything else passes through.
type messagesErrors struct {
	http.ResponseWriter
	status  int
	held    []byte
	holding bool
}

// WriteHeader holds an error status with a JSON body.
func (m *messagesErrors) WriteHeader(code int) {
	if code >= 400 && strings.HasPrefix(m.Header().Get("Content-Type"), "application/json") {
		m.status, m.holding = code, true
		return
	}
	m.ResponseWriter.WriteHeader(code)
}

// Write holds the body of an error answer.
func (m *messagesErrors) Write(b []byte) (int, error) {
	if m.holding {
		m.held = append(m.held, b...)
		return len(b), nil
	}
	return m.ResponseWriter.Write(b)
}

// Unwrap returns the client's ResponseWriter, for http.ResponseController.
func (m *messagesErrors) Unwrap() http.ResponseWriter { return m.ResponseWriter }

// finish writes the held error answer.
func (m *messagesErrors) finish() {
	if !m.holding {
		return
	}
	var body struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	_ = json.Unmarshal(m.held, &body) // a body we wrote ourselves; an empty message is said below
	status := messagesin.Status(m.status)
	typ := messagesin.ErrorType(status)
	switch body.Error.Type {
	case messagesin.ErrOverloaded, messagesin.ErrRateLimit, messagesin.ErrAuthentication, messagesin.ErrPermission,
		messagesin.ErrNotFound, messagesin.ErrTooLarge, messagesin.ErrAPI, messagesin.ErrTimeout:
		typ = body.Error.Type // an Anthropic upstream's own
	}
	msg := body.Error.Message
	if msg == "" {
		msg = http.StatusText(m.status)
	}
	out := append(messagesin.AppendError(nil, typ, msg), '\n')
	m.Header().Set("Content-Length", strconv.Itoa(len(out)))
	m.ResponseWriter.WriteHeader(status)
	_, _ = m.ResponseWriter.Write(out) // a failed write means the client went away
}
