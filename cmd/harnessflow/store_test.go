package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// postJSON posts a non-streaming Responses request and returns the status
// and the decoded body.
func postJSON(t *testing.T, client *http.Client, url, body string) (int, map[string]any) {
	t.Helper()
	resp, err := client.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil {
		t.Fatalf("HTTP %d %q: %v", resp.StatusCode, data, err)
	}
	return resp.StatusCode, obj
}

func errorCode(obj map[string]any) any {
	e, _ := obj["error"].(map[string]any)
	return e["code"]
}

// --store: a bad value is a usage error that never shows a password.
func TestServeStoreFlagErrors(t *testing.T) {
	for _, c := range []struct{ value, want string }{
		{"postgres://db", "want memory, none, or a Redis URL"},
		{"redis://:hunter2@127.0.0.1:1/0?ttl=soon", `ttl="soon"`},
		{"redis://:hunter2@127.0.0.1:1/0?nonsense=1", "unexpected option: nonsense"},
		{"redis://127.0.0.1:1/zero", "invalid database number"},
	} {
		var out, errb bytes.Buffer
		code := runServe(context.Background(), []string{"--store", c.value}, nil, &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), c.want) || strings.Contains(errb.String(), "hunter2") {
			t.Errorf("--store %s: exit %d, stderr %q", c.value, code, errb.String())
		}
	}
}

// --store none refuses previous_response_id; a Redis store that does not
// answer makes serve warn at startup, answer the requests that need it (a
// lookup, or an answer to keep) with HTTP 503 and serve the others (store
// false).
func TestServeStoreFlag(t *testing.T) {
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	const first = `{"model":"m","input":"hello"}`
	const next = `{"model":"m","input":"again","previous_response_id":"resp_0123456789abcdef01234567"}`

	r := start(t, runServe, "--listen", "127.0.0.1:0", "--store", "none")
	base := r.address(t)
	if status, obj := postJSON(t, client, base+"/v1/responses", first); status != 200 || obj["store"] != false {
		t.Errorf("--store none: HTTP %d store %v", status, obj["store"])
	}
	if status, obj := postJSON(t, client, base+"/v1/responses", next); status != 400 || errorCode(obj) != "store_disabled" {
		t.Errorf("--store none, previous_response_id: HTTP %d %v", status, obj)
	}

	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := closed.Addr().String()
	closed.Close() // nothing listens there now
	r = start(t, runServe, "--listen", "127.0.0.1:0", "--store", "redis://:hunter2-secret@"+addr+"/3?ttl=10m&max_responses=50&write_retry=300ms")
	base = r.address(t)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(r.stderr.String(), "does not answer") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	logs := r.stderr.String()
	if !strings.Contains(logs, "response store: Redis redis://:xxxxx@"+addr+"/3") || !strings.Contains(logs, "at most 50 responses") ||
		!strings.Contains(logs, "ttl 10m0s") || !strings.Contains(logs, "writes retried for 300ms") ||
		!strings.Contains(logs, "warning: the response store does not answer") {
		t.Errorf("startup lines:\n%s", logs)
	}
	status, obj := postJSON(t, client, base+"/v1/responses", `{"model":"m","input":"hello","store":false}`)
	if status != 200 || obj["store"] != false || obj["status"] != "completed" {
		t.Errorf("a request that does not need the store: HTTP %d %v", status, obj)
	}
	status, obj = postJSON(t, client, base+"/v1/responses", first)
	if status != 503 || errorCode(obj) != "store_unavailable" {
		t.Errorf("a response to keep with Redis down: HTTP %d %v", status, obj)
	}
	status, obj = postJSON(t, client, base+"/v1/responses", next)
	if status != 503 || errorCode(obj) != "store_unavailable" {
		t.Errorf("previous_response_id with Redis down: HTTP %d %v", status, obj)
	}
	if code := r.stop(t); code != exitOK {
		t.Errorf("exit %d", code)
	}
	if strings.Contains(r.stderr.String()+r.stdout.String(), "hunter2") {
		t.Error("the Redis password was printed")
	}
}
