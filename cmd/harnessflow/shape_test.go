package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const shapeRequestJSON = `{
  "model": "m",
  "input": [
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<hi> & bye"}]},
    {"type": "function_call", "name": "lookup", "namespace": "mcp.demo", "arguments": "{}", "call_id": "c1"}
  ],
  "tools": [{"type": "namespace", "name": "mcp.demo", "description": "", "tools": [
    {"type": "function", "name": "lookup", "description": "Look up", "parameters": {"type": "object"}}]}],
  "tool_choice": "auto", "parallel_tool_calls": true, "stream": true
}`

func shapeCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = runShape(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestShapeGood(t *testing.T) {
	good := writeFile(t, "req.json", shapeRequestJSON)
	for name, c := range map[string]struct {
		args  []string
		stdin string
		path  string
		kinds string
	}{
		"native chat file":     {[]string{"--wire", "chat", good}, "", "/chat/completions", `{"mcp_demo_lookup":{"kind":"namespaced_function","name":"lookup","namespace":"mcp.demo"}}`},
		"flags after the file": {[]string{good, "--wire", "chat", "--harness", "native"}, "", "/chat/completions", `{"mcp_demo_lookup":{"kind":"namespaced_function","name":"lookup","namespace":"mcp.demo"}}`},
		"stdin":                {[]string{"--wire=chat", "-"}, shapeRequestJSON, "/chat/completions", `{"mcp_demo_lookup":{"kind":"namespaced_function","name":"lookup","namespace":"mcp.demo"}}`},
		"responses":            {[]string{"--wire", "responses", good}, "", "/responses", `{}`},
	} {
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := shapeCLI(t, c.stdin, c.args...)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if strings.Count(stdout, "\n") != 1 {
				t.Errorf("want one JSON line, got %q", stdout)
			}
			var out struct {
				Path         string          `json:"path"`
				Body         json.RawMessage `json:"body"`
				TitleRequest json.RawMessage `json:"title_request"`
				ToolKinds    json.RawMessage `json:"tool_kinds"`
			}
			if err := json.Unmarshal([]byte(stdout), &out); err != nil {
				t.Fatalf("%v: %s", err, stdout)
			}
			if out.Path != c.path || string(out.TitleRequest) != "null" || string(out.ToolKinds) != c.kinds {
				t.Errorf("got %s", stdout)
			}
			var body map[string]any
			if err := json.Unmarshal(out.Body, &body); err != nil || body["model"] != "m" {
				t.Errorf("body %s: %v", out.Body, err)
			}
			if !strings.Contains(stdout, "<hi> & bye") {
				t.Errorf("output is HTML-escaped: %s", stdout)
			}
			if c.path == "/chat/completions" && !strings.Contains(string(out.Body), `{"role":"tool","content":"aborted","tool_call_id":"c1"}`) {
				t.Errorf("body %s", out.Body)
			}
		})
	}
}

func TestShapeBadInput(t *testing.T) {
	dir := t.TempDir()
	malformed := writeFile(t, "bad.json", "{\n  \"model\": \"m\",\n  \"input\": [}\n")
	notObject := writeFile(t, "array.json", `[1,2]`)
	badItem := writeFile(t, "item.json", `{"model":"m","input":[{"content":"hi"}]}`)
	badTool := writeFile(t, "tool.json", `{"model":"m","input":[],"tools":[{"type":"function","parameters":{}}]}`)
	good := writeFile(t, "good.json", shapeRequestJSON)
	for name, c := range map[string]struct {
		args  []string
		stdin string
		want  []string // substrings of the one error line
	}{
		"syntax error":             {[]string{"--wire", "chat", malformed}, "", []string{malformed + ": 3:13", "invalid character '}'"}},
		"not an object":            {[]string{"--wire", "chat", notObject}, "", []string{notObject + ":", "expected a JSON object"}},
		"item without type":        {[]string{"--wire", "chat", badItem}, "", []string{badItem + ":", `missing "type"`}},
		"nameless tool":            {[]string{"--wire", "chat", badTool}, "", []string{badTool + ":", "tools[0]: function tool without a name"}},
		"empty stdin":              {[]string{"--wire", "chat"}, "", []string{"stdin:", "unexpected end of JSON input"}},
		"missing file":             {[]string{"--wire", "chat", filepath.Join(dir, "nope.json")}, "", []string{"nope.json: no such file"}},
		"unknown wire":             {[]string{"--wire", "grpc", good}, "", []string{"--wire:", `unknown wire "grpc"`}},
		"native messages":          {[]string{"--wire", "messages", good}, "", []string{good + `: wire_api = "messages" requires a harness-native transport;`}},
		"chat harness on messages": {[]string{"--wire", "messages", "--harness", "minimal", good}, "", []string{good + `: wire_api = "messages" is not supported by harness = "minimal"`}},
		"unknown harness":          {[]string{"--wire", "chat", "--harness", "kimi_cli", good}, "", []string{`--harness: unknown harness "kimi_cli" (did you mean "kimi-cli"? available: claude-code, `}},
		"harness off its wire":     {[]string{"--wire", "chat", "--harness", "zcode", good}, "", []string{`--harness: harness "zcode" does not shape chat requests (it shapes messages); use --wire messages`}},
	} {
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := shapeCLI(t, c.stdin, c.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if stdout != "" {
				t.Errorf("stdout %q", stdout)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "harnessflow shape: ") {
				t.Errorf("want one error line, got %q", stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
		})
	}
	// Usage errors: exit 2 with the usage text.
	for _, args := range [][]string{{}, {"a.json", "b.json", "--wire", "chat"}, {"--bogus"}} {
		if code, _, stderr := shapeCLI(t, "", args...); code != 2 || !strings.Contains(stderr, "Usage: harnessflow shape") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
	if code, _, _ := shapeCLI(t, "", "--help"); code != 0 {
		t.Errorf("--help: exit %d", code)
	}
}

func TestLoadRequest(t *testing.T) {
	good := writeFile(t, "good.json", shapeRequestJSON)
	req, err := loadRequest(good)
	if err != nil || req.Model != "m" {
		t.Errorf("good: %+v %v", req, err)
	}
	if _, err := loadRequest(writeFile(t, "bad.json", "{")); err == nil || !strings.Contains(err.Error(), "--request") {
		t.Errorf("bad file: %v", err)
	}
}
