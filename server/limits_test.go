package server_test

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/scripted"
	"github.com/harnessflow/harnessflow/server"
)

// zeros is a body of n bytes made on the fly, counting what was read of it.
type zeros struct {
	n, read atomic.Int64
}

func (z *zeros) Read(p []byte) (int, error) {
	left := z.n.Load() - z.read.Load()
	if left <= 0 {
		return 0, io.EOF
	}
	n := int64(len(p))
	if n > left {
		n = left
	}
	clear(p[:n])
	z.read.Add(n)
	return int(n), nil
}

// allocated returns the bytes allocated while f ran (all goroutines).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A 100 MiB body over the default 64 MiB limit is refused with HTTP 413.
// With a Content-Length it is refused before any of it is read: the proxy
// allocates next to nothing (it used to read 64 MiB into a growing buffer
// first). Without one (chunked) it is read in blocks up to the limit only.
func TestBodyOverLimit(t *testing.T) {
	const size = 100 << 20
	p := newProxy(t, newUpstream(t, scripted.New(nil)), server.Config{})
	for _, c := range []struct {
		name     string
		length   int64
		maxAlloc uint64
	}{
		{"content-length", size, 8 << 20},
		{"chunked", -1, server.DefaultMaxRequestBytes + 16<<20},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := &zeros{}
			body.n.Store(size)
			var status int
			var msg string
			alloc := allocated(func() {
				req, err := http.NewRequest(http.MethodPost, p.ts.URL+"/v1/responses", io.NopCloser(body))
				if err != nil {
					t.Fatal(err)
				}
				req.ContentLength = c.length
				resp, err := p.client.Do(req)
				if err != nil {
					t.Fatalf("after %d bytes sent: %v", body.read.Load(), err)
				}
				defer resp.Body.Close()
				status = resp.StatusCode
				msg, _ = errorBody(t, resp)
			})
			t.Logf("%s: %d MiB body: %.1f MiB allocated, %.1f MiB sent before the answer", c.name, size>>20, float64(alloc)/(1<<20), float64(body.read.Load())/(1<<20))
			if status != http.StatusRequestEntityTooLarge || !strings.Contains(msg, "over 67108864 bytes") {
				t.Errorf("%d %q", status, msg)
			}
			if alloc > c.maxAlloc {
				t.Errorf("%.1f MiB allocated, want at most %.1f", float64(alloc)/(1<<20), float64(c.maxAlloc)/(1<<20))
			}
		})
	}
	// A body within the limit, with and without Content-Length, still works.
	for _, length := range []int64{-1, int64(len(codexRequest(userMsg, false)))} {
		req, _ := http.NewRequest(http.MethodPost, p.ts.URL+"/v1/responses", io.NopCloser(strings.NewReader(codexRequest(userMsg, false))))
		req.ContentLength = length
		resp, err := p.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if last := terminal(t, readSSE(t, resp.Body)); last.Name != "response.completed" {
			t.Errorf("length %d: %s", length, last.Raw)
		}
		resp.Body.Close()
	}
}

// A body shorter than its Content-Length is a 400, not a hang or a
// truncated request.
func TestBodyShorterThanContentLength(t *testing.T) {
	p := newProxy(t, newUpstream(t, scripted.New(nil)), server.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pr, pw := io.Pipe()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.ts.URL+"/v1/responses", pr)
	req.ContentLength = 1000
	go func() {
		io.WriteString(pw, `{"model":`)
		pw.CloseWithError(io.ErrUnexpectedEOF)
	}()
	if resp, err := p.client.Do(req); err == nil {
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Errorf("status %d", resp.StatusCode)
		}
	}
}

// A request without a model (absent or "") is refused with HTTP 400 naming
// the parameter, unless a default model is configured.
func TestMissingModel(t *testing.T) {
	noModel := strings.Replace(codexRequest(userMsg, false), `"model":"gpt-5.5",`, "", 1)
	emptyModel := strings.Replace(codexRequest(userMsg, false), `"model":"gpt-5.5"`, `"model":""`, 1)
	rec := &recorder{h: scripted.New(nil)}
	p := newProxy(t, newUpstream(t, rec), server.Config{})
	for _, body := range []string{noModel, emptyModel} {
		resp := p.post(t, "/v1/responses", body, nil)
		msg, typ := errorBody(t, resp)
		if resp.StatusCode != 400 || typ != "invalid_request_error" || !strings.Contains(msg, "'model'") {
			t.Errorf("%d %q %q", resp.StatusCode, typ, msg)
		}
	}
	if rec.requests() != 0 {
		t.Errorf("%d requests sent upstream", rec.requests())
	}
	p = newProxy(t, newUpstream(t, rec), server.Config{DefaultModel: "qwen3-coder"})
	for _, body := range []string{noModel, emptyModel, codexRequest(userMsg, false)} {
		resp := p.post(t, "/v1/responses", body, nil)
		evs := readSSE(t, resp.Body)
		if terminal(t, evs).Name != "response.completed" {
			t.Fatalf("events %v", names(evs))
		}
		_, up, _ := rec.last(t)
		want := `"model":"qwen3-coder"`
		if body == codexRequest(userMsg, false) {
			want = `"model":"gpt-5.5"` // the default does not replace a model the client names
		}
		if !strings.Contains(up, want) {
			t.Errorf("upstream body lacks %s: %s", want, up)
		}
	}
}
