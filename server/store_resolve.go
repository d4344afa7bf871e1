package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"strconv"
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
		s.storeStatus(r.Context(), err)
		if err != nil {
			return nil, s.lookupError(r, lookupPrevious, prev, fmt.Sprintf("previous_response_id %q", prev), "previous_response_not_found", "previous_response_id", err)
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
		s.storeStatus(r.Context(), err)
		if errors.Is(err, ErrNotStored) && passUpstream {
			s.storeMetrics.lookup(lookupReference, resultPassed)
			input = append(input, it)
			continue
		}
		if err != nil {
			return nil, s.lookupError(r, lookupReference, id, what, "item_reference_not_found", "input", err)
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
	if conv.keep {
		if err := s.storeWritable(r.Context()); err != nil {
			s.storeMetrics.refused()
			return nil, &answerError{status: http.StatusServiceUnavailable, typ: "server_error", code: codeJSON("store_unavailable"),
				msg: "this response would be kept for previous_response_id (the request did not set \"store\": false), but " + err.Error() +
					"; harnessflow does not start a response it could not keep. Try again shortly, or send \"store\": false " +
					"with the whole conversation in \"input\" to be served without the store",
				retryAfter: retryAfterText(storeRetryAfter), outcome: outcomeStoreError, cause: err}
		}
	}
	return &next, nil
}

// retryAfterText is a Retry-After header value: whole seconds, at least 1.
func retryAfterText(d time.Duration) string {
	return strconv.FormatInt(max(1, int64((d+time.Second-1)/time.Second)), 10)
}

// lookupError answers a reference the store could not resolve: HTTP 503
// (retryable) when the store itself failed, else HTTP 400 — saying why the
// response is not there when this proxy knows it (it could not be kept),
// else naming what the id may be (unknown, expired, never kept) and how
// long responses are kept.
func (s *Server) lookupError(r *http.Request, kind, id, what, code, param string, err error) *answerError {
	if !errors.Is(err, ErrNotStored) {
		s.storeMetrics.lookup(kind, resultError)
		s.log.LogAttrs(r.Context(), slog.LevelWarn, "harnessflow: response store lookup failed",
			slog.String("path", r.URL.Path), slog.String("kind", kind), slog.String("error", err.Error()))
		return &answerError{status: http.StatusServiceUnavailable, typ: "server_error", code: codeJSON("store_unavailable"),
			msg: what + ": the response store failed: " + err.Error() + "; try again shortly", param: paramJSON(param),
			retryAfter: retryAfterText(storeRetryAfter), outcome: outcomeStoreError, cause: err}
	}
	s.storeMetrics.lookup(kind, resultMiss)
	e := &answerError{status: http.StatusBadRequest, typ: "invalid_request_error", code: codeJSON(code), param: paramJSON(param),
		outcome: outcomeBadRequest, cause: err}
	if u, ok := s.storeState.lookupUnstored(CredentialScope(r.Header), id); ok {
		e.msg = what + " was never stored: " + u.explain() + `; send the turn again from the response before it, or the whole conversation in "input"`
		return e
	}
	e.msg = what + " not found: the response store holds no response or item of that id for this API key — the id is unknown, " +
		"or it has expired or been dropped (" + s.keptFor() + `), or its request set "store": false (such responses are never kept); ` +
		`send the whole conversation in "input" instead`
	return e
}

// explain says why a response was not kept, for a later reference to it.
func (u unstoredID) explain() string {
	at := u.at.UTC().Format("15:04:05 UTC")
	switch u.reason {
	case unstoredRefused:
		return fmt.Sprintf("the response store refused response %s at %s (%s)", u.response, at, u.err)
	case unstoredCancelled:
		return fmt.Sprintf("response %s was not kept: its request ended at %s before the store had taken it", u.response, at)
	}
	return fmt.Sprintf("the response store was unavailable when response %s finished at %s (%s); that response ended with "+
		"response.failed (code store_unavailable) instead of completing", u.response, at, u.err)
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
	b.WriteString(" only for the API key that made them")
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
// A response the store failed to keep (the store's Put retries as it
// sees fit) ends with fail: response.failed, code store_unavailable,
// retryable — a client expecting it kept is never told it completed.
// A response the store refuses (ErrNotStored: over its byte limit)
// completes, marked "store": false. Either is logged, counted and
// remembered for a later reference to it (lookupError).
func (s *Server) keepResponse(ctx context.Context, x *exchange, output []protocol.ResponseItem) (kept bool, fail *protocol.StreamError) {
	c := x.conv
	if c == nil || !c.keep || s.store == nil {
		return false, nil
	}
	began := time.Now()
	err := s.store.Put(ctx, c.scope, &StoredResponse{ID: x.responseID, Model: c.request.Model, CreatedAt: began,
		Input: c.input, Output: output})
	s.storeStatus(ctx, err)
	if err == nil {
		s.storeMetrics.put(resultOK)
		return true, nil
	}
	reason := unstoredUnavailable
	switch {
	case errors.Is(err, ErrNotStored):
		reason = unstoredRefused
	case ctx.Err() != nil:
		reason = unstoredCancelled
	}
	s.storeMetrics.put(putResult(reason))
	s.storeMetrics.unstored(reason)
	ids := make([]string, 0, len(output))
	for _, it := range output {
		ids = append(ids, protocol.ItemID(it))
	}
	s.storeState.remember(c.scope, x.responseID, ids, unstoredID{at: began, reason: reason, err: err.Error()})
	s.log.LogAttrs(ctx, slog.LevelWarn, "harnessflow: the response was not kept in the response store",
		slog.String("response_id", x.responseID), slog.String("reason", reason),
		slog.Duration("tried", time.Since(began).Round(time.Millisecond)), slog.String("error", err.Error()))
	if reason == unstoredRefused {
		return false, nil
	}
	return false, &protocol.StreamError{Kind: protocol.ErrKindUpstream, Type: "server_error", Code: "store_unavailable",
		Message: "harnessflow could not keep this response in its response store (" + err.Error() + "); a response that is " +
			"not kept cannot be continued with previous_response_id, so this one is reported as failed rather than completed.",
		Retryable: true, HTTPStatus: http.StatusServiceUnavailable, RetryAfterMS: storeRetryAfter.Milliseconds()}
}

// putResult is the harnessflow_store_puts_total result of a Put that did
// not keep its response for reason.
func putResult(reason string) string {
	if reason == unstoredUnavailable {
		return resultError
	}
	return reason
}

func paramJSON(p string) json.RawMessage { return json.RawMessage(protocol.AppendString(nil, p)) }

func codeJSON(c string) json.RawMessage { return json.RawMessage(protocol.AppendString(nil, c)) }
