package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/stages/request"
)

func TestModelTable(t *testing.T) {
	b := BuiltinModels()
	if got := b.Lookup("zai/GLM-4.6"); got.Reasoning != request.ReasoningThinkingToggle {
		t.Errorf("glm-4.6: %+v", got)
	}
	if got := b.Lookup("gpt-5.5"); got.Reasoning != request.ReasoningDefault {
		t.Errorf("gpt-5.5: %+v", got)
	}
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	m, err := LoadModelTable(write("ok.json", `[{"match":"My-Model","reasoning":"thinking_toggle","max_output_tokens":4096},{"match":"glm-4.6"}]`))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Lookup("org/my-model-7b"); got.Reasoning != request.ReasoningThinkingToggle || got.MaxOutputTokens != 4096 {
		t.Errorf("file entry: %+v", got)
	}
	if got := m.Lookup("glm-4.6"); got.Reasoning != request.ReasoningDefault {
		t.Errorf("a file entry overrides the built-in one: %+v", got)
	}
	for name, c := range map[string]struct{ data, want string }{
		"not an array":  {`{"match":"x"}`, "want a JSON array"},
		"unknown field": {`[{"match":"x","thinking":true}]`, `unknown field "thinking"`},
		"empty match":   {`[{"match":" "}]`, `entry 0: empty "match"`},
		"bad reasoning": {`[{"match":"x","reasoning":"effort"}]`, `unknown reasoning "effort"`},
		"syntax error":  {`[{"match":`, "unexpected EOF"},
		"empty file":    {"", "EOF"},
	} {
		_, err := LoadModelTable(write(strings.ReplaceAll(name, " ", "_")+".json", c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "model caps") {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	if _, err := LoadModelTable(filepath.Join(dir, "none.json")); err == nil {
		t.Error("missing file: no error")
	}
}
