package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"github.com/harnessflow/harnessflow/internal/procdebug"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/benchmark"
)

func TestStampRoundTrip(t *testing.T) {
	for _, ts := range []time.Time{time.Unix(0, 1), time.Unix(1712345678, 901234567), time.Now()} {
		b := AppendStamp([]byte(`data: {"delta":"`), ts)
		b = append(b, `"}`...)
		got, ok := ParseStamp(b)
		if !ok || got != ts.UnixNano() {
			t.Errorf("ParseStamp(%s) = %d, %v; want %d", b, got, ok, ts.UnixNano())
		}
	}
}

func TestParseStamp(t *testing.T) {
	for _, c := range []struct {
		line string
		want int64
		ok   bool
	}{
		{`"content":"ts=123 "`, 123, true},
		{`ts=9 ts=8`, 9, true},
		{`"content":"hello"`, 0, false},
		{`ts=`, 0, false},
		{`ts=x1`, 0, false},
		{`ts=99999999999999999999`, 0, false}, // more digits than an int64
		{`ts=9223372036854775807`, math.MaxInt64, true},
	} {
		got, ok := ParseStamp([]byte(c.line))
		if got != c.want || ok != c.ok {
			t.Errorf("ParseStamp(%q) = %d, %v; want %d, %v", c.line, got, ok, c.want, c.ok)
		}
	}
}

func FuzzParseStamp(f *testing.F) {
	for _, s := range []string{"ts=1 ", "ts=", "xts=12", "ts=99999999999999999999", "ts=1\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		v, ok := ParseStamp(line)
		if !ok {
			return
		}
		if v < 0 {
			t.Fatalf("ParseStamp(%q) = %d: negative", line, v)
		}
		// The stamp written back reads the same.
		again, ok := ParseStamp(AppendStamp(nil, time.Unix(0, v)))
		if !ok || again != v {
			t.Fatalf("round trip of %d: %d, %v", v, again, ok)
		}
	})
}

// chatLines reads a chat completions stream: the JSON of every data line
// but [DONE], and whether [DONE] ended it.
func chatLines(t *testing.T, r io.Reader) (chunks []map[string]any, done bool) {
	t.Helper()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data: ")
		switch {
		case line == "":
		case !ok:
			t.Fatalf("unexpected line %q", line)
		case data == "[DONE]":
			done = true
		default:
			if done {
				t.Fatalf("data after [DONE]: %q", line)
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(data), &m); err != nil {
				t.Fatalf("chunk %q: %v", data, err)
			}
			chunks = append(chunks, m)
		}
	}
	return chunks, done
}

func TestProxyUpstream(t *testing.T) {
	up := httptest.NewServer(ProxyUpstream{Events: 5, Interval: time.Millisecond})
	defer up.Close()
	for _, c := range []struct {
		model  string
		deltas int
	}{{"bench", 5}, {WarmupModel, 1}} {
		before := time.Now().UnixNano()
		resp, err := http.Post(up.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"`+c.model+`","stream":true}`))
		if err != nil {
			t.Fatal(err)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Errorf("Content-Type %q", ct)
		}
		chunks, done := chatLines(t, resp.Body)
		resp.Body.Close()
		after := time.Now().UnixNano()
		if !done {
			t.Errorf("%s: no [DONE]", c.model)
		}
		var stamps []int64
		var finish, usage int
		for _, ch := range chunks {
			if u, ok := ch["usage"].(map[string]any); ok {
				usage++
				if u["completion_tokens"] != float64(c.deltas) {
					t.Errorf("%s: usage %v", c.model, u)
				}
				continue
			}
			choice := ch["choices"].([]any)[0].(map[string]any)
			if choice["finish_reason"] != nil {
				finish++
			}
			delta := choice["delta"].(map[string]any)
			if text, _ := delta["content"].(string); text != "" {
				v, ok := ParseStamp([]byte(text))
				if !ok {
					t.Fatalf("%s: delta %q carries no stamp", c.model, text)
				}
				stamps = append(stamps, v)
			}
		}
		if len(stamps) != c.deltas || finish != 1 || usage != 1 {
			t.Fatalf("%s: %d stamped deltas, %d finishes, %d usage chunks; want %d, 1, 1", c.model, len(stamps), finish, usage, c.deltas)
		}
		for i, v := range stamps {
			if v < before || v > after || i > 0 && v < stamps[i-1] {
				t.Errorf("%s: stamp %d (%d) outside the request [%d, %d] or out of order", c.model, i, v, before, after)
			}
		}
	}
}

// measuredSelf is a target that measures this process: its RuntimeStats
// served by an httptest server.
func measuredSelf(t *testing.T) (pid int, debug string) {
	t.Helper()
	if _, err := ReadProcStats(os.Getpid()); err != nil {
		return 0, ""
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(procdebug.ReadRuntimeStats())
	}))
	t.Cleanup(ts.Close)
	return os.Getpid(), ts.URL + "/debug/runtime"
}

func TestRunLoad(t *testing.T) {
	up := httptest.NewServer(ProxyUpstream{Events: 4, Interval: 0})
	defer up.Close()
	u, _ := url.Parse(up.URL)
	pass := httptest.NewServer(PassThrough(u, 8))
	defer pass.Close()
	pid, debug := measuredSelf(t)
	body := []byte(`{"model":"bench","messages":[],"stream":true}`)
	warm := []byte(`{"model":"` + WarmupModel + `","stream":true}`)
	for _, target := range []ProxyTarget{
		{Name: TargetDirect, URL: up.URL + "/v1/chat/completions", Body: body, Warmup: warm, Stream: StreamChat},
		{Name: TargetPassThrough, URL: pass.URL + "/v1/chat/completions", Body: body, Warmup: warm, Stream: StreamChat, PID: pid, Debug: debug},
	} {
		run, err := RunLoad(context.Background(), target, LoadOptions{Streams: 6, Rounds: 2, Events: 4, Ramp: 5 * time.Millisecond, Sample: 5 * time.Millisecond})
		if err != nil {
			t.Fatalf("%s: %v", target.Name, err)
		}
		if run.Errors != 0 || run.Requests != 12 || run.Deltas != 48 {
			t.Errorf("%s: %d errors (%s), %d requests, %d deltas; want 0, 12, 48", target.Name, run.Errors, run.FirstError, run.Requests, run.Deltas)
		}
		if !(run.Latency.P50 <= run.Latency.P99 && run.Latency.P99 <= run.Latency.Max) {
			t.Errorf("%s: latency percentiles out of order: %+v", target.Name, run.Latency)
		}
		if target.PID == 0 {
			if run.Process != nil {
				t.Errorf("%s: process figures without a process", target.Name)
			}
			continue
		}
		p := run.Process
		if p == nil || p.RSSBase == 0 || p.RSSPeak < p.RSSBase || p.CPUSeconds < 0 || p.RuntimeBase == nil || p.RuntimePeak == nil || p.GoroutinesBefore == 0 {
			t.Errorf("%s: process figures %+v", target.Name, p)
		}
	}
}

func TestRunLoadCountsFailedStreams(t *testing.T) {
	fail := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no capacity", http.StatusServiceUnavailable)
	}))
	defer fail.Close()
	short := httptest.NewServer(ProxyUpstream{Events: 2})
	defer short.Close()
	responses := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"ts=5 \"}\n\n"+
			"event: response.failed\ndata: {\"type\":\"response.failed\"}\n\n")
	}))
	defer responses.Close()
	for _, c := range []struct {
		target ProxyTarget
		want   string
	}{
		{ProxyTarget{Name: "down", URL: fail.URL, Stream: StreamChat}, "HTTP 503: no capacity"},
		{ProxyTarget{Name: "short", URL: short.URL, Stream: StreamChat}, "got 2 deltas, want 3"},
		{ProxyTarget{Name: "failed", URL: responses.URL, Stream: StreamResponses}, "response.failed"},
	} {
		run, err := RunLoad(context.Background(), c.target, LoadOptions{Streams: 3, Events: 3})
		if err != nil {
			t.Fatal(err)
		}
		if run.Errors != 3 || run.Requests != 3 || !strings.Contains(run.FirstError, c.want) {
			t.Errorf("%s: %d of %d failed, first %q; want 3 of 3, %q", c.target.Name, run.Errors, run.Requests, run.FirstError, c.want)
		}
	}
	if _, err := RunLoad(context.Background(), ProxyTarget{Name: "x", URL: fail.URL, Stream: StreamChat, Warmup: []byte(`{}`)}, LoadOptions{Streams: 1, Events: 1}); err == nil {
		t.Error("a failed warm-up request is not an error of the run")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RunLoad(ctx, ProxyTarget{Name: "x", URL: short.URL, Stream: StreamChat}, LoadOptions{Streams: 2, Events: 2}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: %v", err)
	}
}

func TestPercentiles(t *testing.T) {
	ns := make([]int64, 0, 200)
	for i := 200; i >= 1; i-- {
		ns = append(ns, int64(i)*1e6) // 1 … 200 ms, reversed
	}
	p := percentiles(ns)
	if p.P50 != 100 || p.P99 != 198 || p.Max != 200 {
		t.Errorf("percentiles of 1…200 ms: %+v", p)
	}
	if p := percentiles(nil); !math.IsNaN(p.P99) {
		t.Errorf("no latencies: %+v", p)
	}
}

func TestReadProcStats(t *testing.T) {
	st, err := ReadProcStats(os.Getpid())
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	if st.RSS < 1<<20 {
		t.Errorf("RSS %d bytes: implausible for a Go test binary", st.RSS)
	}
	// Burn a little CPU; the counter must not go down.
	x := 0
	for i := range 20_000_000 {
		x += i % 7
	}
	st2, err := ReadProcStats(os.Getpid())
	if err != nil || st2.CPU < st.CPU || x < 0 {
		t.Errorf("CPU went from %v to %v (%v)", st.CPU, st2.CPU, err)
	}
	if _, err := ReadProcStats(1 << 30); err == nil {
		t.Error("no error for a process that does not exist")
	}
}

// syntheticReport is a report of three targets at two N.
func syntheticReport() *ProxyReport {
	run := func(target string, n int, p50, p99 float64, proc *ProcessFigures) *ProxyRun {
		return &ProxyRun{Target: target, Streams: n, Requests: 2 * n, Deltas: 120 * n, Latency: Percentiles{P50: p50, P99: p99, Max: p99 * 2}, Process: proc}
	}
	fig := func(cpu, rss float64) *ProcessFigures {
		return &ProcessFigures{CPUPerDeltaUS: cpu, RSSPerStream: rss, RuntimePeak: &RuntimeStats{}}
	}
	return &ProxyReport{
		Title: "bench proxy", Machine: benchmark.Machine{GoVersion: "go1.x", OS: "linux", Arch: "amd64", CPUs: 2},
		Goals: &DefaultProxyGoals,
		Runs: []*ProxyRun{
			run(TargetDirect, 100, 0.1, 0.5, nil),
			run(TargetPassThrough, 100, 0.2, 0.9, fig(20, 60<<10)),
			run("serve native", 100, 0.3, 1.1, fig(30, 100<<10)),
			run(TargetDirect, 2000, 0.2, 2.0, nil),
			run(TargetPassThrough, 2000, 0.4, 2.5, fig(20, 60<<10)),
			run("serve native", 2000, 0.5, 2.6, fig(4, 50<<10)),
		},
	}
}

func TestProxyReportCompare(t *testing.T) {
	r := syntheticReport()
	r.Compare()
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	s := r.find("serve native", 2000)
	if s.Added == nil || !near(s.Added.P50, 0.3) || !near(s.Added.P99, 0.6) || !near(s.VsPassThrough, 0.6/0.5) {
		t.Errorf("serve at 2000: added %+v, × pass-through %v", s.Added, s.VsPassThrough)
	}
	if d := r.find(TargetDirect, 100); d.Added != nil || d.VsPassThrough != 0 {
		t.Errorf("direct compared to itself: %+v", d)
	}
	var b bytes.Buffer
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"| 2000 | serve native | 0.50 | 2.60 | 5.20 | +0.30 | +0.60 | 1.20× |",
		"serve native at N = 2000: p99 added latency +0.60 ms (goal ≤ 1 ms): met",
		"serve native at N = 2000: p99 added +0.60 ms vs the pass-through's +0.50 ms (goal ≤ 1.5×, i.e. ≤ 0.75 ms): met",
		"serve native at N = 2000: proxy CPU 4.00 µs per delta (goal ≤ 5 µs): met",
		"serve native at N = 2000: 50.0 KB RSS per concurrent stream (goal ≤ 64.0 KB): met",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "N = 100:") {
		t.Errorf("goals checked below the largest N:\n%s", md)
	}
	r.find("serve native", 2000).Process.CPUPerDeltaUS = 9
	if checks := strings.Join(r.GoalChecks(), "\n"); !strings.Contains(checks, "proxy CPU 9.00 µs per delta (goal ≤ 5 µs): MISSED") {
		t.Errorf("a missed goal is not reported:\n%s", checks)
	}
	var j bytes.Buffer
	if err := r.WriteJSON(&j); err != nil {
		t.Fatal(err)
	}
	var back ProxyReport
	if err := json.Unmarshal(j.Bytes(), &back); err != nil || len(back.Runs) != 6 || back.Runs[5].Added == nil {
		t.Errorf("JSON does not read back: %v", err)
	}
}

func TestProxyReportSVG(t *testing.T) {
	r := syntheticReport()
	r.Compare()
	svg, err := r.SVG()
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v", err)
		}
		if cd, ok := tok.(xml.CharData); ok {
			text.Write(cd)
		}
	}
	for _, want := range []string{
		"per-event latency vs concurrent streams", "latency per event, ms (log scale)", "concurrent streams N (log scale)",
		"direct p99", "pass-through p50", "serve native p99", "p99 added latency per event, ms", "goal ≤ 1 ms",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the chart lacks %q", want)
		}
	}
}
