package server

import (
	"maps"
	"net/http"
	"sync"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/serveconfig"

	"github.com/harnessflow/harnessflow/internal/promtext"
)

// target is the upstream one attempt of a request goes to: with
// Config.Upstream the one upstream, with Config.Routes one of the
// upstreams its model routes to (docs/serve-config.md#models-and-routing).
type target struct {
	// name is the configured upstream's name ("" with Config.Upstream);
	// entry is the name of the model entry that routed the request.
	name, entry string
	base        string // base URL, no trailing slash
	wire        harness.Wire
	apiKey      string
	headers     map[string]string // extra headers, canonical names
	// model is the model name sent upstream ("": the request's).
	model string
	// harness is the harness of the plain routes ("": native).
	harness string
	// header and idle are the timeouts in force (0: no limit).
	header, idle time.Duration
	limits       AnswerLimits // the bounds of its answers in force (bounds.go)
	client       *http.Client
	models       *harness.ModelTable
	route        *harness.Route // the route targets resolved for the request's harness (nil: none yet)
}

// label is the target's name for logs and metrics.
func (t *target) label() string {
	if t.name == "" {
		return "upstream"
	}
	return t.name
}

// effective maps a configured timeout (0: def, negative: none) to the one
// in force (0: none).
func effective(d, def time.Duration) time.Duration {
	switch {
	case d < 0:
		return 0
	case d == 0:
		return def
	}
	return d
}

// upstreamPool keeps one client per configured upstream, so that each has
// its own connection limits (serveconfig.Upstream.MaxConns, MaxIdleConns)
// and keeps its idle connections across reloads that do not change it.
type upstreamPool struct {
	mu      sync.Mutex
	clients map[poolKey]*http.Client
}

// poolKey is what makes two configured upstreams share a client.
type poolKey struct {
	name, base        string
	maxConns, maxIdle int
}

func keyOf(u *serveconfig.Upstream) poolKey {
	return poolKey{name: u.Name, base: u.BaseURL, maxConns: u.MaxConns, maxIdle: u.MaxIdleConns}
}

// client returns the client of u, made on first use.
func (p *upstreamPool) client(u *serveconfig.Upstream) *http.Client {
	k := keyOf(u)
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.clients[k]; c != nil {
		return c
	}
	if p.clients == nil {
		p.clients = map[poolKey]*http.Client{}
	}
	t := upstreamTransport(u.MaxIdleConns)
	t.MaxConnsPerHost = u.MaxConns
	c := &http.Client{Transport: t, CheckRedirect: refuseRedirect}
	p.clients[k] = c
	return c
}

// keep drops the clients of upstreams c no longer has, closing their idle
// connections (requests in flight on them finish undisturbed), and returns
// how many it dropped.
func (p *upstreamPool) keep(c *serveconfig.Config) int {
	live := map[poolKey]bool{}
	for _, u := range c.Upstreams {
		live[keyOf(u)] = true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	dropped := 0
	for k, cl := range p.clients {
		if !live[k] {
			cl.CloseIdleConnections()
			delete(p.clients, k)
			dropped++
		}
	}
	return dropped
}

// closeIdle closes every client's idle connections.
func (p *upstreamPool) closeIdle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.clients {
		c.CloseIdleConnections()
	}
}

// Upstream attempt results (harnessflow_upstream_attempts_total's result).
const (
	attemptOK          = "ok"
	attemptUnreachable = "unreachable"
	attemptTimeout     = "header_timeout"
	attemptStatus      = "http_" // + the status class or 429: http_429, http_5xx, http_4xx
	attemptNotAStream  = "not_a_stream"
	attemptRedirect    = "redirect" // a 3xx, not followed (redirect.go)
)

// routeMetrics counts what the routing config does, for /metrics: the
// upstream attempts of each request and the client streams, by upstream
// and model entry (the configured names, never a client's string), and the
// reloads. The zero value is ready.
type routeMetrics struct {
	mu       sync.Mutex
	attempts map[[3]string]uint64 // (upstream, model, result)
	streams  map[[3]string]uint64 // (upstream, model, outcome)
	reloads  map[string]uint64    // "ok" | "refused"
}

func (m *routeMetrics) attempt(upstream, model, result string) {
	bump(&m.mu, &m.attempts, [3]string{upstream, model, result})
}

func (m *routeMetrics) stream(upstream, model, outcome string) {
	bump(&m.mu, &m.streams, [3]string{upstream, model, outcome})
}

func (m *routeMetrics) reload(ok bool) {
	bump(&m.mu, &m.reloads, okOr(ok, "refused"))
}

// collect writes the routing families.
func (m *routeMetrics) collect(pw *promtext.Writer) {
	m.mu.Lock()
	attempts, streams, reloads := maps.Clone(m.attempts), maps.Clone(m.streams), maps.Clone(m.reloads)
	m.mu.Unlock()
	pw.Counter("harnessflow_upstream_attempts_total", "Upstream requests of the routed requests, by upstream, model entry and result (a failed attempt before the client got a byte goes on to the next upstream).")
	for _, k := range promtext.SortedPairs(attempts) {
		pw.Sample("harnessflow_upstream_attempts_total", attempts[k], "upstream", k[0], "model", k[1], "result", k[2])
	}
	pw.Counter("harnessflow_routed_streams_total", "Client streams that ended, by the upstream that served them, model entry and outcome.")
	for _, k := range promtext.SortedPairs(streams) {
		pw.Sample("harnessflow_routed_streams_total", streams[k], "upstream", k[0], "model", k[1], "outcome", k[2])
	}
	pw.CounterMap("harnessflow_config_reloads_total", "Configuration reloads, by result (a refused file leaves the running configuration in place).", "result", reloads)
}
