//go:build unix

package calibrate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// A hanging agent is killed at the time limit with every process it
// started, and the temporary directory is removed.
func TestRunAgentTimeoutCleanup(t *testing.T) {
	o, tmp := opts(t, "claude-code", "hang")
	pidFile := filepath.Join(t.TempDir(), "pid")
	t.Setenv("HF_FAKE_PIDFILE", pidFile)
	o.Timeout = 2 * time.Second
	start := time.Now()
	_, err := RunAgent(context.Background(), o)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("took %s", d)
	}
	assertEmpty(t, tmp)
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		// a zombie reaped by init may linger a moment
		if time.Now().After(deadline) {
			t.Fatalf("child %d of the agent still runs", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
