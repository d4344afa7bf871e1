package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/server"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// lockedBuffer is a log destination safe for the server's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// proxy is a running proxy under test.
type proxy struct {
	ts     *httptest.Server
	srv    *server.Server
	logs   *lockedBuffer
	client *http.Client
}

// newUpstream starts a fake upstream on 127.0.0.1.
func newUpstream(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	up := httptest.NewServer(h)
	t.Cleanup(up.Close)
	return up
}

// newProxy starts the proxy with cfg (Upstream is set to upstream+"/v1"
// when upstream is not nil), logging at debug level into a buffer.
func newProxy(t *testing.T, upstream *httptest.Server, cfg server.Config) *proxy {
	t.Helper()
	if upstream != nil {
		cfg.Upstream = upstream.URL + "/v1"
	}
	if cfg.Wire == "" {
		cfg.Wire = harness.WireChat
	}
	logs := &lockedBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv := server.New(cfg)
	ts := httptest.NewServer(srv.Handler())
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(func() {
		client.CloseIdleConnections()
		ts.Close()
		srv.CloseIdleConnections()
	})
	return &proxy{ts: ts, srv: srv, logs: logs, client: client}
}

func (p *proxy) post(t *testing.T, path, body string, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, p.ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// sseEvent is one event of a Responses stream.
type sseEvent struct {
	Name string
	Data map[string]any
	Raw  string
}

// readSSE reads a whole Responses SSE stream and checks the framing.
func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			raw := strings.TrimPrefix(line, "data: ")
			var data map[string]any
			if err := json.Unmarshal([]byte(raw), &data); err != nil {
				t.Fatalf("bad event JSON %q: %v", raw, err)
			}
			if data["type"] != name {
				t.Errorf("event name %q, type %v", name, data["type"])
			}
			if data["sequence_number"] != float64(len(out)) {
				t.Errorf("event %d (%s): sequence_number %v", len(out), name, data["sequence_number"])
			}
			out = append(out, sseEvent{Name: name, Data: data, Raw: raw})
		default:
			t.Errorf("unexpected SSE line %q", line)
		}
	}
	return out
}

func names(evs []sseEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Name)
	}
	return out
}

func count(evs []sseEvent, name string) int {
	n := 0
	for _, e := range evs {
		if e.Name == name {
			n++
		}
	}
	return n
}

// doneItems returns the items of the output_item.done events.
func doneItems(evs []sseEvent) []map[string]any {
	var out []map[string]any
	for _, e := range evs {
		if e.Name == "response.output_item.done" {
			out = append(out, e.Data["item"].(map[string]any))
		}
	}
	return out
}

// terminal returns the last event, which must be the only terminal one.
func terminal(t *testing.T, evs []sseEvent) sseEvent {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("empty stream")
	}
	n := count(evs, "response.completed") + count(evs, "response.failed") + count(evs, "response.incomplete")
	last := evs[len(evs)-1]
	if n != 1 || !strings.HasPrefix(last.Name, "response.") || (last.Name != "response.completed" && last.Name != "response.failed" && last.Name != "response.incomplete") {
		t.Fatalf("want exactly one terminal event, last; got %v", names(evs))
	}
	return last
}

// errorBody decodes an OpenAI-style error body.
func errorBody(t *testing.T, resp *http.Response) (msg, typ string) {
	t.Helper()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &body); err != nil || body.Error.Message == "" {
		t.Fatalf("not an OpenAI error body: %s (%v)", data, err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	return body.Error.Message, body.Error.Type
}

// recorder wraps a handler and keeps the bodies, paths and headers it saw.
type recorder struct {
	h       http.Handler
	mu      sync.Mutex
	bodies  []string
	paths   []string
	queries []string
	headers []http.Header
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	rec.bodies = append(rec.bodies, string(body))
	rec.paths = append(rec.paths, r.URL.Path)
	rec.queries = append(rec.queries, r.URL.RawQuery)
	rec.headers = append(rec.headers, r.Header.Clone())
	rec.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec.h.ServeHTTP(w, r)
}

func (rec *recorder) last(t *testing.T) (string, string, http.Header) {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.bodies) == 0 {
		t.Fatal("the upstream saw no request")
	}
	n := len(rec.bodies) - 1
	return rec.paths[n], rec.bodies[n], rec.headers[n]
}

// all returns the bodies, raw queries and headers of every request, in order.
func (rec *recorder) all() (bodies, queries []string, headers []http.Header) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.bodies), slices.Clone(rec.queries), slices.Clone(rec.headers)
}

func (rec *recorder) requests() int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return len(rec.bodies)
}

var _ = context.Background
