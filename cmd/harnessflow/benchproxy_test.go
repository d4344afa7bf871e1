package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/benchmark"
)

func TestBenchProxyUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--streams", "0"}, "--streams"},
		{[]string{"--streams", "10,x"}, "--streams"},
		{[]string{"--streams", "20000"}, "--streams"},
		{[]string{"--events", "0"}, "--events"},
		{[]string{"--interval", "-1s"}, "--interval"},
		{[]string{"--rounds", "0"}, "--rounds"},
		{[]string{"--targets", "direct,nginx"}, "--targets"},
		{[]string{"--harness", "no-such-harness"}, "--harness"},
		{[]string{"--max-duration", "10s"}, "over --max-duration"},
		{[]string{"--request", "/nonexistent/request.json"}, "--request"},
		{[]string{"extra"}, "unexpected argument"},
	} {
		code, _, errOut := cli(t, "", append([]string{"bench", "proxy"}, c.args...)...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("bench proxy %v: exit %d, %q; want %d and %q", c.args, code, errOut, exitUsage, c.want)
		}
	}
}

func TestBenchProxyProcessesStayOnLoopback(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "proxy-upstream", "--listen", "0.0.0.0:0"},
		{"bench", "proxy-passthrough", "--listen", "0.0.0.0:0", "--upstream", "http://127.0.0.1:1"},
		{"bench", "proxy-passthrough", "--upstream", "http://10.1.2.3:80"},
		{"serve", "--debug-addr", "0.0.0.0:0", "--listen", "127.0.0.1:0"},
	} {
		code, _, errOut := cli(t, "", args...)
		if code != exitUsage || !strings.Contains(errOut, "loopback") {
			t.Errorf("%v: exit %d, %q; want a usage error about loopback", args, code, errOut)
		}
	}
}

// children returns the processes whose parent is this one (Linux; nil
// elsewhere).
func children(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	me := strconv.Itoa(os.Getpid())
	var out []string
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …
		if i := bytes.LastIndexByte(stat, ')'); i > 0 {
			if f := strings.Fields(string(stat[i+1:])); len(f) > 1 && f[1] == me {
				out = append(out, string(stat[:i+1]))
			}
		}
	}
	return out
}

func TestBenchProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and starts processes")
	}
	bin := buildHarnessflow(t)
	svg := filepath.Join(t.TempDir(), "proxy.svg")
	prof := filepath.Join(t.TempDir(), "profiles")
	code, out, errOut := cli(t, "", "bench", "proxy", "--bin", bin, "--streams", "2,4", "--events", "3", "--interval", "2ms",
		"--rounds", "2", "--svg", svg, "--profile", prof, "--profile-seconds", "1")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, n := range []string{"2", "4"} {
		for _, target := range []string{"direct", "pass-through", "serve native", "serve minimal"} {
			row := regexp.MustCompile(`(?m)^\| ` + n + ` \| ` + target + ` \| .* \| 0 / ` + strconv.Itoa(2*atoi(t, n)) + ` \|`)
			if !row.MatchString(out) {
				t.Errorf("no error-free row for %s at N = %s:\n%s", target, n, out)
			}
		}
	}
	for _, want := range []string{
		"Each stream: 3 text deltas 2ms apart", "serve native at N = 4: proxy CPU", "serve minimal at N = 4: p99 added latency",
		"RSS per concurrent stream (goal ≤ 64.0 KB)", "load average",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	text := xmlText(t, mustRead(t, svg))
	for _, want := range []string{"per-event latency vs concurrent streams", "serve native p99", "concurrent streams N (log scale)"} {
		if !strings.Contains(text, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	for _, f := range []string{"N4-serve-native.cpu.pprof", "N4-serve-minimal.heap.pprof", "N2-pass-through.cpu.pprof"} {
		if fi, err := os.Stat(filepath.Join(prof, f)); err != nil || fi.Size() == 0 {
			t.Errorf("profile %s: %v", f, err)
		}
	}
	if left := children(t); len(left) > 0 {
		t.Errorf("processes left running: %v", left)
	}

	code, out, errOut = cli(t, "", "bench", "proxy", "--bin", bin, "--streams", "3", "--events", "2", "--interval", "1ms",
		"--targets", "native,direct", "--json")
	if code != exitOK {
		t.Fatalf("JSON run: exit %d: %s", code, errOut)
	}
	var report benchmark.ProxyReport
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	if len(report.Runs) != 2 || report.Runs[0].Target != "direct" || report.Runs[1].Target != "serve native" {
		t.Fatalf("runs: %+v", report.Runs)
	}
	s := report.Runs[1]
	if s.Errors != 0 || s.Deltas != 3*2*2 || s.Added == nil || s.Process == nil || s.Process.RuntimePeak == nil || s.Process.GoroutinesAfter == 0 {
		t.Errorf("serve native: %+v (process %+v)", s, s.Process)
	}

	// The inbound targets: a Chat Completions and a Messages client of serve.
	code, out, errOut = cli(t, "", "bench", "proxy", "--bin", bin, "--streams", "2", "--events", "2", "--interval", "1ms",
		"--targets", "messages-inbound,chat-inbound", "--json")
	if code != exitOK {
		t.Fatalf("inbound run: exit %d: %s", code, errOut)
	}
	report = benchmark.ProxyReport{}
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	if len(report.Runs) != 2 || report.Runs[0].Target != "serve chat-inbound" || report.Runs[1].Target != "serve messages-inbound" {
		t.Fatalf("inbound runs: %+v", report.Runs)
	}
	for _, r := range report.Runs {
		if r.Errors != 0 || r.Deltas != 2*2*2 {
			t.Errorf("%s: %+v", r.Target, r)
		}
	}
	if left := children(t); len(left) > 0 {
		t.Errorf("processes left running: %v", left)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDebugHandler(t *testing.T) {
	ts := httptest.NewServer(debugHandler())
	defer ts.Close()
	get := func(path string) (int, []byte) {
		t.Helper()
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	code, body := get("/debug/runtime")
	var st benchmark.RuntimeStats
	if err := json.Unmarshal(body, &st); code != http.StatusOK || err != nil || st.Goroutines == 0 || st.HeapObjects == 0 || st.GOMAXPROCS == 0 {
		t.Errorf("/debug/runtime: %d %s (%v)", code, body, err)
	}
	if code, body := get("/debug/pprof/heap"); code != http.StatusOK || len(body) < 2 || body[0] != 0x1f || body[1] != 0x8b {
		t.Errorf("/debug/pprof/heap: %d, %d bytes (want a gzipped profile)", code, len(body))
	}
	if code, body := get("/debug/pprof/goroutine?debug=1"); code != http.StatusOK || !strings.Contains(string(body), "goroutine profile:") {
		t.Errorf("/debug/pprof/goroutine?debug=1: %d %.80s", code, body)
	}
	if code, body := get("/debug/pprof/profile?seconds=1"); code != http.StatusOK || len(body) < 2 || body[0] != 0x1f {
		t.Errorf("/debug/pprof/profile: %d, %d bytes", code, len(body))
	}
	if code, _ := get("/debug/pprof/profile?seconds=0"); code != http.StatusBadRequest {
		t.Errorf("seconds=0: %d", code)
	}
	if code, _ := get("/debug/pprof/no-such-profile"); code != http.StatusNotFound {
		t.Errorf("unknown profile: %d", code)
	}
	if code, body := get("/debug/pprof/"); code != http.StatusOK || !strings.Contains(string(body), "/debug/pprof/heap") {
		t.Errorf("index: %d %s", code, body)
	}
}

var debugURLRE = regexp.MustCompile(`debug endpoints on (http://127\.0\.0\.1:\d+)`)

func TestServeDebugAddr(t *testing.T) {
	r := start(t, runServe, "--listen", "127.0.0.1:0", "--debug-addr", "127.0.0.1:0")
	r.address(t)
	var debug string
	deadline := time.Now().Add(10 * time.Second)
	for debug == "" && time.Now().Before(deadline) {
		if m := debugURLRE.FindStringSubmatch(r.stdout.String()); m != nil {
			debug = m[1]
		}
		time.Sleep(10 * time.Millisecond)
	}
	if debug == "" {
		t.Fatalf("no debug address printed: %s", r.stdout.String())
	}
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Get(debug + "/debug/runtime")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st benchmark.RuntimeStats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || st.Goroutines == 0 {
		t.Errorf("runtime stats: %+v, %v", st, err)
	}
	client.CloseIdleConnections()
	if code := r.stop(t); code != exitOK {
		t.Errorf("serve exited with %d: %s", code, r.stderr.String())
	}
}
