package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/harnessflow/harnessflow/codec"
	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/metrics"
	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/stages/textcall"
	"github.com/harnessflow/harnessflow/upstream"
	"github.com/harnessflow/harnessflow/wire/responses"
)

// ---------------------------------------------------------------------------
// the proxied request

// exchange is the state of one proxied request, for its log record.
type exchange struct {
	start          time.Time
	harness        string
	route          string
	resolved       *harness.Route // the route checkHarness resolved (no routing config)
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
	in             *inbound              // the client's wire when it is not the Responses API (inbound.go)
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
	if x.status >= 500 || x.outcome == outcomeFailed {
		level = slog.LevelWarn
	}
	s.log.LogAttrs(r.Context(), level, "harnessflow request", attrs...)
	if x.err != nil {
		// The error text may quote upstream bytes: debug level only.
		s.log.LogAttrs(r.Context(), slog.LevelDebug, "harnessflow request error", slog.String("path", r.URL.Path), slog.String("error", x.err.Error()))
	}
}

// open plans req for x's target and harness: the exchange of one attempt
// (harness.Open). The client of an inbound wire is said to be one
// (harness.Config.InboundClient, inbound.go).
func (s *Server) open(ctx context.Context, r *http.Request, x *exchange, req *protocol.ResponsesRequest) (*harness.Exchange, error) {
	cfg := s.planConfig(x.target)
	cfg.InboundClient = x.in != nil
	cfg.Route = cmp.Or(x.target.route, x.resolved) // resolved once: targets or checkHarness
	ex, err := harness.Open(ctx, cfg, harness.Opening{Harness: x.harness, Request: req, Header: r.Header})
	if err != nil {
		return nil, err
	}
	ex.Options.MaxEventBytes = s.cfg.MaxEventBytes
	return ex, nil
}

// planConfig is the harness layer's configuration of a turn to t: the
// server's, made once in New, with the target's wire, base URL and models.
func (s *Server) planConfig(t *target) harness.Config {
	c := s.turnCfg
	c.Wire, c.BaseURL, c.Models, c.Provider = t.wire, t.base, t.models, t.name
	return c
}

// harnessConfig is the harness layer's configuration of every turn, from
// Config (the target's wire, base URL and models left out).
func (s *Server) harnessConfig() harness.Config {
	return harness.Config{
		Prompts:       s.cfg.Prompts,
		Logger:        s.log,
		Now:           s.cfg.Now,
		Variants:      s.cfg.Variants,
		Workspace:     s.cfg.workspace(),
		Unbridged:     s.proxyMetrics.unbridgedCall,
		ToolFormat:    s.cfg.toolFormat(),
		ToolsInPrompt: s.cfg.ToolsInPrompt,
		TextCalls:     s.proxyMetrics.textToolCall,
		HostedTool:    s.hostedTool,
		Registry:      s.reg,
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

// proxy serves one request and returns the HTTP status and the outcome: a
// turn's steps each return an error answer or go on, and answer writes it.
func (s *Server) proxy(w http.ResponseWriter, r *http.Request, x *exchange) (int, string) {
	status, outcome, e := s.turn(w, r, x)
	if e != nil {
		return s.answer(w, x, e)
	}
	return status, outcome
}

// turn runs one turn of x (docs/architecture.md#one-turn): the request
// read and checked, routed, planned, its title request and main request
// sent, the answer run through the response graph, the client's stream
// concluded. It returns the status and outcome of the answer it wrote, or
// the error answer to write when the client got nothing yet.
func (s *Server) turn(w http.ResponseWriter, r *http.Request, x *exchange) (int, string, *answerError) {
	if err := s.checked.err; err != nil {
		return 0, "", failure(http.StatusInternalServerError, "server_error", "", err.Error(), outcomeConfigError, err)
	}
	// The /h/NAME/ namespace is ours: a name this build does not serve is a
	// 404, a harness on a wire it does not shape a 400 with the fix
	// (docs/routing.md#the-proxys-harness-routes).
	// With a routing config the wire is the model's upstream's: checked
	// once the model is routed (routing.go).
	if err := s.checkHarness(x); err != nil {
		if _, ok := errors.AsType[*harness.UnknownHarnessError](err); ok {
			return 0, "", failure(http.StatusNotFound, "invalid_request_error", "unknown_harness", err.Error(), outcomeRouteError, err)
		}
		return 0, "", failure(http.StatusBadRequest, "invalid_request_error", "unsupported_route", err.Error(), outcomeRouteError, err)
	}
	release, e := s.admitStream(r) // Config.MaxStreams (admission.go)
	if e != nil {
		return 0, "", e
	}
	defer release()
	req, e := s.readRequest(w, r, x)
	if e != nil {
		return 0, "", e
	}
	if s.cfg.Model != "" {
		req.Model = s.cfg.Model
	}
	if e := s.requireModel(req); e != nil {
		return 0, "", e
	}
	targets, e := s.targets(x, req)
	if e != nil {
		return 0, "", e
	}
	if passesThrough(x, targets) { // a Messages client to a Messages upstream (inbound_passthrough.go)
		return s.passThrough(r.Context(), w, r, x, targets, req.Model)
	}
	// previous_response_id and item_reference resolved; a non-streaming
	// request runs the same (streamed) turn, answered as one JSON body.
	if req, e = s.converse(r, x, req); e != nil {
		return 0, "", e
	}
	if e := s.checkHistory(req); e != nil {
		return 0, "", e
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	// The upstreams in order, each planned for its wire and model: the next
	// only when the one before failed before the client got a byte.
	ex, resp, e := s.dispatch(ctx, r, x, req, targets)
	if status, outcome, ok := s.failInStream(w, x, req.Model, e); ok { // errors.go
		return status, outcome, nil
	}
	if e != nil {
		return 0, "", e
	}
	if s.roundsInProxy(x, ex) { // Config.Followups, and the inbound clients (inbound.go)
		return s.proxyRounds(ctx, w, r, x, ex, resp)
	}
	defer resp.Body.Close()
	ex.Answered(resp.Header.Get("Content-Type"))
	g, err := s.responseGraph(x, ex, true)
	if err != nil {
		return 0, "", failure(http.StatusInternalServerError, "server_error", "", "response graph: "+err.Error(), outcomeConfigError, err)
	}
	cw, src := s.batchFlushes(w, s.upstreamSource(resp.Body, g))
	sink := s.startClient(cw, x, req.Model)
	status, outcome := s.concludeClient(w, r, x, sink, runResponse(ctx, s, g, src, sink))
	return status, outcome, nil
}

// readRequest reads and decodes the client's request within the request
// bounds (limits.go, requestbounds.go), or returns the error answer. (Out
// of turn, whose frame is on the stack of every stream.)
func (s *Server) readRequest(w http.ResponseWriter, r *http.Request, x *exchange) (*protocol.ResponsesRequest, *answerError) {
	body, err := s.readBody(w, r)
	if err != nil {
		if tooBig, ok := errors.AsType[*http.MaxBytesError](err); ok {
			s.guards.requestRefused("body_bytes")
			return nil, failure(http.StatusRequestEntityTooLarge, "invalid_request_error", "",
				fmt.Sprintf("request body over %d bytes", tooBig.Limit), outcomeBadRequest, err)
		}
		if slow, ok := errors.AsType[*bodyTimeoutError](err); ok {
			s.guards.requestRefused("body_timeout")
			return nil, failure(http.StatusRequestTimeout, "invalid_request_error", "request_timeout", "harnessflow: "+slow.Error(), outcomeBadRequest, err)
		}
		return nil, failure(http.StatusBadRequest, "invalid_request_error", "", "read request body: "+err.Error(), outcomeBadRequest, err)
	}
	return s.decodeRequest(x, body) // inbound.go
}

// checkHistory applies the input item bound to a request whose stored
// history was resolved.
func (s *Server) checkHistory(req *protocol.ResponsesRequest) *answerError {
	if n := s.cfg.maxInputItems(); n > 0 && len(req.Input) > n {
		return s.overBound(&protocol.ArrayLimitError{Path: "input (with the history of previous_response_id)", Limit: n})
	}
	return nil
}

// overBound is the answer to a request over a request bound: HTTP 413
// with the JSON path (requestbounds.go).
func (s *Server) overBound(be *protocol.ArrayLimitError) *answerError {
	label := "tools"
	if strings.HasPrefix(be.Path, "input") {
		label = "input_items"
	}
	s.guards.requestRefused(label)
	e := failure(http.StatusRequestEntityTooLarge, "invalid_request_error", "request_too_large",
		"harnessflow: "+be.Error()+" (the proxy's bound for one request)", outcomeBadRequest, be)
	e.param = paramJSON(be.Path)
	return e
}

// planError is the answer to a request harness.Plan refused: a routing
// error or a harness this build lacks is HTTP 400 "unsupported_route" with
// the exact text, a request the harness cannot shape HTTP 400.
func (s *Server) planError(r *http.Request, x *exchange, err error) *answerError {
	if r.Context().Err() != nil {
		return cancelledAnswer(err)
	}
	if re, ok := errors.AsType[*harness.RouteError](err); ok {
		return failure(http.StatusBadRequest, "invalid_request_error", "unsupported_route", re.Error()+routeHint(s.reg, x.wire(s), x.harness), outcomeRouteError, err)
	}
	if route, rerr := s.reg.Resolve(x.wire(s), x.harness); rerr == nil {
		x.route = route.String()
		if _, ok := s.reg.Lookup(route.Harness); !ok {
			// harness.Prepare's "harness %q (route %s) is not available in this build".
			return failure(http.StatusBadRequest, "invalid_request_error", "unsupported_route", err.Error(), outcomeRouteError, err)
		}
	}
	return failure(http.StatusBadRequest, "invalid_request_error", "", err.Error()+inboundShellHint(x, err), outcomeBadRequest, err)
}

// send sends the turn's shaped request to x.target. On success it returns
// the 2xx response (the caller closes its body); otherwise the answer for
// the client — except, unless last, for a failure the next upstream may
// answer instead (attemptResult): then it returns next, and nothing is to
// be written.
func (s *Server) send(ctx context.Context, r *http.Request, x *exchange, ex *harness.Exchange, last bool) (resp *http.Response, next bool, e *answerError) {
	start := time.Now()
	up, err := s.upstreamRequest(ctx, r, x.target, ex.Turn.Shaped, ex.Turn.Shaped.Body, ex.AsksStream())
	if err != nil {
		return nil, false, failure(http.StatusInternalServerError, "server_error", "", err.Error(), outcomeConfigError, err)
	}
	resp, err = s.do(x.target, up, requestMain)
	if err != nil {
		x.err = err
		if r.Context().Err() != nil {
			return nil, false, cancelledAnswer(err)
		}
		result, retryable := attemptResult(err, 0)
		if s.noteAttempt(r, x, result, 0, start, retryable && !last) {
			return nil, true, nil
		}
		if te, ok := errors.AsType[*TimeoutError](err); ok {
			return nil, false, failure(http.StatusGatewayTimeout, "server_error", "upstream_timeout", "harnessflow: "+te.Error(), outcomeUpstreamTimeout, err)
		}
		if re, ok := errors.AsType[*RedirectError](err); ok {
			x.upstreamStatus = re.Status
			return nil, false, failure(http.StatusBadGateway, "server_error", "upstream_redirect", "harnessflow: "+re.Error(), outcomeUpstreamError, err)
		}
		return nil, false, failure(http.StatusBadGateway, "server_error", "upstream_unreachable",
			"upstream unreachable: "+redactURLError(err), outcomeUpstreamUnreachable, err)
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
		return nil, true, nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		return nil, false, s.upstreamError(resp)
	}
	if page != "" {
		// A login page, a captive portal or a misrouted proxy answering
		// 200: no decoder would see a data line in it, and the client
		// would be told the stream was cut. Say what came instead.
		resp.Body.Close()
		return nil, false, failure(http.StatusBadGateway, "server_error", "upstream_not_a_stream", "harnessflow: "+s.redactKey(page), outcomeUpstreamError, errors.New(page))
	}
	return resp, false, nil
}

// upstreamRequest builds a POST of body to the shaped request's path, with
// its query and headers, and the upstream's credentials; stream says the
// body has "stream": true.
func (s *Server) upstreamRequest(ctx context.Context, r *http.Request, t *target, shaped request.Shaped, body []byte, stream bool) (*http.Request, error) {
	if err := s.checked.err; err != nil {
		return nil, err
	}
	auth, clientKey := s.upstreamAuth(t, r)
	c := upstream.Client{Base: t.base, Wire: t.wire, Auth: auth, ClientKey: clientKey, Headers: t.headers}
	up, err := c.NewRequest(ctx, shaped, body, stream)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	return up, nil
}

// upstreamAuth returns the Authorization to send upstream for the client
// request r (the proxy's API key for t, else the client's) and the
// client's own key header (clientCredentials).
func (s *Server) upstreamAuth(t *target, r *http.Request) (auth, clientKey string) {
	auth, clientKey = s.clientCredentials(r)
	if t.apiKey != "" {
		auth = "Bearer " + t.apiKey
	}
	return auth, clientKey
}

// setCredentials sets the upstream credentials of a request for the
// client request r: the proxy's API key, or the client's (not with client
// keys), as Authorization or, on the messages wire, x-api-key with
// anthropic-version.
func (s *Server) setCredentials(t *target, h http.Header, r *http.Request) {
	wc, ok := codec.Lookup(t.wire)
	if !ok {
		return // upstreamRequest refuses the request
	}
	auth, clientKey := s.upstreamAuth(t, r)
	wc.SetKey(h, auth, clientKey)
	wc.SetHeaders(h)
}

// bodyStreams reports whether a JSON request body has "stream": true
// (harness.BodyStreams).
func bodyStreams(body []byte) bool { return harness.BodyStreams(body) }

// runResponse runs a response graph of an exchange from the upstream's
// answer src into sink, counted for /metrics (observed per element, for the
// stage timing, only with Config.StageTiming), in the configured mode.
func runResponse[Out any](ctx context.Context, s *Server, g *pipeline.Graph, src pipeline.Source[[]byte], sink pipeline.Sink[Out]) error {
	obs := s.metrics.RunObserver(g)
	if !s.cfg.StageTiming {
		// Counted at the links: no call per element and node.
		return pipeline.Run(ctx, g, src, sink, pipeline.WithMode(s.cfg.Mode), pipeline.WithCounter(obs))
	}
	err := pipeline.Run(ctx, g, src, sink, pipeline.WithMode(s.cfg.Mode), pipeline.WithObserver(obs))
	obs.Flush()
	return err
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
// extensions (Config.Extend) and, when withMetrics, the counting node.
func (s *Server) responseGraph(x *exchange, ex *harness.Exchange, withMetrics bool) (*pipeline.Graph, error) {
	if x.responseID == "" {
		x.responseID = responses.NewResponseID()
	}
	var edits []pipeline.Edit
	if s.cfg.Extend != nil {
		edits = s.cfg.Extend(StreamInfo{Harness: x.harness, Route: ex.Turn.Route, Wire: ex.Wire, ResponseID: x.responseID})
	}
	if withMetrics {
		// Last, and only once the graph and the extensions are built: the
		// counting node starts the stream's metrics.
		edits = append(edits, func(g *pipeline.Graph) (*pipeline.Graph, error) { return g.Append(s.streamNode(x)) })
	}
	return ex.Graph(edits...)
}

// conclude ends the client's stream after the run that fed sink returned
// err, and returns the status and outcome.
func (s *Server) conclude(r *http.Request, x *exchange, sink clientSink, err error) (int, string) {
	defer func() { x.events = sink.Events() }()
	if err != nil {
		s.metrics.RunError(err)
		x.err = err
		var se *pipeline.StageError
		if errors.As(err, &se) {
			x.errStage = se.Stage
		}
		if _, ok := errors.AsType[*responses.TextLimitError](err); ok {
			s.guards.answerCut("text")
		} else if e, ok := errors.AsType[*answerTooLargeError](err); ok {
			s.guards.answerCut(e.Bound)
		}
	}
	if sink.Ended() {
		// The terminal event was written: a client that closes as soon as
		// it reads it (Codex does), or a run that notices the closed
		// connection afterwards, does not change how the stream ended.
		switch sink.Terminal() {
		case responses.EventFailed:
			return http.StatusOK, outcomeFailed
		case responses.EventIncomplete:
			return http.StatusOK, outcomeIncomplete
		}
		return http.StatusOK, outcomeCompleted
	}
	switch {
	case sink.Err() != nil:
		// The client stopped reading; the deferred cancel stops the upstream.
		return http.StatusOK, outcomeClientClosed
	case err != nil && r.Context().Err() != nil:
		var outcome string
		x.failure, outcome = shutdownFailure(r)
		_ = sink.Fail(x.failure)
		return http.StatusOK, outcome
	case err != nil:
		x.failure = runFailure(err)
	default:
		x.failure = &protocol.StreamError{Kind: protocol.ErrKindTruncated, Message: "the upstream stream ended without a terminal event", Retryable: true}
	}
	_ = sink.Fail(x.failure)
	return http.StatusOK, outcomeFailed
}

// runFailure turns a fatal run error into the stream error the client sees:
// an upstream read failure is a retryable truncation, anything else a
// protocol error.
func runFailure(err error) *protocol.StreamError {
	if f := timeoutFailure(err); f != nil {
		return f
	}
	if f := answerFailure(err); f != nil {
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
