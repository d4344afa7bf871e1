package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/loadtest"
)

func TestLoadUsage(t *testing.T) {
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
		code, _, errOut := cli(t, c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, code, errOut, exitUsage, c.want)
		}
	}
}

func TestLoadProcessesStayOnLoopback(t *testing.T) {
	for _, args := range [][]string{
		{"upstream", "--listen", "0.0.0.0:0"},
		{"passthrough", "--listen", "0.0.0.0:0", "--upstream", "http://127.0.0.1:1"},
		{"passthrough", "--upstream", "http://10.1.2.3:80"},
	} {
		code, _, errOut := cli(t, args...)
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

func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and starts processes")
	}
	bin := buildHarnessflow(t)
	svg := filepath.Join(t.TempDir(), "proxy.svg")
	prof := filepath.Join(t.TempDir(), "profiles")
	code, out, errOut := cli(t, "--bin", bin, "--streams", "2,4", "--events", "3", "--interval", "2ms",
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

	code, out, errOut = cli(t, "--bin", bin, "--streams", "3", "--events", "2", "--interval", "1ms",
		"--targets", "native,direct", "--json")
	if code != exitOK {
		t.Fatalf("JSON run: exit %d: %s", code, errOut)
	}
	var report loadtest.ProxyReport
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
	code, out, errOut = cli(t, "--bin", bin, "--streams", "2", "--events", "2", "--interval", "1ms",
		"--targets", "messages-inbound,chat-inbound", "--json")
	if code != exitOK {
		t.Fatalf("inbound run: exit %d: %s", code, errOut)
	}
	report = loadtest.ProxyReport{}
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
