package server_test

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/internal/promtext"
	"github.com/harnessflow/harnessflow/scripted"
	"github.com/harnessflow/harnessflow/server"
)

// The whole /metrics page of a server with every family group (streams,
// store, admission, guards) is valid exposition format, and so is a routed
// server's (the routing families).
func TestMetricsPageParses(t *testing.T) {
	up := newUpstream(t, scripted.New(nil))
	p := newProxy(t, up, server.Config{MaxStreams: 4, Store: server.NewMemoryStore(server.StoreLimits{}, time.Now)})
	terminal(t, readSSE(t, p.post(t, "/v1/responses", codexRequest(userMsg, false), nil).Body))
	resp, err := p.client.Get(p.ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != promtext.ContentType {
		t.Errorf("Content-Type %q", ct)
	}
	for _, want := range []string{"# TYPE harnessflow_node_inputs_total counter", "# TYPE harnessflow_store_up gauge",
		"# TYPE harnessflow_max_streams gauge", "# TYPE harnessflow_answers_cut_total counter", "# TYPE harnessflow_store_responses gauge"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if err := promtext.Check(page); err != nil {
		t.Errorf("/metrics: %v\n%s", err, page)
	}

	second := newScripted(t, "second", 0)
	r := newRouted(t, fallbackConfig, map[string]string{"first": downURL(t), "second": second.URL})
	readSSE(t, r.post(t, "/v1/responses", ask("m"), nil).Body)
	routedPage := r.get(t, "/metrics")
	if !strings.Contains(routedPage, "# TYPE harnessflow_upstream_attempts_total counter") {
		t.Errorf("routed /metrics lacks the routing families")
	}
	if err := promtext.Check([]byte(routedPage)); err != nil {
		t.Errorf("routed /metrics: %v\n%s", err, routedPage)
	}
}
