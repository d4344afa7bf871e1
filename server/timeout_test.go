package server_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/server"
)

// chunk is one chat completion chunk carrying text.
func chunk(text string) string {
	return `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"` + text + `"},"finish_reason":null}]}` + "\n\n"
}

// An upstream that never sends its response headers: the client gets HTTP
// 504 with an OpenAI-style error body, soon after the header timeout, and
// /metrics counts it.
func TestUpstreamHeaderTimeout(t *testing.T) {
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		<-r.Context().Done() // the proxy gives up and closes the connection
	}))
	p := newProxy(t, up, server.Config{UpstreamHeaderTimeout: 100 * time.Millisecond, UpstreamIdleTimeout: time.Minute})
	start := time.Now()
	resp := p.post(t, "/v1/responses", codexRequest(userMsg, false), nil)
	msg, typ := errorBody(t, resp)
	if resp.StatusCode != http.StatusGatewayTimeout || typ != "server_error" || !strings.Contains(msg, "no response headers within 100ms") {
		t.Errorf("%d %q %q", resp.StatusCode, typ, msg)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("answered after %s", d)
	}
	m := metricsText(t, p)
	for _, want := range []string{
		`harnessflow_upstream_timeouts_total{phase="headers",request="main"} 1`,
		`harnessflow_upstream_timeouts_total{phase="idle",request="main"} 0`,
		`harnessflow_streams_started_total 0`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q:\n%s", want, m)
		}
	}
}

// An upstream that stalls after three deltas: the client has the deltas,
// then response.failed saying the upstream went idle, never completed;
// /metrics counts the timeout and the failed stream.
func TestUpstreamIdleTimeout(t *testing.T) {
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, d := range []string{"one ", "two ", "three"} {
			io.WriteString(w, chunk(d))
		}
		http.NewResponseController(w).Flush()
		<-r.Context().Done()
	}))
	p := newProxy(t, up, server.Config{UpstreamIdleTimeout: 150 * time.Millisecond})
	start := time.Now()
	evs := readSSE(t, p.post(t, "/v1/responses", codexRequest(userMsg, false), nil).Body)
	last := terminal(t, evs)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("stream ended after %s", d)
	}
	if count(evs, "response.output_text.delta") != 3 || last.Name != "response.failed" {
		t.Fatalf("events %v", names(evs))
	}
	e := last.Data["response"].(map[string]any)["error"].(map[string]any)
	if e["code"] != "upstream_idle_timeout" || !strings.Contains(e["message"].(string), "sent nothing for 150ms") {
		t.Errorf("error %v", e)
	}
	m := metricsText(t, p)
	for _, want := range []string{
		`harnessflow_upstream_timeouts_total{phase="idle",request="main"} 1`,
		`harnessflow_streams_started_total 1`,
		`harnessflow_streams_ended_total{outcome="failed"} 1`,
		`harnessflow_stream_failures_total{kind="upstream_truncated"} 1`,
		`harnessflow_stream_events_total{type="failed"} 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q:\n%s", want, m)
		}
	}
}

// The idle timeout counts only the time the proxy waits for the upstream:
// a client that stops reading for longer than the timeout, while the
// proxy's writes to it are blocked, does not cut a fast upstream's stream.
func TestIdleTimeoutIgnoresSlowClient(t *testing.T) {
	const deltas = 1000
	delta := strings.Repeat("x", 1000)
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for range deltas {
			io.WriteString(w, chunk(delta))
		}
		io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	// Small socket buffers on both sides: ~1 MB of events do not fit, so
	// the proxy's writes block while the client sleeps.
	srv := server.New(server.Config{Upstream: up.URL + "/v1", UpstreamIdleTimeout: 100 * time.Millisecond})
	ts := httptest.NewUnstartedServer(srv.Handler())
	ts.Listener = smallBuffers{ts.Listener}
	ts.Start()
	defer ts.Close()
	defer srv.CloseIdleConnections()
	dialer := &net.Dialer{}
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(64 << 10)
		}
		return c, err
	}}}
	defer client.CloseIdleConnections()
	resp, err := client.Post(ts.URL+"/v1/responses", "application/json", strings.NewReader(codexRequest(userMsg, false)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, 1)
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	evs := readSSE(t, io.MultiReader(bytes.NewReader(first), bytes.NewReader(rest)))
	if last := terminal(t, evs); last.Name != "response.completed" || count(evs, "response.output_text.delta") != deltas {
		t.Fatalf("ended with %s after %d deltas", last.Raw[:min(len(last.Raw), 300)], count(evs, "response.output_text.delta"))
	}
	if n := srv.Metrics().Timeouts[[2]string{"idle", "main"}]; n != 0 {
		t.Errorf("%d idle timeouts counted", n)
	}
}

// smallBuffers is a listener whose connections have a 32 KiB send buffer.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(32 << 10)
	}
	return c, err
}

// A non-streaming upstream request gets its headers only with the whole
// answer: it waits up to the idle timeout when that is longer than the
// header timeout. A streaming one does not.
func TestHeaderTimeoutOfUnaryRequest(t *testing.T) {
	requireProbe(t)
	sc := newScriptedChat(func(int, string) string { return "Late but whole." })
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond) // thinking before the first byte
		sc.rec.ServeHTTP(w, r)
	}))
	p := newProxy(t, up, server.Config{UpstreamHeaderTimeout: 100 * time.Millisecond, UpstreamIdleTimeout: 2 * time.Second})
	evs := readSSE(t, p.post(t, probePath(), withInstructions(codexRequest(userMsg, false), wantUnary), nil).Body)
	if items := doneItems(evs); terminal(t, evs).Name != "response.completed" || len(items) != 1 || itemText(items[0]) != "Late but whole." {
		t.Errorf("unary: events %v", names(evs))
	}
	resp := p.post(t, probePath(), codexRequest(userMsg, false), nil)
	if msg, _ := errorBody(t, resp); resp.StatusCode != http.StatusGatewayTimeout {
		t.Errorf("streaming: %d %q", resp.StatusCode, msg)
	}
}

// The title request obeys the timeouts too: a title answer that stalls is
// given up on after the idle timeout (counted as a failed title request and
// an idle timeout of a title request), and the turn goes on.
func TestTitleRequestTimeouts(t *testing.T) {
	requireProbe(t)
	for _, c := range []struct{ name, phase string }{{"headers", "headers"}, {"idle", "idle"}} {
		t.Run(c.name, func(t *testing.T) {
			sc := newScriptedChat(func(int, string) string { return "The answer." })
			up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				if !bytes.Contains(body, []byte(probeTitle)) {
					r.Body = io.NopCloser(bytes.NewReader(body))
					sc.rec.ServeHTTP(w, r)
					return
				}
				if c.phase == "idle" {
					w.Header().Set("Content-Type", "text/event-stream")
					io.WriteString(w, chunk("A ti"))
					http.NewResponseController(w).Flush()
				}
				<-r.Context().Done()
			}))
			p := newProxy(t, up, server.Config{UpstreamHeaderTimeout: 100 * time.Millisecond, UpstreamIdleTimeout: 100 * time.Millisecond})
			evs := readSSE(t, p.post(t, probePath(), withInstructions(codexRequest(userMsg, false), wantTitle), nil).Body)
			if last := terminal(t, evs); last.Name != "response.completed" {
				t.Fatalf("ended with %s", last.Raw)
			}
			m := metricsText(t, p)
			for _, want := range []string{
				`harnessflow_upstream_timeouts_total{phase="` + c.phase + `",request="title"} 1`,
				`harnessflow_title_requests_total{outcome="failed"} 1`,
				`harnessflow_streams_ended_total{outcome="completed"} 1`,
			} {
				if !strings.Contains(m, want) {
					t.Errorf("metrics lack %q:\n%s", want, m)
				}
			}
			if !strings.Contains(p.logs.String(), "timeout") {
				t.Errorf("the title failure's log does not say timeout:\n%s", p.logs.String())
			}
		})
	}
}
