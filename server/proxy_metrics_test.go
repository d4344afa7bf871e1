package server

import (
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/internal/promtext"
)

// collected is the page m's families make on their own.
func collected(t *testing.T, m *proxyMetrics) string {
	t.Helper()
	var buf strings.Builder
	pw := promtext.NewWriter(&buf)
	m.collect(pw)
	if err := pw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := promtext.Check([]byte(buf.String())); err != nil {
		t.Errorf("%v\n%s", err, buf.String())
	}
	return buf.String()
}

// The proxy's own counters: title requests, follow-up rounds, unbridged
// and text tool calls, hosted tools — safe for concurrent use, sorted,
// escaped; the first hosted tool of a type is reported once.
func TestProxyCounters(t *testing.T) {
	var m proxyMetrics
	var wg sync.WaitGroup
	var firsts sync.Map
	for range 4 {
		wg.Go(func() {
			m.titleRequest(titleOK)
			m.followupRound("pi")
			m.unbridgedCall("opencode", "read")
			m.textToolCall("hermes", "recovered")
			if m.hostedToolDropped("web_search") {
				if _, again := firsts.LoadOrStore("web_search", true); again {
					t.Errorf("web_search reported first twice")
				}
			}
		})
	}
	wg.Wait()
	m.titleRequest(titleFailed)
	m.followupRound("kimi-cli")
	m.unbridgedCall("opencode", "glob")
	m.unbridgedCall("a\"b", "t")
	if _, ok := firsts.Load("web_search"); !ok || m.hostedToolDropped("web_search") || !m.hostedToolDropped("image_generation") {
		t.Errorf("first hosted tool of a type not reported exactly once")
	}
	var s MetricsSnapshot
	m.snapshot(&s)
	if diff := cmp.Diff(map[string]uint64{"ok": 4, "failed": 1}, s.Titles); diff != "" {
		t.Errorf("titles (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]uint64{"pi": 4, "kimi-cli": 1}, s.Followups); diff != "" {
		t.Errorf("follow-ups (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]uint64{"web_search": 5, "image_generation": 1}, s.Hosted); diff != "" {
		t.Errorf("hosted (-want +got):\n%s", diff)
	}
	if s.Unbridged[[2]string{"opencode", "read"}] != 4 || len(s.Unbridged) != 3 || s.TextCalls[[2]string{"hermes", "recovered"}] != 4 {
		t.Errorf("unbridged %v, text calls %v", s.Unbridged, s.TextCalls)
	}
	page := collected(t, &m)
	for _, want := range []string{
		"harnessflow_title_requests_total{outcome=\"failed\"} 1\nharnessflow_title_requests_total{outcome=\"ok\"} 4\n",
		"harnessflow_followup_rounds_total{harness=\"kimi-cli\"} 1\nharnessflow_followup_rounds_total{harness=\"pi\"} 4\n",
		"# TYPE harnessflow_unbridged_tool_calls_total counter\n" +
			"harnessflow_unbridged_tool_calls_total{harness=\"a\\\"b\",tool=\"t\"} 1\n" +
			"harnessflow_unbridged_tool_calls_total{harness=\"opencode\",tool=\"glob\"} 1\n" +
			"harnessflow_unbridged_tool_calls_total{harness=\"opencode\",tool=\"read\"} 4\n",
		"harnessflow_hosted_tools_dropped_total{tool=\"image_generation\"} 1\nharnessflow_hosted_tools_dropped_total{tool=\"web_search\"} 5\n",
		"harnessflow_text_tool_calls_total{format=\"hermes\",outcome=\"recovered\"} 4\n",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("no %q in\n%s", want, page)
		}
	}
}

// Upstream timeouts and client credential rejections, every label pair
// printed (zeros too) so dashboards see the series from the start.
func TestTimeoutAndAuthCounters(t *testing.T) {
	var m proxyMetrics
	page := collected(t, &m)
	if !strings.Contains(page, "harnessflow_upstream_timeouts_total{phase=\"idle\",request=\"title\"} 0\n") ||
		!strings.Contains(page, "harnessflow_client_auth_failures_total{reason=\"missing\"} 0\n") {
		t.Errorf("zero series missing:\n%s", page)
	}
	m.upstreamTimeout(TimeoutHeaders, requestMain)
	m.upstreamTimeout(TimeoutIdle, requestTitle)
	m.upstreamTimeout(TimeoutIdle, requestTitle)
	m.clientAuthFailure(authInvalid)
	var s MetricsSnapshot
	m.snapshot(&s)
	if s.Timeouts[[2]string{"idle", "title"}] != 2 || s.Timeouts[[2]string{"headers", "main"}] != 1 || s.AuthFails["invalid"] != 1 {
		t.Errorf("snapshot %+v %+v", s.Timeouts, s.AuthFails)
	}
	page = collected(t, &m)
	want := "harnessflow_upstream_timeouts_total{phase=\"headers\",request=\"main\"} 1\n" +
		"harnessflow_upstream_timeouts_total{phase=\"headers\",request=\"title\"} 0\n" +
		"harnessflow_upstream_timeouts_total{phase=\"idle\",request=\"main\"} 0\n" +
		"harnessflow_upstream_timeouts_total{phase=\"idle\",request=\"title\"} 2\n"
	if !strings.Contains(page, want) ||
		!strings.Contains(page, "harnessflow_client_auth_failures_total{reason=\"missing\"} 0\nharnessflow_client_auth_failures_total{reason=\"invalid\"} 1\n") {
		t.Errorf("prometheus:\n%s", page)
	}
}
