package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/scripted"
)

// A real `harnessflow serve --client-keys-file` process: a key removed from
// the file is refused right after SIGHUP, the key kept still works, and the
// process goes on serving (SIGHUP never ends it).
func TestServeClientKeysHangup(t *testing.T) {
	const revoked, kept = "client-key-revoked-0123456789", "client-key-kept-0123456789"
	bin := buildHarnessflow(t)
	file := filepath.Join(t.TempDir(), "keys")
	writeConfig(t, file, revoked+"\n"+kept+"\n")
	p := startServeProcess(t, bin, "--client-keys-file", file)
	status := func(key string) int {
		req, _ := http.NewRequest(http.MethodPost, p.base+"/v1/responses", strings.NewReader(serveRequest))
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	if status(revoked) != 200 || status(kept) != 200 {
		t.Fatal("both keys should be accepted before the reload")
	}
	writeConfig(t, file, kept+"\n")
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	p.waitLog(t, "client keys reloaded")
	if s := status(revoked); s != http.StatusUnauthorized {
		t.Errorf("the revoked key got %d after SIGHUP, want 401", s)
	}
	if s := status(kept); s != 200 {
		t.Errorf("the kept key got %d", s)
	}
	// A file that does not read is refused; the keys in force stay.
	writeConfig(t, file, "short\n")
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	p.waitLog(t, "client keys refused; the keys in force are kept")
	if s := status(kept); s != 200 {
		t.Errorf("after a refused reload the kept key got %d", s)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 10*time.Second); code != 0 {
		t.Errorf("exit %d: %s", code, p.stderr.String())
	}
}

// The same with --config: the file's client_keys.file is re-read on
// SIGHUP and applied at once, and the reload's log line says so.
func TestServeConfigClientKeysHangup(t *testing.T) {
	const revoked, kept = "client-key-revoked-0123456789", "client-key-kept-0123456789"
	bin := buildHarnessflow(t)
	up := httptest.NewServer(scripted.New(&scripted.Script{Turns: []scripted.Turn{{Text: "ok"}}}))
	t.Cleanup(up.Close)
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	writeConfig(t, keys, revoked+"\n"+kept+"\n")
	path := filepath.Join(dir, "serve.toml")
	writeConfig(t, path, "[client_keys]\nfile = \"keys\"\n[upstreams.up]\nbase_url = \""+up.URL+"/v1\"\n[[models]]\nname = \"*\"\nupstreams = [\"up\"]\n")
	p := startServeProcess(t, bin, "--config", path)
	status := func(key string) int {
		req, _ := http.NewRequest(http.MethodPost, p.base+"/v1/responses", strings.NewReader(serveRequest))
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	if status(revoked) != 200 {
		t.Fatal("the key should be accepted before the reload")
	}
	writeConfig(t, keys, kept+"\n")
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	p.waitLog(t, "client_keys_changed=true")
	if s := status(revoked); s != http.StatusUnauthorized {
		t.Errorf("the revoked key got %d after SIGHUP, want 401", s)
	}
	if s := status(kept); s != 200 {
		t.Errorf("the kept key got %d", s)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 10*time.Second); code != 0 {
		t.Errorf("exit %d: %s", code, p.stderr.String())
	}
}
