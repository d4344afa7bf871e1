package server_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/server"
)

// heldUpstream streams one delta per request, then waits for release (or
// the request's end) before it finishes the stream; arrived gets one value
// per request.
type heldUpstream struct {
	release chan struct{}
	arrived chan struct{}
}

func newHeldUpstream() *heldUpstream {
	return &heldUpstream{release: make(chan struct{}), arrived: make(chan struct{}, 100)}
}

func (u *heldUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, chunk("first "))
	http.NewResponseController(w).Flush()
	u.arrived <- struct{}{}
	select {
	case <-u.release:
	case <-r.Context().Done():
		return
	}
	io.WriteString(w, chunk("last")+`data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
}

// serving is a Server running Serve on a loopback listener.
type serving struct {
	srv    *server.Server
	addr   string
	cancel context.CancelFunc
	done   chan error
	logs   *lockedBuffer
}

func startServing(t *testing.T, cfg server.Config) *serving {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	s := &serving{srv: server.New(cfg), addr: ln.Addr().String(), done: make(chan error, 1), logs: logs}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() { s.done <- s.srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		s.srv.Stop()
		cancel()
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return")
		}
	})
	return s
}

// openStreams starts n streams and returns, once each has its first
// event, the channel their whole bodies arrive on.
func openStreams(t *testing.T, s *serving, up *heldUpstream, n int) <-chan string {
	t.Helper()
	bodies := make(chan string, n)
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	var started sync.WaitGroup
	for range n {
		started.Add(1)
		go func() {
			resp, err := client.Post("http://"+s.addr+"/v1/responses", "application/json", strings.NewReader(codexRequest(userMsg, false)))
			if err != nil {
				started.Done()
				bodies <- "error: " + err.Error()
				return
			}
			defer resp.Body.Close()
			first := make([]byte, 1)
			_, err = io.ReadFull(resp.Body, first)
			started.Done()
			rest, _ := io.ReadAll(resp.Body)
			if err != nil {
				bodies <- "error: " + err.Error()
				return
			}
			bodies <- string(first) + string(rest)
		}()
	}
	started.Wait()
	for range n {
		<-up.arrived
	}
	return bodies
}

// terminalOf returns the terminal event name of a raw stream ("" if none)
// and the error code of a response.failed.
func terminalOf(body string) (string, string) {
	switch {
	case strings.Contains(body, "event: response.completed"):
		return "response.completed", ""
	case strings.Contains(body, "event: response.failed"):
		code := ""
		if i := strings.Index(body, `"error":{"code":"`); i >= 0 {
			code = body[i+len(`"error":{"code":"`):]
			code = code[:strings.IndexByte(code, '"')]
		}
		return "response.failed", code
	}
	return "", ""
}

// A shutdown stops accepting connections at once and lets the streams in
// flight finish: ten streams held by the upstream all complete after the
// shutdown began, and Serve returns nil.
func TestShutdownLetsStreamsFinish(t *testing.T) {
	up := newHeldUpstream()
	s := startServing(t, server.Config{Upstream: newUpstream(t, up).URL + "/v1", ShutdownGrace: 5 * time.Second})
	bodies := openStreams(t, s, up, 10)
	s.cancel()
	deadline := time.Now().Add(2 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", s.addr, time.Second)
		if err != nil {
			break // no longer accepting
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("still accepting connections after the shutdown began")
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(up.release)
	for range 10 {
		if body := <-bodies; !strings.HasSuffix(strings.TrimSpace(body), "}") {
			t.Errorf("stream cut: %q", body)
		} else if name, _ := terminalOf(body); name != "response.completed" {
			t.Errorf("ended with %q:\n%s", name, body)
		}
	}
	if err := <-s.done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	s.done <- nil // for the cleanup
	if !strings.Contains(s.logs.String(), "in_flight=10") {
		t.Errorf("no shutdown log with the streams in flight:\n%s", s.logs.String())
	}
}

// Streams that do not finish within the grace period end with
// response.failed (code server_shutdown), are counted with outcome
// shutdown, and Serve returns soon after the grace period.
func TestShutdownGraceOver(t *testing.T) {
	up := newHeldUpstream()
	defer close(up.release)
	s := startServing(t, server.Config{Upstream: newUpstream(t, up).URL + "/v1", ShutdownGrace: 200 * time.Millisecond})
	bodies := openStreams(t, s, up, 10)
	start := time.Now()
	s.cancel()
	for range 10 {
		body := <-bodies
		if name, code := terminalOf(body); name != "response.failed" || code != "server_shutdown" {
			t.Errorf("ended with %q %q:\n%s", name, code, body)
		}
	}
	if err := <-s.done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	s.done <- nil
	if d := time.Since(start); d < 200*time.Millisecond || d > 3*time.Second {
		t.Errorf("Serve returned after %s", d)
	}
	snap := s.srv.Metrics()
	if snap.Started != 10 || snap.Ended["shutdown"] != 10 || snap.Failures["upstream_truncated"] != 10 {
		t.Errorf("metrics: started %d, ended %v, failures %v", snap.Started, snap.Ended, snap.Failures)
	}
}

// Stop during the grace period (the second signal) ends the streams at
// once.
func TestShutdownStopAtOnce(t *testing.T) {
	up := newHeldUpstream()
	defer close(up.release)
	s := startServing(t, server.Config{Upstream: newUpstream(t, up).URL + "/v1", ShutdownGrace: time.Minute})
	bodies := openStreams(t, s, up, 3)
	s.cancel()
	time.Sleep(50 * time.Millisecond) // draining
	start := time.Now()
	s.srv.Stop()
	for range 3 {
		if name, code := terminalOf(<-bodies); name != "response.failed" || code != "server_shutdown" {
			t.Errorf("ended with %q %q", name, code)
		}
	}
	if err := <-s.done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	s.done <- nil
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("stopped after %s", d)
	}
}
