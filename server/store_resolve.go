package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"time"

	"github.com/harnessflow/harnessflow/protocol"
)

// conversation is what the proxy knows of a client request beyond its
// turn: the request as the client sent it (the Response object echoes it),
// whether the client asked for a stream, the scope of its credential, and
// the conversation the response answers (what is kept with it).
type conversation struct {
	ctx     context.Context            // the request's (for the store)
	request *protocol.ResponsesRequest // as the client sent it
	unary   bool                       // the client asked for one JSON answer
	scope   string                     // CredentialScope of the request
	keep    bool                       // keep the response (a store, and store not false)
	input   protocol.Items             // the resolved input
}

// Store lookup kinds and results (for /metrics).
const (
	lookupPrevious  = "previous_response"
	lookupReference = "item_reference"

	resultHit      = "hit"
	resultMiss     = "miss"
	resultError    = "error"
	resultDisabled = "disabled"
	resultPassed   = "passed_upstream"
)

// storeConfig returns the store the server keeps responses in: Config.Store,
// or an in-memory one with the configured limits; nil with Config.NoStore.
func (c Config) storeConfig() Store {
	switch {
	case c.NoStore:
		return nil
	case c.Store != nil:
		return c.Store
	}
	return NewMemoryStore(c.storeLimits(), nil)
}

// storeLimits are the in-memory store's limits: the configured ones (0:
// the default; negative: none).
func (c Config) storeLimits() StoreLimits {
	limit := func(v, def int64) int64 {
		switch {
		case v < 0:
			return 0
		case v == 0:
			return def
		}
		return v
	}
	return StoreLimits{
		MaxResponses: int(limit(int64(c.StoreMaxResponses), DefaultStoreMaxResponses)),
		MaxBytes:     limit(c.StoreMaxBytes, DefaultStoreMaxBytes),
		TTL:          time.Duration(limit(int64(c.StoreTTL), int64(DefaultStoreTTL))),
	}
}

// converse prepares a client request for its turn and returns the request
// to plan: a copy whose input has the previous response (its input and
// output) in front and every item_reference replaced by the item it names,
// without previous_response_id (the upstream never saw our ids), and that
// asks the upstream for a stream whatever the client asked (a
// non-streaming client gets the same turn, answered as one JSON body). It
// sets x.conv. A reference the store does not hold (or no store) is an
// HTTP 400 that says why — never a silent drop; on the Responses wire an
// item_reference the store does not hold goes upstream as it is (its ids
// are the upstream's). A request it refuses gets the answer it returns.
func (s *Server) converse(r *http.Request, x *exchange, req *protocol.ResponsesRequest) (*protocol.ResponsesRequest, *answerError) {
	conv := &conversation{ctx: r.Context(), request: req, unary: !req.Stream, scope: CredentialScope(r.Header)}
	x.conv = conv
	next := *req
	next.Stream = true
	var input protocol.Items

	prev, err := previousResponseID(req)
	if err != nil {
		return nil, &answerError{status: http.StatusBadRequest, typ: "invalid_request_error", msg: err.Error(),
			param: paramJSON("previous_response_id"), outcome: outcomeBadRequest, cause: err}
	}
	if prev != "" {
		next.Extra = maps.Clone(req.Extra)
		delete(next.Extra, "previous_response_id")
		if s.store == nil {
			s.storeMetrics.lookup(lookupPrevious, resultDisabled)
			return nil, &answerError{status: http.StatusBadRequest, typ: "invalid_request_error", code: codeJSON("store_disabled"),
				msg: "previous_response_id is not supported: this proxy keeps no responses (its response store is disabled); " +
					`send the whole conversation in "input" instead`, param: paramJSON("previous_response_id"),
				outcome: outcomeBadRequest, cause: errors.New("previous_response_id with the store disabled")}
		}
		got, err := s.store.Get(r.Context(), conv.scope, prev)
		if err != nil {
			return nil, s.lookupError(r, lookupPrevious, fmt.Sprintf("previous_response_id %q", prev), "previous_response_not_found", "previous_response_id", err)
		}
		s.storeMetrics.lookup(lookupPrevious, resultHit)
		input = make(protocol.Items, 0, len(got.Input)+len(got.Output)+len(req.Input))
		input = append(append(input, got.Input...), got.Output...)
	}

	for i, it := range req.Input {
		id, ok := protocol.ReferencedID(it)
		if !ok {
			input = append(input, it)
			continue
		}
		what := fmt.Sprintf("input[%d]: item_reference %q", i, id)
		passUpstream := x.passesReferences()
		switch {
		case id == "":
			return nil, &answerError{status: http.StatusBadRequest, typ: "invalid_request_error",
				msg: fmt.Sprintf(`input[%d]: an item_reference needs an "id"`, i), param: paramJSON("input"),
				outcome: outcomeBadRequest, cause: errors.New(what + " without id")}
		case s.store == nil && passUpstream:
			s.storeMetrics.lookup(lookupReference, resultPassed)
			input = append(input, it)
			continue
		case s.store == nil:
			s.storeMetrics.lookup(lookupReference, resultDisabled)
			return nil, &answerError{status: http.StatusBadRequest, typ: "invalid_request_error", code: codeJSON("store_disabled"),
				msg: what + ` cannot be resolved: this proxy keeps no responses (its response store is disabled); ` +
					`send the items themselves in "input" (with "store": false the SDKs do)`, param: paramJSON("input"),
				outcome: outcomeBadRequest, cause: errors.New(what + " with the store disabled")}
		}
		ref, err := s.store.GetItem(r.Context(), conv.scope, id)
		if errors.Is(err, ErrNotStored) && passUpstream {
			s.storeMetrics.lookup(lookupReference, resultPassed)
			input = append(input, it)
			continue
		}
		if err != nil {
			return nil, s.lookupError(r, lookupReference, what, "item_reference_not_found", "input", err)
		}
		s.storeMetrics.lookup(lookupReference, resultHit)
		input = append(input, ref)
	}
	if input == nil {
		input = make(protocol.Items, 0)
	}
	next.Input = input
	conv.input = input
	conv.keep = s.store != nil && req.Stores()
	return &next, nil
}

// lookupError answers a reference the store could not resolve: HTTP 400
// naming it and how long responses are kept, or HTTP 503 when the store
// itself failed.
func (s *Server) lookupError(r *http.Request, kind, what, code, param string, err error) *answerError {
	if !errors.Is(err, ErrNotStored) {
		s.storeMetrics.lookup(kind, resultError)
		s.log.LogAttrs(r.Context(), slog.LevelWarn, "harnessflow: response store lookup failed",
			slog.String("path", r.URL.Path), slog.String("kind", kind), slog.String("error", err.Error()))
		return &answerError{status: http.StatusServiceUnavailable, typ: "server_error", code: codeJSON("store_unavailable"),
			msg: what + ": the response store failed: " + err.Error(), param: paramJSON(param), outcome: outcomeStoreError, cause: err}
	}
	s.storeMetrics.lookup(kind, resultMiss)
	return &answerError{status: http.StatusBadRequest, typ: "invalid_request_error", code: codeJSON(code),
		msg: what + " not found (" + s.keptFor() + `); send the whole conversation in "input" instead`, param: paramJSON(param),
		outcome: outcomeBadRequest, cause: err}
}

// keptFor says how long and for whom responses are kept, for a not-found
// error.
func (s *Server) keptFor() string {
	lim, ok := s.store.(interface{ Limits() StoreLimits })
	var b strings.Builder
	b.WriteString("responses are kept")
	if ok {
		l := lim.Limits()
		if l.TTL > 0 {
			fmt.Fprintf(&b, " %s", durationText(l.TTL))
		}
		var bounds []string
		if l.MaxResponses > 0 {
			bounds = append(bounds, fmt.Sprintf("at most %d of them", l.MaxResponses))
		}
		if l.MaxBytes > 0 {
			bounds = append(bounds, fmt.Sprintf("%s in all", bytesText(l.MaxBytes)))
		}
		if len(bounds) > 0 {
			b.WriteString(", " + strings.Join(bounds, " and ") + ",")
		}
	} else {
		b.WriteString(" as long as the configured response store keeps them,")
	}
	b.WriteString(` only for the API key that made them, and only when their request did not set "store": false`)
	return b.String()
}

func durationText(d time.Duration) string {
	switch {
	case d%time.Hour == 0 && d >= 2*time.Hour:
		return fmt.Sprintf("%d hours", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%d minutes", d/time.Minute)
	}
	return d.String()
}

func bytesText(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// previousResponseID returns the request's previous_response_id ("" when
// it has none or null).
func previousResponseID(req *protocol.ResponsesRequest) (string, error) {
	raw, ok := req.Extra["previous_response_id"]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var id string
	if err := json.Unmarshal(raw, &id); err != nil {
		return "", fmt.Errorf("previous_response_id must be a string, not %s", raw)
	}
	return id, nil
}

// keepResponse keeps a response that is about to complete (the writer's
// Keep, called before the terminal event) and reports whether it was kept.
// A store failure is logged and counted; the response goes on, marked
// "store": false.
func (s *Server) keepResponse(ctx context.Context, x *exchange, output []protocol.ResponseItem) bool {
	c := x.conv
	if c == nil || !c.keep || s.store == nil {
		return false
	}
	err := s.store.Put(ctx, c.scope, &StoredResponse{ID: x.responseID, Model: c.request.Model, CreatedAt: time.Now(),
		Input: c.input, Output: output})
	if err != nil {
		s.storeMetrics.put(false)
		s.log.LogAttrs(ctx, slog.LevelWarn, "harnessflow: the response was not kept in the response store",
			slog.String("response_id", x.responseID), slog.String("error", err.Error()))
		return false
	}
	s.storeMetrics.put(true)
	return true
}

func paramJSON(p string) json.RawMessage { return json.RawMessage(protocol.AppendString(nil, p)) }

func codeJSON(c string) json.RawMessage { return json.RawMessage(protocol.AppendString(nil, c)) }
