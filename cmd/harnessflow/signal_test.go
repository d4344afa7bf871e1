package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// buildHarnessflow builds this command into a temporary directory, with the
// test binary's race setting (the packages are then already compiled: the
// build is a link).
func buildHarnessflow(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("signals: POSIX only")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "harnessflow")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"build", "-ldflags=-s -w", "-o", bin} // no symbol tables: a faster link
	if raceBuild {
		args = append(args, "-race")
	}
	out, err := exec.CommandContext(ctx, goTool, append(args, ".")...).CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// heldChat is a chat upstream whose streams send one delta, then wait for
// release (or the request's end) before they finish.
type heldChat struct {
	release chan struct{}
	once    sync.Once
}

func (u *heldChat) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"first "},"finish_reason":null}]}`+"\n\n")
	http.NewResponseController(w).Flush()
	select {
	case <-u.release:
	case <-r.Context().Done():
		return
	}
	io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"last"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
}

func (u *heldChat) finish() { u.once.Do(func() { close(u.release) }) }

// process is a `harnessflow serve` child process.
type process struct {
	cmd    *exec.Cmd
	base   string
	stderr *lockedBuffer
	exited chan error
}

var listenRE = regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)

func startServeProcess(t *testing.T, bin string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "HARNESSFLOW_TEST_UPSTREAM_KEY=sk-upstream-test-secret")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, stderr: &lockedBuffer{}, exited: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
		}
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := listenRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
		p.exited <- cmd.Wait()
	}()
	select {
	case p.base = <-addr:
	case err := <-p.exited:
		p.exited <- err
		t.Fatalf("serve exited (%v): %s", err, p.stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatalf("serve printed no address: %s", p.stderr.String())
	}
	return p
}

// wait returns the process's exit code.
func (p *process) wait(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case err := <-p.exited:
		p.exited <- err
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(within):
		t.Fatalf("serve did not exit within %s: %s", within, p.stderr.String())
	}
	return -1
}

// waitLog waits for text in the process's stderr.
func (p *process) waitLog(t *testing.T, text string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(p.stderr.String(), text) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in stderr:\n%s", text, p.stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// streams opens n streams and returns once each got its first bytes; the
// whole bodies arrive on the returned channel.
func streams(t *testing.T, base string, n int) <-chan string {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	bodies := make(chan string, n)
	var started sync.WaitGroup
	for range n {
		started.Add(1)
		go func() {
			resp, err := client.Post(base+"/v1/responses", "application/json", strings.NewReader(serveRequest))
			if err != nil {
				started.Done()
				bodies <- "error: " + err.Error()
				return
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			first, err := br.ReadString('\n')
			started.Done()
			rest, _ := io.ReadAll(br)
			if err != nil {
				bodies <- "error: " + err.Error()
				return
			}
			bodies <- first + string(rest)
		}()
	}
	started.Wait()
	return bodies
}

// lastEvent returns the name of a raw stream's last event.
func lastEvent(body string) string {
	i := strings.LastIndex(body, "event: ")
	if i < 0 {
		return ""
	}
	name, _, _ := strings.Cut(body[i+len("event: "):], "\n")
	return name
}

// A real `harnessflow serve` process and SIGTERM: with ten streams in
// flight it stops accepting, lets them finish (every client gets
// response.completed), and exits 0. With the upstream stalled, a second
// signal ends the streams at once with response.failed, and it exits 0.
func TestServeProcessSignals(t *testing.T) {
	bin := buildHarnessflow(t)

	t.Run("SIGTERM lets ten streams finish", func(t *testing.T) {
		up := &heldChat{release: make(chan struct{})}
		ts := httptest.NewServer(up)
		defer ts.Close()
		defer up.finish()
		p := startServeProcess(t, bin, "--upstream", ts.URL+"/v1", "--shutdown-grace", "10s")
		bodies := streams(t, p.base, 10)
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		p.waitLog(t, "in_flight=10")
		if c, err := net.DialTimeout("tcp", strings.TrimPrefix(p.base, "http://"), time.Second); err == nil {
			c.Close()
			t.Error("still accepting connections after SIGTERM")
		}
		up.finish()
		for range 10 {
			if body := <-bodies; lastEvent(body) != "response.completed" {
				t.Errorf("stream ended with %q:\n%s", lastEvent(body), body)
			}
		}
		if code := p.wait(t, 5*time.Second); code != 0 {
			t.Errorf("exit code %d: %s", code, p.stderr.String())
		}
	})

	t.Run("second signal stops at once", func(t *testing.T) {
		up := &heldChat{release: make(chan struct{})}
		ts := httptest.NewServer(up)
		defer ts.Close()
		defer up.finish()
		p := startServeProcess(t, bin, "--upstream", ts.URL+"/v1", "--shutdown-grace", "1m")
		bodies := streams(t, p.base, 4)
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		p.waitLog(t, "shutting down")
		start := time.Now()
		if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		for range 4 {
			body := <-bodies
			if lastEvent(body) != "response.failed" || !strings.Contains(body, `"code":"server_shutdown"`) {
				t.Errorf("stream ended with %q:\n%s", lastEvent(body), body)
			}
		}
		if code := p.wait(t, 5*time.Second); code != 0 {
			t.Errorf("exit code %d: %s", code, p.stderr.String())
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("stopped %s after the second signal", d)
		}
		if !strings.Contains(p.stderr.String(), "stopping at once") {
			t.Errorf("stderr:\n%s", p.stderr.String())
		}
	})

	t.Run("open relay refused", func(t *testing.T) {
		cmd := exec.Command(bin, "serve", "--listen", "0.0.0.0:0", "--upstream", "http://127.0.0.1:1/v1", "--api-key-env", "HARNESSFLOW_TEST_UPSTREAM_KEY")
		cmd.Env = append(os.Environ(), "HARNESSFLOW_TEST_UPSTREAM_KEY=sk-upstream-test-secret")
		out, err := cmd.CombinedOutput()
		ee, ok := errors.AsType[*exec.ExitError](err)
		if !ok || ee.ExitCode() != exitUsage || !strings.Contains(string(out), "refusing to serve") || strings.Contains(string(out), "listening on") ||
			strings.Contains(string(out), "sk-upstream-test-secret") {
			t.Errorf("%v: %s", err, out)
		}
	})
}
