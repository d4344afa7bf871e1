package server_test

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/harnessflow/harnessflow/server"
)

// TestUpstreamConnectionsAreReused checks that the server's own upstream
// client keeps the connections of the streams that ended for the next
// ones: two batches of concurrent streams, one after the other, dial the
// upstream once per stream of a batch, not once per stream (Go's default
// transport keeps two idle connections per host).
func TestUpstreamConnectionsAreReused(t *testing.T) {
	const streams = 8
	var dials atomic.Int64
	var mu sync.Mutex
	arrived := 0
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Hold every request of a batch until all arrived, so that the
		// batch needs as many connections as it has streams.
		mu.Lock()
		arrived++
		if arrived%streams == 0 {
			close(release)
			release = make(chan struct{})
			mu.Unlock()
		} else {
			wait := release
			mu.Unlock()
			<-wait
		}
		burstChat(w, r)
	})
	up := httptest.NewUnstartedServer(h)
	up.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dials.Add(1)
		}
	}
	up.Start()
	t.Cleanup(up.Close)

	srv := server.New(server.Config{Upstream: up.URL + "/v1", Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(srv.Handler())
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: streams}}
	t.Cleanup(func() {
		client.CloseIdleConnections()
		ts.Close()
		srv.CloseIdleConnections()
	})
	for batch := range 2 {
		var wg sync.WaitGroup
		errs := make(chan string, streams)
		for range streams {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := client.Post(ts.URL+"/v1/responses", "application/json",
					strings.NewReader(`{"model":"m","input":"hi","stream":true,"store":false}`))
				if err != nil {
					errs <- err.Error()
					return
				}
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				if !strings.Contains(string(body), "event: response.completed") {
					errs <- "stream without response.completed: " + string(body)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Errorf("batch %d: %s", batch, e)
		}
	}
	if got := dials.Load(); got != streams {
		t.Errorf("the upstream saw %d connections for 2 batches of %d concurrent streams, want %d (one per stream of a batch)", got, streams, streams)
	}
}

// A request far bigger than the transport's write buffer reaches the
// upstream whole, with a Content-Length that matches it.
func TestLargeRequestBodyReachesUpstream(t *testing.T) {
	text := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	got := make(chan string, 1)
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil || int64(len(body)) != r.ContentLength {
			got <- "bad body"
		} else {
			got <- string(body)
		}
		burstChat(w, r)
	}))
	p := newProxy(t, up, server.Config{})
	resp := p.post(t, "/v1/responses", `{"model":"m","input":"`+text+`","stream":true,"store":false}`, nil)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	body := <-got
	if !strings.Contains(body, `"content":"`+text+`"`) {
		t.Fatalf("the upstream got %d bytes without the whole user text", len(body))
	}
}

// Node counts are always on /metrics; node time only with StageTiming.
func TestStageTimingMetrics(t *testing.T) {
	for _, timed := range []bool{false, true} {
		up := newUpstream(t, http.HandlerFunc(burstChat))
		p := newProxy(t, up, server.Config{StageTiming: timed})
		resp := p.post(t, "/v1/responses", `{"model":"m","input":"hi","stream":true,"store":false}`, nil)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		text := metricsText(t, p)
		if !strings.Contains(text, `harnessflow_node_inputs_total{graph="response.native.chat",node="chat.decode"}`) {
			t.Fatalf("timed=%v: no node counts:\n%s", timed, text)
		}
		if got := strings.Contains(text, "harnessflow_node_seconds_total{"); got != timed {
			t.Errorf("timed=%v: node seconds on /metrics: %v", timed, got)
		}
	}
}
