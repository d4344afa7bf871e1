package server_test

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/server"
)

var sampleRE = regexp.MustCompile(`(?m)^(harnessflow_streams_started_total|harnessflow_streams_ended_total\{outcome="(\w+)"\}) (\d+)$`)

// streamCounts returns started and the ended streams by outcome.
func streamCounts(t *testing.T, p *proxy) (started uint64, ended map[string]uint64, total uint64) {
	t.Helper()
	ended = map[string]uint64{}
	for _, m := range sampleRE.FindAllStringSubmatch(metricsText(t, p), -1) {
		n, _ := strconv.ParseUint(m[3], 10, 64)
		if m[2] == "" {
			started = n
		} else {
			ended[m[2]] = n
			total += n
		}
	}
	return started, ended, total
}

// Every started stream is counted as ended, with its outcome: completed,
// an in-band upstream error, a run error (malformed data), an upstream that
// dies mid-stream, a stream without a terminal event, a client that goes
// away mid-stream. Refused requests start no stream.
func TestEveryStreamEnds(t *testing.T) {
	stall := make(chan struct{})
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		switch {
		case strings.Contains(string(body), "case-completed"):
			io.WriteString(w, chunk("fine")+`data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
		case strings.Contains(string(body), "case-error-event"):
			io.WriteString(w, chunk("x")+`data: {"error":{"message":"overloaded","type":"server_error"}}`+"\n\n")
		case strings.Contains(string(body), "case-malformed"):
			io.WriteString(w, chunk("x")+"data: hello world\n\n")
		case strings.Contains(string(body), "case-dies"):
			io.WriteString(w, chunk("x"))
			http.NewResponseController(w).Flush()
			panic(http.ErrAbortHandler)
		case strings.Contains(string(body), "case-no-end"):
			io.WriteString(w, chunk("x"))
		case strings.Contains(string(body), "case-client-gone"):
			io.WriteString(w, chunk("x"))
			http.NewResponseController(w).Flush()
			select {
			case <-r.Context().Done():
			case <-stall:
			}
		}
	}))
	defer close(stall)
	p := newProxy(t, up, server.Config{})
	req := func(word string) string {
		return codexRequest(`{"type":"message","role":"user","content":[{"type":"input_text","text":"`+word+`"}]}`, false)
	}
	want := map[string]string{
		"case-completed":   "response.completed",
		"case-error-event": "response.failed",
		"case-malformed":   "response.failed",
		"case-dies":        "response.failed",
		"case-no-end":      "response.failed",
	}
	for word, terminalName := range want {
		evs := readSSE(t, p.post(t, "/v1/responses", req(word), nil).Body)
		last := terminal(t, evs)
		if last.Name != terminalName {
			t.Errorf("%s: ended with %s", word, last.Raw)
		}
		// A data line that is not JSON is named by what it holds.
		if word == "case-malformed" && !strings.Contains(last.Raw, `data line is not JSON: starts with \"hello world\"`) {
			t.Errorf("%s: %s", word, last.Raw)
		}
	}
	// A client that goes away after the first event.
	ctx, cancel := context.WithCancel(context.Background())
	r, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.ts.URL+"/v1/responses", strings.NewReader(req("case-client-gone")))
	resp, err := p.client.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	// Refused requests: no stream.
	p.post(t, "/v1/responses", `{"model":"m","input":7}`, nil).Body.Close()

	deadline := time.Now().Add(5 * time.Second)
	for {
		started, ended, total := streamCounts(t, p)
		if started == 6 && total == 6 {
			if ended["completed"] != 1 || ended["failed"] != 4 || ended["client_closed"] != 1 {
				t.Errorf("ended %v", ended)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("started %d, ended %d: %v", started, total, ended)
		}
		time.Sleep(10 * time.Millisecond)
	}
	m := metricsText(t, p)
	for _, want := range []string{
		`harnessflow_stream_failures_total{kind="upstream_error"} 1`,
		`harnessflow_stream_failures_total{kind="upstream_truncated"} 2`,
		`harnessflow_stream_failures_total{kind="protocol"} 1`,
		`harnessflow_stream_events_total{type="failed"} 4`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q:\n%s", want, m)
		}
	}
}
