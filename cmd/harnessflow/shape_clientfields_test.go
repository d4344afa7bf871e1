package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// `shape` shows the client fields as serve sends them
// (docs/request-shaping.md#client-fields), with a --model-caps entry's
// knowledge of the model's server.
func TestShapeClientFields(t *testing.T) {
	req := writeFile(t, "req.json", `{"model":"my-model","input":"hi","stream":false,"max_output_tokens":900,"temperature":0.3,`+
		`"top_logprobs":1,"prompt_cache_key":"conv-1","metadata":{"a":"b"}}`)
	caps := writeFile(t, "caps.json", `[{"match":"my-model","max_output_tokens":512,"max_tokens_field":"max_completion_tokens","prompt_cache_key":true,"unsupported":["top_logprobs"]}]`)
	for _, c := range []struct {
		args []string
		want string // the body's fields, as JSON
	}{
		{[]string{"--wire", "chat", req},
			`{"max_tokens":900,"temperature":0.3,"logprobs":true,"top_logprobs":1,"prompt_cache_key":null,"metadata":null,"max_completion_tokens":null}`},
		{[]string{"--wire", "chat", "--model-caps", caps, req},
			`{"max_completion_tokens":512,"temperature":0.3,"prompt_cache_key":"conv-1","logprobs":null,"top_logprobs":null,"metadata":null,"max_tokens":null}`},
	} {
		code, stdout, stderr := shapeCLI(t, "", c.args...)
		if code != 0 || stderr != "" {
			t.Fatalf("%v: exit %d, stderr %q", c.args, code, stderr)
		}
		var out struct {
			Body map[string]any `json:"body"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatal(err)
		}
		var want map[string]any
		if err := json.Unmarshal([]byte(c.want), &want); err != nil {
			t.Fatal(err)
		}
		for k, w := range want {
			if v, ok := out.Body[k]; w == nil && ok || w != nil && v != w {
				t.Errorf("%s: body %s = %v, want %v\n%s", strings.Join(c.args, " "), k, v, w, stdout)
			}
		}
	}
}
