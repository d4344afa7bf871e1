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
// Per request the proxy decodes the Responses JSON ([protocol.DecodeRequest])
// and plans the turn with [harness.Plan] — the route (SPEC §D), the shaped
// upstream request (path, query, headers, body; exactly what `harnessflow
// shape` prints) and the response graph. It sends the optional title request
// first (DESIGN §10.7: drained and ignored; a failure is logged, counted and
// the turn goes on), then the main request to {Upstream}{path}, and streams
// the upstream's answer through the turn's response graph into a Responses
// SSE stream ([sinks.ResponsesSSE]).
//
// Follow-ups (DESIGN §10.4): when a harness's post node adds a follow-up
// user message, the completed event carries end_turn:false. With
// Config.Followups "client" (the default) both go to the client, which
// records the message and samples again. With "proxy" the proxy re-asks the
// upstream itself with the round's output and the follow-up appended, at
// most Config.MaxFollowupRounds times, and streams the final round only;
// each round is buffered, so nothing of a round that is asked again leaks.
// Nothing is kept between client requests in either mode.
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
// wire, route, status, duration, events written, upstream status, follow-up
// rounds and outcome — never a header value or any content.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	_ "github.com/harnessflow/harnessflow/harness/native" // the /v1/responses route needs "native"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/prompts"
	"github.com/harnessflow/harnessflow/stages/metrics"
)

// DefaultAddr is the address the proxy binds by default: loopback only.
const DefaultAddr = "127.0.0.1:8787"

// DefaultMaxRequestBytes caps a client request body.
const DefaultMaxRequestBytes = 64 << 20

// maxErrorBody caps how much of an upstream error body is read.
const maxErrorBody = 64 << 10

// Follow-up modes (Config.Followups, DESIGN §10.4).
const (
	// FollowupsClient streams a harness's follow-up user message and
	// end_turn:false to the client, which samples again by itself.
	FollowupsClient = "client"
	// FollowupsProxy makes the proxy re-ask the upstream with the follow-up
	// appended and stream the final round only.
	FollowupsProxy = "proxy"
)

// DefaultMaxFollowupRounds bounds the re-asks of FollowupsProxy.
const DefaultMaxFollowupRounds = 3

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
	// --record. The returned closer runs when the stream is over. With
	// FollowupsProxy it is called for every upstream round (with the same
	// StreamInfo), its closer when the round is over.
	Extend func(g *pipeline.Graph, info StreamInfo) (*pipeline.Graph, func() error, error)
	// MaxRequestBytes caps a client request body (0: DefaultMaxRequestBytes).
	MaxRequestBytes int64
	// MaxEventBytes caps one SSE line or event of the upstream stream (0:
	// the decoder's default).
	MaxEventBytes int
	// Models gives the model capabilities used in shaping (thinking toggle,
	// reasoning levels); nil means the built-in table.
	Models *harness.ModelTable
	// Prompts is the prompt pack; nil means the embedded one.
	Prompts *prompts.Pack
	// Followups is FollowupsClient ("", the default) or FollowupsProxy.
	Followups string
	// MaxFollowupRounds bounds how often FollowupsProxy re-asks the
	// upstream for one client request (0: DefaultMaxFollowupRounds); when
	// the last round still asks for a follow-up the client gets
	// response.failed.
	MaxFollowupRounds int
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
	switch c.Followups {
	case "", FollowupsClient, FollowupsProxy:
	default:
		return fmt.Errorf("server: unknown follow-up mode %q: want %s or %s", c.Followups, FollowupsClient, FollowupsProxy)
	}
	if c.MaxFollowupRounds < 0 {
		return fmt.Errorf("server: max follow-up rounds %d: want 0 (the default, %d) or more", c.MaxFollowupRounds, DefaultMaxFollowupRounds)
	}
	return nil
}

func (c Config) maxFollowupRounds() int {
	if c.MaxFollowupRounds == 0 {
		return DefaultMaxFollowupRounds
	}
	return c.MaxFollowupRounds
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
