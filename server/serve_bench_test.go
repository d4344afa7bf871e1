package server_test

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/benchmark"
	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/server"
)

// BenchmarkServeRequest measures what one streamed request costs the proxy:
// a client on a kept-alive connection asks for an answer of 4 or 200 text
// deltas (the upstream flushes each chunk) from an in-process chat upstream, through serve
// (native) and, as the peer, through net/http/httputil.ReverseProxy, which
// translates nothing. CPU, allocations and bytes are the whole process's
// (client, proxy and upstream run in it), so the difference between the two
// is serve's own cost: decoding and shaping the request, building the
// response graph, translating and writing the events. The difference
// between the two answer lengths, over 196, is the cost of one delta.
//
//	go test ./server -run '^$' -bench BenchmarkServeRequest -benchmem
func BenchmarkServeRequest(b *testing.B) {
	for _, deltas := range []int{4, 200} {
		b.Run(fmt.Sprintf("deltas-%d", deltas), func(b *testing.B) { benchServeRequest(b, deltas) })
	}
}

// processCPU returns the user+system CPU time of the process so far.
func processCPU() time.Duration {
	ns, _ := benchmark.ProcessCPU()
	return time.Duration(ns)
}

// benchServeRequest runs BenchmarkServeRequest with answers of deltas
// text deltas, each upstream chunk written and flushed on its own.
func benchServeRequest(b *testing.B, deltas int) {
	var answer []string
	for i := range deltas {
		answer = append(answer, chunk(fmt.Sprintf("word%d ", i)))
	}
	answer = append(answer, `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for _, c := range answer {
			io.WriteString(w, c)
			rc.Flush()
		}
	}))
	defer up.Close()

	srv := server.New(server.Config{Upstream: up.URL + "/v1", Wire: harness.WireChat,
		Logger: slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	serve := httptest.NewServer(srv.Handler())
	defer serve.Close()
	defer srv.CloseIdleConnections()

	target, _ := url.Parse(up.URL)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1
	pass := httptest.NewServer(rp)
	defer pass.Close()

	body := codexRequest(userMsg, false)
	for _, c := range []struct{ name, url, last string }{
		{"serve-native", serve.URL + "/v1/responses", "event: response.completed"},
		{"reverse-proxy", pass.URL + "/v1/chat/completions", "data: [DONE]"},
	} {
		b.Run(c.name, func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{}}
			defer client.CloseIdleConnections()
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				resp, err := client.Post(c.url, "application/json", strings.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				// The client keeps the last line in one buffer: it allocates
				// nothing per line, so the counts are the proxy's and the
				// upstream's.
				last := make([]byte, 0, 4096)
				sc := bufio.NewScanner(resp.Body)
				for sc.Scan() {
					if l := sc.Bytes(); len(l) > 0 {
						last = append(last[:0], l...)
					}
				}
				resp.Body.Close()
				if !strings.HasPrefix(string(last), c.last) && !strings.Contains(string(last), "response.completed") {
					b.Fatalf("stream ended with %q", last)
				}
			}
			// The process's CPU time per request (proxy, upstream and
			// client): steadier than the wall time on a busy machine.
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
