package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/harnessflow/harnessflow/codec"
	"github.com/harnessflow/harnessflow/harness"
)

// GET /v1/models (and /models, /h/{harness}/v1/models, /h/{harness}/models):
// the model list clients and UIs probe. It is the upstream's own list,
// fetched with the client's credentials (or Config.APIKey) as a turn's
// request would be: passed on as it is from a chat or responses upstream
// ({"object":"list","data":[…]}), translated from Anthropic's shape
// ({"data":[{"type":"model","id","created_at",…}],"has_more",…}) on the
// messages wire. An upstream without a list (any non-2xx answer) gives the
// configured models instead (Config.Model, Config.DefaultModel) when there
// are any, else its status with an error body saying so; an unreachable
// upstream is HTTP 502. The embedded scripted model lists its own name.

// modelsTimeout bounds the upstream's model list request.
const modelsTimeout = 30 * time.Second

// maxModelsBody caps the upstream's model list.
const maxModelsBody = 8 << 20

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	start, rw := time.Now(), &reasonWriter{ResponseWriter: w}
	status, outcome := s.models(rw, r)
	attrs := []slog.Attr{
		slog.String("method", r.Method), slog.String("path", r.URL.Path),
		slog.String("wire", string(s.listWire())), slog.Int("status", status),
		slog.Duration("duration", time.Since(start)), slog.String("outcome", outcome),
	}
	if reason := s.reasonFor(r, rw.reason); status >= 400 && reason != "" {
		attrs = append(attrs, slog.String("reason", reason))
	}
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelWarn
	}
	s.log.LogAttrs(r.Context(), level, "harnessflow request", attrs...)
}

// models answers a model list request; it returns the status and outcome.
func (s *Server) models(w http.ResponseWriter, r *http.Request) (int, string) {
	list, outcome, e := s.listModels(r)
	if e != nil {
		return s.answer(w, nil, e)
	}
	if r.Header.Get("anthropic-version") != "" { // an Anthropic client (inbound_messages.go)
		return writeMessagesModels(w, list), outcome
	}
	return writeModels(w, list), outcome
}

// listModels returns the models to list and the outcome, or the error
// answer.
func (s *Server) listModels(r *http.Request) ([]json.RawMessage, string, *answerError) {
	if err := s.checked.err; err != nil {
		return nil, "", failure(http.StatusInternalServerError, "server_error", "", err.Error(), outcomeConfigError, nil)
	}
	if name := r.PathValue("harness"); name != "" {
		if err := s.reg.CheckName(name); err != nil {
			return nil, "", failure(http.StatusNotFound, "invalid_request_error", "unknown_harness", err.Error(), outcomeRouteError, nil)
		}
	}
	if s.cfg.Routes != nil { // the routing config's models (routing.go)
		return s.routedModels(), outcomeConfigured, nil
	}
	ctx, cancel := context.WithTimeout(r.Context(), modelsTimeout)
	defer cancel()
	modelsPath := "/models"
	if c, ok := codec.Lookup(s.cfg.wire()); ok && c.ModelsPath != "" {
		modelsPath = c.ModelsPath
	}
	up, err := http.NewRequestWithContext(ctx, http.MethodGet, s.checked.base+modelsPath, nil)
	if err != nil {
		return nil, "", failure(http.StatusInternalServerError, "server_error", "", "server: model list request: "+err.Error(), outcomeConfigError, nil)
	}
	up.Header.Set("Accept", "application/json")
	up.Header.Set("User-Agent", "harnessflow")
	s.setCredentials(s.single, up.Header, r)
	resp, err := s.client.Do(up)
	if err != nil {
		if r.Context().Err() != nil {
			return nil, "", cancelledAnswer(nil)
		}
		return nil, "", failure(http.StatusBadGateway, "server_error", "upstream_unreachable",
			"harnessflow: the upstream's model list is unreachable: "+redactURLError(err), outcomeUpstreamUnreachable, nil)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxModelsBody))
	if err != nil {
		return nil, "", failure(http.StatusBadGateway, "server_error", "upstream_error",
			"harnessflow: reading the upstream's model list: "+redactURLError(err), outcomeUpstreamError, nil)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if list := s.configuredModels(); list != nil {
			return list, outcomeConfigured, nil
		}
		msg, _, _, _ := parseUpstreamError(data)
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
		status := resp.StatusCode
		if status < 400 {
			status = http.StatusBadGateway
		}
		return nil, "", failure(status, errorType(status), "no_model_list", s.redactKey(
			"harnessflow: the upstream has no model list (GET "+RedactURL(s.checked.base)+modelsPath+" answered HTTP "+
				strconv.Itoa(resp.StatusCode)+": "+msg+"); set --model or --default-model to have one listed"), outcomeUpstreamError, nil)
	}
	list, err := modelList(data, s.cfg.wire())
	if err != nil {
		return nil, "", failure(http.StatusBadGateway, "server_error", "upstream_error", "harnessflow: the upstream's model list: "+err.Error(), outcomeUpstreamError, nil)
	}
	return list, outcomeCompleted, nil
}

// modelEntry is one model of an OpenAI model list.
type modelEntry struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// configuredModels lists Config.Model and Config.DefaultModel; nil when
// neither is set.
func (s *Server) configuredModels() []json.RawMessage {
	var out []json.RawMessage
	seen := map[string]bool{}
	for _, m := range []string{s.cfg.Model, s.cfg.DefaultModel} {
		if m != "" && !seen[m] {
			seen[m] = true
			out = append(out, json.RawMessage(marshalModel(m)))
		}
	}
	return out
}

func marshalModel(id string) string {
	b, _ := json.Marshal(modelEntry{ID: id, Object: "model", OwnedBy: "harnessflow"}) // strings and numbers always encode
	return string(b)
}

// modelList reads an upstream's model list through its wire's codec:
// the data entries as they are (chat, responses) or translated
// (messages).
func modelList(data []byte, w harness.Wire) ([]json.RawMessage, error) {
	c, ok := codec.Lookup(w)
	if !ok {
		return nil, fmt.Errorf("no codec for wire %q", w)
	}
	return c.Models(data)
}

// writeModels writes an OpenAI model list and returns 200.
func writeModels(w http.ResponseWriter, data []json.RawMessage) int {
	if data == nil {
		data = []json.RawMessage{}
	}
	b, _ := json.Marshal(struct {
		Object string            `json:"object"`
		Data   []json.RawMessage `json:"data"`
	}{"list", data}) // raw entries from a parsed array always encode
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(b, '\n')) // a failed write means the client went away
	return http.StatusOK
}
