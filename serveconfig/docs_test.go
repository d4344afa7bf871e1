package serveconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// exampleMarker starts every serve configuration example in the docs.
const exampleMarker = "# serve.toml: harnessflow serve --config serve.toml"

// The examples of docs/serve-config.md and README.md validate.
func TestDocumentedExamples(t *testing.T) {
	env := testEnv("HARNESSFLOW_CLIENT_KEYS", "example-client-key-0123456789",
		"OPENROUTER_API_KEY", "example-openrouter-key", "ANTHROPIC_API_KEY", "example-anthropic-key")
	for _, doc := range []string{"../docs/serve-config.md", "../README.md"} {
		found := 0
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for i, block := range strings.Split(string(data), "```toml\n")[1:] {
			block, _, _ = strings.Cut(block, "```")
			if !strings.HasPrefix(block, exampleMarker) {
				continue
			}
			found++
			name := filepath.Base(doc) + " example " + string(rune('1'+i))
			c, err := Parse([]byte(block), name, env)
			if err != nil {
				t.Errorf("%s:\n%v", name, err)
				continue
			}
			for _, model := range []string{"qwen3-coder", "claude-sonnet-4-5", "some/other-model"} {
				if _, err := c.Route(model); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
		}
		if found == 0 {
			t.Errorf("%s: no example starting with %q", doc, exampleMarker)
		}
	}
}
