package harness_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	_ "github.com/harnessflow/harnessflow/harness/minimal" // the harness shaped here
	"github.com/harnessflow/harnessflow/prompts"
	"github.com/harnessflow/harnessflow/protocol"
)

// The calibrated pack files replace the shaped request's tools (rendered
// with the turn's values), set top-level fields in place or at the end,
// set headers and drop the title request; without them nothing changes.
func TestCalibratedPackFiles(t *testing.T) {
	req, err := protocol.DecodeRequest([]byte(`{"model":"m1","stream":true,"input":[` +
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context><cwd>/w/p</cwd><shell>zsh</shell><current_date>2030-01-02</current_date></environment_context>"}]},` +
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}],` +
		`"tools":[{"type":"function","name":"exec_command","parameters":{"type":"object","properties":{"cmd":{"type":"string"}}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := harness.Plan(context.Background(), harness.Config{}, harness.NameMinimal, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"wire_tools.tmpl":   `[{"type":"function","function":{"name":"sh","description":"in {{.cwd}} on {{.date}} ({{.platform}}, {{.shell}}, {{.model}})"}}]`,
		"wire_fields.json":  `{"max_tokens": 77, "zeta": {"a": [1, 2]}}`,
		"wire_headers.json": `{"User-Agent": "agent/9.9"}`,
		"wire_title.json":   `{"send": false}`,
	}
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, harness.NameMinimal, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pack, err := prompts.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := harness.Plan(context.Background(), harness.Config{Prompts: pack}, harness.NameMinimal, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	body := string(got.Shaped.Body)
	for _, want := range []string{
		`"tools":[{"type":"function","function":{"name":"sh","description":"in /w/p on 2030-01-02 (linux, zsh, m1)"}}]`,
		`,"zeta":{"a":[1,2]}}`, `"max_tokens":77`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %s:\n%s", want, body)
		}
	}
	if strings.Contains(string(plain.Shaped.Body), `"max_tokens"`) &&
		strings.Index(body, `"max_tokens"`) != strings.Index(string(plain.Shaped.Body), `"max_tokens"`) {
		t.Errorf("max_tokens moved:\n%s\n%s", plain.Shaped.Body, body)
	}
	if got.Shaped.Headers["user-agent"] != "agent/9.9" {
		t.Errorf("headers = %v", got.Shaped.Headers)
	}
	if got.Shaped.TitleRequest != nil {
		t.Errorf("title request kept: %s", got.Shaped.TitleRequest)
	}
	if strings.Contains(string(plain.Shaped.Body), `"zeta"`) || strings.Contains(string(plain.Shaped.Body), `"sh"`) {
		t.Errorf("the embedded pack's request changed: %s", plain.Shaped.Body)
	}

	bad := t.TempDir()
	p := filepath.Join(bad, harness.NameMinimal, "wire_tools.tmpl")
	_ = os.MkdirAll(filepath.Dir(p), 0o755)
	_ = os.WriteFile(p, []byte(`{"not":"an array"}`), 0o644)
	badPack, err := prompts.Load(bad)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := harness.Plan(context.Background(), harness.Config{Prompts: badPack}, harness.NameMinimal, req, nil); err == nil ||
		!strings.Contains(err.Error(), "wire_tools.tmpl") {
		t.Errorf("a tools template that is not an array: %v", err)
	}
}

// A calibrated header replaces the harness's own spelling of it: one
// header, not two of different case (kimi-code sends "User-Agent").
func TestCalibratedHeaderReplacesHarnessSpelling(t *testing.T) {
	req, err := protocol.DecodeRequest([]byte(`{"model":"m1","stream":true,"input":[` +
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}],` +
		`"tools":[{"type":"function","name":"exec_command","parameters":{"type":"object","properties":{"cmd":{"type":"string"}}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, harness.NameKimiCode, "wire_headers.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(`{"user-agent": "agent/9.9"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	pack, err := prompts.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := harness.Plan(context.Background(), harness.Config{Prompts: pack}, harness.NameKimiCode, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for k, v := range got.Shaped.Headers {
		if strings.EqualFold(k, "user-agent") {
			n++
			if v != "agent/9.9" {
				t.Errorf("%s: %q", k, v)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d user-agent headers: %v", n, got.Shaped.Headers)
	}
}
