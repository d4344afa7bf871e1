package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/harnessflow/harnessflow/scripted"
	"github.com/harnessflow/harnessflow/serveconfig"
	"github.com/harnessflow/harnessflow/server"
)

// recordingModel is a scripted model that keeps the path and model of every
// request it gets.
type recordingModel struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string // "PATH MODEL"
}

func newRecordingModel(t *testing.T, script *scripted.Script) *recordingModel {
	t.Helper()
	h := scripted.New(script)
	m := &recordingModel{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body) // a short read shows in the scripted model's answer
		r.Body = io.NopCloser(bytes.NewReader(body))
		var req struct{ Model string }
		_ = json.Unmarshal(body, &req)
		m.mu.Lock()
		m.seen = append(m.seen, r.URL.Path+" "+req.Model)
		m.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(m.Close)
	return m
}

func (m *recordingModel) requests() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.seen...)
}

// TestCodexRouting runs the real Codex CLI against one proxy serving a
// routing configuration (`serve --config`): two upstreams of different
// wires, the one used chosen by the model name in Codex's config.
func TestCodexRouting(t *testing.T) {
	bin := os.Getenv(codexEnv)
	if bin == "" {
		t.Skipf("set %s to a Codex CLI binary to run (scripts/e2e-codex.sh does)", codexEnv)
	}
	t.Run("TwoWiresByModel", func(t *testing.T) {
		chat := newRecordingModel(t, toolScript("printf 'chat %s ok\\n' upstream | tee proof.txt"))
		messages := newRecordingModel(t, toolScript("printf 'messages %s ok\\n' upstream | tee proof.txt"))
		path := filepath.Join(t.TempDir(), "serve.toml")
		config := `
[upstreams.local]
base_url = "` + chat.URL + `/v1"
wire = "chat"

[upstreams.anthropic]
base_url = "` + messages.URL + `/v1"
wire = "messages"

[[models]]
name = "` + codexModel + `"
upstreams = ["local"]
upstream_model = "local-coder"

[[models]]
name = "claude-*"
upstreams = ["anthropic"]
harness = "claude-code"
`
		if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := serveconfig.Load(path, serveconfig.Options{})
		if err != nil {
			t.Fatal(err)
		}
		log := &requestLog{}
		srv := server.New(server.Config{Routes: serveconfig.NewHolder(c, serveconfig.Options{}), Logger: slog.New(log)})
		ctx, cancel := context.WithCancel(context.Background())
		var lc net.ListenConfig
		ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ctx, ln) }()
		stopped := false
		stop := func() {
			if !stopped {
				stopped = true
				cancel()
				if err := <-done; err != nil {
					t.Errorf("proxy: %v", err)
				}
			}
		}
		t.Cleanup(stop)
		base := "http://" + ln.Addr().String() + "/v1"

		run := runCodexModel(t, bin, base, codexModel, true)
		checkProofRun(t, run, "chat upstream ok")
		run = runCodexModel(t, bin, base, "claude-sonnet-4-5", true)
		checkProofRun(t, run, "messages upstream ok")
		stop()

		for _, r := range chat.requests() {
			if r != "/v1/chat/completions local-coder" {
				t.Errorf("chat upstream request %q, want /v1/chat/completions for local-coder", r)
			}
		}
		// claude-code sends a title request first, naming its small model.
		turns := 0
		for _, r := range messages.requests() {
			switch {
			case r == "/v1/messages claude-sonnet-4-5":
				turns++
			case !strings.HasPrefix(r, "/v1/messages claude-"):
				t.Errorf("messages upstream request %q, want /v1/messages", r)
			}
		}
		// Two turns each: the call, then the answer to its output.
		if n, m := len(chat.requests()), len(messages.requests()); n != 2 || turns != 2 || m != 3 {
			t.Errorf("upstream requests: chat %d, messages %d (%d for the turns); want 2 and 3 (2)", n, m, turns)
		}
		recs := log.records()
		if len(recs) != 4 {
			t.Errorf("proxy logged %d requests, want 4: %+v", len(recs), recs)
		}
		for _, r := range recs {
			if r.status != http.StatusOK || r.outcome != "completed" {
				t.Errorf("proxy request %+v, want 200 completed", r)
			}
		}
	})
}
