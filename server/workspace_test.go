package server_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	_ "github.com/harnessflow/harnessflow/harness/kimicli"
	_ "github.com/harnessflow/harnessflow/harness/qwencode"
	"github.com/harnessflow/harnessflow/server"
)

// A request naming a directory of the proxy's machine as its cwd: a server
// without a workspace policy (and one told none) never lists it; told
// local, the listing harnesses show it.
func TestWorkspacePolicyMarker(t *testing.T) {
	dir := t.TempDir()
	const marker = "MARKER-server-7f3a.txt"
	if err := os.WriteFile(filepath.Join(dir, marker), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var bodies []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer up.Close()
	req := `{"model":"m","stream":true,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>` +
		dir + `</cwd>\n</environment_context>"}]},{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]}`
	for _, tt := range []struct {
		policy harness.WorkspacePolicy
		shown  bool
	}{{"", false}, {harness.WorkspaceNone, false}, {harness.WorkspaceLocal, true}} {
		srv := httptest.NewServer(server.New(server.Config{Upstream: up.URL + "/v1", Workspace: tt.policy,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}).Handler())
		for _, h := range []string{harness.NameKimiCLI, harness.NameQwenCode} {
			mu.Lock()
			bodies = nil
			mu.Unlock()
			resp, err := http.Post(srv.URL+"/h/"+h+"/v1/responses", "application/json", strings.NewReader(req))
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mu.Lock()
			got := strings.Join(bodies, "\n")
			mu.Unlock()
			if got == "" {
				t.Fatalf("%s, policy %q: nothing reached the upstream (HTTP %d)", h, tt.policy, resp.StatusCode)
			}
			if strings.Contains(got, marker) != tt.shown {
				t.Errorf("%s, policy %q: marker shown %v, want %v", h, tt.policy, !tt.shown, tt.shown)
			}
		}
		srv.Close()
	}
}
