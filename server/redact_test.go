package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/server"
)

func TestRedactURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"},
		{"https://user:s3cret@api.example.com/v1", "https://user:xxxxx@api.example.com/v1"},
		{"https://user@api.example.com/v1", "https://user@api.example.com/v1"},
		{"https://x.example.com/v1beta/openai?key=AIzaSECRET&alt=sse", "https://x.example.com/v1beta/openai?alt=sse&key=xxxxx"},
		{"https://x.example.com/v1?API_KEY=k1&x_access_token=k2", "https://x.example.com/v1?API_KEY=xxxxx&x_access_token=xxxxx"},
		{"http://u:p4ss@[::1:bad/v1?key=k", "http://xxxxx@[::1:bad/v1"}, // does not parse
	} {
		if got := server.RedactURL(c.in); got != c.want {
			t.Errorf("RedactURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// Config errors about the URL redact it too.
	err := server.Config{Upstream: "ftp://user:s3cret@host/v1"}.Check()
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Check: %v", err)
	}
	err = server.Config{Upstream: "http://user:s3cret@[::1:bad/v1"}.Check()
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Check: %v", err)
	}
}

// An upstream error that quotes the proxy's own key reaches the client
// with the key redacted.
func TestUpstreamErrorRedactsKey(t *testing.T) {
	const key = "sk-operator-0123456789"
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided: `+r.Header.Get("Authorization")[len("Bearer "):]+`.","type":"invalid_request_error"}}`)
	}))
	p := newProxy(t, up, server.Config{APIKey: key})
	resp := p.post(t, "/v1/responses", codexRequest(userMsg, false), nil)
	msg, _ := errorBody(t, resp)
	if resp.StatusCode != 401 || strings.Contains(msg, key) || !strings.Contains(msg, "Incorrect API key provided: xxxxx.") {
		t.Errorf("%d %q", resp.StatusCode, msg)
	}
	if strings.Contains(p.logs.String(), key) {
		t.Errorf("logs hold the key:\n%s", p.logs.String())
	}
}
