package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/server"
)

// With --max-streams N, N+k concurrent slow streams: the k over the bound
// get HTTP 503 with Retry-After and an OpenAI error body, within the queue
// timeout (plus scheduling), the N complete, and /metrics counts the k.
func TestAdmissionRejectsOverTheBound(t *testing.T) {
	for _, tc := range []struct {
		name         string
		max, extra   int
		queueTimeout time.Duration
		minWait      time.Duration // a 503 comes no sooner (the queue timeout)
	}{
		{name: "no queue", max: 3, extra: 2, queueTimeout: -1},
		{name: "short queue", max: 2, extra: 3, queueTimeout: 60 * time.Millisecond, minWait: 60 * time.Millisecond},
		{name: "default queue", max: 1, extra: 1, minWait: server.DefaultQueueTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newHeldUpstream()
			upSrv := newUpstream(t, up)
			s := startServing(t, server.Config{Upstream: upSrv.URL + "/v1", MaxStreams: tc.max, QueueTimeout: tc.queueTimeout})
			bodies := openStreams(t, s, up, tc.max)

			client := &http.Client{Transport: &http.Transport{}}
			t.Cleanup(client.CloseIdleConnections)
			type answer struct {
				status     int
				retryAfter string
				code       string
				took       time.Duration
				err        error
			}
			answers := make(chan answer, tc.extra)
			for range tc.extra {
				go func() {
					start := time.Now()
					resp, err := client.Post("http://"+s.addr+"/v1/responses", "application/json", strings.NewReader(codexRequest(userMsg, false)))
					if err != nil {
						answers <- answer{err: err}
						return
					}
					defer resp.Body.Close()
					b, _ := io.ReadAll(resp.Body)
					var e struct {
						Error struct {
							Code string `json:"code"`
						} `json:"error"`
					}
					_ = json.Unmarshal(b, &e)
					answers <- answer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), code: e.Error.Code, took: time.Since(start)}
				}()
			}
			for range tc.extra {
				a := <-answers
				switch {
				case a.err != nil:
					t.Fatalf("request over the bound: %v", a.err)
				case a.status != http.StatusServiceUnavailable || a.retryAfter != "1" || a.code != "server_overloaded":
					t.Errorf("request over the bound: HTTP %d, Retry-After %q, code %q; want 503, 1, server_overloaded", a.status, a.retryAfter, a.code)
				case a.took < tc.minWait || a.took > tc.minWait+2*time.Second:
					t.Errorf("request over the bound answered after %v; want from %v to %v", a.took, tc.minWait, tc.minWait+2*time.Second)
				}
			}
			close(up.release)
			for range tc.max {
				if name, code := terminalOf(<-bodies); name != "response.completed" {
					t.Errorf("admitted stream ended with %q (%s), want response.completed", name, code)
				}
			}
			metrics := getMetrics(t, client, s.addr)
			for _, want := range []string{
				"harnessflow_rejected_streams_total " + itoa(tc.extra),
				"harnessflow_max_streams " + itoa(tc.max),
				"harnessflow_admitted_streams 0",
			} {
				if !strings.Contains(metrics, want+"\n") {
					t.Errorf("/metrics lacks %q:\n%s", want, grepLines(metrics, "streams"))
				}
			}
		})
	}
}

// A request over the bound that finds a slot within the queue timeout is
// served: counted as queued, not rejected.
func TestAdmissionQueuedRequestServed(t *testing.T) {
	up := newHeldUpstream()
	upSrv := newUpstream(t, up)
	s := startServing(t, server.Config{Upstream: upSrv.URL + "/v1", MaxStreams: 1, QueueTimeout: 10 * time.Second})
	first := openStreams(t, s, up, 1)
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	second := make(chan string, 1)
	go func() {
		resp, err := client.Post("http://"+s.addr+"/v1/responses", "application/json", strings.NewReader(codexRequest(userMsg, false)))
		if err != nil {
			second <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		second <- resp.Status + "\n" + string(b)
	}()
	select {
	case <-up.arrived:
		t.Fatal("the second request reached the upstream while the first held the only slot")
	case <-time.After(200 * time.Millisecond):
	}
	close(up.release)
	if name, _ := terminalOf(<-first); name != "response.completed" {
		t.Errorf("first stream ended with %q", name)
	}
	if body := <-second; !strings.HasPrefix(body, "200 ") || !strings.Contains(body, "event: response.completed") {
		t.Errorf("queued request: %.300s", body)
	}
	metrics := getMetrics(t, client, s.addr)
	for _, want := range []string{"harnessflow_queued_streams_total 1", "harnessflow_rejected_streams_total 0"} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("/metrics lacks %q:\n%s", want, grepLines(metrics, "streams"))
		}
	}
}

// Without a bound /metrics has no admission families; a negative bound is
// a configuration error.
func TestAdmissionConfig(t *testing.T) {
	for _, tc := range []struct {
		max     int
		wantErr bool
	}{{0, false}, {5, false}, {-1, true}} {
		err := server.Config{Upstream: "http://127.0.0.1:1/v1", MaxStreams: tc.max}.Check()
		if (err != nil) != tc.wantErr {
			t.Errorf("MaxStreams %d: Check() = %v, want error %v", tc.max, err, tc.wantErr)
		}
	}
	s := startServing(t, server.Config{Upstream: "http://127.0.0.1:1/v1"})
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	if m := getMetrics(t, client, s.addr); strings.Contains(m, "harnessflow_max_streams") {
		t.Errorf("/metrics without a bound has admission families:\n%s", grepLines(m, "streams"))
	}
}

func getMetrics(t *testing.T, client *http.Client, addr string) string {
	t.Helper()
	resp, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func grepLines(s, sub string) string {
	var out []string
	for line := range strings.SplitSeq(s, "\n") {
		if strings.Contains(line, sub) && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

func itoa(n int) string { return strconv.Itoa(n) }
