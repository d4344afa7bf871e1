package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/harnessflow/harnessflow/scripted"
)

// --client-keys-env and --client-keys-file: requests need one of the keys;
// the keys never show in the output; the startup line says keys are
// required, and redacts the password of the --upstream URL.
func TestServeClientKeys(t *testing.T) {
	var mu sync.Mutex
	var auth []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		scripted.New(nil).ServeHTTP(w, r)
	}))
	defer up.Close()
	const envKey, fileKey = "hf-env-key-0123456789abcdef", "hf-file-key-0123456789abcdef"
	t.Setenv("HF_TEST_CLIENT_KEYS", "hf-env-key-unused-000000000,"+envKey)
	file := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(file, []byte("# ops team\n"+fileKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	upstream := strings.Replace(up.URL, "http://", "http://operator:hunter2-password@", 1) + "/v1"
	r := start(t, runServe, "--listen", "127.0.0.1:0", "--upstream", upstream,
		"--client-keys-env", "HF_TEST_CLIENT_KEYS", "--client-keys-file", file)
	base := r.address(t)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	for _, key := range []string{envKey, fileKey} {
		if body := postSSE(t, client, base+"/v1/responses", "Bearer "+key); !strings.Contains(body, "event: response.completed") {
			t.Errorf("key %s: stream:\n%s", key[:6], body)
		}
	}
	for _, bad := range []string{"", "Bearer hf-wrong-key-0123456789abcdef"} {
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/responses", strings.NewReader(serveRequest))
		if bad != "" {
			req.Header.Set("Authorization", bad)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 401 || !strings.Contains(string(body), `"code":"invalid_api_key"`) {
			t.Errorf("%q: %d %s", bad, resp.StatusCode, body)
		}
	}
	if code := r.stop(t); code != exitOK {
		t.Fatalf("exit %d: %s", code, r.stderr.String())
	}
	out := r.stdout.String() + r.stderr.String()
	for _, secret := range []string{envKey, fileKey, "hf-wrong-key", "hunter2"} {
		if strings.Contains(out, secret) {
			t.Errorf("output holds %q:\n%s", secret, out)
		}
	}
	if !strings.Contains(r.stdout.String(), "operator:xxxxx@127.0.0.1") || !strings.Contains(r.stdout.String(), "bearer key required (3 accepted)") {
		t.Errorf("startup line: %s", r.stdout.String())
	}
	// Basic auth in the URL is Go's to send; the client's key never goes upstream.
	mu.Lock()
	defer mu.Unlock()
	for _, a := range auth {
		if strings.Contains(a, "hf-") {
			t.Errorf("client key sent upstream: %q", a)
		}
	}
}

func TestServeSecurityFlags(t *testing.T) {
	t.Setenv("HF_TEST_UPSTREAM_KEY", "sk-upstream-never-printed")
	t.Setenv("HF_TEST_EMPTY", " ")
	t.Setenv("HF_TEST_SHORT_KEYS", "short")
	cases := []struct {
		args []string
		want string
	}{
		// Non-loopback with the operator's key and no client keys: refused
		// before anything is bound.
		{[]string{"--listen", "0.0.0.0:0", "--upstream", "http://127.0.0.1:1/v1", "--api-key-env", "HF_TEST_UPSTREAM_KEY"}, "refusing to serve 0.0.0.0:0"},
		{[]string{"--listen", ":0", "--upstream", "http://127.0.0.1:1/v1", "--api-key-env", "HF_TEST_UPSTREAM_KEY"}, "--insecure-open-relay"},
		{[]string{"--client-keys-env", "HF_TEST_SURELY_UNSET"}, "HF_TEST_SURELY_UNSET is not set"},
		{[]string{"--client-keys-env", "HF_TEST_EMPTY"}, "HF_TEST_EMPTY is not set or empty"},
		{[]string{"--client-keys-env", "HF_TEST_SHORT_KEYS"}, "want at least 16"},
		{[]string{"--client-keys-file", "/nonexistent/keys"}, "--client-keys-file"},
		{[]string{"--upstream-idle-timeout", "-1s"}, "--upstream-idle-timeout: want 0 or more"},
		{[]string{"--shutdown-grace", "-5s"}, "--shutdown-grace"},
		{[]string{"--upstream", "http://u:hunter2-password@[::1:bad/v1"}, "--upstream"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		code := runServe(context.Background(), c.args, nil, &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q", c.args, code, errb.String())
		}
		if all := out.String() + errb.String(); strings.Contains(all, "sk-upstream-never-printed") || strings.Contains(all, "hunter2") ||
			strings.Contains(all, "short\"") || strings.Contains(all, "listening on") {
			t.Errorf("%v: output %q", c.args, all)
		}
	}
}

// --default-model fills in a request without a model; without it such a
// request gets HTTP 400.
func TestServeDefaultModel(t *testing.T) {
	noModel := strings.Replace(serveRequest, `"model":"gpt-5.5",`, "", 1)
	for _, c := range []struct {
		args   []string
		status int
	}{{nil, 400}, {[]string{"--default-model", "qwen3-coder"}, 200}} {
		r := start(t, runServe, append([]string{"--listen", "127.0.0.1:0"}, c.args...)...)
		base := r.address(t)
		client := &http.Client{Transport: &http.Transport{}}
		resp, err := client.Post(base+"/v1/responses", "application/json", strings.NewReader(noModel))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		client.CloseIdleConnections()
		if resp.StatusCode != c.status || (c.status == 200) != strings.Contains(string(body), `"model":"qwen3-coder"`) {
			t.Errorf("%v: %d %s", c.args, resp.StatusCode, body)
		}
		if code := r.stop(t); code != exitOK {
			t.Fatalf("exit %d: %s", code, r.stderr.String())
		}
	}
}
