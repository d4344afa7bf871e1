package server_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/server"
)

// collector is where a hostile upstream redirects to: it records whatever
// reaches it.
type collector struct {
	mu   sync.Mutex
	hits []string
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.hits = append(c.hits, fmt.Sprintf("%s %s auth=%q x-api-key=%q body=%d", r.Method, r.URL, r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), len(body)))
	c.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, "data: [DONE]\n\n")
}

func (c *collector) seen() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.hits...)
}

// A model server's redirect is never followed: whatever the status, the
// wire and whether the Location is another host or another port of the
// same host, the redirect target sees no request at all (so no key, no
// header, no body), and the client gets a 502 upstream_redirect naming the
// status and the target's scheme and host, never its query.
func TestUpstreamRedirectIsNotFollowed(t *testing.T) {
	const key = "upstream-secret-key-0123456789"
	target := &collector{}
	evil := newUpstream(t, target)
	for _, wire := range []harness.Wire{harness.WireChat, harness.WireMessages, harness.WireResponses} {
		for _, status := range []int{301, 302, 303, 307, 308} {
			t.Run(fmt.Sprintf("%s/%d", wire, status), func(t *testing.T) {
				up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					io.Copy(io.Discard, r.Body)
					http.Redirect(w, r, evil.URL+"/steal?token=abc", status)
				}))
				p := newProxy(t, up, server.Config{Wire: wire, APIKey: key})
				path := "/v1/responses"
				if wire == harness.WireMessages {
					path = "/h/claude-code/v1/responses"
				}
				resp := p.post(t, path, codexRequest(userMsg, false), nil)
				if resp.StatusCode != http.StatusBadGateway {
					t.Fatalf("status %d, want 502", resp.StatusCode)
				}
				data, _ := io.ReadAll(resp.Body)
				var body struct {
					Error struct{ Code, Message string } `json:"error"`
				}
				if err := json.Unmarshal(data, &body); err != nil {
					t.Fatalf("%s: %v", data, err)
				}
				if body.Error.Code != "upstream_redirect" || !strings.Contains(body.Error.Message, fmt.Sprintf("HTTP %d", status)) ||
					!strings.Contains(body.Error.Message, evil.URL) || strings.Contains(body.Error.Message, "token") {
					t.Errorf("error body %s", data)
				}
				if hits := target.seen(); len(hits) > 0 {
					t.Fatalf("the redirect target was reached: %v", hits)
				}
				if strings.Contains(p.logs.String(), key) {
					t.Error("the upstream key reached the log")
				}
				if !strings.Contains(p.logs.String(), fmt.Sprintf("answered HTTP %d redirecting to %s", status, evil.URL)) {
					t.Errorf("the refusal is not logged:\n%s", p.logs.String())
				}
			})
		}
	}
}

// answerChunks streams chat text deltas of size n until total bytes of
// text were sent or the request ends; it reports how many bytes it sent.
func answerChunks(n, total int, sent *atomic.Int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		bw := bufio.NewWriterSize(w, 256<<10)
		line := chunk(strings.Repeat("a", n))
		for s := 0; s < total; s += n {
			if _, err := bw.WriteString(line); err != nil {
				return
			}
			sent.Add(int64(n))
		}
		bw.WriteString(`data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
		bw.Flush()
	}
}

// A 256 MiB answer ends with the text bound's terminal event, the upstream
// connection is closed (the upstream stops sending), and the proxy's heap
// stays bounded by the text bound, not by the answer — measured by sampling
// the heap objects (live and garbage not yet collected) while the answer
// streams, and logged. The text is held once, in the chat accumulator's
// append-only buffer, which grows by doubling: at most twice the text
// live, and the earlier, smaller buffers (together at most as much again)
// as garbage until the next collection, so 4× the bound plus a fixed
// overhead.
func TestAnswerTextBound(t *testing.T) {
	if testing.Short() {
		t.Skip("streams up to 256 MiB")
	}
	const limit = 8 << 20
	var sent atomic.Int64
	up := newUpstream(t, answerChunks(64<<10, 256<<20, &sent))
	p := newProxy(t, up, server.Config{AnswerLimits: server.AnswerLimits{Text: limit}})

	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	}()
	resp := p.post(t, "/v1/responses", codexRequest(userMsg, false), nil)
	name, data := lastEvent(t, resp.Body) // keeps nothing else: the test's own memory stays out of the figure
	close(stop)
	<-sampled
	if name != "response.failed" || !strings.Contains(data, `"code":"answer_too_large"`) || !strings.Contains(data, fmt.Sprint(limit)) {
		t.Fatalf("terminal %s %.300s, want response.failed answer_too_large naming %d", name, data, limit)
	}
	// The upstream stopped well before the end: its connection was closed.
	time.Sleep(100 * time.Millisecond)
	if s := sent.Load(); s >= 256<<20 {
		t.Errorf("the upstream sent its whole answer (%d bytes): its connection was not closed", s)
	}
	growth := int64(peak.Load()) - int64(base)
	const overhead = 16 << 20
	t.Logf("text bound %d MiB: heap grew by at most %.1f MiB (the upstream sent %d MiB of text before it was cut)",
		limit>>20, float64(growth)/(1<<20), sent.Load()>>20)
	if growth > 4*limit+overhead {
		t.Errorf("heap grew by %d bytes, over 4× the bound %d plus %d", growth, limit, overhead)
	}
}

// A gzip body of 1 GiB of newlines (a "zip bomb": no event, no text) is
// stopped by the compression ratio bound after its first MiB: the client
// gets response.failed (upstream_answer_too_large), and the process spends
// far less than a second of CPU on it (logged from getrusage; the full
// inflation took 9–15 s).
func TestAnswerCompressionBound(t *testing.T) {
	var fed atomic.Int64
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			t.Errorf("Accept-Encoding %q: the proxy asks for gzip itself", r.Header.Get("Accept-Encoding"))
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Encoding", "gzip")
		zw, _ := gzip.NewWriterLevel(w, gzip.BestCompression)
		block := []byte(strings.Repeat("\n", 1<<20))
		for range 1 << 10 {
			if _, err := zw.Write(block); err != nil {
				return
			}
			fed.Add(int64(len(block)))
		}
		zw.Close()
	}))
	p := newProxy(t, up, server.Config{})
	cpu0 := cpuTime(t)
	resp := p.post(t, "/v1/responses", codexRequest(userMsg, false), nil)
	evs := readSSE(t, resp.Body)
	cpu := cpuTime(t) - cpu0
	last := terminal(t, evs)
	errObj, _ := last.Data["response"].(map[string]any)["error"].(map[string]any)
	if last.Name != "response.failed" || errObj["code"] != "upstream_answer_too_large" || !strings.Contains(fmt.Sprint(errObj["message"]), "inflates more than 100 times") {
		t.Fatalf("terminal %s %v", last.Name, errObj)
	}
	t.Logf("gzip bomb stopped: %v of process CPU (upstream and proxy), the upstream compressed %d MiB before its connection closed", cpu, fed.Load()>>20)
	if fed.Load() >= 1<<30 {
		t.Error("the whole gigabyte was compressed and sent: the proxy did not stop reading")
	}
}

// lastEvent reads a Responses stream to its end and returns its last
// event's name and data, keeping nothing else.
func lastEvent(t *testing.T, r io.Reader) (name, data string) {
	t.Helper()
	br := bufio.NewReaderSize(r, 64<<10)
	inData := false
	for {
		line, err := br.ReadSlice('\n')
		switch {
		case bytesHasPrefix(line, "event: "):
			name, inData = strings.TrimSpace(string(line[len("event: "):])), false
		case bytesHasPrefix(line, "data: ") && strings.HasPrefix(name, "response.") && isTerminal(name):
			data, inData = string(line), err == bufio.ErrBufferFull
		case inData:
			data += string(line)
			inData = err == bufio.ErrBufferFull
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return name, data
		}
	}
}

func bytesHasPrefix(b []byte, p string) bool { return len(b) >= len(p) && string(b[:len(p)]) == p }

func isTerminal(name string) bool {
	return name == "response.completed" || name == "response.failed" || name == "response.incomplete"
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The body bound ends an answer of tiny deltas (never near the text bound)
// once its decompressed body passes it.
func TestAnswerBodyBound(t *testing.T) {
	var sent atomic.Int64
	up := newUpstream(t, answerChunks(1, 64<<20, &sent))
	p := newProxy(t, up, server.Config{AnswerLimits: server.AnswerLimits{Body: 1 << 20}})
	evs := readSSE(t, p.post(t, "/v1/responses", codexRequest(userMsg, false), nil).Body)
	last := terminal(t, evs)
	errObj, _ := last.Data["response"].(map[string]any)["error"].(map[string]any)
	if last.Name != "response.failed" || errObj["code"] != "upstream_answer_too_large" || !strings.Contains(fmt.Sprint(errObj["message"]), "1048576 bytes") {
		t.Fatalf("terminal %s %v", last.Name, errObj)
	}
	resp, err := p.client.Get(p.ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	m, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(m), `harnessflow_answers_cut_total{bound="body"} 1`) {
		t.Errorf("/metrics does not count the cut answer:\n%s", m)
	}
}

// serveOn runs srv.Serve on a loopback listener until the test ends and
// returns its base URL.
func serveOn(t *testing.T, srv *server.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// 500 connections without a key, each sending its body a byte a second,
// all get their 401 on the headers and are closed: none waits for its body
// (which would take 100,000 s). The time they took is logged.
func TestKeylessSlowBodiesAreCut(t *testing.T) {
	const conns = 500
	up := newUpstream(t, http.NotFoundHandler())
	srv := server.New(server.Config{Upstream: up.URL + "/v1", ClientKeys: []string{"client-key-0123456789abcdef"},
		Logger: discardLogger(), ShutdownGrace: -1})
	base := serveOn(t, srv)
	addr := strings.TrimPrefix(base, "http://")
	head := "POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"
	var wg sync.WaitGroup
	results := make(chan string, conns)
	start := time.Now()
	for range conns {
		wg.Go(func() {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				results <- "dial: " + err.Error()
				return
			}
			defer c.Close()
			if _, err := io.WriteString(c, head); err != nil {
				results <- "write: " + err.Error()
				return
			}
			// Keep trickling a byte a second while waiting for the answer.
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				for {
					select {
					case <-stop:
						return
					case <-time.After(time.Second):
						if _, err := io.WriteString(c, " "); err != nil {
							return
						}
					}
				}
			}()
			// Generous: without the fix the server drains the body for
			// ever, so any deadline fails it; with it the close comes at
			// once, however loaded the machine.
			c.SetReadDeadline(time.Now().Add(60 * time.Second))
			all, err := io.ReadAll(c) // to the close
			status, _, _ := strings.Cut(string(all), "\r\n")
			// Closing a connection whose input is unread makes the kernel
			// reset it: a close too, only no longer an orderly one.
			if err != nil && !errors.Is(err, syscall.ECONNRESET) {
				results <- status + " then no close"
				return
			}
			results <- status
		})
	}
	wg.Wait()
	took := time.Since(start)
	close(results)
	bad := map[string]int{}
	for r := range results {
		if r != "HTTP/1.1 401 Unauthorized" {
			bad[r]++
		}
	}
	if len(bad) > 0 {
		t.Errorf("connections that did not get a 401 and a close: %v", bad)
	}
	t.Logf("%d keyless slow-body connections answered 401 and closed in %v", conns, took)
}

// With a key, a body that does not arrive within the body timeout gets
// 408 and its connection is closed.
func TestSlowBodyTimesOut(t *testing.T) {
	const key = "client-key-0123456789abcdef"
	up := newUpstream(t, http.NotFoundHandler())
	srv := server.New(server.Config{Upstream: up.URL + "/v1", ClientKeys: []string{key}, BodyTimeout: 300 * time.Millisecond,
		Logger: discardLogger(), ShutdownGrace: -1})
	addr := strings.TrimPrefix(serveOn(t, srv), "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "POST /v1/responses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+key+"\r\nContent-Length: 1000\r\n\r\n{")
	c.SetReadDeadline(time.Now().Add(30 * time.Second)) // without the deadline: never
	all, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("no close: %v (%q)", err, all)
	}
	if !strings.HasPrefix(string(all), "HTTP/1.1 408") || !strings.Contains(string(all), "did not arrive within 300ms") {
		t.Errorf("answer %q", all)
	}
}

// A key taken away with SetClientKeys (what SIGHUP does) is refused by the
// next request; streams of the new key are served; removing every key is
// refused.
func TestClientKeysChangeAtOnce(t *testing.T) {
	const old, kept = "client-key-old-0123456789", "client-key-kept-0123456789"
	up := newUpstream(t, answerChunks(5, 5, new(atomic.Int64)))
	p := newProxy(t, up, server.Config{ClientKeys: []string{old, kept}})
	status := func(key string) int {
		resp := p.post(t, "/v1/responses", codexRequest(userMsg, false), map[string]string{"Authorization": "Bearer " + key})
		io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	if status(old) != 200 || status(kept) != 200 {
		t.Fatal("both keys should be accepted first")
	}
	if err := p.srv.SetClientKeys([]string{kept}); err != nil {
		t.Fatal(err)
	}
	if s := status(old); s != 401 {
		t.Errorf("the revoked key got %d, want 401", s)
	}
	if s := status(kept); s != 200 {
		t.Errorf("the kept key got %d", s)
	}
	if err := p.srv.SetClientKeys(nil); err == nil || status(kept) != 200 {
		t.Errorf("removing every key: %v; want it refused and the keys kept", err)
	}
}

// 500,000 input items (about 14 MiB of JSON, within the body bound) get
// 413 at the default bound, naming the path, before the request is
// decoded.
func TestInputItemBound(t *testing.T) {
	up := newUpstream(t, answerChunks(5, 5, new(atomic.Int64)))
	p := newProxy(t, up, server.Config{})
	var b strings.Builder
	b.WriteString(`{"model":"m","stream":true,"input":[`)
	for i := range 500_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"type":"message","role":"user","content":"hi"}`)
	}
	b.WriteString(`]}`)
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	resp := p.post(t, "/v1/responses", b.String(), nil)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(data), `"param":"input"`) ||
		!strings.Contains(string(data), "more than 50000 elements") {
		t.Fatalf("%d %s", resp.StatusCode, data)
	}
	t.Logf("%d MiB request with 500k items: %d MiB allocated while it was refused (client and proxy)", b.Len()>>20, (after.TotalAlloc-before.TotalAlloc)>>20)
	// A request within the bound is served.
	if resp := p.post(t, "/v1/responses", codexRequest(userMsg, false), nil); resp.StatusCode != 200 {
		t.Errorf("a small request got %d", resp.StatusCode)
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
