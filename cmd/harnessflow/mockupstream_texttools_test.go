package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// mock-upstream --text-tools / --reject-tools: the scripted model as a
// server without tool support (package scripted, Options).
func TestMockUpstreamTextTools(t *testing.T) {
	r := start(t, runMockUpstream, "--listen", "127.0.0.1:0", "--text-tools", "hermes", "--reject-tools")
	base := r.address(t)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	post := func(body string) (int, string) {
		resp, err := client.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	tool := `{"type":"function","function":{"name":"exec_command","parameters":{"type":"object","properties":{"cmd":{"type":"string"}}}}}`
	if status, body := post(`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[` + tool + `]}`); status != 400 || !strings.Contains(body, "tools are not supported") {
		t.Errorf("with tools: %d %s", status, body)
	}
	listing := `{"role":"system","content":"<tools>\n` + strings.ReplaceAll(tool, `"`, `\"`) + `\n</tools>"}`
	status, body := post(`{"model":"m","messages":[` + listing + `,{"role":"user","content":"hi"}]}`)
	if status != 200 || !strings.Contains(body, `<tool_call>\n{\"name\": \"exec_command\", \"arguments\": {\"cmd\":\"echo hello from harnessflow\"}}\n</tool_call>`) || strings.Contains(body, `"tool_calls"`) {
		t.Errorf("tools in the prompt: %d %s", status, body)
	}
	if code := r.stop(t); code != exitOK {
		t.Fatalf("exit %d: %s", code, r.stderr.String())
	}
	var out, errb bytes.Buffer
	if code := runMockUpstream(context.Background(), []string{"--text-tools", "xml"}, nil, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "hermes or qwen3_coder") {
		t.Errorf("bad format: exit %d %q", code, errb.String())
	}
}
