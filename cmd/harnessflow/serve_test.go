package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/harnessflow/harnessflow/scripted"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// lockedBuffer collects a command's output while it runs.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// running is a long-running command started in the background.
type running struct {
	cancel         context.CancelFunc
	done           chan int
	stdout, stderr *lockedBuffer
}

func start(t *testing.T, run func(context.Context, []string, io.Reader, io.Writer, io.Writer) int, args ...string) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan int, 1), stdout: &lockedBuffer{}, stderr: &lockedBuffer{}}
	go func() { r.done <- run(ctx, args, strings.NewReader(""), r.stdout, r.stderr) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(10 * time.Second):
			t.Error("command did not stop")
		}
	})
	return r
}

var urlRE = regexp.MustCompile(`http://127\.0\.0\.1:\d+`)

// address waits for the command to print its URL.
func (r *running) address(t *testing.T) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if u := urlRE.FindString(r.stdout.String()); u != "" {
			return u
		}
		select {
		case code := <-r.done:
			t.Fatalf("exited with %d: %s", code, r.stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("no address printed: %q", r.stdout.String())
	return ""
}

// stop cancels the command and returns its exit status.
func (r *running) stop(t *testing.T) int {
	t.Helper()
	r.cancel()
	select {
	case code := <-r.done:
		r.done <- code // for the cleanup
		return code
	case <-time.After(10 * time.Second):
		t.Fatal("command did not stop")
	}
	return -1
}

const serveRequest = `{"model":"gpt-5.5","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}],` +
	`"tools":[{"type":"function","name":"exec_command","strict":false,"parameters":{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}}],` +
	`"tool_choice":"auto","parallel_tool_calls":true,"reasoning":null,"store":false,"stream":true,"include":[]}`

func postSSE(t *testing.T, client *http.Client, url, auth string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(serveRequest))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %v: %s", resp.StatusCode, err, body)
	}
	return string(body)
}

// serve with the built-in scripted model: one request, then a clean exit.
func TestServeScripted(t *testing.T) {
	r := start(t, runServe, "--listen", "127.0.0.1:0")
	base := r.address(t)
	out := r.stdout.String()
	if !strings.Contains(out, `base_url = "`+base+`/v1"`) || !strings.Contains(out, `wire_api = "responses"`) || !strings.Contains(out, "scripted model") {
		t.Errorf("stdout %q", out)
	}
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	body := postSSE(t, client, base+"/v1/responses", "")
	if !strings.Contains(body, "event: response.completed") || !strings.Contains(body, `"name":"exec_command"`) ||
		!strings.Contains(body, `echo hello from harnessflow`) {
		t.Errorf("stream:\n%s", body)
	}
	resp, err := client.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if code := r.stop(t); code != exitOK {
		t.Fatalf("exit %d: %s", code, r.stderr.String())
	}
	if logs := r.stderr.String(); !strings.Contains(logs, "outcome=completed") {
		t.Errorf("stderr %q", logs)
	}
}

// serve in front of a given upstream, with the key from the environment and
// the upstream bytes recorded.
func TestServeUpstreamKeyRecord(t *testing.T) {
	var mu sync.Mutex
	var auth []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		scripted.New(nil).ServeHTTP(w, r)
	}))
	defer up.Close()
	t.Setenv("HF_TEST_KEY", "sk-from-env")
	dir := t.TempDir()
	r := start(t, runServe, "--listen", "127.0.0.1:0", "--upstream", up.URL+"/v1", "--upstream-wire", "chat",
		"--api-key-env", "HF_TEST_KEY", "--mode", "async", "--record", dir, "--redact")
	base := r.address(t)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	body := postSSE(t, client, base+"/h/minimal/v1/responses", "Bearer sk-client")
	if !strings.Contains(body, "event: response.completed") {
		t.Errorf("stream:\n%s", body)
	}
	if code := r.stop(t); code != exitOK {
		t.Fatalf("exit %d: %s", code, r.stderr.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auth) != 1 || auth[0] != "Bearer sk-from-env" {
		t.Errorf("upstream Authorization %q", auth)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) != 1 {
		t.Fatalf("recordings %v", files)
	}
	rec, _ := os.ReadFile(files[0])
	if !bytes.Contains(rec, []byte("data: [DONE]")) {
		t.Errorf("recording %q", rec)
	}
	if logs := r.stderr.String(); strings.Contains(logs, "sk-from-env") || strings.Contains(logs, "sk-client") {
		t.Errorf("credentials in the logs: %s", logs)
	}
}

func TestServeBadFlags(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--upstream-wire", "grpc"}, exitUsage, "--upstream-wire"},
		{[]string{"--mode", "turbo"}, exitUsage, "--mode"},
		{[]string{"--api-key-env", "HF_TEST_SURELY_UNSET"}, exitUsage, "HF_TEST_SURELY_UNSET"},
		{[]string{"--upstream-wire", "responses"}, exitUsage, "needs --upstream"},
		{[]string{"--upstream", "ftp://x"}, exitUsage, "--upstream"},
		{[]string{"--script", "/nonexistent/script.json"}, exitUsage, "script.json"},
		{[]string{"--listen", busy.Addr().String()}, exitError, "address already in use"},
		{[]string{"extra"}, exitUsage, "Usage"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		code := runServe(context.Background(), c.args, nil, &out, &errb)
		if code != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q", c.args, code, errb.String())
		}
	}
}

func TestMockUpstream(t *testing.T) {
	script := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(script, []byte(`{"turns":[{"text":"scripted hello"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := start(t, runMockUpstream, "--listen", "127.0.0.1:0", "--script", script)
	base := r.address(t)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Post(base+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if m := regexp.MustCompile(`"content":"([^"]*)"`).FindStringSubmatch(sc.Text()); m != nil {
			text.WriteString(m[1])
		}
	}
	resp.Body.Close()
	if text.String() != "scripted hello" {
		t.Errorf("text %q", text.String())
	}
	if code := r.stop(t); code != exitOK {
		t.Fatalf("exit %d: %s", code, r.stderr.String())
	}
	var out, errb bytes.Buffer
	if code := runMockUpstream(context.Background(), []string{"--script", script + ".missing"}, nil, &out, &errb); code != exitUsage {
		t.Errorf("missing script: exit %d %q", code, errb.String())
	}
}
