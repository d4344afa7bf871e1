package server

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/harnessflow/harnessflow/codec"
	"github.com/harnessflow/harnessflow/wire/anthropic"
)

// messagesModels wraps the model list routes: a request with an
// anthropic-version header (an Anthropic client) is served as a Messages
// route — x-api-key accepted, errors in the Messages shape, the list in
// Anthropic's shape (writeMessagesModels).
func messagesModels(h http.HandlerFunc) http.HandlerFunc {
	shaped := codec.MessagesErrors(h)
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
