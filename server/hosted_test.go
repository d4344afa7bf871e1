package server_test

import (
	"io"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/scripted"
	"github.com/harnessflow/harnessflow/server"
)

// Hosted tools (web_search, image_generation) are not offered to a chat
// upstream: each one left out is counted by type, and the first of each
// type is logged once for the server's lifetime.
func TestHostedToolsNotOffered(t *testing.T) {
	rec := &recorder{h: scripted.New(nil)}
	up := newUpstream(t, rec)
	p := newProxy(t, up, server.Config{})
	tools := `"tools":[{"type":"function","name":"exec_command","description":"run","parameters":{"type":"object","properties":{"cmd":{"type":"string"}}}},` +
		`{"type":"web_search","external_web_access":false},{"type":"image_generation","output_format":"png"}],`
	body := `{"model":"gpt-5.5","input":[` + userMsg + `],` + tools + `"stream":true}`
	for range 2 {
		resp := p.post(t, "/v1/responses", body, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_, sent, _ := rec.last(t)
		if strings.Contains(sent, `"web_search"`) || strings.Contains(sent, `"image_generation"`) || !strings.Contains(sent, `"exec_command"`) {
			t.Errorf("upstream body offers a hosted tool (or lost exec_command): %s", sent)
		}
	}
	s := p.srv.Metrics()
	if s.Hosted["web_search"] != 2 || s.Hosted["image_generation"] != 2 || len(s.Hosted) != 2 {
		t.Errorf("metrics: hosted tools %v, want web_search 2 and image_generation 2", s.Hosted)
	}
	logs := p.logs.String()
	if n := strings.Count(logs, "hosted tool not offered"); n != 2 || !strings.Contains(logs, "tool=web_search") || !strings.Contains(logs, "tool=image_generation") {
		t.Errorf("logged %d hosted-tool lines, want one per type:\n%s", n, logs)
	}
	if m := metricsText(t, p); !strings.Contains(m, `harnessflow_hosted_tools_dropped_total{tool="web_search"} 2`) {
		t.Errorf("/metrics lacks the hosted-tool counter:\n%s", m)
	}
}
