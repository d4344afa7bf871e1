// Package server is the harnessflow proxy (docs/architecture.md#proxy): it speaks the OpenAI
// Responses API to its clients (Codex CLI is the reference) and any model
// server's wire upstream.
//
// Routes:
//
//	POST /v1/responses               the native translation (no harness)
//	POST /h/{harness}/v1/responses   the request shaped as harness {harness} shapes it
//	POST /v1/messages, /v1/chat/completions (and under /h/{harness}/)
//	                                 Anthropic Messages and Chat Completions clients (inbound.go)
//	POST /v1/messages/count_tokens   an estimate of a Messages request's input tokens
//	GET  /v1/models                  the upstream's model list (models.go; also /h/{harness}/v1/models)
//	GET  /metrics                    Prometheus counters (stages/metrics, and the response store's);
//	                                 behind Config.ClientKeys when there are any
//	GET  /healthz                    "ok"
//
// (/responses and /h/{harness}/responses are accepted too, for clients
// whose base URL lacks /v1.)
//
// A program runs the proxy with [New] and either [Server.Serve] (or
// ListenAndServe: the listener, its connection bounds and the graceful
// shutdown included) or [Server.Handler] inside an http.Server of its own,
// behind its own middleware; the handler alone has every per-request
// protection (see Handler for what the http.Server must set).
// Config.Registry names the harnesses served — all.Registry() of package
// harness/all for every harness of harnessflow, with an ordinary import —
// and Config.Extend adds stages of the program's own to every response
// graph. The scripted model the examples and tests proxy to is package
// scripted; package upstream sends one planned turn without a proxy.
//
// Per request the proxy decodes the client's JSON (Responses, or the
// inbound wire's: [codec.Inbound]) and opens the turn with [harness.Open] —
// the route (docs/routing.md#routing-matrix), the shaped upstream request
// (path, query, headers, body; exactly what `harnessflow shape` prints) and
// the [harness.Exchange] whose graph reads the answer; the upstream request
// is built by package upstream from the wire's codec. It sends the optional title request
// first (docs/architecture.md#title-requests: drained and ignored; a failure is logged, counted and
// the turn goes on), then the main request to {Upstream}{path}, and streams
// the upstream's answer through the turn's response graph into a Responses
// SSE stream (the writer of package wire/responses). A request without
// "stream": true runs the same turn and gets the Response object the stream
// would have ended with as its JSON body (an error body when it failed).
//
// Responses are kept (Config.Store: in memory by default, bounded by count,
// bytes and age, scoped to the hash of the caller's credential) when their
// request does not set "store": false, so that a later request can name
// one in previous_response_id or refer to its items with item_reference;
// both are resolved before the turn is shaped, and one the store does not
// hold is an HTTP 400 that says why, never dropped.
//
// Follow-ups (docs/architecture.md#follow-ups): when a harness's post node adds a follow-up
// user message, the completed event carries end_turn:false. With
// Config.Followups "client" (the default) both go to the client, which
// records the message and samples again. With "proxy" the proxy re-asks the
// upstream itself with the round's output and the follow-up appended, at
// most Config.MaxFollowupRounds times, and streams the final round only;
// each round is buffered, so nothing of a round that is asked again leaks.
// Nothing of the rounds is kept between client requests in either mode
// (the response store keeps what the client received).
//
// With Config.Routes (`serve --config`, docs/serve-config.md) the request's
// model picks the upstreams instead: the model renamed for each, the
// entry's harness and capabilities, each upstream's key, headers, timeouts
// and connection limits; the next upstream is tried when one fails before
// the client got a byte (routing.go). Reload swaps the configuration for the
// requests that arrive next.
//
// Errors the client sees:
//
//   - a body that is not a Responses request: HTTP 400,
//     {"error":{"message","type":"invalid_request_error",...}};
//   - a (wire, harness) pair no route serves: HTTP 400 whose message is the
//     routing error's exact text followed by harnessflow's fix (routehint.go);
//   - an upstream that answers non-2xx: the same HTTP status, with the
//     upstream's error message in an OpenAI-style error body (and its
//     Retry-After header), so Codex prints a 400 and retries a 429 or 5xx;
//     an unreachable upstream: HTTP 502;
//   - a stream that fails after it started (an upstream error event, an
//     upstream that dies mid-stream, a run error): response.failed, never
//     response.completed;
//   - with Config.ClientKeys, a request without an accepted bearer key:
//     HTTP 401 (see auth.go);
//   - a body over Config.MaxRequestBytes: HTTP 413, refused before it is
//     read when its Content-Length says so; a request without a model (and
//     no Config.DefaultModel): HTTP 400;
//   - an upstream that sends no response headers within
//     Config.UpstreamHeaderTimeout: HTTP 504; one that goes silent
//     mid-answer for Config.UpstreamIdleTimeout: response.failed, code
//     upstream_idle_timeout (see timeout.go);
//   - a stream the shutdown ends after Config.ShutdownGrace:
//     response.failed, code server_shutdown.
//   - with Config.Routes, a model the configuration does not route: HTTP
//     404 (code model_not_found) naming the configured models.
//
// /metrics counts every stream that started as ended, once, with its
// outcome (completed, incomplete, failed, client_closed, shutdown), and the
// upstream timeouts and refused client keys.
//
// The upstream request runs in the client request's context: a client that
// disconnects, or a write to it that fails, cancels it; the shutdown
// cancels it only after the grace period. Authorization is passed through
// from the client (unless Config.ClientKeys makes it the proxy's own
// credential), or replaced by Config.APIKey; it is never logged, and the
// upstream URL's password never printed (RedactURL). One slog record per request names the method, path, harness,
// wire, route, status, duration, events written, upstream status, follow-up
// rounds and outcome — never a header value or any content — and, for an
// error answer, its reason: the message the client got (reason.go).
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
	"sync"
	"sync/atomic"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	_ "github.com/harnessflow/harnessflow/harness/native" // the /v1/responses route needs "native"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/prompts"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/serveconfig"
	"github.com/harnessflow/harnessflow/stages/metrics"
	"github.com/harnessflow/harnessflow/stages/textcall"
	"golang.org/x/net/netutil"
)

// DefaultAddr is the address the proxy binds by default: loopback only.
const DefaultAddr = "127.0.0.1:8787"

// DefaultMaxRequestBytes caps a client request body.
const DefaultMaxRequestBytes = 64 << 20

// maxErrorBody caps how much of an upstream error body is read.
const maxErrorBody = 64 << 10

// Follow-up modes (Config.Followups, docs/architecture.md#follow-ups).
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

// DefaultShutdownGrace is how long a shutdown lets the streams in flight
// finish (Config.ShutdownGrace).
const DefaultShutdownGrace = 30 * time.Second

// DefaultBodyTimeout is Config.BodyTimeout's default: a long Codex
// session's request (tens of megabytes at most) arrives in seconds on any
// link a proxy serves.
const DefaultBodyTimeout = 30 * time.Second

// DefaultMaxConns is Config.MaxConns's default: room for a few thousand
// streams, well under the descriptors a process gets.
const DefaultMaxConns = 8192

// shutdownWrite bounds the wait, after the grace period, for the handlers
// to write response.failed to their clients before the connections are
// dropped.
const shutdownWrite = 3 * time.Second

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
	// StageTiming times every node of the response graphs for /metrics
	// (harnessflow_node_seconds_total). Off, the nodes are only counted:
	// timing reads the clock twice per node per event, a tenth of the
	// proxy's CPU at a few thousand streams.
	StageTiming bool
	// Logger receives the request logs; nil means slog.Default().
	Logger *slog.Logger
	// Metrics counts the response graphs' events for /metrics; nil creates
	// one.
	Metrics *metrics.Metrics
	// Extend, when set, returns the edits of each request's response graph
	// (applied in order before the metrics node is appended) — the CLI's
	// --redact, --log-events, --record and the serve configuration's
	// [[stage]] tables. An edit that fails is the request's HTTP 500. A
	// stage needing a lifetime per stream implements pipeline.Resource,
	// which the run opens and closes. With FollowupsProxy it is called for
	// every upstream round (with the same StreamInfo).
	Extend func(info StreamInfo) []pipeline.Edit
	// MaxRequestBytes caps a client request body (0: DefaultMaxRequestBytes).
	MaxRequestBytes int64
	// MaxEventBytes caps one SSE line or event of the upstream stream (0:
	// the decoder's default).
	MaxEventBytes int
	// Now is the clock of the harnesses' prompts (dates, times); nil means
	// time.Now.
	Now func() time.Time
	// Variants picks harness variants for every model (harness name →
	// variant, e.g. "terminus-2": "plain"), over the model table's.
	Variants map[string]string
	// Workspace says whether harnesses may read the client's working
	// directory from this machine's disk (harness.WorkspacePolicy); ""
	// means none: a proxy reads nothing of its disk unless told to
	// (`serve` says local on a loopback address without client keys).
	Workspace harness.WorkspacePolicy
	// Registry holds the harnesses the proxy serves: the /h/{harness}/
	// routes, their model lists and the routing configuration's harnesses;
	// nil means harness.Default(), the process registry the harness
	// packages register into. all.Registry() (package harness/all) holds
	// every harness of harnessflow; Default().With(spec) adds one of a
	// program's own. A routing configuration (Routes) should be parsed
	// with the same registry (serveconfig.Options.Registry).
	Registry *harness.Registry
	// Models gives the model capabilities used in shaping (thinking toggle,
	// reasoning levels); nil means the built-in table.
	Models *harness.ModelTable
	// ToolFormat recovers tool calls and reasoning that a chat upstream
	// left in the answer's text: "auto", a format's name, or "off"; ""
	// means auto (docs/text-tool-calls.md). A model-caps entry's
	// tool_format overrides it for its models.
	ToolFormat string
	// ToolsInPrompt renders the request's tools into the prompt, in the
	// tool format, and sends no tools field, for chat servers without tool
	// support (docs/text-tool-calls.md); a model-caps entry's
	// tools_in_prompt switches it on for its models.
	ToolsInPrompt bool
	// Prompts is the prompt pack; nil means the embedded one.
	Prompts *prompts.Pack
	// Followups is FollowupsClient ("", the default) or FollowupsProxy.
	Followups string
	// MaxFollowupRounds bounds how often FollowupsProxy re-asks the
	// upstream for one client request (0: DefaultMaxFollowupRounds); when
	// the last round still asks for a follow-up the client gets
	// response.failed.
	MaxFollowupRounds int
	// UpstreamHeaderTimeout bounds the wait for an upstream's response
	// headers (0: DefaultUpstreamHeaderTimeout; negative: no limit); the
	// client gets HTTP 504. A non-streaming upstream request waits up to
	// UpstreamIdleTimeout when that is longer (its headers come with the
	// whole answer).
	UpstreamHeaderTimeout time.Duration
	// UpstreamIdleTimeout bounds the silence of an upstream body: how long
	// a read waits for its next byte (0: DefaultUpstreamIdleTimeout;
	// negative: no limit); the stream ends with response.failed (code
	// upstream_idle_timeout). Time spent waiting for a slow client does not
	// count.
	UpstreamIdleTimeout time.Duration
	// ShutdownGrace is how long Serve's shutdown lets the streams in flight
	// finish before it ends them with response.failed (0:
	// DefaultShutdownGrace; negative: none, end them at once).
	ShutdownGrace time.Duration
	// ClientKeys, when set, are the bearer keys clients must present
	// (Authorization: Bearer KEY); any other request to the proxied routes
	// gets HTTP 401. See ParseClientKeys. The client's key is never sent
	// upstream.
	ClientKeys []string
	// InsecureOpenRelay lets Serve serve a non-loopback address with APIKey
	// set and no ClientKeys, spending APIKey for whoever connects; without
	// it Serve refuses (OpenRelayError).
	InsecureOpenRelay bool
	// DefaultModel is the model of a request that names none; without it
	// such a request gets HTTP 400. (Model, when set, replaces every
	// request's model.)
	DefaultModel string
	// Store keeps responses for previous_response_id and item_reference
	// input items; nil means an in-memory store bounded by
	// StoreMaxResponses, StoreMaxBytes and StoreTTL. A response is kept
	// when its request does not set "store": false (Codex does; the SDKs
	// default to true), scoped to the caller's credential.
	Store Store
	// StoreMaxResponses, StoreMaxBytes (of the responses' JSON) and
	// StoreTTL bound the in-memory store (0: DefaultStoreMaxResponses,
	// DefaultStoreMaxBytes, DefaultStoreTTL; negative: no limit).
	StoreMaxResponses int
	StoreMaxBytes     int64
	StoreTTL          time.Duration
	// NoStore keeps no responses: a previous_response_id, or an
	// item_reference on the chat and messages wires, gets HTTP 400 (on the
	// Responses wire item references go upstream as they are).
	NoStore bool
	// MaxIdleUpstreamConns is how many idle upstream connections the
	// server's own client keeps for the next requests (0:
	// DefaultMaxIdleUpstreamConns); about the number of concurrent streams
	// expected. (Go's default, 2, makes nearly every request under load
	// dial anew.) It does not apply to Config.Client.
	MaxIdleUpstreamConns int
	// MaxStreams bounds the proxied requests served at once, streamed or
	// not (0: no bound); one over it waits up to QueueTimeout for a slot,
	// then gets HTTP 503 with Retry-After (admission.go).
	MaxStreams int
	// QueueTimeout is how long a request over MaxStreams waits for a slot
	// (0: DefaultQueueTimeout; negative: none, the 503 comes at once).
	QueueTimeout time.Duration
	// BodyTimeout bounds the time a client has to send its request body,
	// from the handler's start (0: DefaultBodyTimeout; negative: no
	// limit); past it the request gets HTTP 408 and its connection is
	// closed. Serve and Handler both apply it.
	BodyTimeout time.Duration
	// MaxConns bounds the client connections Serve keeps open at once (0:
	// DefaultMaxConns; negative: no bound); connections over it wait to be
	// accepted, so that file descriptors cannot run out.
	MaxConns int
	// MaxInputItems bounds the input items of one request, resolved
	// history included (0: DefaultMaxInputItems; negative: no bound); a
	// request over it gets HTTP 413 naming the JSON path.
	MaxInputItems int
	// AnswerLimits bound what one upstream answer may make the proxy hold
	// and read (bounds.go): each field 0 for its default
	// (DefaultMaxAnswerBytes, DefaultMaxBodyBytes,
	// DefaultMaxCompressionRatio), negative for no bound. With Routes an
	// upstream's own limits win.
	AnswerLimits AnswerLimits
	// Routes, when set, routes every request by its model to the upstreams
	// of a routing configuration (`serve --config`, docs/serve-config.md;
	// routing.go), with fallbacks; Upstream, Wire, APIKey, Model and the
	// upstream timeouts are then unused (each upstream has its own), and
	// Reload replaces the configuration it holds.
	Routes *serveconfig.Holder
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
	switch {
	case c.Routes != nil && c.Upstream != "":
		return errors.New("server: an upstream URL and a routing configuration: want one")
	case c.Routes != nil && c.Routes.Config() == nil:
		return errors.New("server: the routing configuration holds no configuration")
	case c.Routes != nil:
	case c.Upstream == "":
		return errors.New("server: no upstream URL")
	default:
		if _, err := parseBase(c.Upstream); err != nil {
			return err
		}
	}
	if _, err := harness.ParseWire(string(c.wire())); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	switch c.Followups {
	case "", FollowupsClient, FollowupsProxy:
	default:
		return fmt.Errorf("server: unknown follow-up mode %q: want %s or %s", c.Followups, FollowupsClient, FollowupsProxy)
	}
	for i, k := range c.ClientKeys {
		if len(k) < MinClientKeyBytes {
			return fmt.Errorf("server: client key %d is %d bytes long: want at least %d", i+1, len(k), MinClientKeyBytes)
		}
	}
	if c.ToolFormat != "" {
		if err := textcall.CheckName(c.ToolFormat); err != nil {
			return fmt.Errorf("server: %w", err)
		}
	}
	if c.MaxStreams < 0 {
		return fmt.Errorf("server: max streams %d: want 0 (no bound) or more", c.MaxStreams)
	}
	if c.MaxFollowupRounds < 0 {
		return fmt.Errorf("server: max follow-up rounds %d: want 0 (the default, %d) or more", c.MaxFollowupRounds, DefaultMaxFollowupRounds)
	}
	return nil
}

func (c Config) maxConns() int {
	switch {
	case c.MaxConns < 0:
		return 0
	case c.MaxConns == 0:
		return DefaultMaxConns
	}
	return c.MaxConns
}

func (c Config) bodyTimeout() time.Duration {
	switch {
	case c.BodyTimeout < 0:
		return 0
	case c.BodyTimeout == 0:
		return DefaultBodyTimeout
	}
	return c.BodyTimeout
}

func (c Config) maxFollowupRounds() int {
	if c.MaxFollowupRounds == 0 {
		return DefaultMaxFollowupRounds
	}
	return c.MaxFollowupRounds
}

// registry is Config.Registry, or the process registry.
func (c Config) registry() *harness.Registry {
	if c.Registry != nil {
		return c.Registry
	}
	return harness.Default()
}

func (c Config) wire() harness.Wire {
	if c.Wire == "" {
		return harness.WireChat
	}
	return c.Wire
}

func (c Config) shutdownGrace() time.Duration {
	switch {
	case c.ShutdownGrace < 0:
		return 0
	case c.ShutdownGrace == 0:
		return DefaultShutdownGrace
	}
	return c.ShutdownGrace
}

func parseBase(s string) (string, error) {
	req, err := http.NewRequest(http.MethodPost, s, nil)
	if err != nil {
		return "", fmt.Errorf("server: upstream URL %q: %w", RedactURL(s), redactURLErr(err))
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" || req.URL.Host == "" {
		return "", fmt.Errorf("server: upstream URL %q: want http://host[:port][/path] or https://…", RedactURL(s))
	}
	return strings.TrimRight(s, "/"), nil
}

// Server is the proxy. Create it with New; it starts nothing until Serve.
type Server struct {
	cfg     Config
	client  *http.Client
	owned   *http.Transport // the transport of a client the server made
	log     *slog.Logger
	metrics *metrics.Metrics        // what flows through the response graphs, for /metrics
	handler http.Handler            // the mux behind front: what Handler returns and Serve serves
	keys    atomic.Pointer[keyring] // hashes of the client keys in force (Config.ClientKeys, SetClientKeys)

	store        Store        // nil with Config.NoStore (store_resolve.go)
	storeMetrics storeMetrics // its use, for /metrics
	proxyMetrics proxyMetrics // what the proxy did around its turns, for /metrics (proxy_metrics.go)
	guards       guardMetrics // what the proxy refused a peer, for /metrics (guard_metrics.go)
	storeState   storeState   // its outages and the responses it did not keep (store_health.go)

	checked upstreamBase      // Config.Check and the upstream's base URL, once (transport.go)
	single  *target           // the upstream of Config.Upstream (nil with Config.Routes)
	pool    upstreamPool      // the clients of Config.Routes's upstreams (targets.go)
	routing routeMetrics      // what Config.Routes does, for /metrics
	exposed atomic.Bool       // Serve serves a non-loopback address (routing.go's checkReload)
	admit   *admission        // Config.MaxStreams (admission.go)
	turnCfg harness.Config    // the harness layer's configuration of every turn, less the target's (proxy.go's planConfig)
	reg     *harness.Registry // the harnesses served (Config.Registry)

	inflight atomic.Int64  // requests being served
	stop     chan struct{} // closed by Stop
	stopOnce sync.Once
}

// New returns a server for cfg. It starts no goroutine. A configuration that
// fails Check makes every proxied request fail with HTTP 500 (and Serve
// return the error).
func New(cfg Config) *Server {
	s := &Server{cfg: cfg, log: cfg.Logger, metrics: cfg.Metrics, stop: make(chan struct{})}
	s.keys.Store(newKeyring(cfg.ClientKeys))
	if cfg.Client != nil {
		s.client = withoutRedirects(cfg.Client) // redirect.go
	} else {
		s.owned = upstreamTransport(cfg.MaxIdleUpstreamConns)
		s.client = &http.Client{Transport: s.owned, CheckRedirect: refuseRedirect}
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.metrics == nil {
		s.metrics = metrics.New()
	}
	s.reg = cfg.registry()
	s.turnCfg = s.harnessConfig()
	if s.cfg.MaxRequestBytes <= 0 {
		s.cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	s.checked = checkUpstream(s.cfg)
	s.single = s.singleTarget()
	s.admit = newAdmission(s.cfg)
	mux := http.NewServeMux()
	responses := s.authenticate(s.handleResponses)
	mux.HandleFunc("POST /v1/responses", responses)
	mux.HandleFunc("POST /responses", responses)
	mux.HandleFunc("POST /h/{harness}/v1/responses", responses)
	mux.HandleFunc("POST /h/{harness}/responses", responses)
	s.routeInbound(mux) // Messages and Chat Completions clients (inbound.go)
	s.store = s.cfg.storeConfig()
	models := messagesModels(s.authenticate(s.handleModels)) // models.go; Anthropic clients: inbound_messages.go
	mux.HandleFunc("GET /v1/models", models)
	mux.HandleFunc("GET /models", models)
	mux.HandleFunc("GET /h/{harness}/v1/models", models)
	mux.HandleFunc("GET /h/{harness}/models", models)
	mux.HandleFunc("GET /metrics", s.authenticate(s.serveMetrics)) // behind the client keys when there are any
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n") // a failed write means the client went away
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		msg := "no route for " + r.Method + " " + r.URL.Path + " (the proxy serves POST /v1/responses, /v1/messages and /v1/chat/completions, each also under /h/{harness}, POST /v1/messages/count_tokens, GET /v1/models, GET /healthz and GET /metrics)"
		status, outcome := s.answer(w, nil, failure(http.StatusNotFound, "invalid_request_error", "not_found", msg, outcomeNotFound, nil))
		s.log.LogAttrs(r.Context(), slog.LevelInfo, "harnessflow request", slog.String("method", r.Method),
			slog.String("path", r.URL.Path), slog.Int("status", status), slog.String("outcome", outcome), slog.String("reason", cutReason(msg)))
	})
	s.handler = s.front(mux)
	return s
}

// Handler returns the proxy's HTTP handler, complete on its own: every
// route, the client keys, the request bounds (body size, body timeout,
// input items, Config.MaxStreams' admission), the upstream timeouts, the
// metrics, the in-flight count Serve's shutdown waits on, and the refusal
// of an open relay (a request arriving on a non-loopback address while
// the proxy would spend its own upstream key for any caller: HTTP 403,
// see CheckAddr). A configuration that fails Check makes every proxied
// request HTTP 500. Serve serves this same handler.
//
// What belongs to a connection or a listener is the caller's http.Server's
// to set: ReadHeaderTimeout (Serve uses 30s; without one a client that
// never finishes its headers holds a connection), IdleTimeout, a bound on
// the connections (Serve's Config.MaxConns), and the graceful shutdown
// (http.Server.Shutdown; Serve also ends the streams left after
// Config.ShutdownGrace with response.failed). A stream's handler returns
// when its request's context is cancelled.
func (s *Server) Handler() http.Handler { return s.handler }

// CloseIdleConnections closes the idle upstream connections of the
// server's own client (Serve does it when it returns).
func (s *Server) CloseIdleConnections() {
	if s.owned != nil {
		s.owned.CloseIdleConnections()
	}
	s.pool.closeIdle()
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

// errShutdown is the cause of the request contexts a shutdown cancels.
var errShutdown = errors.New("harnessflow is shutting down")

// Serve serves on ln until ctx is cancelled or Stop is called, then shuts
// down gracefully: it stops accepting connections, lets the requests in
// flight finish within Config.ShutdownGrace, then cancels the rest (their
// streams end with response.failed, code server_shutdown, counted with
// outcome shutdown), waits a moment for those failures to be written, drops
// the connections left and returns nil. Stop during the grace period ends
// the streams in flight at once. Serve closes ln. It refuses an open relay
// (OpenRelayError) and returns a listener failure as an error.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if err := s.cfg.Check(); err != nil {
		ln.Close()
		return err
	}
	if err := s.cfg.CheckAddr(ln.Addr()); err != nil {
		ln.Close()
		return err
	}
	if !IsLoopback(ln.Addr()) {
		s.exposed.Store(true)
	}
	defer s.CloseIdleConnections()
	// The requests' contexts outlive ctx: the shutdown ends them itself.
	reqCtx, endRequests := context.WithCancelCause(context.WithoutCancel(ctx))
	defer endRequests(errShutdown)
	if n := s.cfg.maxConns(); n > 0 {
		ln = netutil.LimitListener(ln, n)
	}
	srv := &http.Server{
		Handler:           s.handler, // front counts the requests in flight
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return reqCtx },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		_ = srv.Close() // drop the connections still held; they would wait for the idle timeout
		endRequests(errShutdown)
		s.waitHandlers(shutdownWrite)
		return fmt.Errorf("server: serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	case <-s.stop:
	}
	s.shutdown(srv, endRequests)
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("server: serve %s: %w", ln.Addr(), err)
	}
	return nil
}

// Stop makes Serve end the streams in flight at once (each gets
// response.failed) and return, without waiting for the grace period: the
// second signal of a command-line shutdown. It may be called from any
// goroutine, more than once, before or during Serve's shutdown.
func (s *Server) Stop() { s.stopOnce.Do(func() { close(s.stop) }) }

// shutdown stops srv: no new connections, the requests in flight get the
// grace period (cut short by Stop), then endRequests cancels the rest.
func (s *Server) shutdown(srv *http.Server, endRequests context.CancelCauseFunc) {
	grace := s.cfg.shutdownGrace()
	s.log.LogAttrs(context.Background(), slog.LevelInfo, "harnessflow: shutting down: no new connections; waiting for the requests in flight",
		slog.Int64("in_flight", s.inflight.Load()), slog.Duration("grace", grace))
	sctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	drained := make(chan struct{})
	go func() {
		_ = srv.Shutdown(sctx) // an error is sctx's: handled below
		close(drained)
	}()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-drained:
		s.waitHandlers(shutdownWrite)
		return
	case <-timer.C:
		s.log.LogAttrs(context.Background(), slog.LevelWarn, "harnessflow: shutdown grace period over: ending the streams in flight with response.failed",
			slog.Int64("in_flight", s.inflight.Load()), slog.Duration("grace", grace))
	case <-s.stop:
		s.log.LogAttrs(context.Background(), slog.LevelWarn, "harnessflow: stopping at once: ending the streams in flight with response.failed",
			slog.Int64("in_flight", s.inflight.Load()))
	}
	endRequests(errShutdown)
	// The handlers write response.failed and return; a client that does
	// not read holds its handler until the connections are dropped.
	select {
	case <-drained:
	case <-time.After(shutdownWrite):
		cancel()
		<-drained
	}
	_ = srv.Close()
	s.waitHandlers(shutdownWrite)
}

// front is the door of every request, Serve's or a caller's own
// http.Server's: it counts the requests in flight (the shutdown waits on
// them) and refuses an open relay on a non-loopback address (openRelay).
func (s *Server) front(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.inflight.Add(1)
		defer s.inflight.Add(-1)
		if addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && !IsLoopback(addr) && s.openRelay(w, r, addr) {
			return
		}
		h.ServeHTTP(w, r)
	})
}

// waitHandlers waits up to d for the handlers still running to return
// (after srv.Close their writes fail and their upstream requests are
// cancelled, so they return promptly).
func (s *Server) waitHandlers(d time.Duration) {
	deadline := time.Now().Add(d)
	for s.inflight.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
}

// shutdownFailure returns the stream error and outcome of a stream whose
// request context was cancelled: by the server's shutdown, or because the
// client went away.
func shutdownFailure(r *http.Request) (*protocol.StreamError, string) {
	if errors.Is(context.Cause(r.Context()), errShutdown) {
		return &protocol.StreamError{Kind: protocol.ErrKindTruncated, Code: "server_shutdown",
			Message: "harnessflow is shutting down: the stream did not finish within the shutdown grace period; try again", Retryable: true}, metrics.OutcomeShutdown
	}
	return &protocol.StreamError{Kind: protocol.ErrKindUpstream, Code: "cancelled",
		Message: "request cancelled (client gone or server shutting down)", Retryable: true}, metrics.OutcomeClientClosed
}
