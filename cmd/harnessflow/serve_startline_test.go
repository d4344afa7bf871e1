package main

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The start line's base_url works on every wire the built-in model
// speaks: on the messages wire it is a harness route (the native route has
// no Messages translation and answers 400), and a request to it completes.
func TestServeStartLineBaseURL(t *testing.T) {
	baseURL := regexp.MustCompile(`base_url = "([^"]+)"`)
	for _, c := range []struct{ wire, want string }{{"chat", "/v1"}, {"messages", "/h/claude-code/v1"}} {
		t.Run(c.wire, func(t *testing.T) {
			r := start(t, runServe, "--listen", "127.0.0.1:0", "--upstream-wire", c.wire)
			r.address(t)
			var url string
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if m := baseURL.FindStringSubmatch(r.stdout.String()); m != nil {
					url = m[1]
					break
				}
			}
			if !strings.HasSuffix(url, c.want) || !strings.HasPrefix(url, "http://127.0.0.1:") {
				t.Fatalf("base_url %q, want …%s\n%s", url, c.want, r.stdout.String())
			}
			client := &http.Client{Transport: &http.Transport{}}
			defer client.CloseIdleConnections()
			resp, err := client.Post(url+"/responses", "application/json", strings.NewReader(`{"model":"m","input":"hi"}`))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"status":"completed"`) {
				t.Errorf("POST %s/responses: %d %s", url, resp.StatusCode, body)
			}
			if code := r.stop(t); code != exitOK {
				t.Errorf("exit %d: %s", code, r.stderr.String())
			}
		})
	}
}
