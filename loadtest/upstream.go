package loadtest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"time"
)

// StampPrefix starts the send time a [ProxyUpstream] delta carries: the
// delta's text is StampPrefix, the Unix time in nanoseconds when the
// upstream wrote it, and a space ("ts=1712345678901234567 ").
const StampPrefix = "ts="

// WarmupModel is the model name that makes a [ProxyUpstream] answer at once
// with a single delta (a warm-up request that does not wait for the
// stream's interval).
const WarmupModel = "warmup"

// ProxyUpstream is the scripted upstream of a proxy load run: an OpenAI Chat
// Completions server (POST …/chat/completions, always streamed) whose every
// answer is a role chunk, Events text deltas Interval apart, each carrying
// the time it was sent (see StampPrefix), a finish chunk with usage and
// [DONE]. A delta that falls behind its schedule is sent at once, stamped
// with the time it actually left. It keeps no state between requests.
type ProxyUpstream struct {
	// Events is the number of text deltas per answer (at least 1).
	Events int
	// Interval is the time between two deltas; the first leaves with the
	// response headers.
	Interval time.Duration
}

// Chunk framing of the scripted answer.
const (
	upstreamHead  = `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":0,"model":"bench","choices":[{"index":0,"delta":{`
	upstreamDelta = `"content":"`
	upstreamTail  = `"},"finish_reason":null}]}` + "\n\n"
	upstreamStop  = `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":0,"model":"bench","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" +
		`data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":0,"model":"bench","choices":[],"usage":{"prompt_tokens":8,"completion_tokens":`
	upstreamDone = "}}\n\ndata: [DONE]\n\n"
)

// ServeHTTP answers one request with the scripted stream.
func (u ProxyUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST a chat completions request", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "read request: "+err.Error(), http.StatusBadRequest)
		return
	}
	events, interval := max(u.Events, 1), u.Interval
	if bytes.Contains(body, []byte(`"model":"`+WarmupModel+`"`)) {
		events, interval = 1, 0
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	buf := make([]byte, 0, 512)
	buf = append(buf, upstreamHead...)
	buf = append(buf, `"role":"assistant",`+upstreamDelta...) // an empty content: the tail closes it
	buf = append(buf, upstreamTail...)
	if _, err := w.Write(buf); err != nil {
		return
	}
	start := time.Now()
	var timer *time.Timer
	for i := range events {
		if wait := time.Until(start.Add(time.Duration(i) * interval)); wait > 0 {
			if timer == nil {
				timer = time.NewTimer(wait)
				defer timer.Stop()
			} else {
				timer.Reset(wait)
			}
			select {
			case <-timer.C:
			case <-r.Context().Done():
				return
			}
		}
		buf = append(buf[:0], upstreamHead...)
		buf = append(buf, upstreamDelta...)
		buf = AppendStamp(buf, time.Now())
		buf = append(buf, upstreamTail...)
		if _, err := w.Write(buf); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
	buf = append(buf[:0], upstreamStop...)
	buf = strconv.AppendInt(buf, int64(events), 10)
	buf = append(buf, `,"total_tokens":`...)
	buf = strconv.AppendInt(buf, int64(events+8), 10)
	buf = append(buf, upstreamDone...)
	if _, err := w.Write(buf); err == nil {
		_ = rc.Flush()
	}
}

// AppendStamp appends the text of a delta sent at t: StampPrefix, t in Unix
// nanoseconds and a space.
func AppendStamp(b []byte, t time.Time) []byte {
	b = append(b, StampPrefix...)
	b = strconv.AppendInt(b, t.UnixNano(), 10)
	return append(b, ' ')
}

// ParseStamp finds the first send time in line (an SSE data line of either
// wire: the stamp is the delta's text) and returns it in Unix nanoseconds.
func ParseStamp(line []byte) (int64, bool) {
	i := bytes.Index(line, []byte(StampPrefix))
	if i < 0 {
		return 0, false
	}
	var v int64
	n := 0
	for _, c := range line[i+len(StampPrefix):] {
		if c < '0' || c > '9' {
			break
		}
		if n == 19 {
			return 0, false // more digits than an int64 holds
		}
		v = v*10 + int64(c-'0')
		n++
	}
	return v, n > 0
}

// PassThrough returns the floor of a proxy load run: a plain
// net/http/httputil.ReverseProxy to upstream that translates nothing. Its
// transport keeps up to idle connections to the upstream (the expected
// concurrency), and it flushes every write of an event stream at once.
//
// It reads the request body (up to 1 MiB) before it sends it on, as serve
// does: a body still being streamed upstream when the answer's first bytes
// are flushed to the client is cut off by net/http (an HTTP/1 request body
// is unavailable once the response is flushed), which closes the upstream
// connection mid-answer.
func PassThrough(upstream *url.URL, idle int) http.Handler {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = max(idle, 2)
	tr.MaxIdleConnsPerHost = max(idle, 2)
	p := httputil.NewSingleHostReverseProxy(upstream)
	p.Transport = tr
	p.FlushInterval = -1
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			http.Error(w, "read request: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		p.ServeHTTP(w, r)
	})
}
