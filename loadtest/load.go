package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Stream wires a load client reads.
const (
	// StreamChat is an OpenAI Chat Completions stream (the upstream itself,
	// or a pass-through proxy in front of it).
	StreamChat = "chat"
	// StreamResponses is an OpenAI Responses stream (harnessflow serve).
	StreamResponses = "responses"
	// StreamMessages is an Anthropic Messages stream (harnessflow serve's
	// /v1/messages).
	StreamMessages = "messages"
)

// ProxyTarget is one way of reaching the upstream.
type ProxyTarget struct {
	// Name labels the target in reports ("direct", "pass-through", …).
	Name string
	// URL is where the streaming requests are POSTed.
	URL string
	// Body is the request body (JSON); Warmup, when set, the body of one
	// request sent (and read to its end) before the measurement.
	Body, Warmup []byte
	// Stream is StreamChat, StreamResponses or StreamMessages: what the
	// answers are.
	Stream string
	// PID is the process whose memory and CPU are measured (a proxy); 0
	// measures none.
	PID int
	// Debug is the URL of the measured process's RuntimeStats (GET
	// …/debug/runtime); "" samples none.
	Debug string
}

// LoadOptions size a load run.
type LoadOptions struct {
	// Streams is the number of concurrent clients (N).
	Streams int
	// Rounds is how many streams each client runs, one after another on
	// its connection (at least 1).
	Rounds int
	// Events is how many stamped deltas a stream carries (what the
	// upstream sends): fewer is an error of that stream.
	Events int
	// Ramp spreads the clients' starts evenly over this time.
	Ramp time.Duration
	// Sample is the period of the process samples (0: 250 ms).
	Sample time.Duration
	// StreamTimeout bounds one stream (0: no bound but ctx's).
	StreamTimeout time.Duration
	// Rejections counts an HTTP 503 answer as a rejection of the stream
	// (ProxyRun.Rejected, with its latency in ProxyRun.RejectLatency)
	// rather than an error, and makes that client wait the answer's
	// Retry-After (1 s when it has none, 10 s at most) before its next
	// stream: the load of a proxy with admission control, whose clients
	// retry as Codex does.
	Rejections bool
	// Ramped, when set, is called in a goroutine of its own once every
	// client has started (e.g. to take a CPU profile of the proxy under
	// load); the run waits for it before returning.
	Ramped func(ctx context.Context)
}

// Percentiles are latencies in milliseconds.
type Percentiles struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// ProxyRun is the measurement of one target at one N.
type ProxyRun struct {
	// Target and Streams say what was measured; Rounds and Events how.
	Target  string `json:"target"`
	Streams int    `json:"streams"`
	Rounds  int    `json:"rounds"`
	Events  int    `json:"events"`
	// Requests is the number of streams run; Deltas the stamped deltas
	// received over all of them.
	Requests int `json:"requests"`
	Deltas   int `json:"deltas"`
	// Errors counts the streams that failed (a status other than 200, a
	// failed or truncated stream, deltas missing); FirstError is the first
	// one's message.
	Errors     int    `json:"errors"`
	FirstError string `json:"first_error,omitempty"`
	// Rejected counts the streams answered HTTP 503 (with
	// LoadOptions.Rejections; they are not Errors), RejectLatency the time
	// from sending such a request to its answer's status line.
	Rejected      int          `json:"rejected,omitempty"`
	RejectLatency *Percentiles `json:"reject_latency_ms,omitempty"`
	// RequestBytes is the size of the request body every stream sends.
	RequestBytes int `json:"request_bytes,omitempty"`
	// Seconds is the wall time of the run.
	Seconds float64 `json:"seconds"`
	// Latency is the per-delta latency: receive time minus send time.
	Latency Percentiles `json:"latency_ms"`
	// Added is Latency minus the direct target's at the same N, percentile
	// by percentile (Compare fills it in).
	Added *Percentiles `json:"added_ms,omitempty"`
	// VsPassThrough is Added.P99 divided by the pass-through's (Compare
	// fills it in when the pass-through added a positive p99).
	VsPassThrough float64 `json:"p99_added_vs_pass_through,omitempty"`
	// MachineBusy is the share of the machine's CPU time that was busy
	// during the run (every process, ours and others'; /proc/stat).
	MachineBusy float64 `json:"machine_busy,omitempty"`

	// The measured process (a target with a PID).
	Process *ProcessFigures `json:"process,omitempty"`
}

// ProcessFigures are the measured process's figures over a run.
type ProcessFigures struct {
	// CPUSeconds is the process's CPU time during the run (user and
	// system, /proc/PID/stat; 10 ms resolution), CPUPerDeltaUS the same per
	// delta received, in microseconds.
	CPUSeconds    float64 `json:"cpu_seconds"`
	CPUPerDeltaUS float64 `json:"cpu_us_per_delta"`
	// CPUPerRequestUS is CPUSeconds per request (every stream run, a
	// rejected one included), in microseconds: with long streams mostly
	// their deltas, with one-delta streams mostly the request's handling.
	CPUPerRequestUS float64 `json:"cpu_us_per_request,omitempty"`
	// RSSBase is the resident memory before the run, RSSPeak the highest
	// sample during it; RSSPerStream is (peak − base) / N in bytes.
	RSSBase      uint64  `json:"rss_base_bytes"`
	RSSPeak      uint64  `json:"rss_peak_bytes"`
	RSSPerStream float64 `json:"rss_per_stream_bytes"`
	// The same from RuntimeStats (when the process serves them): the
	// memory the Go runtime holds (heap, stacks, metadata) and the heap
	// objects, per stream, and the goroutines before, at the peak and
	// after the run (once the clients closed their connections).
	RuntimeBase      *RuntimeStats `json:"runtime_base,omitempty"`
	RuntimePeak      *RuntimeStats `json:"runtime_peak,omitempty"`
	GoPerStream      float64       `json:"go_memory_per_stream_bytes,omitempty"`
	HeapPerStream    float64       `json:"heap_per_stream_bytes,omitempty"`
	StacksPerStream  float64       `json:"stacks_per_stream_bytes,omitempty"`
	GoroutinesBefore int           `json:"goroutines_before,omitempty"`
	GoroutinesPeak   int           `json:"goroutines_peak,omitempty"`
	GoroutinesAfter  int           `json:"goroutines_after,omitempty"`
}

// RunLoad runs opts.Streams concurrent clients against t and measures
// them. It returns an error only when the run could not be made (bad
// options, the warm-up request failing, ctx ending); the streams' own
// failures are counted in ProxyRun.Errors.
func RunLoad(ctx context.Context, t ProxyTarget, opts LoadOptions) (*ProxyRun, error) {
	if opts.Streams < 1 || opts.Events < 1 {
		return nil, fmt.Errorf("loadtest: load %s: want at least 1 stream and 1 event, got %d and %d", t.Name, opts.Streams, opts.Events)
	}
	if t.Stream != StreamChat && t.Stream != StreamResponses && t.Stream != StreamMessages {
		return nil, fmt.Errorf("loadtest: load %s: unknown stream wire %q", t.Name, t.Stream)
	}
	rounds := max(opts.Rounds, 1)
	sample := opts.Sample
	if sample <= 0 {
		sample = 250 * time.Millisecond
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = opts.Streams + 16
	tr.MaxIdleConnsPerHost = opts.Streams + 16
	tr.DisableCompression = true
	tr.ForceAttemptHTTP2 = false
	client := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	statsClient := &http.Client{Timeout: 5 * time.Second}
	defer statsClient.CloseIdleConnections()

	if len(t.Warmup) > 0 {
		c := &loadClient{t: &t, client: client, events: 1}
		if err := c.stream(ctx, t.Warmup, 0); err != nil {
			return nil, fmt.Errorf("loadtest: load %s: warm-up request: %w", t.Name, err)
		}
	}

	run := &ProxyRun{Target: t.Name, Streams: opts.Streams, Rounds: rounds, Events: opts.Events, RequestBytes: len(t.Body)}
	smp := &sampler{t: &t, client: statsClient}
	if err := smp.base(ctx); err != nil {
		return nil, err
	}
	busy0, busyOK := readMachineCPU()

	start := time.Now()
	clients := make([]*loadClient, opts.Streams)
	var wg sync.WaitGroup
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tk := time.NewTicker(sample)
		defer tk.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-ctx.Done():
				return
			case <-tk.C:
				smp.sample(ctx)
			}
		}
	}()
	var hook sync.WaitGroup
	for i := range clients {
		c := &loadClient{t: &t, client: client, events: opts.Events, lat: make([]int64, 0, rounds*opts.Events), rejections: opts.Rejections}
		clients[i] = c
		if opts.Ramp > 0 && i > 0 {
			at := start.Add(opts.Ramp * time.Duration(i) / time.Duration(opts.Streams))
			if !sleepUntil(ctx, at) {
				break
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				sctx, cancel := ctx, context.CancelFunc(func() {})
				if opts.StreamTimeout > 0 {
					sctx, cancel = context.WithTimeout(ctx, opts.StreamTimeout)
				}
				err := c.stream(sctx, t.Body, opts.Events)
				cancel()
				c.requests++
				var rej *rejectedError
				if errors.As(err, &rej) {
					c.rejLat = append(c.rejLat, rej.latency)
					if !sleepUntil(ctx, time.Now().Add(rej.retryAfter)) {
						return
					}
					continue
				}
				if err != nil {
					c.errors++
					if c.firstErr == nil {
						c.firstErr = err
					}
					if ctx.Err() != nil {
						return
					}
				}
			}
		}()
	}
	if opts.Ramped != nil && ctx.Err() == nil {
		hook.Add(1)
		go func() { defer hook.Done(); opts.Ramped(ctx) }()
	}
	wg.Wait()
	run.Seconds = time.Since(start).Seconds()
	close(stopSampling)
	<-sampled
	hook.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("loadtest: load %s at %d streams: %w", t.Name, opts.Streams, err)
	}
	if busyOK {
		if busy1, ok := readMachineCPU(); ok {
			run.MachineBusy = busy1.busySince(busy0)
		}
	}
	smp.end(ctx, run, tr)

	var all, rejected []int64
	for _, c := range clients {
		if c == nil {
			continue
		}
		rejected = append(rejected, c.rejLat...)
		run.Requests += c.requests
		run.Errors += c.errors
		if c.firstErr != nil && run.FirstError == "" {
			run.FirstError = c.firstErr.Error()
		}
		all = append(all, c.lat...)
	}
	run.Deltas = len(all)
	run.Latency = percentiles(all)
	if run.Rejected = len(rejected); run.Rejected > 0 {
		pr := percentiles(rejected)
		run.RejectLatency = &pr
	}
	if p := run.Process; p != nil && run.Deltas > 0 {
		p.CPUPerDeltaUS = p.CPUSeconds * 1e6 / float64(run.Deltas)
	}
	if p := run.Process; p != nil && run.Requests > 0 {
		p.CPUPerRequestUS = p.CPUSeconds * 1e6 / float64(run.Requests)
	}
	return run, nil
}

// sleepUntil waits until t; false when ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// percentiles summarizes latencies in nanoseconds (sorted in place).
func percentiles(ns []int64) Percentiles {
	if len(ns) == 0 {
		return Percentiles{P50: math.NaN(), P99: math.NaN(), Max: math.NaN()}
	}
	slices.Sort(ns)
	at := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(ns)))) - 1
		return float64(ns[min(max(i, 0), len(ns)-1)]) / 1e6
	}
	return Percentiles{P50: at(0.50), P99: at(0.99), Max: float64(ns[len(ns)-1]) / 1e6}
}

// ---------------------------------------------------------------------------
// one client

// loadClient is one of the N clients: it runs its streams one after
// another and keeps their latencies.
type loadClient struct {
	t        *ProxyTarget
	client   *http.Client
	events   int
	br       *bufio.Reader
	lat      []int64
	requests int
	errors   int
	firstErr error

	rejections bool    // LoadOptions.Rejections
	rejLat     []int64 // the rejected requests' latencies (ns)
}

// rejectedError is a stream answered HTTP 503 (LoadOptions.Rejections).
type rejectedError struct {
	latency    int64         // request sent to status line, ns
	retryAfter time.Duration // the answer's Retry-After
}

func (e *rejectedError) Error() string {
	return fmt.Sprintf("HTTP 503 after %.2f ms", float64(e.latency)/1e6)
}

// Bounds of the wait after a rejection.
const (
	defaultRetryAfter = time.Second
	maxRetryAfter     = 10 * time.Second
)

// retryAfter reads a Retry-After header in seconds (the form HTTP dates
// are not used by proxies under load): the default when absent or
// unreadable, at most maxRetryAfter.
func retryAfter(h string) time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(h))
	if err != nil || n < 0 {
		return defaultRetryAfter
	}
	return min(time.Duration(n)*time.Second, maxRetryAfter)
}

// Markers of the lines a client looks at.
var (
	chatDone       = []byte("data: [DONE]")
	messagesDelta  = []byte(`data: {"type":"content_block_delta"`)
	messagesDone   = []byte(`data: {"type":"message_stop"`)
	messagesError  = []byte(`event: error`)
	responsesDelta = []byte(`data: {"type":"response.output_text.delta"`)
	responsesOK    = []byte("event: response.completed")
	responsesFail  = []byte("event: response.failed")
	responsesIncom = []byte("event: response.incomplete")
)

// stream runs one stream and records the latency of every stamped delta;
// want is the number of deltas it must carry (0: any).
func (c *loadClient) stream(ctx context.Context, body []byte, want int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.t.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	sent := time.Now()
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusServiceUnavailable && c.rejections {
		lat := time.Since(sent).Nanoseconds()
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096)) // the error body, so the connection is reused
		return &rejectedError{latency: lat, retryAfter: retryAfter(resp.Header.Get("Retry-After"))}
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	if c.br == nil {
		c.br = bufio.NewReaderSize(resp.Body, 4096)
	} else {
		c.br.Reset(resp.Body)
	}
	deltas, done, partial := 0, false, false
	for {
		line, err := c.br.ReadSlice('\n')
		if len(line) > 0 && !partial {
			now := time.Now().UnixNano()
			switch {
			case c.t.Stream == StreamMessages:
				switch {
				case bytes.HasPrefix(line, messagesDelta):
					if ts, ok := ParseStamp(line); ok {
						deltas++
						if want > 0 {
							c.lat = append(c.lat, now-ts)
						}
					}
				case bytes.HasPrefix(line, messagesDone):
					done = true
				case bytes.HasPrefix(line, messagesError):
					return fmt.Errorf("%s", bytes.TrimSpace(line))
				}
			case c.t.Stream == StreamChat && bytes.HasPrefix(line, chatDone):
				done = true
			case c.t.Stream == StreamChat || bytes.HasPrefix(line, responsesDelta):
				if ts, ok := ParseStamp(line); ok {
					deltas++
					if want > 0 {
						c.lat = append(c.lat, now-ts)
					}
				}
			case bytes.HasPrefix(line, responsesOK):
				done = true
			case bytes.HasPrefix(line, responsesFail), bytes.HasPrefix(line, responsesIncom):
				return fmt.Errorf("%s", bytes.TrimSpace(line))
			}
		}
		partial = errors.Is(err, bufio.ErrBufferFull)
		if err != nil && !partial {
			if errors.Is(err, io.EOF) {
				break
			}
			return fmt.Errorf("read stream after %d deltas: %w", deltas, err)
		}
	}
	switch {
	case !done:
		return fmt.Errorf("stream ended without its terminal event after %d deltas", deltas)
	case want > 0 && deltas != want:
		return fmt.Errorf("got %d deltas, want %d", deltas, want)
	}
	return nil
}

// ---------------------------------------------------------------------------
// the measured process

// sampler follows the measured process through a run.
type sampler struct {
	t      *ProxyTarget
	client *http.Client

	mu       sync.Mutex
	proc0    ProcStats
	procOK   bool
	rt0      *RuntimeStats
	rssPeak  uint64
	rtPeak   RuntimeStats // the highest of each field
	rtSeen   bool
	failures atomic.Int64
}

// base takes the figures before the run.
func (s *sampler) base(ctx context.Context) error {
	if s.t.PID == 0 {
		return nil
	}
	p, err := ReadProcStats(s.t.PID)
	if err != nil {
		return err
	}
	s.proc0, s.procOK, s.rssPeak = p, true, p.RSS
	if s.t.Debug != "" {
		rt, err := FetchRuntimeStats(ctx, s.client, s.t.Debug)
		if err != nil {
			return err
		}
		s.rt0, s.rtPeak, s.rtSeen = &rt, rt, true
	}
	return nil
}

// sample takes one sample during the run; a failed one is skipped.
func (s *sampler) sample(ctx context.Context) {
	if !s.procOK {
		return
	}
	if p, err := ReadProcStats(s.t.PID); err == nil {
		s.mu.Lock()
		s.rssPeak = max(s.rssPeak, p.RSS)
		s.mu.Unlock()
	} else {
		s.failures.Add(1)
	}
	if s.t.Debug == "" {
		return
	}
	rt, err := FetchRuntimeStats(ctx, s.client, s.t.Debug)
	if err != nil {
		s.failures.Add(1)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pk := &s.rtPeak
	pk.HeapLive, pk.HeapObjects = max(pk.HeapLive, rt.HeapLive), max(pk.HeapObjects, rt.HeapObjects)
	pk.Stacks, pk.Total = max(pk.Stacks, rt.Stacks), max(pk.Total, rt.Total)
	pk.Goroutines, pk.GCCycles, pk.GOMAXPROCS = max(pk.Goroutines, rt.Goroutines), rt.GCCycles, rt.GOMAXPROCS
	pk.StackStart = max(pk.StackStart, rt.StackStart)
}

// end takes the figures after the run: the CPU now, and the goroutines
// once the clients' connections are closed and the process settled.
func (s *sampler) end(ctx context.Context, run *ProxyRun, tr *http.Transport) {
	if !s.procOK {
		return
	}
	p, err := ReadProcStats(s.t.PID)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := float64(run.Streams)
	f := &ProcessFigures{
		CPUSeconds:   (p.CPU - s.proc0.CPU).Seconds(),
		RSSBase:      s.proc0.RSS,
		RSSPeak:      max(s.rssPeak, p.RSS),
		RSSPerStream: float64(int64(max(s.rssPeak, p.RSS))-int64(s.proc0.RSS)) / n,
	}
	run.Process = f
	if !s.rtSeen {
		return
	}
	peak := s.rtPeak
	f.RuntimeBase, f.RuntimePeak = s.rt0, &peak
	f.GoPerStream = float64(int64(peak.Total)-int64(s.rt0.Total)) / n
	f.HeapPerStream = float64(int64(peak.HeapObjects)-int64(s.rt0.HeapObjects)) / n
	f.StacksPerStream = float64(int64(peak.Stacks)-int64(s.rt0.Stacks)) / n
	f.GoroutinesBefore, f.GoroutinesPeak = int(s.rt0.Goroutines), int(peak.Goroutines)
	// The clients' connections close; the process's goroutines for them
	// end. Wait (2 s at most) for the count to come back to where it was.
	tr.CloseIdleConnections()
	deadline := time.Now().Add(2 * time.Second)
	for {
		rt, err := FetchRuntimeStats(ctx, s.client, s.t.Debug)
		if err == nil {
			f.GoroutinesAfter = int(rt.Goroutines)
		}
		if err == nil && rt.Goroutines <= s.rt0.Goroutines || time.Now().After(deadline) || !sleepUntil(ctx, time.Now().Add(100*time.Millisecond)) {
			return
		}
	}
}

// ---------------------------------------------------------------------------
// the machine

// machineCPU is the first line of /proc/stat: busy and total jiffies.
type machineCPU struct{ busy, total uint64 }

func readMachineCPU() (machineCPU, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return machineCPU{}, false
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 5 || f[0] != "cpu" {
		return machineCPU{}, false
	}
	var m machineCPU
	for i, v := range f[1:] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return machineCPU{}, false
		}
		if i >= 8 { // guest times are counted in user already
			break
		}
		m.total += n
		if i != 3 && i != 4 { // idle, iowait
			m.busy += n
		}
	}
	return m, true
}

func (m machineCPU) busySince(m0 machineCPU) float64 {
	if m.total <= m0.total {
		return 0
	}
	return float64(m.busy-m0.busy) / float64(m.total-m0.total)
}
