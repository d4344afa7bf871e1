package server_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/scripted"
	"github.com/harnessflow/harnessflow/server"
)

const (
	clientKeyA = "hf-client-key-aaaaaaaaaaaaaaaa"
	clientKeyB = "hf-client-key-bbbbbbbbbbbbbbbb"
)

// Client keys: a request without a key, or with a wrong one (a prefix, a
// longer string, another scheme), gets HTTP 401 with an OpenAI-style error
// body and never reaches the upstream; an accepted key passes, and is not
// sent upstream (the proxy's own key is). Neither key is logged. /healthz
// stays open; /metrics wants a key too (its counters describe the traffic).
func TestClientKeys(t *testing.T) {
	rec := &recorder{h: scripted.New(nil)}
	up := newUpstream(t, rec)
	p := newProxy(t, up, server.Config{ClientKeys: []string{clientKeyA, clientKeyB}, APIKey: "sk-upstream-secret"})
	for _, c := range []struct {
		name, auth string
		status     int
		msg        string
	}{
		{"missing", "", 401, "missing API key"},
		{"empty bearer", "Bearer ", 401, "missing API key"},
		{"basic", "Basic " + clientKeyA, 401, "missing API key"},
		{"wrong", "Bearer hf-client-key-cccccccccccccccc", 401, "not one this proxy accepts"},
		{"prefix", "Bearer " + clientKeyA[:len(clientKeyA)-1], 401, "not one this proxy accepts"},
		{"longer", "Bearer " + clientKeyA + "a", 401, "not one this proxy accepts"},
		{"right A", "Bearer " + clientKeyA, 200, ""},
		{"right B, lower-case scheme", "bearer " + clientKeyB, 200, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := rec.requests()
			hdr := map[string]string{}
			if c.auth != "" {
				hdr["Authorization"] = c.auth
			}
			resp := p.post(t, "/v1/responses", codexRequest(userMsg, false), hdr)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, c.status)
			}
			if c.status == 401 {
				msg, typ := errorBody(t, resp)
				if !strings.Contains(msg, c.msg) || typ != "invalid_request_error" || resp.Header.Get("WWW-Authenticate") == "" {
					t.Errorf("%q %q %v", msg, typ, resp.Header)
				}
				if rec.requests() != before {
					t.Errorf("a refused request reached the upstream")
				}
				return
			}
			if last := terminal(t, readSSE(t, resp.Body)); last.Name != "response.completed" {
				t.Errorf("ended with %s", last.Raw)
			}
			_, _, h := rec.last(t)
			if got := h.Get("Authorization"); got != "Bearer sk-upstream-secret" {
				t.Errorf("upstream Authorization %q", got)
			}
		})
	}
	// The harness routes are guarded too.
	if resp := p.post(t, "/h/opencode/v1/responses", codexRequest(userMsg, false), nil); resp.StatusCode != 401 {
		t.Errorf("harness route without a key: %d", resp.StatusCode)
	}
	get := func(path, key string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, p.ts.URL+path, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := p.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, c := range []struct {
		path, key string
		want      int
	}{{"/healthz", "", 200}, {"/metrics", "", 401}, {"/metrics", clientKeyA[:20], 401}, {"/metrics", clientKeyB, 200}} {
		if status, _ := get(c.path, c.key); status != c.want {
			t.Errorf("GET %s with key %q: %d, want %d", c.path, c.key, status, c.want)
		}
	}
	_, m := get("/metrics", clientKeyA)
	for _, want := range []string{`harnessflow_client_auth_failures_total{reason="missing"} 5`, `harnessflow_client_auth_failures_total{reason="invalid"} 4`} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q:\n%s", want, m)
		}
	}
	logs := p.logs.String()
	if strings.Contains(logs, "hf-client-key") || strings.Contains(logs, "sk-upstream") {
		t.Errorf("logs hold a key:\n%s", logs)
	}
	if !strings.Contains(logs, "client key missing") || !strings.Contains(logs, "client key invalid") {
		t.Errorf("refusals not logged:\n%s", logs)
	}
}

// With client keys and no key of its own, the proxy sends the upstream no
// Authorization: the client's key is the proxy's credential.
func TestClientKeyNotPassedUpstream(t *testing.T) {
	rec := &recorder{h: scripted.New(nil)}
	p := newProxy(t, newUpstream(t, rec), server.Config{ClientKeys: []string{clientKeyA}})
	resp := p.post(t, "/v1/responses", codexRequest(userMsg, false), map[string]string{"Authorization": "Bearer " + clientKeyA, "x-api-key": clientKeyA})
	if terminal(t, readSSE(t, resp.Body)).Name != "response.completed" {
		t.Fatal("not completed")
	}
	_, _, h := rec.last(t)
	if h.Get("Authorization") != "" || h.Get("x-api-key") != "" {
		t.Errorf("client key sent upstream: %v", h)
	}
}

func TestParseClientKeys(t *testing.T) {
	keys, err := server.ParseClientKeys("# team keys\n" + clientKeyA + " , " + clientKeyB + "\n\n  hf-client-key-cccccccccccccccc  \n")
	if err != nil || len(keys) != 3 || keys[0] != clientKeyA || keys[1] != clientKeyB || keys[2] != "hf-client-key-cccccccccccccccc" {
		t.Errorf("%q %v", keys, err)
	}
	for _, bad := range []string{"", " ,\n, ", "# only a comment\n", clientKeyA + ",short-key"} {
		if _, err := server.ParseClientKeys(bad); err == nil {
			t.Errorf("%q: no error", bad)
		} else if strings.Contains(err.Error(), "short-key") {
			t.Errorf("the error quotes a key: %v", err)
		}
	}
	if err := (server.Config{Upstream: "http://127.0.0.1:1", ClientKeys: []string{"short"}}).Check(); err == nil || strings.Contains(err.Error(), "short\"") {
		t.Errorf("Check: %v", err)
	}
}

// Serve refuses a non-loopback listener while it holds an upstream key and
// accepts any caller; client keys or InsecureOpenRelay allow it, and so
// does a loopback listener or no upstream key.
func TestOpenRelayRefused(t *testing.T) {
	public := publicAddr(t)
	loopback := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8787}
	for _, c := range []struct {
		name   string
		cfg    server.Config
		addr   net.Addr
		refuse bool
	}{
		{"open relay", server.Config{APIKey: "sk-x"}, public, true},
		{"all interfaces v6", server.Config{APIKey: "sk-x"}, &net.TCPAddr{IP: net.IPv6unspecified, Port: 1}, true},
		{"client keys", server.Config{APIKey: "sk-x", ClientKeys: []string{clientKeyA}}, public, false},
		{"explicitly allowed", server.Config{APIKey: "sk-x", InsecureOpenRelay: true}, public, false},
		{"loopback", server.Config{APIKey: "sk-x"}, loopback, false},
		{"callers bring their keys", server.Config{}, public, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.Upstream = "http://127.0.0.1:1/v1"
			err := c.cfg.CheckAddr(c.addr)
			if _, ok := errors.AsType[*server.OpenRelayError](err); ok != c.refuse {
				t.Fatalf("CheckAddr(%s): %v", c.addr, err)
			}
			if c.refuse && strings.Contains(err.Error(), "sk-x") {
				t.Errorf("the error quotes the key: %v", err)
			}
		})
	}
	// Serve itself refuses such a listener.
	ln := &fakeListener{addr: public, closed: make(chan struct{})}
	err := server.New(server.Config{Upstream: "http://127.0.0.1:1/v1", APIKey: "sk-x", Logger: slog.New(slog.DiscardHandler)}).Serve(context.Background(), ln)
	if _, ok := errors.AsType[*server.OpenRelayError](err); !ok {
		t.Fatalf("Serve: %v", err)
	}
	select {
	case <-ln.closed:
	default:
		t.Error("the listener was not closed")
	}
}

// publicAddr is a non-loopback TCP address (nothing listens on it).
func publicAddr(t *testing.T) net.Addr {
	t.Helper()
	return &net.TCPAddr{IP: net.IPv4(192, 0, 2, 10), Port: 8787} // TEST-NET-1
}

// fakeListener is a listener on addr that accepts nothing.
type fakeListener struct {
	addr   net.Addr
	closed chan struct{}
}

func (l *fakeListener) Accept() (net.Conn, error) { <-l.closed; return nil, net.ErrClosed }
func (l *fakeListener) Close() error {
	select {
	case <-l.closed:
	default:
		close(l.closed)
	}
	return nil
}
func (l *fakeListener) Addr() net.Addr { return l.addr }
