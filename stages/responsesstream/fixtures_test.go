package responsesstream

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type fixture struct {
	name     string
	data     []byte
	expected map[string]any
}

// loadFixtures reads testdata/fixtures/*.sse with their expect.json (copied
// from the shared wire corpus; the recorded sha256 guards against edits).
func loadFixtures(t testing.TB) []fixture {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "fixtures", "*.sse"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures (err %v)", err)
	}
	var fs []fixture
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(strings.TrimSuffix(p, ".sse") + ".expect.json")
		if err != nil {
			t.Fatal(err)
		}
		var exp struct {
			Expected map[string]any `json:"expected"`
			SHA256   string         `json:"sha256"`
			Bytes    int            `json:"bytes"`
		}
		if err := json.Unmarshal(raw, &exp); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		sum := sha256.Sum256(data)
		if hex.EncodeToString(sum[:]) != exp.SHA256 || len(data) != exp.Bytes {
			t.Fatalf("%s: bytes or sha256 differ from its expect.json", p)
		}
		fs = append(fs, fixture{name: strings.TrimSuffix(filepath.Base(p), ".sse"), data: data, expected: exp.Expected})
	}
	return fs
}

func TestFixtures(t *testing.T) {
	g, err := Graph(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range loadFixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			o := replay(t, g, f.data)
			if o.Err != "" {
				t.Fatalf("run error: %s", o.Err)
			}
			for _, e := range checkExpected(f.expected, summarize(o.Events)) {
				t.Error(e)
			}
		})
	}
}

// TestFixtureCheckerCanFail makes sure the expectation check is not vacuous:
// every tampered expectation must be reported.
func TestFixtureCheckerCanFail(t *testing.T) {
	g, err := Graph(Options{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]fixture{}
	for _, f := range loadFixtures(t) {
		byName[f.name[:3]] = f
	}
	tamper := []struct {
		fixture string
		edit    func(e map[string]any)
	}{
		{"r01", func(e map[string]any) { e["text"] = "other" }},
		{"r01", func(e map[string]any) { e["reasoning"].(map[string]any)["summary"] = []any{"x"} }},
		{"r01", func(e map[string]any) { e["reasoning"].(map[string]any)["encrypted_content"] = "forged" }},
		{"r01", func(e map[string]any) { e["items"].([]any)[1].(map[string]any)["id"] = "msg_x" }},
		{"r01", func(e map[string]any) { e["usage"].(map[string]any)["cached_input_tokens"] = 0.0 }},
		{"r01", func(e map[string]any) { e["usage"].(map[string]any)["reasoning_output_tokens"] = 0.0 }},
		{"r01", func(e map[string]any) { e["response_id"] = "resp_x" }},
		{"r01", func(e map[string]any) { e["model"] = "gpt-x" }},
		{"r01", func(e map[string]any) { e["status"] = "failed" }},
		{"r02", func(e map[string]any) { tool(e, 0)["arguments"] = "{}" }},
		{"r02", func(e map[string]any) { tool(e, 0)["item_id"] = "fc_x" }},
		{"r02", func(e map[string]any) { tool(e, 1)["kind"] = "function" }},
		{"r02", func(e map[string]any) { tool(e, 1)["input"] = "*** Begin Patch\n" }},
		{"r02", func(e map[string]any) { tool(e, 1)["id"] = "call_x" }},
		{"r03", func(e map[string]any) { e["error"].(map[string]any)["code"] = "rate_limit_exceeded" }},
		{"r03", func(e map[string]any) { e["error"].(map[string]any)["retryable"] = false }},
		{"r03", func(e map[string]any) { e["terminal"] = "response.completed" }},
		{"r05", func(e map[string]any) { e["error"].(map[string]any)["retry_after_ms"] = 126.0 }},
		{"r05", func(e map[string]any) { e["error"].(map[string]any)["message"] = "x" }},
		{"r05", func(e map[string]any) { e["error"].(map[string]any)["kind"] = "upstream_truncated" }},
	}
	for i, tc := range tamper {
		f, ok := byName[tc.fixture]
		if !ok {
			t.Fatalf("no fixture %s", tc.fixture)
		}
		o := runGraph(t, g, f.data, 0, nil)
		exp := deepCopy(t, f.expected)
		if errs := checkExpected(exp, summarize(o.Events)); len(errs) != 0 {
			t.Fatalf("%s: untampered expectation fails: %v", tc.fixture, errs)
		}
		tc.edit(exp)
		if errs := checkExpected(exp, summarize(o.Events)); len(errs) == 0 {
			t.Errorf("tamper %d on %s went unnoticed", i, tc.fixture)
		}
	}
}

func tool(e map[string]any, i int) map[string]any {
	return e["tool_calls"].([]any)[i].(map[string]any)
}

func deepCopy(t *testing.T, m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
