package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/scripted"
	"github.com/harnessflow/harnessflow/server"
)

// switchStore is an in-memory store that can be taken down: while down,
// every call fails with errStoreDown (not a miss).
type switchStore struct {
	mem  *server.MemoryStore
	down atomic.Bool
	puts atomic.Int64 // Put calls
	gets atomic.Int64 // Get and GetItem calls
}

var errStoreDown = errors.New("test store: connection refused")

func newSwitchStore() *switchStore {
	return &switchStore{mem: server.NewMemoryStore(server.StoreLimits{}, nil)}
}

func (s *switchStore) Put(ctx context.Context, scope string, r *server.StoredResponse) error {
	s.puts.Add(1)
	if s.down.Load() {
		return errStoreDown
	}
	return s.mem.Put(ctx, scope, r)
}

func (s *switchStore) Get(ctx context.Context, scope, id string) (*server.StoredResponse, error) {
	s.gets.Add(1)
	if s.down.Load() {
		return nil, errStoreDown
	}
	return s.mem.Get(ctx, scope, id)
}

func (s *switchStore) GetItem(ctx context.Context, scope, id string) (protocol.ResponseItem, error) {
	s.gets.Add(1)
	if s.down.Load() {
		return nil, errStoreDown
	}
	return s.mem.GetItem(ctx, scope, id)
}

// streamEvents posts a streaming request and returns the HTTP response and,
// for HTTP 200, its events.
func streamEvents(t *testing.T, p *proxy, body string) (*http.Response, []sseEvent) {
	t.Helper()
	resp := p.post(t, "/v1/responses", body, bearerA)
	if resp.StatusCode != http.StatusOK {
		return resp, nil
	}
	return resp, readSSE(t, resp.Body)
}

// errorOf decodes an error body: its code and message.
func errorOf(t *testing.T, resp *http.Response) (code, msg string) {
	t.Helper()
	data, _ := io.ReadAll(resp.Body)
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		t.Fatalf("HTTP %d: not an error body: %s", resp.StatusCode, data)
	}
	return body.Error.Code, body.Error.Message
}

// A response that finishes while the store is down ends with a retryable
// response.failed (store_unavailable), never with a completed response
// that cannot be continued; the next request that would be kept gets HTTP
// 503 at once (the upstream is not asked) unless it set store false; when
// the store is back the proxy serves again, and a reference to the failed
// response says it was never stored and why.
func TestStoreOutageStream(t *testing.T) {
	rec := &recorder{h: scripted.New(nil)}
	store := newSwitchStore()
	p := newProxy(t, newUpstream(t, rec), server.Config{Store: store})

	_, evs := streamEvents(t, p, `{"model":"m","input":"before","stream":true}`)
	if last := terminal(t, evs); last.Name != "response.completed" || last.Data["response"].(map[string]any)["store"] != true {
		t.Fatalf("before the outage: %s", last.Raw)
	}

	store.down.Store(true)
	_, evs = streamEvents(t, p, `{"model":"m","input":"during","stream":true}`)
	last := terminal(t, evs)
	resp := last.Data["response"].(map[string]any)
	e, _ := resp["error"].(map[string]any)
	if last.Name != "response.failed" || e["code"] != "store_unavailable" || resp["store"] != false ||
		!strings.Contains(e["message"].(string), errStoreDown.Error()) || !strings.Contains(e["message"].(string), "try again in 1000ms") {
		t.Fatalf("a response finishing in the outage: %s", last.Raw)
	}
	if created := evs[0].Data["response"].(map[string]any); created["store"] != true {
		t.Errorf("response.created says store %v", created["store"])
	}
	failedID := resp["id"].(string)
	failedItem := doneItems(evs)[0]["id"].(string)

	// Known down: refused before the upstream is asked.
	upstreamBefore := rec.requests()
	for _, body := range []string{`{"model":"m","input":"new","stream":true}`, `{"model":"m","input":"new"}`} {
		r := p.post(t, "/v1/responses", body, bearerA)
		code, msg := errorOf(t, r)
		if r.StatusCode != http.StatusServiceUnavailable || code != "store_unavailable" || r.Header.Get("Retry-After") != "1" ||
			!strings.Contains(msg, `"store": false`) || !strings.Contains(msg, errStoreDown.Error()) {
			t.Errorf("%s during a known outage: HTTP %d Retry-After %q %s %q", body, r.StatusCode, r.Header.Get("Retry-After"), code, msg)
		}
	}
	if n := rec.requests(); n != upstreamBefore {
		t.Errorf("the upstream was asked %d times for requests refused up front", n-upstreamBefore)
	}
	if m := metricsText(t, p); !strings.Contains(m, "harnessflow_store_refused_total 2\n") || !strings.Contains(m, "harnessflow_store_up 0\n") {
		t.Errorf("metrics during the outage:\n%s", m)
	}
	// store false: served.
	_, evs = streamEvents(t, p, `{"model":"m","input":"stateless","stream":true,"store":false}`)
	if last := terminal(t, evs); last.Name != "response.completed" {
		t.Errorf("store false during the outage: %s", last.Raw)
	}
	// A continuation: the lookup fails, 503.
	r := p.post(t, "/v1/responses", `{"model":"m","input":"x","stream":true,"previous_response_id":"`+failedID+`"}`, bearerA)
	if code, _ := errorOf(t, r); r.StatusCode != http.StatusServiceUnavailable || code != "store_unavailable" || r.Header.Get("Retry-After") == "" {
		t.Errorf("previous_response_id during the outage: HTTP %d %s", r.StatusCode, code)
	}

	// Back: the first request after the probe interval probes and is served.
	store.down.Store(false)
	deadline := time.Now().Add(5 * time.Second)
	var id string
	for id == "" && time.Now().Before(deadline) {
		r, evs := streamEvents(t, p, `{"model":"m","input":"after","stream":true}`)
		if r.StatusCode == http.StatusOK {
			last := terminal(t, evs)
			if last.Name != "response.completed" {
				t.Fatalf("after the outage: %s", last.Raw)
			}
			id = last.Data["response"].(map[string]any)["id"].(string)
			break
		}
		r.Body.Close()
		time.Sleep(20 * time.Millisecond)
	}
	if id == "" {
		t.Fatal("still refused 5 s after the store came back")
	}
	_, evs = streamEvents(t, p, `{"model":"m","input":"chained","stream":true,"previous_response_id":"`+id+`"}`)
	if last := terminal(t, evs); last.Name != "response.completed" {
		t.Errorf("a chain after the outage: %s", last.Raw)
	}

	// The failed response was never stored, and the 400 says why.
	for _, body := range []string{
		`{"model":"m","input":"x","previous_response_id":"` + failedID + `"}`,
		`{"model":"m","input":[{"type":"item_reference","id":"` + failedItem + `"}]}`,
	} {
		r := p.post(t, "/v1/responses", body, bearerA)
		code, msg := errorOf(t, r)
		if r.StatusCode != http.StatusBadRequest || !strings.Contains(msg, "never stored") || !strings.Contains(msg, "unavailable") ||
			!strings.Contains(msg, failedID) || !strings.Contains(msg, "store_unavailable") || strings.Contains(msg, "expired") {
			t.Errorf("%s: HTTP %d %s %q", body, r.StatusCode, code, msg)
		}
	}
	// Another key does not learn of it.
	r = p.post(t, "/v1/responses", `{"model":"m","input":"x","previous_response_id":"`+failedID+`"}`, map[string]string{"Authorization": "Bearer sk-client-b"})
	if _, msg := errorOf(t, r); r.StatusCode != http.StatusBadRequest || strings.Contains(msg, "never stored") || !strings.Contains(msg, "unknown") {
		t.Errorf("another key: HTTP %d %q", r.StatusCode, msg)
	}

	m := metricsText(t, p)
	for _, want := range []string{
		`harnessflow_store_unstored_total{reason="store_unavailable"} 1`,
		`harnessflow_store_unstored_total{reason="refused"} 0`,
		`harnessflow_store_puts_total{result="error"} 1`,
		`harnessflow_store_up 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s:\n%s", want, m)
		}
	}
}

// A non-streaming client whose response could not be kept gets HTTP 503
// store_unavailable with Retry-After, not a 200 it cannot continue.
func TestStoreOutageUnary(t *testing.T) {
	store := newSwitchStore()
	p := newProxy(t, newUpstream(t, scripted.New(nil)), server.Config{Store: store})
	store.down.Store(true)
	r := p.post(t, "/v1/responses", `{"model":"m","input":"hi"}`, bearerA)
	code, msg := errorOf(t, r)
	if r.StatusCode != http.StatusServiceUnavailable || code != "store_unavailable" || r.Header.Get("Retry-After") != "1" ||
		!strings.Contains(msg, errStoreDown.Error()) {
		t.Errorf("HTTP %d Retry-After %q %s %q", r.StatusCode, r.Header.Get("Retry-After"), code, msg)
	}
	if m := metricsText(t, p); !strings.Contains(m, `harnessflow_store_up 0`) || !strings.Contains(m, `harnessflow_store_unstored_total{reason="store_unavailable"} 1`) {
		t.Errorf("metrics:\n%s", m)
	}
}

// While the store is down, requests that would be kept probe it at most
// once per interval, not once each.
func TestStoreOutageProbes(t *testing.T) {
	store := newSwitchStore()
	p := newProxy(t, newUpstream(t, scripted.New(nil)), server.Config{Store: store})
	store.down.Store(true)
	r := p.post(t, "/v1/responses", `{"model":"m","input":"hi"}`, bearerA)
	r.Body.Close()
	gets := store.gets.Load()
	for range 20 {
		r := p.post(t, "/v1/responses", `{"model":"m","input":"hi","stream":true}`, bearerA)
		if r.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("HTTP %d during the outage", r.StatusCode)
		}
		r.Body.Close()
	}
	// 20 requests in well under a second: at most a few probes (one per
	// 250 ms), however slow the machine.
	if n := store.gets.Load() - gets; n > 5 {
		t.Errorf("%d probes for 20 refused requests", n)
	}
}

// A response the store refuses (over its byte limit) completes with store
// false, and a later reference says the store refused it.
func TestStoreRefusedIsExplained(t *testing.T) {
	p := newProxy(t, newUpstream(t, scripted.New(nil)), server.Config{StoreMaxBytes: 64})
	_, evs := streamEvents(t, p, `{"model":"m","input":"hello","stream":true}`)
	last := terminal(t, evs)
	resp := last.Data["response"].(map[string]any)
	if last.Name != "response.completed" || resp["store"] != false {
		t.Fatalf("%s", last.Raw)
	}
	r := p.post(t, "/v1/responses", `{"model":"m","input":"x","previous_response_id":"`+resp["id"].(string)+`"}`, bearerA)
	if _, msg := errorOf(t, r); r.StatusCode != http.StatusBadRequest || !strings.Contains(msg, "never stored") || !strings.Contains(msg, "refused") ||
		!strings.Contains(msg, "over the store's 64") {
		t.Errorf("HTTP %d %q", r.StatusCode, msg)
	}
	if m := metricsText(t, p); !strings.Contains(m, `harnessflow_store_unstored_total{reason="refused"} 1`) || !strings.Contains(m, `harnessflow_store_puts_total{result="refused"} 1`) {
		t.Errorf("metrics:\n%s", m)
	}
}
