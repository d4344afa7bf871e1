// Package server is the harnessflow proxy (DESIGN §7): it speaks the OpenAI
// Responses API to its clients (Codex CLI is the reference) and any model
// server's wire upstream.
//
// Routes:
//
//	POST /v1/responses               the native translation (no harness)
//	POST /h/{harness}/v1/responses   the request shaped as harness {harness} shapes it
//	GET  /metrics                    Prometheus counters (stages/metrics)
//	GET  /healthz                    "ok"
//
// (/responses and /h/{harness}/responses are accepted too, for clients
// whose base URL lacks /v1.)
//
// Per request the proxy decodes the Responses JSON, resolves the (wire,
// harness) route (SPEC §D), shapes the upstream request with the harness's
// request graph, sends it to {Upstream}{path} (/chat/completions,
// /responses or /messages), and streams the upstream's answer through the
// harness's response graph into a Responses SSE stream
// ([sinks.ResponsesSSE]).
//
// Errors the client sees:
//
//   - a body that is not a Responses request: HTTP 400,
//     {"error":{"message","type":"invalid_request_error",...}};
//   - a (wire, harness) pair no route serves: HTTP 400 whose message is the
//     routing error's exact text;
//   - an upstream that answers non-2xx: the same HTTP status, with the
//     upstream's error message in an OpenAI-style error body (and its
//     Retry-After header), so Codex prints a 400 and retries a 429 or 5xx;
//     an unreachable upstream: HTTP 502;
//   - a stream that fails after it started (an upstream error event, an
//     upstream that dies mid-stream, a run error): response.failed, never
//     response.completed.
//
// The upstream request runs in the client request's context: a client that
// disconnects, or a write to it that fails, cancels it. Authorization is
// passed through from the client, or replaced by Config.APIKey; it is never
// logged. One slog record per request names the method, path, harness,
// wire, route, status, duration, events written, upstream status and
// outcome — never a header value or any content.
package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/native"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sinks"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/metrics"
	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/wire/chat"
)

// DefaultAddr is the address the proxy binds by default: loopback only.
const DefaultAddr = "127.0.0.1:8787"

// DefaultMaxRequestBytes caps a client request body.
const DefaultMaxRequestBytes = 64 << 20

// maxErrorBody caps how much of an upstream error body is read.
const maxErrorBody = 64 << 10

// Config configures a Server.
type Config struct {
	// Upstream is the model server's base URL, e.g.
	// "http://127.0.0.1:8788/v1"; the shaped request's path
	// (/chat/completions, /responses, /messages) is appended. Required.
	Upstream string
	// Wire is the upstream wire; "" means chat.
	Wire harness.Wire
	// APIKey, when set, authenticates upstream requests (Bearer, or
	// x-api-key on the messages wire) instead of the client's
	// Authorization header.
	APIKey string
	// Model, when set, replaces the model of every request.
	Model string
	// Client sends upstream requests; nil uses a client of the server's
	// own (no timeout: streams are cancelled with the client's request).
	Client *http.Client
	// Mode is the execution mode of the response graphs.
	Mode pipeline.Mode
	// Logger receives the request logs; nil means slog.Default().
	Logger *slog.Logger
	// Metrics counts the response graphs' events for /metrics; nil creates
	// one.
	Metrics *metrics.Metrics
	// Extend, when set, edits each request's response graph (before the
	// metrics node is appended) — the CLI's --redact, --log-events and
	// --record. The returned closer runs when the stream is over.
	Extend func(g *pipeline.Graph, info StreamInfo) (*pipeline.Graph, func() error, error)
	// MaxRequestBytes caps a client request body (0: DefaultMaxRequestBytes).
	MaxRequestBytes int64
}

// StreamInfo describes one proxied stream (for Config.Extend).
type StreamInfo struct {
	// Harness is the harness named by the route ("" for /v1/responses).
	Harness string
	// Route is how (Wire, Harness) is served.
	Route harness.Route
	// Wire is the upstream wire.
	Wire harness.Wire
	// ResponseID is the id of the response the client receives.
	ResponseID string
}

// Check reports a configuration the server cannot run with.
func (c Config) Check() error {
	if c.Upstream == "" {
		return errors.New("server: no upstream URL")
	}
	if _, err := parseBase(c.Upstream); err != nil {
		return err
	}
	if _, err := harness.ParseWire(string(c.wire())); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	return nil
}

func (c Config) wire() harness.Wire {
	if c.Wire == "" {
		return harness.WireChat
	}
	return c.Wire
}

func parseBase(s string) (string, error) {
	req, err := http.NewRequest(http.MethodPost, s, nil)
	if err != nil {
		return "", fmt.Errorf("server: upstream URL %q: %w", s, err)
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" || req.URL.Host == "" {
		return "", fmt.Errorf("server: upstream URL %q: want http://host[:port][/path] or https://…", s)
	}
	return strings.TrimRight(s, "/"), nil
}

// Server is the proxy. Create it with New; it starts nothing until Serve.
type Server struct {
	cfg     Config
	client  *http.Client
	owned   *http.Transport // the transport of a client the server made
	log     *slog.Logger
	metrics *metrics.Metrics
	mux     *http.ServeMux
}

// New returns a server for cfg. It starts no goroutine. A configuration that
// fails Check makes every proxied request fail with HTTP 500 (and Serve
// return the error).
func New(cfg Config) *Server {
	s := &Server{cfg: cfg, client: cfg.Client, log: cfg.Logger, metrics: cfg.Metrics}
	if s.client == nil {
		s.owned = http.DefaultTransport.(*http.Transport).Clone()
		s.client = &http.Client{Transport: s.owned}
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.metrics == nil {
		s.metrics = metrics.New()
	}
	if s.cfg.MaxRequestBytes <= 0 {
		s.cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/responses", s.handleResponses)
	mux.HandleFunc("POST /responses", s.handleResponses)
	mux.HandleFunc("POST /h/{harness}/v1/responses", s.handleResponses)
	mux.HandleFunc("POST /h/{harness}/responses", s.handleResponses)
	mux.Handle("GET /metrics", s.metrics)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n") // a failed write means the client went away
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "invalid_request_error", "not_found",
			"no route for "+r.Method+" "+r.URL.Path+" (the proxy serves POST /v1/responses and POST /h/{harness}/v1/responses)")
	})
	s.mux = mux
	return s
}

// Handler returns the proxy's HTTP handler.
func (s *Server) Handler() http.Handler { return s.mux }

// Metrics returns the counters served at /metrics.
func (s *Server) Metrics() *metrics.Metrics { return s.metrics }

// CloseIdleConnections closes the idle upstream connections of the
// server's own client (Serve does it when it returns).
func (s *Server) CloseIdleConnections() {
	if s.owned != nil {
		s.owned.CloseIdleConnections()
	}
}

// ListenAndServe listens on addr ("" means DefaultAddr) and serves until ctx
// is cancelled (see Serve).
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	if addr == "" {
		addr = DefaultAddr
	}
	if err := s.cfg.Check(); err != nil {
		return err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves on ln until ctx is cancelled, then shuts down: it stops
// accepting, cancels the requests in flight (their streams end with
// response.failed), waits up to 5 seconds for them, and returns nil. It
// closes ln. A listener failure is returned as an error.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if err := s.cfg.Check(); err != nil {
		ln.Close()
		return err
	}
	defer s.CloseIdleConnections()
	srv := &http.Server{
		Handler:           s.mux,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		_ = srv.Close() // drop the connections still held; they would wait for the idle timeout
		return fmt.Errorf("server: serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close() // the streams that did not end in time
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("server: serve %s: %w", ln.Addr(), err)
	}
	return nil
}

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
	err            error
}

func (s *Server) handleResponses(w http.ResponseWriter, r *http.Request) {
	x := &exchange{start: time.Now(), harness: r.PathValue("harness")}
	defer s.logRequest(r, x)
	x.status, x.outcome = s.proxy(w, r, x)
}

func (s *Server) logRequest(r *http.Request, x *exchange) {
	attrs := []slog.Attr{
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.String("harness", x.harness),
		slog.String("wire", string(s.cfg.wire())),
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
	if x.errStage != "" {
		attrs = append(attrs, slog.String("error_stage", x.errStage))
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

// proxy serves one request and returns the HTTP status and the outcome.
func (s *Server) proxy(w http.ResponseWriter, r *http.Request, x *exchange) (int, string) {
	if err := s.cfg.Check(); err != nil {
		x.err = err
		return writeError(w, http.StatusInternalServerError, "server_error", "", err.Error()), "config_error"
	}
	wire := s.cfg.wire()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxRequestBytes))
	if err != nil {
		x.err = err
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return writeError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "", fmt.Sprintf("request body over %d bytes", tooBig.Limit)), "bad_request"
		}
		return writeError(w, http.StatusBadRequest, "invalid_request_error", "", "read request body: "+err.Error()), "bad_request"
	}
	req, err := decodeRequest(body)
	if err != nil {
		x.err = err
		return writeError(w, http.StatusBadRequest, "invalid_request_error", "", "invalid Responses request: "+err.Error()), "bad_request"
	}
	if !req.Stream {
		return writeError(w, http.StatusBadRequest, "invalid_request_error", "",
			`harnessflow serve streams only: send "stream": true`), "bad_request"
	}
	if s.cfg.Model != "" {
		req.Model = s.cfg.Model
	}
	route, err := harness.Resolve(wire, x.harness)
	if err != nil {
		x.err = err
		return writeError(w, http.StatusBadRequest, "invalid_request_error", "unsupported_route", routeMessage(err)), "route_error"
	}
	x.route = route.String()
	h, ok := harness.Lookup(route.Harness)
	if !ok || h.RequestGraph == nil || h.ResponseGraph == nil {
		return writeError(w, http.StatusBadRequest, "invalid_request_error", "unsupported_route",
			fmt.Sprintf("harness %q (route %s) is not available in this build", route.Harness, route)), "route_error"
	}
	shaped, err := s.shape(r.Context(), h, route, wire, req)
	if err != nil {
		x.err = err
		return writeError(w, http.StatusBadRequest, "invalid_request_error", "", routeMessage(err)), "bad_request"
	}

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	upReq, err := s.upstreamRequest(ctx, r, wire, shaped)
	if err != nil {
		x.err = err
		return writeError(w, http.StatusInternalServerError, "server_error", "", err.Error()), "config_error"
	}
	resp, err := s.client.Do(upReq)
	if err != nil {
		x.err = err
		if r.Context().Err() != nil {
			// The client is gone, or the server is shutting down and the
			// client still waits: it must not get an empty HTTP 200.
			writeError(w, http.StatusServiceUnavailable, "server_error", "cancelled", "request cancelled (client gone or server shutting down)")
			return 499, "client_closed"
		}
		return writeError(w, http.StatusBadGateway, "server_error", "upstream_unreachable",
			"upstream unreachable: "+redactURLError(err)), "upstream_unreachable"
	}
	defer resp.Body.Close()
	x.upstreamStatus = resp.StatusCode
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return s.upstreamError(w, resp), "upstream_error"
	}
	// Some chat servers ignore "stream" and answer with one JSON body.
	unary := wire == harness.WireChat && strings.HasPrefix(strings.ToLower(resp.Header.Get("Content-Type")), "application/json")
	return s.stream(ctx, w, r, x, h, route, wire, req, shaped, unary, resp.Body)
}

// decodeRequest decodes a Responses request body (after normalizeInput);
// the error says where the JSON is broken.
func decodeRequest(body []byte) (*protocol.ResponsesRequest, error) {
	var raw json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("JSON syntax error at byte %d: %w", se.Offset, err)
		}
		return nil, err
	}
	raw, err := normalizeInput(raw)
	if err != nil {
		return nil, err
	}
	req := new(protocol.ResponsesRequest)
	if err := req.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	return req, nil
}

// normalizeInput rewrites the shorthand forms of the Responses API's input
// that the engine's item types do not take (what SDK clients send; Codex
// never does): "input" as one string (a user message), a message item
// without "type" (an "easy" input message), and a message content given as
// one string. Requests without shorthand are returned unchanged.
func normalizeInput(raw json.RawMessage) (json.RawMessage, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, err
	}
	in, ok := top["input"]
	if !ok {
		return raw, nil
	}
	var text string
	if json.Unmarshal(in, &text) == nil {
		msg, err := json.Marshal([]map[string]any{{"type": "message", "role": "user",
			"content": []map[string]string{{"type": "input_text", "text": text}}}})
		if err != nil {
			return nil, fmt.Errorf("input: %w", err)
		}
		top["input"] = msg
		return json.Marshal(top)
	}
	var items []map[string]json.RawMessage
	if json.Unmarshal(in, &items) != nil {
		return raw, nil // not an array of objects: the decoder says what is wrong
	}
	changed := false
	for _, it := range items {
		if _, typed := it["type"]; !typed {
			if _, role := it["role"]; !role {
				continue
			}
			it["type"] = json.RawMessage(`"message"`)
			changed = true
		}
		if string(it["type"]) != `"message"` {
			continue
		}
		var content string
		if json.Unmarshal(it["content"], &content) != nil {
			continue
		}
		partType := protocol.ContentInputText
		var role string
		if json.Unmarshal(it["role"], &role) == nil && role == protocol.RoleAssistant {
			partType = protocol.ContentOutputText
		}
		parts, err := json.Marshal([]map[string]string{{"type": partType, "text": content}})
		if err != nil {
			return nil, fmt.Errorf("input: %w", err)
		}
		it["content"] = parts
		changed = true
	}
	if !changed {
		return raw, nil
	}
	fixed, err := json.Marshal(items)
	if err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	top["input"] = fixed
	return json.Marshal(top)
}

// routeMessage returns the exact text of a routing error when err holds one.
func routeMessage(err error) string {
	var re *harness.RouteError
	if errors.As(err, &re) {
		return re.Error()
	}
	return err.Error()
}

// shape runs the request graph of the route's harness; the native route
// gets the provider quirks of the upstream URL.
func (s *Server) shape(ctx context.Context, h harness.Harness, route harness.Route, wire harness.Wire, req *protocol.ResponsesRequest) (request.Shaped, error) {
	var g *pipeline.Graph
	var err error
	if route.Harness == harness.NativeName {
		g, err = native.RequestGraph(wire, request.Options{BaseURL: s.cfg.Upstream, Logger: s.log})
	} else {
		g, err = h.RequestGraph(wire)
	}
	if err != nil {
		return request.Shaped{}, err
	}
	shaped, err := request.Shape(ctx, g, req)
	if err != nil {
		return request.Shaped{}, err
	}
	if wire == harness.WireChat {
		if shaped.Body, err = includeUsage(shaped.Body); err != nil {
			return request.Shaped{}, err
		}
	}
	return shaped, nil
}

// includeUsage sets stream_options.include_usage on a streaming chat body
// that does not say it.
func includeUsage(body json.RawMessage) (json.RawMessage, error) {
	var b chat.Request
	if err := b.UnmarshalJSON(body); err != nil {
		return nil, fmt.Errorf("server: shaped chat body: %w", err)
	}
	if b.Stream == nil || !*b.Stream {
		return body, nil
	}
	opts := map[string]json.RawMessage{}
	if len(b.StreamOptions) > 0 && string(b.StreamOptions) != "null" {
		if err := json.Unmarshal(b.StreamOptions, &opts); err != nil {
			return nil, fmt.Errorf("server: shaped chat body: stream_options: %w", err)
		}
	}
	if _, ok := opts["include_usage"]; ok {
		return body, nil
	}
	opts["include_usage"] = json.RawMessage("true")
	raw, err := json.Marshal(opts)
	if err != nil {
		return nil, fmt.Errorf("server: shaped chat body: stream_options: %w", err)
	}
	b.StreamOptions = raw
	out, err := b.AppendJSON(nil)
	if err != nil {
		return nil, fmt.Errorf("server: shaped chat body: %w", err)
	}
	return out, nil
}

func (s *Server) upstreamRequest(ctx context.Context, r *http.Request, wire harness.Wire, shaped request.Shaped) (*http.Request, error) {
	base, err := parseBase(s.cfg.Upstream)
	if err != nil {
		return nil, err
	}
	path := shaped.Path
	if path == "" {
		path = chat.Path
	}
	up, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, bytes.NewReader(shaped.Body))
	if err != nil {
		return nil, fmt.Errorf("server: upstream request: %w", err)
	}
	up.Header.Set("Content-Type", "application/json")
	up.Header.Set("Accept", "text/event-stream")
	up.Header.Set("User-Agent", "harnessflow")
	auth := r.Header.Get("Authorization")
	if s.cfg.APIKey != "" {
		auth = "Bearer " + s.cfg.APIKey
	}
	if wire == harness.WireMessages {
		if key, ok := strings.CutPrefix(auth, "Bearer "); ok {
			up.Header.Set("x-api-key", key)
		} else if k := r.Header.Get("x-api-key"); k != "" && s.cfg.APIKey == "" {
			up.Header.Set("x-api-key", k)
		}
		up.Header.Set("anthropic-version", "2023-06-01")
	} else if auth != "" {
		up.Header.Set("Authorization", auth)
	}
	return up, nil
}

// redactURLError drops the URL from a transport error (it may carry
// credentials in its query) and keeps the cause.
func redactURLError(err error) string {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner.Error()
		}
	}
	return err.Error()
}

// upstreamError answers the client with the upstream's status and an
// OpenAI-style error body holding the upstream's message.
func (s *Server) upstreamError(w http.ResponseWriter, resp *http.Response) int {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody)) // a short read still gives a message
	msg, typ, code, param := parseUpstreamError(data)
	status := resp.StatusCode
	if status < 400 { // a 1xx or an unfollowed 3xx: not a status to pass on
		status, msg, typ, code, param = http.StatusBadGateway, "", "server_error", nil, nil
	}
	if msg == "" {
		msg = strings.TrimSpace(string(data))
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
		msg = "upstream returned HTTP " + strconv.Itoa(resp.StatusCode) + ": " + msg
	}
	if typ == "" {
		typ = errorType(resp.StatusCode)
	}
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		w.Header().Set("Retry-After", ra)
	}
	return writeErrorBody(w, status, typ, code, msg, param)
}

// parseUpstreamError reads the usual error bodies: OpenAI
// {"error":{"message","type","code","param"}}, {"error":"text"}, Anthropic
// {"type":"error","error":{"type","message"}}, {"message":"text"}.
func parseUpstreamError(data []byte) (msg, typ string, code, param json.RawMessage) {
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(data, &body) != nil {
		return "", "", nil, nil
	}
	var text string
	if json.Unmarshal(body.Error, &text) == nil && text != "" {
		return text, "", nil, nil
	}
	var obj struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Param   json.RawMessage `json:"param"`
	}
	if json.Unmarshal(body.Error, &obj) == nil && obj.Message != "" {
		return obj.Message, obj.Type, obj.Code, obj.Param
	}
	return body.Message, "", nil, nil
}

func errorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

// writeError writes an OpenAI-style error body and returns the status.
func writeError(w http.ResponseWriter, status int, typ, code, msg string) int {
	var c json.RawMessage
	if code != "" {
		c, _ = json.Marshal(code) // a string always encodes
	}
	return writeErrorBody(w, status, typ, c, msg, nil)
}

func writeErrorBody(w http.ResponseWriter, status int, typ string, code json.RawMessage, msg string, param json.RawMessage) int {
	if len(code) == 0 {
		code = json.RawMessage("null")
	}
	if len(param) == 0 {
		param = json.RawMessage("null")
	}
	var b []byte
	b = append(b, `{"error":{"message":`...)
	b = protocol.AppendString(b, msg)
	b = append(b, `,"type":`...)
	b = protocol.AppendString(b, typ)
	b = append(b, `,"param":`...)
	b = append(b, compact(param)...)
	b = append(b, `,"code":`...)
	b = append(b, compact(code)...)
	b = append(b, "}}\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(b) // a failed write means the client went away
	return status
}

func compact(raw json.RawMessage) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return []byte("null")
	}
	return buf.Bytes()
}

// stream runs the upstream body through the response graph into the
// client's SSE stream; unary says the body is one chat.completion JSON.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, r *http.Request, x *exchange, h harness.Harness, route harness.Route,
	wire harness.Wire, req *protocol.ResponsesRequest, shaped request.Shaped, unary bool, body io.Reader) (int, string) {
	g, err := h.ResponseGraph(wire, harness.ResponseOptions{ToolKinds: shaped.ToolKinds, Request: req, Unary: unary})
	if err != nil {
		x.err = err
		return writeError(w, http.StatusInternalServerError, "server_error", "", "response graph: "+err.Error()), "config_error"
	}
	responseID := sinks.NewResponseID()
	x.responseID = responseID
	closeExt := func() error { return nil }
	if s.cfg.Extend != nil {
		g, closeExt, err = s.cfg.Extend(g, StreamInfo{Harness: x.harness, Route: route, Wire: wire, ResponseID: responseID})
		if err != nil {
			x.err = err
			return writeError(w, http.StatusInternalServerError, "server_error", "", "response graph: "+err.Error()), "config_error"
		}
	}
	defer func() {
		if err := closeExt(); err != nil {
			s.log.Warn("harnessflow: closing stream extensions", slog.String("response_id", responseID), slog.String("error", err.Error()))
		}
	}()
	if g, err = g.Append(s.metrics.Node()); err != nil {
		x.err = err
		return writeError(w, http.StatusInternalServerError, "server_error", "", "response graph: "+err.Error()), "config_error"
	}

	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	sink := sinks.NewResponsesSSE(w, sinks.ResponsesSSEOptions{ResponseID: responseID, Model: req.Model, Flush: rc.Flush})
	defer func() { x.events = sink.Events() }()

	src := sources.Reader(body, sources.WithName("upstream"))
	err = pipeline.Run(ctx, g, src, sink, pipeline.WithMode(s.cfg.Mode), pipeline.WithObserver(s.metrics.Observer(g)))
	if err != nil {
		s.metrics.RunError(err)
		x.err = err
		var se *pipeline.StageError
		if errors.As(err, &se) {
			x.errStage = se.Stage
		}
	}
	switch {
	case sink.Err() != nil:
		// The client stopped reading; the deferred cancel stops the upstream.
		return http.StatusOK, "client_closed"
	case err != nil && r.Context().Err() != nil:
		_ = sink.Fail(&protocol.StreamError{Kind: protocol.ErrKindUpstream, Code: "cancelled",
			Message: "request cancelled (client gone or server shutting down)", Retryable: true})
		return http.StatusOK, "client_closed"
	case err != nil:
		_ = sink.Fail(runFailure(err))
		return http.StatusOK, "failed"
	case !sink.Ended():
		_ = sink.Fail(&protocol.StreamError{Kind: protocol.ErrKindTruncated, Message: "the upstream stream ended without a terminal event", Retryable: true})
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
	var se *pipeline.StageError
	if errors.As(err, &se) && se.Stage == pipeline.SourceName {
		return &protocol.StreamError{Kind: protocol.ErrKindTruncated, Code: "server_error",
			Message: "the upstream connection failed mid-stream: " + se.Err.Error(), Retryable: true}
	}
	return &protocol.StreamError{Kind: protocol.ErrKindProtocol, Code: "server_error",
		Message: "harnessflow could not translate the upstream stream: " + err.Error()}
}
