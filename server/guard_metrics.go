package server

import (
	"maps"
	"sync"

	"github.com/harnessflow/harnessflow/internal/promtext"
)

// guardMetrics counts what the proxy refused to do for a hostile or broken
// peer, for /metrics: upstream redirects not followed (redirect.go),
// answers ended at a bound (bounds.go) and requests over a request bound
// (requestbounds.go). The zero value is ready.
type guardMetrics struct {
	mu        sync.Mutex
	redirects map[string]uint64 // by request kind (main, title)
	answers   map[string]uint64 // by bound (text, body, compression ratio)
	requests  map[string]uint64 // by bound (body, items, …)
}

func (m *guardMetrics) redirect(request string) { bump(&m.mu, &m.redirects, request) }
func (m *guardMetrics) answerCut(bound string)  { bump(&m.mu, &m.answers, bound) }
func (m *guardMetrics) requestRefused(bound string) {
	bump(&m.mu, &m.requests, bound)
}

// collect writes the guard families.
func (m *guardMetrics) collect(pw *promtext.Writer) {
	m.mu.Lock()
	redirects, answers, requests := maps.Clone(m.redirects), maps.Clone(m.answers), maps.Clone(m.requests)
	m.mu.Unlock()
	pw.CounterMap("harnessflow_upstream_redirects_total", "Upstream answers with a redirect status, not followed (HTTP 502 upstream_redirect), by request (main or title).", "request", redirects)
	pw.CounterMap("harnessflow_answers_cut_total", "Upstream answers ended at a bound of what one answer may hold or read, by bound (text, body, compression ratio).", "bound", answers)
	pw.CounterMap("harnessflow_requests_over_bounds_total", "Client requests refused with HTTP 413 for a request bound, by bound.", "bound", requests)
}
