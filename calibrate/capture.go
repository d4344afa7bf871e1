package calibrate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Errors a capture run fails with (matched with errors.Is); the error's
// text says what happened and, where the agent ran, what it printed.
var (
	ErrCommandNotFound = errors.New("command not found")
	ErrNoRequest       = errors.New("the agent never called the endpoint")
	ErrWrongWire       = errors.New("the agent sent a request of an unexpected wire")
	ErrTimeout         = errors.New("time limit reached")
	ErrNoMainRequest   = errors.New("no request with tools was captured")
)

// DefaultTimeout is the time limit of one agent run.
const DefaultTimeout = 2 * time.Minute

// Tasks the agent is given: calibration and check use different ones.
const (
	CalibrateTask = "Run the shell command ls in the current directory, then reply with one word."
	CheckTask     = "List the files here with the shell tool and say how many there are."
)

// WorkspaceFile is the file every scratch workspace holds (so that a
// directory listing has an entry to find).
const WorkspaceFile = "calibration-notes.txt"

// Options configure a capture run.
type Options struct {
	// Harness is the harness whose agent runs (a key of Agents).
	Harness string
	// Wire is the wire to speak ("" = the agent's default).
	Wire string
	// Command is the agent's COMMAND [ARGS…].
	Command []string
	// Timeout limits the run (0 = DefaultTimeout).
	Timeout time.Duration
	// Task is the prompt (default CalibrateTask).
	Task string
	// TempDir is where the run's temporary directory is made ("" = the
	// system's).
	TempDir string
	// Log receives progress lines (nil = none).
	Log io.Writer
	// OnCaptured, when set, is called after a successful run while the
	// scratch workspace still exists (Check shapes the harness's request
	// against it).
	OnCaptured func(c *Capture) error
}

// Capture is what one run of the agent produced.
type Capture struct {
	Harness string `json:"harness"`
	Wire    string `json:"wire"`
	// Command is the command line run (the user's and the recipe's
	// arguments; the task last).
	Command []string `json:"command"`
	// Cwd is the agent's working directory (resolved), Home its HOME and
	// Root the run's temporary directory; all removed after the run.
	Cwd  string `json:"cwd"`
	Home string `json:"home"`
	Root string `json:"root"`
	Task string `json:"task"`
	// Dates are the dates (YYYY-MM-DD) of the run's start and end in local
	// time and UTC.
	Dates []string `json:"dates"`
	// Shell is $SHELL as the agent saw it.
	Shell string `json:"shell"`
	// Requests are the captured requests, in order.
	Requests []Captured `json:"requests"`
	// ExitCode is the agent's exit status; Output the end of what it
	// printed (stdout and stderr).
	ExitCode int    `json:"exit_code"`
	Output   string `json:"output"`
	// Version is the version the agent printed for its recipe's
	// VersionArgs ("" when it has none, or printed none).
	Version string `json:"version,omitempty"`
}

// tail is an io.Writer keeping the last max bytes written.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// RunAgent runs the harness's agent once against a loopback capture
// endpoint and returns what it sent. The agent and every process it
// started are killed when it ends or the time limit passes, and the run's
// temporary directory is removed, whatever the outcome.
func RunAgent(ctx context.Context, o Options) (*Capture, error) {
	agent, wire, err := agentFor(o.Harness, o.Wire)
	if err != nil {
		return nil, err
	}
	if len(o.Command) == 0 || o.Command[0] == "" {
		return nil, fmt.Errorf("calibrate: no COMMAND given (the agent to run, after --)")
	}
	path, err := exec.LookPath(o.Command[0])
	if err != nil {
		return nil, fmt.Errorf("calibrate: %w: %q: %v", ErrCommandNotFound, o.Command[0], err)
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	task := o.Task
	if task == "" {
		task = CalibrateTask
	}
	logf := func(format string, args ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, "calibrate: "+format+"\n", args...)
		}
	}

	ep, err := listen(wire)
	if err != nil {
		return nil, err
	}
	defer ep.close()
	go ep.serve()

	root, err := os.MkdirTemp(o.TempDir, "harnessflow-calibrate-")
	if err != nil {
		return nil, fmt.Errorf("calibrate: temporary directory: %w", err)
	}
	defer os.RemoveAll(root)
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	run := &Run{Wire: wire, BaseURL: ep.URL(), Root: root, Work: filepath.Join(root, "work"),
		Home: filepath.Join(root, "home"), Task: task}
	for _, d := range []string{run.Work, run.Home} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("calibrate: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(run.Work, WorkspaceFile), []byte("scratch file of a calibration run\n"), 0o600); err != nil {
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	if err := agent.Setup(run); err != nil {
		return nil, err
	}

	c := &Capture{Harness: o.Harness, Wire: wire, Cwd: run.Work, Home: run.Home, Root: root, Task: task,
		Command: append(append([]string{path}, o.Command[1:]...), run.Args...)}
	env := environ(os.Environ(), run)
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "SHELL="); ok {
			c.Shell = v
		}
	}
	start := time.Now()

	cmd := exec.Command(path, c.Command[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdin = run.Work, env, nil
	out := &tail{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 5 * time.Second
	ownGroup(cmd)
	logf("running %s in %s (wire %s, endpoint %s)", strings.Join(c.Command[:len(c.Command)-1], " "), run.Work, wire, ep.URL())
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("calibrate: starting %s: %w", path, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var waitErr error
	timedOut := false
	select {
	case waitErr = <-done:
	case <-time.After(timeout):
		timedOut = true
	case <-ctx.Done():
		killGroup(cmd)
		<-done
		return nil, fmt.Errorf("calibrate: %w", ctx.Err())
	}
	killGroup(cmd) // what the agent left running, or the agent on timeout
	if timedOut {
		<-done
	}
	end := time.Now()
	c.Output = out.String()
	c.ExitCode = cmd.ProcessState.ExitCode()
	c.Requests, _ = ep.requests()
	_, wrong := ep.requests()
	c.Dates = dates(start, end)
	logf("agent exited with status %d after %s; %d requests captured", c.ExitCode, end.Sub(start).Round(time.Millisecond), len(c.Requests))

	switch {
	case len(wrong) > 0:
		return c, fmt.Errorf("calibrate: %w: the endpoint speaks %s (harness %s) but got %s; agent output:\n%s",
			ErrWrongWire, wire, o.Harness, strings.Join(wrong, "; "), indent(c.Output))
	case timedOut:
		return c, fmt.Errorf("calibrate: %w: %s did not finish within %s (%d requests captured); agent output:\n%s",
			ErrTimeout, filepath.Base(path), timeout, len(c.Requests), indent(c.Output))
	case countKind(c.Requests, "") == 0:
		return c, fmt.Errorf("calibrate: %w at %s (%s exited: %v); agent output:\n%s",
			ErrNoRequest, ep.URL(), filepath.Base(path), exitText(waitErr), indent(c.Output))
	case countKind(c.Requests, "main") == 0:
		return c, fmt.Errorf("calibrate: %w (%d requests, none a model request with tools); agent output:\n%s",
			ErrNoMainRequest, len(c.Requests), indent(c.Output))
	}
	if len(agent.VersionArgs) > 0 {
		c.Version = askVersion(ctx, path, agent.VersionArgs, run.Work, env)
	}
	if o.OnCaptured != nil {
		if err := o.OnCaptured(c); err != nil {
			return c, err
		}
	}
	return c, nil
}

func exitText(err error) string {
	if err == nil {
		return "status 0"
	}
	return err.Error()
}

// countKind counts the model requests of a kind ("" = any model request).
func countKind(cs []Captured, kind string) int {
	n := 0
	for _, c := range cs {
		if c.Kind != "other" && (kind == "" || c.Kind == kind) {
			n++
		}
	}
	return n
}

// first returns the first captured request of a kind, or nil.
func first(cs []Captured, kind string) *Captured {
	for i := range cs {
		if cs[i].Kind == kind {
			return &cs[i]
		}
	}
	return nil
}

// dates are the distinct dates of start and end, local and UTC.
func dates(start, end time.Time) []string {
	var out []string
	for _, t := range []time.Time{start, start.UTC(), end, end.UTC()} {
		d := t.Format(time.DateOnly)
		if !containsString(out, d) {
			out = append(out, d)
		}
	}
	return out
}

func containsString(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// indent prefixes each line of the agent's output (or says it printed
// nothing).
func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "  (no output)"
	}
	var b bytes.Buffer
	for _, l := range strings.Split(s, "\n") {
		b.WriteString("  | " + l + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// versionRe finds a version number in a user agent.
var versionRe = regexp.MustCompile(`^([A-Za-z][\w.-]*)/(\d+\.\d+\.\d+[\w.+-]*)`)

// bareVersion finds a version number in an agent's own output.
var bareVersion = regexp.MustCompile(`\b(\d+\.\d+\.\d+[\w.+-]*)`)

// askVersion runs the agent with args (its version flag) and returns the
// first version number it prints on stdout or stderr, "" when none comes
// within ten seconds.
func askVersion(ctx context.Context, path string, args []string, dir string, env []string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, nil
	cmd.WaitDelay = time.Second
	out, _ := cmd.CombinedOutput() // a failing version flag: no version
	if m := bareVersion.FindSubmatch(out); m != nil {
		return string(m[1])
	}
	return ""
}

// versionOf is the agent's product and version: from the user agent, or
// — for an agent whose requests do not name it (pi sends the OpenAI SDK's
// user agent) — the recipe's product and the version it printed.
func versionOf(c *Capture) (string, string) {
	if a, ok := Agents[c.Harness]; ok && a.Product != "" {
		return a.Product, c.Version
	}
	return agentVersion(c.Requests)
}

// agentVersion reads the agent's product and version from the user agent
// of its first model request ("", "" when it has none).
func agentVersion(cs []Captured) (string, string) {
	for _, c := range cs {
		if c.Kind == "other" {
			continue
		}
		if m := versionRe.FindStringSubmatch(c.Headers["user-agent"]); m != nil {
			return m[1], m[2]
		}
	}
	return "", ""
}
