package server

import (
	"maps"
	"net/http"
	"sync"

	"github.com/harnessflow/harnessflow/internal/promtext"
	"github.com/harnessflow/harnessflow/stages/metrics"
)

// proxyMetrics counts what the proxy itself did around its turns, for
// /metrics: title requests, follow-up rounds, unbridged and text tool
// calls, hosted tools left out, upstream timeouts and refused client keys.
// What flowed through the response graphs is stages/metrics'. The zero
// value is ready.
type proxyMetrics struct {
	mu        sync.Mutex
	titles    map[string]uint64    // title requests by outcome (titleOK, titleFailed)
	followups map[string]uint64    // follow-up rounds by harness
	unbridged map[[2]string]uint64 // unbridged native tool calls by (harness, tool)
	hosted    map[string]uint64    // hosted tools left out of upstream requests, by tool type
	textCalls map[[2]string]uint64 // text tool-call outcomes by (format, outcome)
	timeouts  map[[2]string]uint64 // upstream timeouts by (phase, request)
	authFails map[string]uint64    // refused client credentials by reason
}

// Title request outcomes (titleRequest).
const (
	titleOK     = "ok"
	titleFailed = "failed"
)

// Upstream request kinds, the request label of the timeout and redirect
// counters.
const (
	requestMain  = "main"  // a turn's main request
	requestTitle = "title" // the title request sent before a turn's main request
)

// Refused client credentials (clientAuthFailure).
const (
	authMissing = "missing" // a request without a bearer key
	authInvalid = "invalid" // a request whose bearer key is not an accepted one
)

// titleRequest counts one title request sent before a turn's main request,
// by outcome (titleOK or titleFailed).
func (m *proxyMetrics) titleRequest(outcome string) { bump(&m.mu, &m.titles, outcome) }

// followupRound counts one follow-up round the proxy ran itself (the
// upstream asked again with a harness's follow-up message appended), by
// harness.
func (m *proxyMetrics) followupRound(harness string) { bump(&m.mu, &m.followups, harness) }

// unbridgedCall counts a call to a harness-native tool that reached the
// client under its own name because the harness's bridge has no entry for
// it (the harness's response graph reports it).
func (m *proxyMetrics) unbridgedCall(harness, tool string) {
	bump(&m.mu, &m.unbridged, [2]string{harness, tool})
}

// textToolCall counts one outcome of tool-call recovery from text
// (stages/textcall: recovered, unknown_tool, malformed, native_won) for the
// format that produced it (the response graph's text-call node reports it).
func (m *proxyMetrics) textToolCall(format, outcome string) {
	bump(&m.mu, &m.textCalls, [2]string{format, outcome})
}

// hostedToolDropped counts a hosted tool (web_search, image_generation, …)
// left out of an upstream request because neither the upstream nor the
// client runs it (docs/request-shaping.md#hosted-tools), by tool type. It
// reports whether this is the first time for that type, so that the caller
// logs it once.
func (m *proxyMetrics) hostedToolDropped(toolType string) (first bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hosted == nil {
		m.hosted = map[string]uint64{}
	}
	first = m.hosted[toolType] == 0
	m.hosted[toolType]++
	return first
}

// upstreamTimeout counts an upstream request the proxy gave up on, by
// phase (TimeoutHeaders, TimeoutIdle) and request kind (requestMain,
// requestTitle).
func (m *proxyMetrics) upstreamTimeout(phase, request string) {
	bump(&m.mu, &m.timeouts, [2]string{phase, request})
}

// clientAuthFailure counts a request refused for its client credentials,
// by reason (authMissing, authInvalid).
func (m *proxyMetrics) clientAuthFailure(reason string) { bump(&m.mu, &m.authFails, reason) }

// snapshot copies the counters into the proxy's part of a MetricsSnapshot.
func (m *proxyMetrics) snapshot(s *MetricsSnapshot) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s.Titles, s.Followups, s.Unbridged = maps.Clone(m.titles), maps.Clone(m.followups), maps.Clone(m.unbridged)
	s.Hosted, s.TextCalls = maps.Clone(m.hosted), maps.Clone(m.textCalls)
	s.Timeouts, s.AuthFails = maps.Clone(m.timeouts), maps.Clone(m.authFails)
}

// collect writes the proxy's families into pw.
func (m *proxyMetrics) collect(pw *promtext.Writer) {
	var s MetricsSnapshot
	m.snapshot(&s)
	pw.CounterMap("harnessflow_title_requests_total", "Title requests sent before a turn's main request, by outcome.", "outcome", s.Titles)
	pw.CounterMap("harnessflow_followup_rounds_total", "Follow-up rounds the proxy ran itself (--followups proxy), by harness.", "harness", s.Followups)
	pw.Counter("harnessflow_unbridged_tool_calls_total", "Calls to harness-native tools sent to the client without a bridge, by harness and tool.")
	for _, k := range promtext.SortedPairs(s.Unbridged) {
		pw.Sample("harnessflow_unbridged_tool_calls_total", s.Unbridged[k], "harness", k[0], "tool", k[1])
	}
	pw.CounterMap("harnessflow_hosted_tools_dropped_total", "Hosted tools (web_search, image_generation, ...) left out of upstream requests because neither the upstream nor the client runs them, by tool type.", "tool", s.Hosted)
	pw.Counter("harnessflow_text_tool_calls_total", "Tool calls recovered from the text of chat answers, and markup given back as text, by format and outcome.")
	for _, k := range promtext.SortedPairs(s.TextCalls) {
		pw.Sample("harnessflow_text_tool_calls_total", s.TextCalls[k], "format", k[0], "outcome", k[1])
	}
	pw.Counter("harnessflow_upstream_timeouts_total", "Upstream requests given up on: no response headers in time (phase=headers) or no body byte for too long (phase=idle), by request (main or title).")
	for _, phase := range [...]string{TimeoutHeaders, TimeoutIdle} {
		for _, req := range [...]string{requestMain, requestTitle} {
			pw.Sample("harnessflow_upstream_timeouts_total", s.Timeouts[[2]string{phase, req}], "phase", phase, "request", req)
		}
	}
	pw.Counter("harnessflow_client_auth_failures_total", "Requests refused for their client credentials, by reason (missing or invalid key).")
	for _, reason := range [...]string{authMissing, authInvalid} {
		pw.Sample("harnessflow_client_auth_failures_total", s.AuthFails[reason], "reason", reason)
	}
}

// MetricsSnapshot is a copy of the counters served at /metrics that a
// caller may want to read in code: what flowed through the response graphs
// (the embedded stages/metrics Snapshot) and what the proxy did around
// them. The store's, routing's, admission's and guards' families are on the
// page only. Each map of the proxy's part holds only keys counted at least
// once.
type MetricsSnapshot struct {
	metrics.Snapshot

	Titles    map[string]uint64    // title requests by outcome ("ok", "failed")
	Followups map[string]uint64    // follow-up rounds the proxy ran itself, by harness
	Unbridged map[[2]string]uint64 // unbridged native tool calls by (harness, tool)
	Hosted    map[string]uint64    // hosted tools left out of upstream requests, by tool type
	TextCalls map[[2]string]uint64 // text tool-call outcomes by (format, outcome)
	Timeouts  map[[2]string]uint64 // upstream timeouts by (phase, request): TimeoutHeaders or TimeoutIdle, "main" or "title"
	AuthFails map[string]uint64    // refused client credentials by reason ("missing", "invalid")
}

// Metrics returns a copy of the counters served at /metrics. The response
// graphs' part is counted by Config.Metrics when one was given.
func (s *Server) Metrics() MetricsSnapshot {
	snap := MetricsSnapshot{Snapshot: s.metrics.Snapshot()}
	s.proxyMetrics.snapshot(&snap)
	return snap
}

// serveMetrics serves /metrics: one page, written by one promtext.Writer,
// of the response graphs' families, then the proxy's, the store's, the
// routing's (with Config.Routes), the admission's and the guards'.
func (s *Server) serveMetrics(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", promtext.ContentType)
	pw := promtext.NewWriter(w)
	s.metrics.Collect(pw)
	s.proxyMetrics.collect(pw)
	s.storeMetrics.collect(pw, s.store, s.storeState.healthy())
	if s.cfg.Routes != nil {
		s.routing.collect(pw)
	}
	s.admit.collect(pw)
	s.guards.collect(pw)
	_ = pw.Flush() // a failed write means the client went away
}
