package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/serveconfig"
)

// Routing by model (Config.Routes, docs/serve-config.md).
//
// A request's model picks the first matching entry of the routing config
// taken when the request arrived — a reload meanwhile changes nothing for
// it — and the entry's upstreams are tried in order: the next one only when
// the one before failed before anything was written to the client (it could
// not be reached, sent no headers within its header timeout, answered 429
// or 5xx, or answered a 2xx HTML page). Any other answer, a 4xx, or a
// failure once the client's stream started, is the client's to see. Each
// attempt is logged and counted (harnessflow_upstream_attempts_total), and
// the client's stream is counted by the upstream that served it and the
// model entry (harnessflow_routed_streams_total).

// targets returns the upstreams to try for req, in order: the one of
// Config.Upstream, or those its model routes to in the routing config
// taken now. A model the config does not route is answered with HTTP 404
// naming the configured models; a /h/NAME/ harness that none of the
// model's upstreams' wires serves with HTTP 400: it returns those answers.
func (s *Server) targets(x *exchange, req *protocol.ResponsesRequest) ([]*target, *answerError) {
	if s.cfg.Routes == nil {
		x.target, x.sameWire = s.single, true
		return []*target{s.single}, nil
	}
	c := s.cfg.Routes.Config()
	route, err := c.RouteFor(req.Model, requestKind(x, req)) // the entries with a when condition: inbound_route.go
	if err != nil {
		return nil, failure(http.StatusNotFound, "invalid_request_error", "model_not_found", "harnessflow: "+err.Error(), outcomeUnknownModel, err)
	}
	ts := make([]*target, 0, len(route.Attempts))
	var refused error
	for _, a := range route.Attempts {
		u := a.Upstream
		var resolved *harness.Route
		if x.harness != "" {
			route, err := s.reg.Route(u.Wire, x.harness)
			if err != nil {
				refused = cmp.Or(refused, err)
				continue // a harness this upstream's wire does not serve: the next may
			}
			resolved = &route
		}
		t := &target{name: u.Name, entry: route.Entry.Name, base: u.BaseURL, wire: u.Wire, apiKey: u.APIKey, headers: u.Headers,
			model: a.Model, harness: route.Entry.Harness,
			limits: AnswerLimits{Text: u.MaxAnswerBytes, Body: u.MaxBodyBytes, Ratio: u.MaxCompressionRatio}.inForce(s.cfg.defaultLimits()),
			header: effective(u.HeaderTimeout, s.cfg.headerTimeout()), idle: effective(u.IdleTimeout, s.cfg.idleTimeout()),
			client: s.client, route: resolved}
		if s.cfg.Client == nil {
			t.client = s.pool.client(u)
		}
		if t.models, err = route.Entry.ModelTable(s.cfg.Models, a.Model); err != nil {
			return nil, failure(http.StatusInternalServerError, "server_error", "", err.Error(), outcomeConfigError, err)
		}
		ts = append(ts, t)
	}
	if len(ts) == 0 {
		return nil, failure(http.StatusBadRequest, "invalid_request_error", "unsupported_route",
			fmt.Sprintf("model %q: %v", req.Model, refused), outcomeRouteError, refused)
	}
	x.target, x.sameWire = ts[0], true
	for _, t := range ts {
		x.sameWire = x.sameWire && t.wire == ts[0].wire
	}
	return ts, nil
}

// defaultModel returns the default model of a request that names none:
// the routing config's default_model, or Config.DefaultModel.
func (s *Server) defaultModel() string {
	if s.cfg.Routes != nil {
		if m := s.cfg.Routes.Config().DefaultModel; m != "" {
			return m
		}
	}
	return s.cfg.DefaultModel
}

// Reload replaces the routing config with the file at path when it
// validates (serveconfig.Holder.Load): requests that arrive afterwards use
// it, requests in flight finish on the config they started with. A file
// that does not validate is refused and the running config kept. Both are
// logged and counted (harnessflow_config_reloads_total). The client keys
// of the file are in force for the requests that arrive next (a file with
// none is refused while keys are required); the log names the environment
// variables the file reads, whose values are as at the process's start.
// Settings a running server does not change (listen addresses, store,
// shutdown grace) keep their old values; the log names those that differ.
func (s *Server) Reload(path string) (*serveconfig.Config, error) {
	if s.cfg.Routes == nil {
		return nil, errors.New("server: reload: the server runs without a routing config")
	}
	old := s.cfg.Routes.Config()
	c, err := s.cfg.Routes.LoadChecked(path, s.checkReload)
	if err != nil {
		s.routing.reload(false)
		s.log.LogAttrs(context.Background(), slog.LevelWarn, "harnessflow: configuration refused; the running one is kept",
			slog.String("file", path), slog.String("error", err.Error()))
		return nil, err
	}
	s.routing.reload(true)
	// A file without keys leaves those of Config.ClientKeys (checkReload
	// refused one that removes the keys an earlier file had).
	keysChanged := len(c.ClientKeys) > 0 && !slices.Equal(old.ClientKeys, c.ClientKeys)
	if keysChanged {
		_ = s.SetClientKeys(c.ClientKeys) // checked when the file was read
	}
	dropped := s.pool.keep(c)
	attrs := []slog.Attr{slog.String("file", path), slog.Int("upstreams", len(c.Upstreams)), slog.Int("models", len(c.Models)),
		slog.Int("upstreams_dropped", dropped)}
	attrs = append(attrs, slog.Int("client_keys", len(c.ClientKeys)), slog.Bool("client_keys_changed", keysChanged))
	if len(c.Environment) > 0 {
		// A process's environment is fixed at its start: a changed
		// variable takes a restart, whatever the file says now.
		attrs = append(attrs, slog.Any("environment_as_at_start", c.Environment))
	}
	if restart := serveconfig.RestartNeeded(old, c); len(restart) > 0 {
		attrs = append(attrs, slog.Any("unchanged_until_restart", restart))
	}
	s.log.LogAttrs(context.Background(), slog.LevelInfo, "harnessflow: configuration reloaded", attrs...)
	return c, nil
}

// checkReload refuses a configuration that would make a server serving a
// non-loopback address an open relay of an upstream key (see CheckAddr):
// keys the running server checks only at start.
func (s *Server) checkReload(next *serveconfig.Config) error {
	if len(next.ClientKeys) == 0 && len(s.cfg.Routes.Config().ClientKeys) > 0 {
		return errors.New("server: reload: the configuration has no client keys and the running server requires them: " +
			"removing every client key takes a restart (clients still sending a proxy key would have it passed upstream)")
	}
	if !s.exposed.Load() || len(next.ClientKeys) > 0 || s.requiresKeys() || s.cfg.InsecureOpenRelay {
		return nil
	}
	for _, u := range next.Upstreams {
		if u.APIKey != "" {
			return fmt.Errorf("server: reload: upstream %q has a key of its own, and this server serves a non-loopback address "+
				"without client keys: anyone who reaches it could spend that key (insecure_open_relay takes a restart)", u.Name)
		}
	}
	return nil
}

// attemptResult is an attempt's result for the attempts counter, and
// whether another upstream may answer instead: an upstream that could not
// be reached, sent no headers in time, or answered 429 or 5xx.
func attemptResult(err error, status int) (string, bool) {
	switch {
	case err != nil:
		if _, ok := errors.AsType[*TimeoutError](err); ok {
			return attemptTimeout, true
		}
		if _, ok := errors.AsType[*RedirectError](err); ok {
			return attemptRedirect, true
		}
		return attemptUnreachable, true
	case status == http.StatusTooManyRequests:
		return attemptStatus + "429", true
	case status >= 500:
		return attemptStatus + "5xx", true
	case status >= 200 && status <= 299:
		return attemptOK, false
	}
	return attemptStatus + strconv.Itoa(status/100) + "xx", false
}

// noteAttempt counts and logs one upstream attempt of x (routed requests
// only) and returns whether the request goes on to the next upstream: next
// (the attempt failed in a way another upstream may answer, and was not the
// last) for a routed request, false otherwise.
func (s *Server) noteAttempt(r *http.Request, x *exchange, result string, status int, start time.Time, next bool) bool {
	t := x.target
	if t == nil || t.entry == "" {
		return false
	}
	s.routing.attempt(t.name, t.entry, result)
	if result == attemptOK {
		return false
	}
	msg := "harnessflow upstream attempt failed"
	if next {
		msg = "harnessflow upstream attempt failed; the request goes to the next upstream"
	}
	s.log.LogAttrs(r.Context(), slog.LevelWarn, msg, slog.String("path", r.URL.Path), slog.String("model_entry", t.entry),
		slog.String("upstream", t.name), slog.String("result", result), slog.Int("upstream_status", status),
		slog.Duration("duration", time.Since(start)))
	return next
}

// streamOutcome is the outcome a stream is counted with: its own, or
// failed for a failure after it was set up.
func streamOutcome(outcome string) string {
	switch outcome {
	case outcomeCompleted, outcomeIncomplete, outcomeFailed, outcomeClientClosed, outcomeShutdown:
		return outcome
	}
	return outcomeFailed
}

// endRouted counts a routed stream's end by upstream and model entry.
func (s *Server) endRouted(x *exchange) {
	if x.stream == nil || x.target == nil || x.target.entry == "" {
		return
	}
	s.routing.stream(x.target.name, x.target.entry, streamOutcome(x.outcome))
}

// routedModels lists the exact model names of the routing config (a
// pattern is no model id) and its default model, for GET /v1/models.
func (s *Server) routedModels() []json.RawMessage {
	c := s.cfg.Routes.Config()
	var names []string
	for _, m := range c.Models {
		if !m.IsPattern() && !slices.Contains(names, m.Name) {
			names = append(names, m.Name) // once: an entry with a when condition may repeat a name
		}
	}
	if d := c.DefaultModel; d != "" && !slices.Contains(names, d) {
		names = append(names, d)
	}
	out := make([]json.RawMessage, len(names))
	for i, n := range names {
		out[i] = json.RawMessage(marshalModel(n))
	}
	return out
}

// harnessFor is the harness a request on target t is shaped as: the one
// its path names, else the model entry's.
func harnessFor(path string, t *target) string {
	if path != "" {
		return path
	}
	return t.harness
}

// dispatch plans req for each target in turn and sends it, until an
// upstream answers 2xx or fails in a way the client is to see (send). It
// returns the exchange and the answer, or the error answer for the client.
// The title request (when the harness sends one) goes to the first
// upstream only.
func (s *Server) dispatch(ctx context.Context, r *http.Request, x *exchange,
	req *protocol.ResponsesRequest, targets []*target) (*harness.Exchange, *http.Response, *answerError) {
	path := x.harness
	for i, t := range targets {
		x.target = t
		x.harness = harnessFor(path, t)
		treq := req
		if t.model != "" && t.model != req.Model {
			renamed := *req
			renamed.Model = t.model
			treq = &renamed
		}
		ex, err := s.open(ctx, r, x, treq)
		if err != nil {
			return nil, nil, s.planError(r, x, err)
		}
		turn := ex.Turn
		x.route = turn.Route.String()
		if i == 0 && turn.Shaped.TitleRequest != nil {
			s.titleRequest(ctx, r, t, turn)
			if err := r.Context().Err(); err != nil {
				return nil, nil, cancelledAnswer(err)
			}
		}
		resp, next, e := s.send(ctx, r, x, ex, i == len(targets)-1)
		if !next {
			return ex, resp, e
		}
	}
	// The last target's failure is the client's to see (send): never here.
	return nil, nil, failure(http.StatusBadGateway, "server_error", "", "harnessflow: no upstream answered", outcomeUpstreamUnreachable, nil)
}

// checkHarness checks the harness of a /h/NAME/ route before the request
// is read: a name this build does not serve is HTTP 404; without a routing
// config, a harness off the upstream's wire is HTTP 400 (with one, the
// wire is the model's upstream's: see targets). Without a routing config
// the route it resolved is x's for the turn's planning (open), so the
// request is routed once; a pair the routing table refuses is left to the
// planning's error.
func (s *Server) checkHarness(x *exchange) error {
	if s.cfg.Routes != nil {
		return s.reg.CheckName(x.harness)
	}
	route, err := s.reg.Route(s.cfg.wire(), x.harness)
	if err == nil {
		x.resolved = &route
		return nil
	}
	return s.reg.CheckRoute(s.cfg.wire(), x.harness) // nil for the routing table's refusal
}

// singleTarget is the target of Config.Upstream (nil with Config.Routes).
func (s *Server) singleTarget() *target {
	if s.cfg.Routes != nil {
		return nil
	}
	return &target{base: s.checked.base, wire: s.cfg.wire(), apiKey: s.cfg.APIKey,
		header: s.cfg.headerTimeout(), idle: s.cfg.idleTimeout(), client: s.client, models: s.cfg.Models,
		limits: s.cfg.defaultLimits()}
}

// wire is the upstream wire of x: its target's, else Config.Wire ("" with
// a routing config before the model was routed).
func (x *exchange) wire(s *Server) harness.Wire {
	switch {
	case x.target != nil:
		return x.target.wire
	case s.cfg.Routes != nil:
		return ""
	}
	return s.cfg.wire()
}

// passesReferences reports whether the item references of x's request go
// upstream as they are: on the responses wire, when every upstream it may
// go to speaks it.
func (x *exchange) passesReferences() bool {
	return x.target != nil && x.target.wire == harness.WireResponses && x.sameWire
}

// spendsKey reports whether the proxy sends a key of its own upstream:
// Config.APIKey, or an upstream key of the routing config.
func (c Config) spendsKey() bool {
	if c.APIKey != "" {
		return true
	}
	if c.Routes != nil && c.Routes.Config() != nil {
		for _, u := range c.Routes.Config().Upstreams {
			if u.APIKey != "" {
				return true
			}
		}
	}
	return false
}

// listWire is the wire of the model list request (the routing config's
// list is its own).
func (s *Server) listWire() harness.Wire {
	if s.cfg.Routes != nil {
		return ""
	}
	return s.cfg.wire()
}
