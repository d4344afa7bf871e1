package redisstore_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// go-redis re-dials in the background after a pool's dials all
		// failed (the outage tests); it ends within a second of Close.
		goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"),
	)
}

// redisServer is a redis-server the test started on a loopback port, with
// its data in a temporary directory: no persistence, or (persist) an
// append-only file synced before every reply, so that what Redis
// acknowledged survives a kill and a restart.
type redisServer struct {
	bin, dir string
	port     int
	persist  bool
	cmd      *exec.Cmd
	done     chan struct{}
	log      *bytes.Buffer
	mu       sync.Mutex
}

// startRedis starts a redis-server for the test, or skips it with the
// reason when none can be started.
func startRedis(t *testing.T) *redisServer {
	t.Helper()
	return startRedisWith(t, false)
}

// startPersistentRedis is startRedis with an append-only file synced on
// every write: a restart keeps every write Redis acknowledged.
func startPersistentRedis(t *testing.T) *redisServer {
	t.Helper()
	return startRedisWith(t, true)
}

func startRedisWith(t *testing.T, persist bool) *redisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redisstore: no redis-server on PATH, so the Redis store is not tested against a real server (install it: apt-get install -y redis-server)")
	}
	rs := &redisServer{bin: bin, dir: t.TempDir(), persist: persist}
	var last error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Skipf("redisstore: no free loopback port for redis-server: %v", err)
		}
		rs.port = port
		if last = rs.start(); last == nil {
			t.Cleanup(rs.stop)
			return rs
		}
	}
	t.Skipf("redisstore: redis-server (%s) could not be started on a loopback port: %v", bin, last)
	return nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// start runs redis-server on rs.port and waits until it answers PING.
func (rs *redisServer) start() error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.log = &bytes.Buffer{}
	aof := []string{"--appendonly", "no"}
	if rs.persist {
		aof = []string{"--appendonly", "yes", "--appendfsync", "always"}
	}
	args := append([]string{"--port", strconv.Itoa(rs.port), "--bind", "127.0.0.1", "--dir", rs.dir, "--save", ""}, aof...)
	cmd := exec.Command(rs.bin, append(args, "--daemonize", "no", "--protected-mode", "yes", "--loglevel", "warning",
		"--logfile", "")...)
	cmd.Stdout, cmd.Stderr = rs.log, rs.log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	rs.cmd, rs.done = cmd, done
	c := redis.NewClient(&redis.Options{Addr: rs.addr(), DialTimeout: 200 * time.Millisecond, MaxRetries: -1, DialerRetries: 1})
	defer c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return fmt.Errorf("redis-server exited: %s", rs.log.String())
		default:
		}
		// Wait for the port first: go-redis logs every refused dial.
		if conn, err := net.DialTimeout("tcp", rs.addr(), 200*time.Millisecond); err != nil {
			time.Sleep(20 * time.Millisecond)
			continue
		} else {
			conn.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	<-done
	return fmt.Errorf("redis-server did not answer PING within 5s: %s", rs.log.String())
}

// stop kills redis-server (an outage: nothing is saved) and waits for it.
func (rs *redisServer) stop() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.cmd == nil {
		return
	}
	_ = rs.cmd.Process.Kill()
	<-rs.done
	rs.cmd = nil
}

// restart starts redis-server again on the same port (empty, or with what
// it had acknowledged when it persists).
func (rs *redisServer) restart(t *testing.T) {
	t.Helper()
	if err := rs.start(); err != nil {
		t.Fatalf("restart redis-server: %v", err)
	}
}

func (rs *redisServer) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(rs.port)) }

func (rs *redisServer) url(query string) string {
	u := "redis://" + rs.addr() + "/0"
	if query != "" {
		u += "?" + query
	}
	return u
}

// client is a plain client of rs for inspecting what the store wrote.
func (rs *redisServer) client(t *testing.T) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: rs.addr()})
	t.Cleanup(func() { c.Close() })
	return c
}
