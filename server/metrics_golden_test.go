package server_test

import (
	"bytes"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/server"
)

var updatePage = flag.Bool("update-metrics", false, "rewrite testdata/metrics_page.golden from the /metrics page")

// The whole /metrics page after a fixed sequence of requests is the one in
// testdata/metrics_page.golden, byte for byte (node times masked): every
// family's name, HELP and TYPE text, labels and order. The sequence touches
// the stream, proxy, store, admission and guard families: streamed turns
// whose chat answer carries a tool call in its text and whose request
// offers a hosted tool (one of them kept in the store), a stream the
// upstream cut short, one it stalled (an idle timeout), a turn refused for
// a missing key and one for a wrong key.
func TestMetricsPageGolden(t *testing.T) {
	const key = "sk-client-golden-0123456789"
	calls := textCallUpstream(t)
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		switch {
		case bytes.Contains(b, []byte("Cut short.")): // a stream that stops without its end
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, chunk("Half"))
		case bytes.Contains(b, []byte("Stall.")): // a stream that stalls after its headers
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, chunk("Wait"))
			http.NewResponseController(w).Flush()
			<-r.Context().Done()
		default:
			r.Body = io.NopCloser(bytes.NewReader(b))
			calls.ServeHTTP(w, r)
		}
	})
	p := newProxy(t, newUpstream(t, up), server.Config{
		ClientKeys: []string{key}, MaxStreams: 4, UpstreamIdleTimeout: 200 * time.Millisecond,
		Store: server.NewMemoryStore(server.StoreLimits{}, func() time.Time { return time.Unix(1_700_000_000, 0) }),
	})
	tools := `"tools":[` + strings.TrimPrefix(codexTools, "[")
	tools = strings.TrimSuffix(tools, "]") + `,{"type":"web_search","external_web_access":false}],`
	turn := func(text string, store bool) string {
		msg := strings.Replace(userMsg, "Say hello with the shell.", text, 1)
		return `{"model":"gpt-5.5","input":[` + msg + `],` + tools + `"store":` + strconv.FormatBool(store) + `,"stream":true}`
	}
	body := turn("Say hello with the shell.", false)
	auth := map[string]string{"Authorization": "Bearer " + key}
	for _, c := range []struct {
		body, end string
	}{
		{body, "response.completed"},
		{turn("Keep it.", true), "response.completed"},
		{turn("Cut short.", false), "response.failed"},
		{turn("Stall.", false), "response.failed"},
	} {
		if last := terminal(t, readSSE(t, p.post(t, "/v1/responses", c.body, auth).Body)); last.Name != c.end {
			t.Fatalf("turn ended with %s, want %s", last.Raw, c.end)
		}
	}
	for _, hdr := range []map[string]string{nil, {"Authorization": "Bearer sk-not-a-key"}} {
		if resp := p.post(t, "/v1/responses", body, hdr); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("status %d, want 401", resp.StatusCode)
		}
	}

	req, _ := http.NewRequest(http.MethodGet, p.ts.URL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := p.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	got := nodeSeconds.ReplaceAllString(string(page), "$1 TIME")

	path := filepath.Join("testdata", "metrics_page.golden")
	if *updatePage {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			g, w := "", ""
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("/metrics differs from %s at line %d:\n got %q\nwant %q\n\nwhole page:\n%s", path, i+1, g, w, got)
			}
		}
	}
}

// nodeSeconds matches a sample of the node time family, whose value is a
// measured time.
var nodeSeconds = regexp.MustCompile(`(?m)^(harnessflow_node_seconds_total\{[^}]*\}) \S+$`)
