package main

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/server"
)

// healthcheck runs the command with args and returns its status and output.
func healthcheck(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = runHealthcheck(context.Background(), args, nil, &out, &errb)
	return code, out.String(), errb.String()
}

// The probe against a real serve handler: 200 on /healthz is exit 0, and
// a path serve does not route is exit 1 with the status named.
func TestHealthcheckAgainstServe(t *testing.T) {
	s := server.New(server.Config{Upstream: "http://127.0.0.1:1/v1", Logger: slog.New(slog.DiscardHandler)})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	code, out, errOut := healthcheck(t, "--url", srv.URL+"/healthz")
	if code != exitOK || !strings.Contains(out, "200 OK") || errOut != "" {
		t.Errorf("/healthz: exit %d, stdout %q, stderr %q; want 0 and a 200 OK line", code, out, errOut)
	}
	code, out, errOut = healthcheck(t, "--url", srv.URL+"/nothing-here")
	if code != exitError || out != "" || !strings.Contains(errOut, "status 404, want 200") {
		t.Errorf("unrouted path: exit %d, stdout %q, stderr %q; want 1 and the 404 named", code, out, errOut)
	}
}

func TestHealthcheckUnhealthy(t *testing.T) {
	var redirected atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		redirected.Add(1)
	}))
	defer target.Close()
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/fail", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "draining", http.StatusServiceUnavailable)
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/healthz", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/slow-headers", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/slow-body", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer close(release) // before srv.Close: the stalled handlers return

	// A port nothing listens on: bind one, note it, close it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + ln.Addr().String() + "/healthz"
	ln.Close()

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"status", []string{"--url", srv.URL + "/fail"}, `status 503, want 200 (body starts "draining\n")`},
		{"redirect", []string{"--url", srv.URL + "/moved"}, "status 307, want 200 (a redirect, not followed)"},
		{"refused", []string{"--url", closedURL}, "connection refused"},
		{"slow headers", []string{"--url", srv.URL + "/slow-headers", "--timeout", "200ms"}, "no answer within 200ms"},
		{"slow body", []string{"--url", srv.URL + "/slow-body", "--timeout", "200ms"}, "status 200, then no body within 200ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, out, errOut := healthcheck(t, tc.args...)
			if code != exitError || out != "" || !strings.HasPrefix(errOut, "harnessflow healthcheck: ") || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 1 and stderr naming %q", code, out, errOut, tc.want)
			}
			if strings.Count(errOut, "\n") != 1 {
				t.Errorf("stderr is %d lines, want one: %q", strings.Count(errOut, "\n"), errOut)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %s: the timeout did not apply", d)
			}
		})
	}
	if n := redirected.Load(); n != 0 {
		t.Errorf("the redirect target got %d requests, want none", n)
	}
}

func TestHealthcheckUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--url", "ftp://127.0.0.1/healthz"}, `--url: want an http:// or https:// URL with a host, got "ftp://127.0.0.1/healthz"`},
		{[]string{"--url", "127.0.0.1:8787/healthz"}, "--url: want an http:// or https:// URL with a host"},
		{[]string{"--url", "http:///healthz"}, "--url: want an http:// or https:// URL with a host"},
		{[]string{"--timeout", "0s"}, "--timeout: want more than 0, got 0s"},
		{[]string{"--timeout", "soon"}, `invalid value "soon" for flag --timeout`},
		{[]string{"extra"}, `unexpected argument "extra" (this command takes none)`},
	} {
		code, out, errOut := healthcheck(t, tc.args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, healthcheckSynopsis) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2, the problem %q and the synopsis", tc.args, code, out, errOut, tc.want)
		}
	}
	if code, _, errOut := healthcheck(t, "--help"); code != exitOK || !strings.Contains(errOut, "-url URL") || !strings.Contains(errOut, "-timeout D") {
		t.Errorf("--help: exit %d, stderr %q; want 0 and both flags", code, errOut)
	}
}
