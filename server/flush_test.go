package server_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/server"
)

// flushCounter records a response and counts its flushes.
type flushCounter struct {
	*httptest.ResponseRecorder
	flushes int
}

func (f *flushCounter) Flush() {
	f.flushes++
	f.ResponseRecorder.Flush()
}

// burstChat answers with a whole chat stream in one write: role, three
// text deltas, the finish and [DONE].
func burstChat(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta, finish string) string {
		return `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}` + "\n\n"
	}
	body := chunk(`{"role":"assistant","content":""}`, "null") +
		chunk(`{"content":"one "}`, "null") + chunk(`{"content":"two "}`, "null") + chunk(`{"content":"three"}`, "null") +
		chunk(`{}`, `"stop"`) + "data: [DONE]\n\n"
	_, _ = io.WriteString(w, body)
	http.NewResponseController(w).Flush()
}

// TestStreamFlushesPerUpstreamRead checks that in the fused mode the
// events translated from one upstream read are flushed together (once),
// and that the async mode flushes every event; the stream is the same.
func TestStreamFlushesPerUpstreamRead(t *testing.T) {
	up := newUpstream(t, http.HandlerFunc(burstChat))
	for _, mode := range []pipeline.Mode{pipeline.Fused, pipeline.Async} {
		t.Run(mode.String(), func(t *testing.T) {
			srv := server.New(server.Config{Upstream: up.URL + "/v1", Mode: mode, Logger: slog.New(slog.DiscardHandler)})
			t.Cleanup(srv.CloseIdleConnections)
			rec := &flushCounter{ResponseRecorder: httptest.NewRecorder()}
			req := httptest.NewRequest(http.MethodPost, "/v1/responses",
				strings.NewReader(`{"model":"m","input":"hi","stream":true,"store":false}`))
			srv.Handler().ServeHTTP(rec, req)
			evs := readSSE(t, rec.Body)
			if len(evs) < 8 || terminal(t, evs).Name != "response.completed" {
				t.Fatalf("stream: %v", names(evs))
			}
			if got := count(evs, "response.output_text.delta"); got != 3 {
				t.Errorf("%d text deltas, want 3", got)
			}
			switch mode {
			case pipeline.Fused:
				// The headers' flush (sendHeaders), then one read brings
				// the whole answer (one chunk of the upstream's body); a
				// second may bring the end of the chunked body. Never
				// one flush per event.
				if rec.flushes < 2 || rec.flushes > 4 {
					t.Errorf("%d flushes for %d events, want 2 to 4", rec.flushes, len(evs))
				}
			case pipeline.Async:
				if rec.flushes != 1+len(evs) {
					t.Errorf("%d flushes for %d events, want the headers' and one per event", rec.flushes, len(evs))
				}
			}
		})
	}
}
