package zcode_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/harnesstest"
	"github.com/harnessflow/harnessflow/harness/zcode"
	"github.com/harnessflow/harnessflow/wire/anthropic/anthropictest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The shared request set and zcode's own cases on the messages wire, and
// recorded Messages answers (stream_*.txtar) through the response graph in
// both execution modes, whole, byte by byte and in random chunks.
func TestGolden(t *testing.T) { harnesstest.Run(t, harness.NameZCode, "testdata/messages") }

// Every body of the goldens decodes with anthropic-sdk-go's request type
// without losing a field we set.
func TestAnthropicOracle(t *testing.T) {
	n := 0
	for _, c := range harnesstest.Load(t, "testdata/messages") {
		want := c.File("want.shaped.json")
		if want == nil {
			continue
		}
		var s struct {
			Body json.RawMessage `json:"body"`
		}
		if err := json.Unmarshal(want, &s); err != nil {
			t.Fatal(err)
		}
		n++
		d, err := anthropictest.Diff(s.Body)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(c.Path), err)
		}
		if d != "" {
			t.Errorf("%s: anthropic-sdk-go round trip lost or changed fields (-ours +sdk):\n%s", filepath.Base(c.Path), d)
		}
	}
	if n < 8 {
		t.Fatalf("only %d bodies checked", n)
	}
}

func TestModel(t *testing.T) {
	for in, want := range map[string]string{"zai/glm-4.6": "glm-4.6", "Z.AI/glm-5": "glm-5", "glm-4.6": "glm-4.6", "openrouter/zai/x": "openrouter/zai/x"} {
		if got := zcode.Model(in); got != want {
			t.Errorf("Model(%q) = %q, want %q", in, got, want)
		}
	}
	h := zcode.Headers()
	if h["anthropic-version"] != "2023-06-01" || h["x-zcode-agent"] != "glm" || h["x-title"] != "Z Code@cli" || h["user-agent"] == "" {
		t.Errorf("headers %v", h)
	}
}
