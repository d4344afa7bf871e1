package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"github.com/harnessflow/harnessflow/internal/httpserve"
	"github.com/harnessflow/harnessflow/internal/procdebug"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/harnessflow/harnessflow/loadtest"
)

// The processes of a load run: the scripted upstream and the pass-through
// proxy are hidden subcommands of this command (upstream, passthrough),
// serve is `harnessflow serve`; the run starts them all on loopback ports.

// runUpstream implements the hidden `harnessflow-load upstream`:
// loadtest.ProxyUpstream on a loopback address until ctx ends.
func runUpstream(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("upstream", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "loopback `ADDR` to listen on")
	events := fs.Int("events", 60, "text deltas per answer")
	interval := fs.Duration("interval", 50*time.Millisecond, "time between two deltas")
	if err := fs.Parse(args); err != nil {
		return flagStatus(err)
	}
	if fs.NArg() > 0 || *events < 1 || *interval < 0 {
		return fail(stderr, "upstream", exitUsage, "want --events ≥ 1, --interval ≥ 0 and no arguments")
	}
	ln, err := listenLoopback(ctx, *listen)
	if err != nil {
		return fail(stderr, "upstream", exitUsage, "%v", err)
	}
	fmt.Fprintf(stdout, "harnessflow-load upstream: listening on http://%s\n", ln.Addr())
	if err := httpserve.Serve(ctx, ln, loadtest.ProxyUpstream{Events: *events, Interval: *interval}, stderr); err != nil {
		return fail(stderr, "upstream", exitError, "%v", err)
	}
	return exitOK
}

// runPassThrough implements the hidden `harnessflow-load passthrough`:
// loadtest.PassThrough to --upstream, with the debug endpoints under
// /debug/ on the same loopback address, until ctx ends.
func runPassThrough(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("passthrough", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "loopback `ADDR` to listen on")
	upstream := fs.String("upstream", "", "the upstream's `URL` (loopback)")
	idle := fs.Int("idle", 100, "idle upstream connections kept (the expected concurrency)")
	if err := fs.Parse(args); err != nil {
		return flagStatus(err)
	}
	u, err := url.Parse(*upstream)
	if err != nil || fs.NArg() > 0 || u.Host == "" {
		return fail(stderr, "passthrough", exitUsage, "want --upstream http://127.0.0.1:PORT and no arguments")
	}
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
		return fail(stderr, "passthrough", exitUsage, "--upstream: %s is not a loopback address", u.Host)
	}
	ln, err := listenLoopback(ctx, *listen)
	if err != nil {
		return fail(stderr, "passthrough", exitUsage, "%v", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/", procdebug.Handler())
	mux.Handle("/", loadtest.PassThrough(u, *idle))
	fmt.Fprintf(stdout, "harnessflow-load passthrough: listening on http://%s\n", ln.Addr())
	if err := httpserve.Serve(ctx, ln, mux, stderr); err != nil {
		return fail(stderr, "passthrough", exitError, "%v", err)
	}
	return exitOK
}

// listenLoopback listens on addr, which must be a loopback address.
func listenLoopback(ctx context.Context, addr string) (net.Listener, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--listen: %w", err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		ln.Close()
		return nil, fmt.Errorf("--listen: %s is not a loopback address (the load run's processes stay on this machine)", ln.Addr())
	}
	return ln, nil
}

// findHarnessflow finds the harnessflow binary serve runs from when --bin
// is not given: the one next to self (this binary), else the one on PATH.
func findHarnessflow(self string) (string, error) {
	exe := "harnessflow"
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	if next := filepath.Join(filepath.Dir(self), exe); fileExists(next) {
		return next, nil
	}
	if p, err := exec.LookPath(exe); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("no harnessflow binary next to %s nor on PATH: build one (go build -o DIR/ ./cmd/harnessflow ./cmd/harnessflow-load puts both in DIR) or name it with --bin", self)
}

func fileExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// child is a process a load run started.
type child struct {
	name   string
	cmd    *exec.Cmd
	urls   []string // what its startup lines announced, in the order asked
	stderr *os.File // its standard error (a temporary file)
	exited chan struct{}
	err    error // its exit, once exited is closed
}

// childStartTimeout bounds the wait for a child's startup lines.
const childStartTimeout = 30 * time.Second

// startChild starts bin with args and waits for one line of its standard
// output to match each of patterns (each with one group: the URL it
// announces).
func startChild(ctx context.Context, name, bin string, args []string, patterns ...*regexp.Regexp) (*child, error) {
	errFile, err := os.CreateTemp("", "harnessflow-load-*.stderr")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	_ = os.Remove(errFile.Name()) // kept open: read back on failure, gone at exit
	cmd := exec.Command(bin, args...)
	cmd.Stderr = errFile
	out, err := cmd.StdoutPipe()
	if err != nil {
		errFile.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		errFile.Close()
		return nil, fmt.Errorf("%s: start %s: %w", name, bin, err)
	}
	c := &child{name: name, cmd: cmd, urls: make([]string, len(patterns)), stderr: errFile, exited: make(chan struct{})}
	lines := make(chan string)
	startup := make(chan struct{}) // closed when the startup lines are no longer read
	endStartup := sync.OnceFunc(func() { close(startup) })
	defer endStartup()
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-startup: // later lines are dropped
			}
		}
		_, _ = io.Copy(io.Discard, out)
		c.err = cmd.Wait()
		close(c.exited)
	}()
	timer := time.NewTimer(childStartTimeout)
	defer timer.Stop()
	for found := 0; found < len(patterns); {
		select {
		case line := <-lines:
			for i, re := range patterns {
				if m := re.FindStringSubmatch(line); m != nil && c.urls[i] == "" {
					c.urls[i] = m[1]
					found++
				}
			}
		case <-c.exited:
			return nil, fmt.Errorf("%s exited at startup (%v): %s", name, c.err, c.stderrTail())
		case <-timer.C:
			endStartup()
			c.stop()
			return nil, fmt.Errorf("%s announced no address within %v: %s", name, childStartTimeout, c.stderrTail())
		case <-ctx.Done():
			endStartup()
			c.stop()
			return nil, ctx.Err()
		}
	}
	return c, nil
}

// pid is the child's process id.
func (c *child) pid() int { return c.cmd.Process.Pid }

// stop ends the child: SIGTERM (a graceful shutdown), then after 10 s a
// kill. It returns once the process has exited.
func (c *child) stop() {
	select {
	case <-c.exited:
	default:
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.exited:
		case <-time.After(10 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.exited
		}
	}
	c.stderr.Close()
}

// running reports an error when the child has exited.
func (c *child) running() error {
	select {
	case <-c.exited:
		return fmt.Errorf("%s exited (%v): %s", c.name, c.err, c.stderrTail())
	default:
		return nil
	}
}

// stderrTail is the end of the child's standard error, on one line.
func (c *child) stderrTail() string {
	fi, err := c.stderr.Stat()
	if err != nil {
		return "(no standard error)"
	}
	const tail = 1500
	off := max(fi.Size()-tail, 0)
	b := make([]byte, fi.Size()-off)
	n, _ := c.stderr.ReadAt(b, off)
	s := strings.TrimSpace(strings.ReplaceAll(string(b[:n]), "\n", " | "))
	if s == "" {
		return "(no standard error)"
	}
	return s
}
