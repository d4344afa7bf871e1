package loadtest

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// With Rejections a 503 is a rejection (its latency kept, the client
// waiting Retry-After before its next stream), not an error; without, an
// error as before. The report shows the rejection columns only when a run
// had rejections.
func TestRunLoadRejections(t *testing.T) {
	up := ProxyUpstream{Events: 2}
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 1 { // every other request
			w.Header().Set("Retry-After", "0")
			http.Error(w, `{"error":{"message":"full"}}`, http.StatusServiceUnavailable)
			return
		}
		up.ServeHTTP(w, r)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		rejections               bool
		wantErrors, wantRejected int
	}{{true, 0, 4}, {false, 4, 0}} {
		n.Store(0)
		run, err := RunLoad(context.Background(), ProxyTarget{Name: "admitting", URL: srv.URL, Stream: StreamChat, Body: []byte(`{"model":"m"}`)},
			LoadOptions{Streams: 1, Rounds: 8, Events: 2, Rejections: tc.rejections})
		if err != nil {
			t.Fatal(err)
		}
		if run.Requests != 8 || run.Errors != tc.wantErrors || run.Rejected != tc.wantRejected || run.Deltas != 8 {
			t.Errorf("rejections %v: %d requests, %d errors (%s), %d rejected, %d deltas; want 8, %d, %d, 8",
				tc.rejections, run.Requests, run.Errors, run.FirstError, run.Rejected, run.Deltas, tc.wantErrors, tc.wantRejected)
		}
		if (run.RejectLatency != nil) != tc.rejections || run.RequestBytes != len(`{"model":"m"}`) {
			t.Errorf("rejections %v: reject latency %+v, request bytes %d", tc.rejections, run.RejectLatency, run.RequestBytes)
		}
		if l := run.RejectLatency; l != nil && !(l.P99 > 0 && l.P99 < float64(time.Second/time.Millisecond)) {
			t.Errorf("reject latency %+v ms", l)
		}
		var b bytes.Buffer
		if err := (&ProxyReport{Runs: []*ProxyRun{run}}).WriteMarkdown(&b); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(b.String(), "| rejected (503) |"); got != tc.rejections {
			t.Errorf("rejections %v: rejection columns shown %v:\n%s", tc.rejections, got, b.String())
		}
	}
}

func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		h    string
		want time.Duration
	}{{"", defaultRetryAfter}, {"0", 0}, {"2", 2 * time.Second}, {"600", maxRetryAfter}, {"Wed, 21 Oct 2015 07:28:00 GMT", defaultRetryAfter}, {"-1", defaultRetryAfter}} {
		if got := retryAfter(tc.h); got != tc.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tc.h, got, tc.want)
		}
	}
}
