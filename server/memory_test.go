package server_test

import (
	"bufio"
	"io"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/server"
)

// textMemory is what proxying one long text answer cost the proxy's heap.
type textMemory struct {
	text      int     // bytes of answer text
	held      float64 // live heap (after a GC) once every delta reached the client, before the end: × text
	peak      float64 // highest heap sample (objects, live or not yet swept) while the stream ended: × text
	allocated float64 // bytes allocated for the whole request: × text
}

// measureTextResponse streams a text answer of textBytes in deltas of
// deltaBytes through an in-process proxy (native route, chat upstream) and
// measures the heap. The upstream holds its last chunk until the client has
// every delta, so the live heap then is what the proxy keeps of the text.
func measureTextResponse(tb testing.TB, textBytes, deltaBytes int) textMemory {
	tb.Helper()
	deltas := textBytes / deltaBytes
	delta := strings.Repeat("a", deltaBytes)
	release := make(chan struct{})
	up := newUpstream(tb.(*testing.T), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		bw := bufio.NewWriterSize(w, 64<<10)
		line := chunk(delta)
		for range deltas {
			bw.WriteString(line)
		}
		bw.Flush()
		http.NewResponseController(w).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	p := newProxy(tb.(*testing.T), up, server.Config{MaxEventBytes: 64 << 20})

	var seen atomic.Int64
	allDeltas := make(chan struct{})
	result := make(chan string, 1)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	go func() {
		resp, err := p.client.Post(p.ts.URL+"/v1/responses", "application/json", strings.NewReader(codexRequest(userMsg, false)))
		if err != nil {
			result <- err.Error()
			close(allDeltas)
			return
		}
		defer resp.Body.Close()
		br := bufio.NewReaderSize(resp.Body, 64<<10)
		last := ""
		for {
			line, err := br.ReadSlice('\n')
			if len(line) > 0 && line[0] == 'e' {
				last = strings.TrimSpace(string(line))
				if last == "event: response.output_text.delta" && seen.Add(1) == int64(deltas) {
					close(allDeltas)
				}
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil {
				break
			}
		}
		result <- last
	}()
	<-allDeltas
	runtime.GC()
	var mid runtime.MemStats
	runtime.ReadMemStats(&mid)

	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Microsecond):
			}
		}
	}()
	close(release)
	last := <-result
	close(stop)
	<-sampled
	runtime.ReadMemStats(&after)
	if last != "event: response.completed" {
		tb.Fatalf("stream ended with %q after %d deltas", last, seen.Load())
	}
	text := float64(deltas * deltaBytes)
	return textMemory{
		text:      deltas * deltaBytes,
		held:      (float64(mid.HeapAlloc) - float64(before.HeapAlloc)) / text,
		peak:      (float64(peak) - float64(before.HeapAlloc)) / text,
		allocated: float64(after.TotalAlloc-before.TotalAlloc) / text,
	}
}

// The proxy holds a long text answer once: the chat accumulator's buffer,
// which the writer's own text and the done item share (a second copy
// anywhere would double the live heap mid-stream), and at the end one
// buffer more for the events that carry the whole text. For a 7 MiB
// answer, in multiples of the text, the live heap once every delta reached
// the client must stay within heldBound (1× and the buffer's growth
// slack), and the highest heap sample while the stream ends within
// peakBound (2× and slack). `go test ./server -run TestTextResponseMemory
// -v -count=1` prints the numbers.
func TestTextResponseMemory(t *testing.T) {
	if testing.Short() || raceBuild {
		t.Skip("measures 7 MiB streams (not with -short or -race)")
	}
	const heldBound, peakBound = 1.5, 3.0
	for _, d := range []int{256} {
		m := measureTextResponse(t, 7<<20, d)
		t.Logf("7 MiB text in %d-byte deltas: held mid-stream %.2f×, peak at the end %.2f×, allocated %.2f× the text", d, m.held, m.peak, m.allocated)
		if m.held > heldBound {
			t.Errorf("%d-byte deltas: the proxy held %.2f× the text mid-stream, want at most %.1f× (a second copy of the text?)", d, m.held, heldBound)
		}
		if m.peak > peakBound {
			t.Errorf("%d-byte deltas: the heap peaked at %.2f× the text as the stream ended, want at most %.1f× (an extra whole copy at the end?)", d, m.peak, peakBound)
		}
	}
}
