package server

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/harnessflow/harnessflow/wire/anthropic"
	"github.com/harnessflow/harnessflow/wire/messagesin"
)

// messagesErrorShape wraps a handler of the Messages routes: the key of an
// x-api-key header (Claude Code's and the Anthropic SDK's way) is taken as
// the bearer key when no Authorization is sent, and every error answer the
// handler writes in OpenAI's shape goes out in the Messages API's
// ({"type":"error","error":{"type","message"}}), an overloaded proxy's 503
// as the API's 529.
func messagesErrorShape(h http.HandlerFunc) http.HandlerFunc {
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

// messagesModels wraps the model list routes: a request with an
// anthropic-version header (an Anthropic client) is served as a Messages
// route — x-api-key accepted, errors in the Messages shape, the list in
// Anthropic's shape (writeMessagesModels).
func messagesModels(h http.HandlerFunc) http.HandlerFunc {
	shaped := messagesErrorShape(h)
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(anthropic.HeaderVersion) == "" {
			h(w, r)
			return
		}
		shaped(w, r)
	}
}

// writeMessagesModels writes a model list in Anthropic's shape
// ({"data":[{"type":"model","id","display_name","created_at"}],"has_more",
// "first_id","last_id"}) from OpenAI-shaped entries, and returns 200.
func writeMessagesModels(w http.ResponseWriter, data []json.RawMessage) int {
	type entry struct {
		Type        string `json:"type"`
		ID          string `json:"id"`
		DisplayName string `json:"display_name"`
		CreatedAt   string `json:"created_at"`
	}
	out := struct {
		Data    []entry `json:"data"`
		HasMore bool    `json:"has_more"`
		FirstID *string `json:"first_id"`
		LastID  *string `json:"last_id"`
	}{Data: make([]entry, 0, len(data))}
	for _, raw := range data {
		var m struct {
			ID      string `json:"id"`
			Created int64  `json:"created"`
		}
		if json.Unmarshal(raw, &m) != nil || m.ID == "" {
			continue // modelList checked every entry has an id
		}
		out.Data = append(out.Data, entry{Type: "model", ID: m.ID, DisplayName: m.ID, CreatedAt: time.Unix(m.Created, 0).UTC().Format(time.RFC3339)})
	}
	if n := len(out.Data); n > 0 {
		out.FirstID, out.LastID = &out.Data[0].ID, &out.Data[n-1].ID
	}
	b, _ := json.Marshal(out) // strings, numbers and booleans always encode
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(b, '\n')) // a failed write means the client went away
	return http.StatusOK
}
