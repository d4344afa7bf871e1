package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/metrics"
	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/stages/textcall"
	"github.com/harnessflow/harnessflow/wire/chat"
	"github.com/harnessflow/harnessflow/wire/responses"
)

// ---------------------------------------------------------------------------
// the proxied request

// exchange is the state of one proxied request, for its log record.
type exchange struct {
	start          time.Time
	harness        string
	route          string
	status         int
	upstreamStatus int
	events         int
	outcome        string
	responseID     string
	errStage       string
	rounds         int // follow-up rounds the proxy ran (FollowupsProxy)
	err            error
	stream         *metrics.Stream       // the client's stream, once it started (for /metrics)
	failure        *protocol.StreamError // a response.failed the server wrote outside the graph
	conv           *conversation         // the client's request, its store scope and resolved input (store_resolve.go)
	reason         string                // the message of an error answer (reason.go)
	target         *target               // the upstream of the attempt under way (routing.go)
	sameWire       bool                  // every upstream x may go to speaks the target's wire
}

func (s *Server) handleResponses(w http.ResponseWriter, r *http.Request) {
	x := &exchange{start: time.Now(), harness: r.PathValue("harness")}
	rw := &reasonWriter{ResponseWriter: w} // the reason of an error answer, for the log (reason.go)
	defer s.logRequest(r, x)
	defer s.endStream(x)
	x.status, x.outcome = s.proxy(rw, r, x)
	x.reason = s.reasonFor(r, rw.reason)
}

func (s *Server) logRequest(r *http.Request, x *exchange) {
	attrs := []slog.Attr{
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.String("harness", x.harness),
		slog.String("wire", string(x.wire(s))),
		slog.String("route", x.route),
		slog.Int("status", x.status),
		slog.Duration("duration", time.Since(x.start)),
		slog.Int("events", x.events),
		slog.Int("upstream_status", x.upstreamStatus),
		slog.String("outcome", x.outcome),
	}
	if x.responseID != "" {
		attrs = append(attrs, slog.String("response_id", x.responseID))
	}
	if x.rounds > 0 {
		attrs = append(attrs, slog.Int("followup_rounds", x.rounds))
	}
	if t := x.target; t != nil && t.entry != "" {
		attrs = append(attrs, slog.String("upstream", t.name), slog.String("model_entry", t.entry))
	}
	if x.errStage != "" {
		attrs = append(attrs, slog.String("error_stage", x.errStage))
	}
	if reason := x.logReason(); reason != "" {
		attrs = append(attrs, slog.String("reason", reason))
	}
	level := slog.LevelInfo
	if x.status >= 500 || x.outcome == "failed" {
		level = slog.LevelWarn
	}
	s.log.LogAttrs(r.Context(), level, "harnessflow request", attrs...)
	if x.err != nil {
		// The error text may quote upstream bytes: debug level only.
		s.log.LogAttrs(r.Context(), slog.LevelDebug, "harnessflow request error", slog.String("path", r.URL.Path), slog.String("error", x.err.Error()))
	}
}

// open plans req for target t: the exchange of one attempt (harness.Open).
func (s *Server) open(ctx context.Context, r *http.Request, t *target, name string, req *protocol.ResponsesRequest) (*harness.Exchange, error) {
	ex, err := harness.Open(ctx, s.planConfig(t), harness.Opening{Harness: name, Request: req, Header: r.Header})
	if err != nil {
		return nil, err
	}
	ex.Options.MaxEventBytes = s.cfg.MaxEventBytes
	return ex, nil
}

// planConfig is the harness layer's configuration of a turn to t.
func (s *Server) planConfig(t *target) harness.Config {
	return harness.Config{
		Wire:          t.wire,
		BaseURL:       t.base,
		Models:        t.models,
		Prompts:       s.cfg.Prompts,
		Logger:        s.log,
		Now:           s.cfg.Now,
		Variants:      s.cfg.Variants,
		Workspace:     s.cfg.workspace(),
		Unbridged:     s.metrics.UnbridgedCall,
		ToolFormat:    s.cfg.toolFormat(),
		ToolsInPrompt: s.cfg.ToolsInPrompt,
		TextCalls:     s.metrics.TextToolCall,
	}
}

// toolFormat is the text tool-call format of chat answers: auto unless
// configured.
func (c Config) toolFormat() string {
	if c.ToolFormat == "" {
		return textcall.Auto
	}
	return c.ToolFormat
}

// proxy serves one request and returns the HTTP status and the outcome.
func (s *Server) proxy(w http.ResponseWriter, r *http.Request, x *exchange) (int, string) {
	if err := s.checked.err; err != nil {
		x.err = err
		return writeError(w, http.StatusInternalServerError, "server_error", "", err.Error()), "config_error"
	}
	// The /h/NAME/ namespace is ours: a name this build does not serve is a
	// 404, a harness on a wire it does not shape a 400 with the fix
	// (docs/routing.md#the-proxys-harness-routes).
	// With a routing config the wire is the model's upstream's: checked
	// once the model is routed (routing.go).
	if err := s.checkHarness(x.harness); err != nil {
		x.err = err
		var unknown *harness.UnknownHarnessError
		if errors.As(err, &unknown) {
			return writeError(w, http.StatusNotFound, "invalid_request_error", "unknown_harness", err.Error()), "route_error"
		}
		return writeError(w, http.StatusBadRequest, "invalid_request_error", "unsupported_route", err.Error()), "route_error"
	}
	release, status, outcome, ok := s.admitStream(w, r) // Config.MaxStreams (admission.go)
	if !ok {
		return status, outcome
	}
	defer release()
	body, err := s.readBody(w, r)
	if err != nil {
		x.err = err
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return writeError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "", fmt.Sprintf("request body over %d bytes", tooBig.Limit)), "bad_request"
		}
		return writeError(w, http.StatusBadRequest, "invalid_request_error", "", "read request body: "+err.Error()), "bad_request"
	}
	req, err := protocol.DecodeRequest(body)
	if err != nil {
		x.err = err
		return writeError(w, http.StatusBadRequest, "invalid_request_error", "", "invalid Responses request: "+err.Error()), "bad_request"
	}
	if s.cfg.Model != "" {
		req.Model = s.cfg.Model
	}
	if status, ok := s.requireModel(w, req); !ok {
		return status, "bad_request"
	}
	targets, status, outcome := s.targets(w, x, req)
	if targets == nil {
		return status, outcome
	}
	// previous_response_id and item_reference resolved; a non-streaming
	// request runs the same (streamed) turn, answered as one JSON body.
	if req, x.status, x.outcome = s.converse(w, r, x, req); req == nil {
		return x.status, x.outcome
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	// The upstreams in order, each planned for its wire and model: the next
	// only when the one before failed before the client got a byte.
	ex, resp, status, outcome := s.dispatch(ctx, w, r, x, req, targets)
	if resp == nil {
		return status, outcome
	}
	if s.cfg.Followups == FollowupsProxy {
		return s.proxyRounds(ctx, w, r, x, ex, resp)
	}
	defer resp.Body.Close()
	ex.Answered(resp.Header.Get("Content-Type"))
	g, closeExt, err := s.responseGraph(x, ex, true)
	if err != nil {
		x.err = err
		return writeError(w, http.StatusInternalServerError, "server_error", "", "response graph: "+err.Error()), "config_error"
	}
	defer closeExt()
	cw, src := s.batchFlushes(w, sources.Reader(resp.Body, sources.WithName("upstream")))
	sink := s.startSSE(cw, x, req.Model)
	obs := s.metrics.RunObserver(g)
	err = pipeline.Run(ctx, g, src, sink,
		s.runOptions(obs)...)
	obs.Flush()
	return s.concludeClient(w, r, x, sink, err)
}

// planError answers a request harness.Plan refused: a routing error or a
// harness this build lacks is HTTP 400 "unsupported_route" with the exact
// text, a request the harness cannot shape HTTP 400.
func (s *Server) planError(w http.ResponseWriter, r *http.Request, x *exchange, err error) (int, string) {
	x.err = err
	if r.Context().Err() != nil {
		return cancelled(w), "client_closed"
	}
	var re *harness.RouteError
	if errors.As(err, &re) {
		return writeError(w, http.StatusBadRequest, "invalid_request_error", "unsupported_route", re.Error()+routeHint(x.wire(s), x.harness)), "route_error"
	}
	if route, rerr := harness.Resolve(x.wire(s), x.harness); rerr == nil {
		x.route = route.String()
		if _, ok := harness.Lookup(route.Harness); !ok {
			// harness.Prepare's "harness %q (route %s) is not available in this build".
			return writeError(w, http.StatusBadRequest, "invalid_request_error", "unsupported_route", err.Error()), "route_error"
		}
	}
	return writeError(w, http.StatusBadRequest, "invalid_request_error", "", err.Error()), "bad_request"
}

// cancelled answers a request whose client is gone, or that the server's
// shutdown cancelled while the client still waits: it must not get an empty
// HTTP 200. The status logged is 499.
func cancelled(w http.ResponseWriter) int {
	writeError(w, http.StatusServiceUnavailable, "server_error", "cancelled", "request cancelled (client gone or server shutting down)")
	return 499
}

// send sends the turn's shaped request to x.target. On success it returns
// the 2xx response (the caller closes its body); otherwise it has answered
// the client and returns a nil response, the status and the outcome —
// except, unless last, for a failure the next upstream may answer instead
// (attemptResult): then nothing is written and the outcome is outcomeRetry.
func (s *Server) send(ctx context.Context, w http.ResponseWriter, r *http.Request, x *exchange, turn *harness.Turn, last bool) (*http.Response, int, string) {
	start := time.Now()
	up, err := s.upstreamRequest(ctx, r, x.target, turn.Shaped, turn.Shaped.Body)
	if err != nil {
		x.err = err
		return nil, writeError(w, http.StatusInternalServerError, "server_error", "", err.Error()), "config_error"
	}
	resp, err := s.do(x.target, up, metrics.RequestMain)
	if err != nil {
		x.err = err
		if r.Context().Err() != nil {
			return nil, cancelled(w), "client_closed"
		}
		result, retryable := attemptResult(err, 0)
		if s.noteAttempt(r, x, result, 0, start, retryable && !last) {
			return nil, 0, outcomeRetry
		}
		if te, ok := errors.AsType[*TimeoutError](err); ok {
			return nil, writeError(w, http.StatusGatewayTimeout, "server_error", "upstream_timeout", "harnessflow: "+te.Error()), "upstream_timeout"
		}
		return nil, writeError(w, http.StatusBadGateway, "server_error", "upstream_unreachable",
			"upstream unreachable: "+redactURLError(err)), "upstream_unreachable"
	}
	x.upstreamStatus = resp.StatusCode
	page := ""
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		page = htmlPage(resp)
	}
	result, retryable := attemptResult(nil, resp.StatusCode)
	if page != "" {
		result, retryable = attemptNotAStream, true
	}
	if s.noteAttempt(r, x, result, resp.StatusCode, start, retryable && !last) {
		resp.Body.Close()
		return nil, 0, outcomeRetry
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		return nil, s.upstreamError(w, resp), "upstream_error"
	}
	if page != "" {
		// A login page, a captive portal or a misrouted proxy answering
		// 200: no decoder would see a data line in it, and the client
		// would be told the stream was cut. Say what came instead.
		resp.Body.Close()
		x.err = errors.New(page)
		return nil, writeError(w, http.StatusBadGateway, "server_error", "upstream_not_a_stream", "harnessflow: "+s.redactKey(page)), "upstream_error"
	}
	return resp, 0, ""
}

// upstreamRequest builds a POST of body to the shaped request's path, with
// its query and headers, and the upstream's credentials.
func (s *Server) upstreamRequest(ctx context.Context, r *http.Request, t *target, shaped request.Shaped, body []byte) (*http.Request, error) {
	if err := s.checked.err; err != nil {
		return nil, err
	}
	base := t.base
	path := shaped.Path
	if path == "" {
		path = chat.Path
	}
	target := base + path
	if len(shaped.Query) > 0 {
		u, err := url.Parse(target)
		if err != nil {
			return nil, fmt.Errorf("server: upstream request: %w", err)
		}
		q := u.Query()
		for k, v := range shaped.Query {
			q.Set(k, v)
		}
		u.RawQuery = q.Encode()
		target = u.String()
	}
	up, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("server: upstream request: %w", err)
	}
	up.Header.Set("Content-Type", "application/json")
	if bodyStreams(body) {
		up.Header.Set("Accept", "text/event-stream")
	} else {
		up.Header.Set("Accept", "application/json")
	}
	up.Header.Set("User-Agent", "harnessflow")
	s.setCredentials(t, up.Header, r)
	// The harness's headers (beta flags, versions, its user agent) come
	// last; the credentials are the proxy's to set.
	for k, v := range shaped.Headers {
		switch http.CanonicalHeaderKey(k) {
		case "Authorization", "X-Api-Key", "Content-Length", "Host":
			continue
		}
		up.Header.Set(k, v)
	}
	for k, v := range t.headers { // the routing config's extra headers (checked when it was read)
		up.Header.Set(k, v)
	}
	return up, nil
}

// setCredentials sets the upstream credentials of a request for the
// client request r: the proxy's API key, or the client's (not with client
// keys), as Authorization or, on the messages wire, x-api-key with
// anthropic-version.
func (s *Server) setCredentials(t *target, h http.Header, r *http.Request) {
	auth, clientKey := s.clientCredentials(r)
	if t.apiKey != "" {
		auth = "Bearer " + t.apiKey
	}
	if t.wire == harness.WireMessages {
		if key, ok := strings.CutPrefix(auth, "Bearer "); ok {
			h.Set("x-api-key", key)
		} else if clientKey != "" && t.apiKey == "" {
			h.Set("x-api-key", clientKey)
		}
		h.Set("anthropic-version", "2023-06-01")
	} else if auth != "" {
		h.Set("Authorization", auth)
	}
}

// bodyStreams reports whether a JSON request body has "stream": true
// (harness.BodyStreams).
func bodyStreams(body []byte) bool { return harness.BodyStreams(body) }

// runOptions are the options of a response graph's run observed by obs:
// the configured mode, and timing only with Config.StageTiming.
func (s *Server) runOptions(obs pipeline.Observer) []pipeline.RunOption {
	opts := []pipeline.RunOption{pipeline.WithMode(s.cfg.Mode), pipeline.WithObserver(obs)}
	if !s.cfg.StageTiming {
		opts = append(opts, pipeline.WithoutTiming())
	}
	return opts
}

// htmlPage describes a 2xx answer that is an HTML page (Content-Type
// text/html or application/xhtml+xml) rather than a stream or a JSON body,
// quoting how it starts; "" for anything else.
func htmlPage(resp *http.Response) string {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch strings.ToLower(ct) {
	case "text/html", "application/xhtml+xml":
	default:
		return ""
	}
	head := make([]byte, 64)
	n, _ := io.ReadFull(resp.Body, head)
	start := strings.ToValidUTF8(strings.TrimSpace(string(head[:n])), "")
	return fmt.Sprintf("upstream answered HTTP %d with an HTML page (Content-Type %s), not a model answer: starts with %q", resp.StatusCode, ct, start)
}

// responseGraph builds the exchange's response graph with the stream
// extensions (Config.Extend) and, when withMetrics, the counting node. The
// returned closer ends the extensions (it logs their errors).
func (s *Server) responseGraph(x *exchange, ex *harness.Exchange, withMetrics bool) (*pipeline.Graph, func(), error) {
	exts := []harness.Extension{func(g *pipeline.Graph) (*pipeline.Graph, func(), error) {
		if x.responseID == "" {
			x.responseID = responses.NewResponseID()
		}
		if s.cfg.Extend == nil {
			return g, nil, nil
		}
		g, closer, err := s.cfg.Extend(g, StreamInfo{Harness: x.harness, Route: ex.Turn.Route, Wire: ex.Wire, ResponseID: x.responseID})
		if err != nil || closer == nil {
			return g, nil, err
		}
		id := x.responseID
		return g, func() {
			if err := closer(); err != nil {
				s.log.Warn("harnessflow: closing stream extensions", slog.String("response_id", id), slog.String("error", err.Error()))
			}
		}, nil
	}}
	if withMetrics {
		exts = append(exts, func(g *pipeline.Graph) (*pipeline.Graph, func(), error) {
			g, err := g.Append(s.streamNode(x))
			return g, nil, err
		})
	}
	return ex.Graph(exts...)
}

// startSSE starts the answer to the client (see startClient).
func (s *Server) startSSE(w http.ResponseWriter, x *exchange, model string) *responses.Writer {
	return s.startClient(w, x, model)
}

// conclude ends the client's stream after the run that fed sink returned
// err, and returns the status and outcome.
func (s *Server) conclude(r *http.Request, x *exchange, sink *responses.Writer, err error) (int, string) {
	defer func() { x.events = sink.Events() }()
	if err != nil {
		s.metrics.RunError(err)
		x.err = err
		var se *pipeline.StageError
		if errors.As(err, &se) {
			x.errStage = se.Stage
		}
	}
	if sink.Ended() {
		// The terminal event was written: a client that closes as soon as
		// it reads it (Codex does), or a run that notices the closed
		// connection afterwards, does not change how the stream ended.
		switch sink.Terminal() {
		case "response.failed":
			return http.StatusOK, "failed"
		case "response.incomplete":
			return http.StatusOK, "incomplete"
		}
		return http.StatusOK, "completed"
	}
	switch {
	case sink.Err() != nil:
		// The client stopped reading; the deferred cancel stops the upstream.
		return http.StatusOK, "client_closed"
	case err != nil && r.Context().Err() != nil:
		var outcome string
		x.failure, outcome = shutdownFailure(r)
		_ = sink.Fail(x.failure)
		return http.StatusOK, outcome
	case err != nil:
		x.failure = runFailure(err)
		_ = sink.Fail(x.failure)
		return http.StatusOK, "failed"
	case !sink.Ended():
		x.failure = &protocol.StreamError{Kind: protocol.ErrKindTruncated, Message: "the upstream stream ended without a terminal event", Retryable: true}
		_ = sink.Fail(x.failure)
		return http.StatusOK, "failed"
	case sink.Terminal() == "response.failed":
		return http.StatusOK, "failed"
	case sink.Terminal() == "response.incomplete":
		return http.StatusOK, "incomplete"
	}
	return http.StatusOK, "completed"
}

// runFailure turns a fatal run error into the stream error the client sees:
// an upstream read failure is a retryable truncation, anything else a
// protocol error.
func runFailure(err error) *protocol.StreamError {
	if f := timeoutFailure(err); f != nil {
		return f
	}
	var se *pipeline.StageError
	if errors.As(err, &se) && se.Stage == pipeline.SourceName {
		return &protocol.StreamError{Kind: protocol.ErrKindTruncated, Code: "server_error",
			Message: "the upstream connection failed mid-stream: " + se.Err.Error(), Retryable: true}
	}
	return &protocol.StreamError{Kind: protocol.ErrKindProtocol, Code: "server_error",
		Message: "harnessflow could not translate the upstream stream: " + err.Error()}
}
