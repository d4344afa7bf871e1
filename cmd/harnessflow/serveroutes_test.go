package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/scripted"
)

func writeConfig(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestConfigCheck(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.toml")
	writeConfig(t, good, "[upstreams.local]\nbase_url = \"http://127.0.0.1:8000/v1\"\n[upstreams.claude]\nbase_url = \"https://api.example.com/v1\"\n"+
		"wire = \"messages\"\napi_key_env = \"HF_CONFIG_TEST_KEY\"\n"+
		"[[models]]\nname = \"qwen3-coder\"\nupstreams = [\"local\"]\nupstream_model = \"Qwen/Qwen3-Coder\"\n"+
		"[[models]]\nname = \"claude-*\"\nupstreams = [\"claude\"]\nharness = \"claude-code\"\n")
	bad := filepath.Join(dir, "bad.toml")
	writeConfig(t, bad, "[upstreams.local]\nbase_url = \"http://127.0.0.1:8000/v1\"\nbase_ur = \"x\"\n[[models]]\nname = \"m\"\nupstreams = [\"remote\"]\n")
	relay := filepath.Join(dir, "relay.toml")
	writeConfig(t, relay, "listen = \"0.0.0.0:8787\"\n[upstreams.a]\nbase_url = \"https://api.example.com/v1\"\napi_key_env = \"HF_CONFIG_TEST_KEY\"\n"+
		"[[models]]\nname = \"*\"\nupstreams = [\"a\"]\n")
	t.Setenv("HF_CONFIG_TEST_KEY", "sk-config-test-secret")
	for _, tt := range []struct {
		name       string
		args       []string
		code       int
		out, errs  []string
		notInOut   string
		notInError string
	}{
		{"a valid file", []string{"check", good}, exitOK,
			[]string{good + ": ok: 2 upstream(s), 2 model entries", `model "qwen3-coder" → local as "Qwen/Qwen3-Coder" (harness native)`,
				`model "claude-*" → claude (harness claude-code)`, "upstream claude (https://api.example.com/v1, wire messages): credentials: its own key"},
			nil, "sk-config-test-secret", ""},
		{"an unknown key", []string{"check", bad}, exitUsage, nil, []string{bad + `:3: unknown key "base_ur" in [upstreams.local]`}, "", ""},
		{"an open relay", []string{"check", relay}, exitUsage, nil, []string{relay + ": server: refusing to serve 0.0.0.0:8787", "(set client_keys or insecure_open_relay)"}, "", ""},
		{"no file", []string{"check"}, exitUsage, nil, []string{"config check takes one FILE"}, "", ""},
		{"no subcommand", []string{good}, exitUsage, nil, []string{"want the subcommand check"}, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"config"}, tt.args...), nil, &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout.String(), stderr.String())
			}
			for _, w := range tt.out {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout.String())
				}
			}
			for _, w := range tt.errs {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
			if tt.notInOut != "" && strings.Contains(stdout.String()+stderr.String(), tt.notInOut) {
				t.Errorf("the output shows %q", tt.notInOut)
			}
		})
	}
	// The broken file's second problem is reported too.
	var stdout, stderr bytes.Buffer
	run(context.Background(), []string{"config", "check", bad}, nil, &stdout, &stderr)
	if !strings.Contains(stderr.String(), `unknown key "base_ur"`) {
		t.Errorf("stderr: %s", stderr.String())
	}
}

func TestServeConfigFlags(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "serve.toml")
	writeConfig(t, path, "[upstreams.a]\nbase_url = \"http://127.0.0.1:1/v1\"\n[[models]]\nname = \"*\"\nupstreams = [\"a\"]\n")
	broken := filepath.Join(dir, "broken.toml")
	writeConfig(t, broken, "[upstreams.a]\nbase_url = \"gopher://x\"\n[[models]]\nname = \"*\"\nupstreams = [\"a\"]\n")
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"--upstream with --config", []string{"--config", path, "--upstream", "http://127.0.0.1:2/v1"}, "--upstream cannot be combined with --config"},
		{"two conflicts", []string{"--config", path, "--store", "none", "--default-model", "m"}, "--default-model, --store cannot be combined with --config"},
		{"a broken file", []string{"--config", broken}, broken + `:2: upstream "a": base_url "gopher://x"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if code := run(ctx, append([]string{"serve"}, tt.args...), nil, &stdout, &stderr); code != exitUsage {
				t.Errorf("exit %d, want %d: %s", code, exitUsage, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr lacks %q:\n%s", tt.want, stderr.String())
			}
		})
	}
}

// A real `harnessflow serve --config` process and SIGHUP: streams in flight
// finish on the upstream they started on, new requests go where the new
// file says at once, a broken file is refused and the running config kept.
func TestServeConfigHangup(t *testing.T) {
	bin := buildHarnessflow(t)
	held := &heldChat{release: make(chan struct{})}
	a := httptest.NewServer(held)
	t.Cleanup(a.Close)
	t.Cleanup(held.finish)
	b := httptest.NewServer(scripted.New(&scripted.Script{Turns: []scripted.Turn{{Text: "B answered"}}}))
	t.Cleanup(b.Close)
	path := filepath.Join(t.TempDir(), "serve.toml")
	routeTo := func(up string) string {
		return "[upstreams.up]\nbase_url = \"" + up + "/v1\"\n[[models]]\nname = \"gpt-*\"\nupstreams = [\"up\"]\n"
	}
	writeConfig(t, path, routeTo(a.URL))
	p := startServeProcess(t, bin, "--config", path)

	inFlight := streams(t, p.base, 10) // held by a
	writeConfig(t, path, routeTo(b.URL))
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	p.waitLog(t, "configuration reloaded")
	ask := func() string {
		resp, err := http.Post(p.base+"/v1/responses", "application/json", strings.NewReader(serveRequest))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	if body := ask(); !strings.Contains(body, "B answered") || lastEvent(body) != "response.completed" {
		t.Errorf("a request after the reload did not go to b:\n%s", body)
	}
	held.finish()
	for range 10 {
		select {
		case body := <-inFlight:
			if !strings.Contains(body, "first last") && !strings.Contains(body, `"delta":"last"`) || lastEvent(body) != "response.completed" {
				t.Errorf("a stream in flight across the reload:\n%s", body)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the streams in flight did not finish")
		}
	}

	writeConfig(t, path, "[upstreams.up]\nbase_url = \"gopher://nowhere\"\n")
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	p.waitLog(t, "configuration refused; the running one is kept")
	if body := ask(); !strings.Contains(body, "B answered") {
		t.Errorf("after a refused reload:\n%s", body)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 10*time.Second); code != 0 {
		t.Errorf("exit %d: %s", code, p.stderr.String())
	}
}

// serve --config listens on every address of the file, routes by model
// on each, and stops with exit 0 when its context ends.
func TestServeConfigListenAddresses(t *testing.T) {
	up := httptest.NewServer(scripted.New(&scripted.Script{Turns: []scripted.Turn{{Text: "routed as {{model}}"}}}))
	t.Cleanup(up.Close)
	path := filepath.Join(t.TempDir(), "serve.toml")
	writeConfig(t, path, "listen = [\"127.0.0.1:0\", \"127.0.0.1:0\"]\n[upstreams.up]\nbase_url = \""+up.URL+"/v1\"\n"+
		"[[models]]\nname = \"gpt-*\"\nupstreams = [\"up\"]\nupstream_model = \"renamed\"\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outR, outW := io.Pipe()
	var stderr lockedBuffer
	exit := make(chan int, 1)
	go func() {
		code := run(ctx, []string{"serve", "--config", path}, nil, outW, &stderr)
		outW.Close()
		exit <- code
	}()
	addrs := make(chan []string, 1)
	go func() {
		re := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+), (http://127\.0\.0\.1:\d+), routes from`)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addrs <- m[1:]
			}
		}
	}()
	var bases []string
	select {
	case bases = <-addrs:
	case code := <-exit:
		t.Fatalf("serve exited with %d: %s", code, stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatalf("serve printed no two addresses: %s", stderr.String())
	}
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	for _, base := range bases {
		resp, err := client.Post(base+"/v1/responses", "application/json", strings.NewReader(serveRequest))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), "routed as renamed") || lastEvent(string(body)) != "response.completed" {
			t.Errorf("%s: %s", base, body)
		}
	}
	client.CloseIdleConnections()
	cancel()
	select {
	case code := <-exit:
		if code != exitOK {
			t.Errorf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
}

// A [[stage]] table of the configuration puts its stage into every
// response graph: redact replaces the secret in the answer.
func TestServeConfigStage(t *testing.T) {
	up := httptest.NewServer(scripted.New(&scripted.Script{Turns: []scripted.Turn{{Text: "the key is ACME-123456, keep it"}}}))
	t.Cleanup(up.Close)
	path := filepath.Join(t.TempDir(), "serve.toml")
	writeConfig(t, path, "listen = \"127.0.0.1:0\"\n[upstreams.up]\nbase_url = \""+up.URL+"/v1\"\n"+
		"[[models]]\nname = \"gpt-*\"\nupstreams = [\"up\"]\n[[stage]]\nkind = \"redact\"\npatterns = [\"ACME-[0-9]{6}\"]\n")
	r := start(t, runServe, "--config", path)
	base := r.address(t)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Post(base+"/v1/responses", "application/json", strings.NewReader(serveRequest))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if b := string(body); strings.Contains(b, "ACME-123456") || !strings.Contains(b, "[REDACTED:custom]") || lastEvent(b) != "response.completed" {
		t.Errorf("answer: %s", b)
	}
	client.CloseIdleConnections()
	if code := r.stop(t); code != exitOK {
		t.Errorf("exit %d: %s", code, r.stderr.String())
	}
}
