package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// chatAnswer is a chat completions stream of one short text answer.
const chatAnswer = "data: {\"id\":\"c1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n" +
	"data: {\"id\":\"c1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"

// Handler served by a plain httptest server (not Serve) counts its
// requests in flight, which Serve's shutdown waits on, and serves them.
func TestHandlerCountsInFlight(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		close(arrived)
		<-release
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, chatAnswer)
	}))
	defer up.Close()
	s := New(Config{Upstream: up.URL + "/v1", Logger: slog.New(slog.DiscardHandler)})
	defer s.CloseIdleConnections()
	front := httptest.NewServer(s.Handler())
	defer front.Close()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()

	type result struct {
		body string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := client.Post(front.URL+"/v1/responses", "application/json", strings.NewReader(`{"model":"m","input":"hello","stream":true}`))
		if err != nil {
			done <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		done <- result{string(b), err}
	}()
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the request never reached the upstream")
	}
	if n := s.inflight.Load(); n != 1 {
		t.Errorf("in flight while the upstream holds the request: %d, want 1", n)
	}
	close(release)
	res := <-done
	if res.err != nil || !strings.Contains(res.body, "event: response.completed") || !strings.Contains(res.body, `"hi"`) {
		t.Fatalf("answer: %v\n%s", res.err, res.body)
	}
	s.waitHandlers(5 * time.Second)
	if n := s.inflight.Load(); n != 0 {
		t.Errorf("in flight after the answer: %d, want 0", n)
	}
}

// A request arriving on a non-loopback address, while the proxy spends its
// own upstream key for any caller, is refused by the handler itself (Serve
// refuses such a listener); client keys, InsecureOpenRelay or a loopback
// address let it through.
func TestHandlerRefusesAnOpenRelay(t *testing.T) {
	public := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 8787}
	loopback := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8787}
	key := "client-key-0123456789abcdef"
	for _, tt := range []struct {
		name   string
		cfg    Config
		addr   net.Addr
		bearer string
		want   int
	}{
		{"open relay", Config{APIKey: "sk-x"}, public, "", http.StatusForbidden},
		{"loopback", Config{APIKey: "sk-x"}, loopback, "", http.StatusOK},
		{"client keys", Config{APIKey: "sk-x", ClientKeys: []string{key}}, public, key, http.StatusOK},
		{"allowed", Config{APIKey: "sk-x", InsecureOpenRelay: true}, public, "", http.StatusOK},
		{"no key of its own", Config{}, public, "", http.StatusOK},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Upstream = "http://127.0.0.1:1/v1"
			tt.cfg.Logger = slog.New(slog.DiscardHandler)
			s := New(tt.cfg)
			req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
			req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, tt.addr))
			if tt.bearer != "" {
				req.Header.Set("Authorization", "Bearer "+tt.bearer)
			}
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Fatalf("HTTP %d %s; want %d", rec.Code, rec.Body, tt.want)
			}
			if tt.want == http.StatusForbidden && !strings.Contains(rec.Body.String(), "not a loopback address") {
				t.Errorf("refusal body: %s", rec.Body)
			}
			if got := s.exposed.Load(); got != (tt.addr == public) {
				t.Errorf("exposed = %v after a request on %v", got, tt.addr)
			}
		})
	}
}

// A configuration that fails Check: New still returns a server, whose
// handler answers every proxied route HTTP 500 with Check's error and
// keeps /healthz.
func TestHandlerBadConfig(t *testing.T) {
	cfg := Config{Upstream: "ftp://nowhere", Logger: slog.New(slog.DiscardHandler)}
	want := cfg.Check()
	if want == nil {
		t.Fatal("the configuration passes Check")
	}
	h := New(cfg).Handler()
	for _, tt := range []struct{ method, path, body string }{
		{http.MethodPost, "/v1/responses", `{"model":"m","input":"hi"}`},
		{http.MethodPost, "/h/opencode/v1/responses", `{"model":"m","input":"hi"}`},
		{http.MethodPost, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`},
		{http.MethodPost, "/v1/messages", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`},
		{http.MethodGet, "/v1/models", ""},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body)))
		if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "upstream URL") {
			t.Errorf("%s %s: HTTP %d %s; want 500 with %q", tt.method, tt.path, rec.Code, rec.Body, want)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("GET /healthz: HTTP %d", rec.Code)
	}
}
