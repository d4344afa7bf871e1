package claudecode_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"go.uber.org/goleak"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/claudecode"
	"github.com/harnessflow/harnessflow/harness/harnesstest"
	"github.com/harnessflow/harnessflow/prompts"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/wire/anthropic/anthropictest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// goldenDirs are the golden directories: per profile and wire, the shared
// request set and cases of their own; the messages directories also hold
// recorded Messages answers (stream_*.txtar) run through the response
// graph.
var goldenDirs = []struct{ harness, dir string }{
	{harness.NameClaudeCode, "testdata/full/messages"},
	{harness.NameClaudeCode, "testdata/full/responses"},
	{harness.NameClaudeCode, "testdata/full/chat"},
	{harness.NameClaudeCodeBare, "testdata/bare/messages"},
	{harness.NameClaudeCodeBare, "testdata/bare/responses"},
	{harness.NameClaudeCodeBare, "testdata/bare/chat"},
}

// The shared request set on every wire of both profiles, the cases of our
// own, and recorded Messages streams through the response graph (whole,
// byte by byte and in random chunks, fused and async).
func TestGolden(t *testing.T) {
	for _, g := range goldenDirs {
		t.Run(strings.TrimPrefix(g.dir, "testdata/"), func(t *testing.T) { harnesstest.Run(t, g.harness, g.dir) })
	}
}

// shapedBody is the body of a golden's want.shaped.json.
func shapedBodies(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, c := range harnesstest.Load(t, dir) {
		want := c.File("want.shaped.json")
		if want == nil {
			continue
		}
		var s struct {
			Body         json.RawMessage `json:"body"`
			TitleRequest json.RawMessage `json:"title_request"`
		}
		if err := json.Unmarshal(want, &s); err != nil {
			t.Fatalf("%s: %v", c.Path, err)
		}
		name := filepath.Base(c.Path)
		out[name] = s.Body
		if len(s.TitleRequest) > 0 && string(s.TitleRequest) != "null" {
			out[name+" title"] = s.TitleRequest
		}
	}
	return out
}

// Every Messages body (and title request) of the goldens decodes with
// anthropic-sdk-go's request type without losing a field we set.
func TestAnthropicOracle(t *testing.T) {
	n := 0
	for _, dir := range []string{"testdata/full/messages", "testdata/bare/messages"} {
		for name, body := range shapedBodies(t, dir) {
			n++
			d, err := anthropictest.Diff(body)
			if err != nil {
				t.Fatalf("%s/%s: %v", dir, name, err)
			}
			if d != "" {
				t.Errorf("%s/%s: anthropic-sdk-go round trip lost or changed fields (-ours +sdk):\n%s", dir, name, d)
			}
		}
	}
	if n < 20 {
		t.Fatalf("only %d Messages bodies checked", n)
	}
}

// Every Chat body decodes with openai-go's chat params, and every Responses
// body with its Responses params, without losing a field we set (stream is
// the SDK's to set; reasoning_content is not modelled).
func TestOpenAIOracle(t *testing.T) {
	check := func(t *testing.T, name string, body []byte, params interface{ MarshalJSON() ([]byte, error) }, decode func([]byte) error) {
		t.Helper()
		if err := decode(body); err != nil {
			t.Fatalf("%s: openai-go cannot decode the body: %v", name, err)
		}
		again, err := params.MarshalJSON()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var ours, sdk map[string]any
		if err := json.Unmarshal(body, &ours); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(again, &sdk); err != nil {
			t.Fatal(err)
		}
		delete(ours, "stream")
		dropNulls(ours) // a null field is the same as an absent one
		dropNulls(sdk)
		// reasoning_content is a provider extension (DeepSeek, Kimi, GLM)
		// the SDK does not model.
		msgs, _ := ours["messages"].([]any)
		for _, m := range msgs {
			delete(m.(map[string]any), "reasoning_content")
		}
		if d := cmp.Diff(ours, sdk); d != "" {
			t.Errorf("%s: openai-go round trip lost or changed fields (-ours +sdk):\n%s", name, d)
		}
	}
	for _, dir := range []string{"testdata/full/chat", "testdata/bare/chat"} {
		for name, body := range shapedBodies(t, dir) {
			var p openai.ChatCompletionNewParams
			check(t, dir+"/"+name, body, &p, func(b []byte) error { return json.Unmarshal(b, &p) })
		}
	}
	for _, dir := range []string{"testdata/full/responses", "testdata/bare/responses"} {
		for name, body := range shapedBodies(t, dir) {
			var p responses.ResponseNewParams
			check(t, dir+"/"+name, body, &p, func(b []byte) error { return json.Unmarshal(b, &p) })
		}
	}
}

// dropNulls removes the null members of JSON objects, at every level.
func dropNulls(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
				continue
			}
			dropNulls(e)
		}
	case []any:
		for _, e := range x {
			dropNulls(e)
		}
	}
}

// One source of truth: a change to the system prompt's text in the prompt
// pack shows in the bodies of all three wires.
func TestPromptEditShowsOnEveryWire(t *testing.T) {
	const marker = "ZEBRA-CROSSING-PROMPT-EDIT"
	text, err := prompts.Default().Text(harness.NameClaudeCode, "system")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, harness.NameClaudeCode), 0o755); err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(text, "# Tone and style", "# Tone and style\n- "+marker, 1)
	if err := os.WriteFile(filepath.Join(dir, harness.NameClaudeCode, "system.tmpl"), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	pack, err := prompts.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	req := sharedRequest(t, "tool_history")
	for _, w := range harness.Wires() {
		for _, p := range []*prompts.Pack{prompts.Default(), pack} {
			turn, err := harness.Plan(context.Background(), harness.Config{Wire: w, Prompts: p}, harness.NameClaudeCode, req, nil)
			if err != nil {
				t.Fatal(err)
			}
			has := strings.Contains(string(turn.Shaped.Body), marker)
			if has != (p == pack) {
				t.Errorf("%s wire, edited pack %v: body has the edit: %v", w, p == pack, has)
			}
		}
	}
}

func sharedRequest(t *testing.T, name string) *protocol.ResponsesRequest {
	t.Helper()
	data, err := harnesstest.SharedRequest(name)
	if err != nil {
		t.Fatal(err)
	}
	req, err := protocol.DecodeRequest(data)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// plan shapes req for the profile on the wire, with the client's headers.
func plan(t *testing.T, name string, w harness.Wire, req *protocol.ResponsesRequest, hdr http.Header) map[string]any {
	t.Helper()
	return planWith(t, harness.Config{Wire: w}, name, req, hdr)
}

// planWith is plan with the whole configuration (variants, models).
func planWith(t *testing.T, cfg harness.Config, name string, req *protocol.ResponsesRequest, hdr http.Header) map[string]any {
	t.Helper()
	turn, err := harness.Plan(context.Background(), cfg, name, req, hdr)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(turn.Shaped.Body, &body); err != nil {
		t.Fatal(err)
	}
	return body
}

func toolNames(body map[string]any) []string {
	var names []string
	tools, _ := body["tools"].([]any)
	for _, t := range tools {
		m := t.(map[string]any)
		if n, ok := m["name"].(string); ok {
			names = append(names, n)
		} else if f, ok := m["function"].(map[string]any); ok {
			names = append(names, f["name"].(string))
		}
	}
	return names
}

// A child agent (the client's sub-agent label collab_spawn) gets the child
// prompt, no thinking, temperature 1 and no effort; in the variant fork it
// also loses the plan-mode and question tools (Claude Code 2.1.332's set has
// none of them: the child keeps the main agent's tools); the route's
// profile decides Full or Bare.
func TestChildAgent(t *testing.T) {
	req := sharedRequest(t, "plain")
	child := http.Header{"X-Openai-Subagent": []string{claudecode.SubagentSpawn}}
	main := plan(t, harness.NameClaudeCode, harness.WireMessages, req, nil)
	sub := plan(t, harness.NameClaudeCode, harness.WireMessages, req, child)
	if got, want := toolNames(sub), toolNames(main); !slices.Equal(got, want) {
		t.Errorf("child tools %v, want the main agent's %v", got, want)
	}
	fork := harness.Config{Wire: harness.WireMessages, Variants: map[string]string{harness.NameClaudeCode: claudecode.VariantFork}}
	forkMain := planWith(t, fork, harness.NameClaudeCode, req, nil)
	forkSub := planWith(t, fork, harness.NameClaudeCode, req, child)
	for _, n := range []string{"EnterPlanMode", "ExitPlanMode", "TaskOutput"} {
		if !contains(toolNames(forkMain), n) || contains(toolNames(forkSub), n) {
			t.Errorf("fork %s: main %v, child %v", n, contains(toolNames(forkMain), n), contains(toolNames(forkSub), n))
		}
	}
	if sub["thinking"] != nil || sub["context_management"] != nil || sub["temperature"] != 1.0 {
		t.Errorf("child: thinking %v, context_management %v, temperature %v", sub["thinking"], sub["context_management"], sub["temperature"])
	}
	if main["temperature"] != nil || main["thinking"] == nil {
		t.Errorf("main: temperature %v, thinking %v", main["temperature"], main["thinking"])
	}
	system := sub["system"].([]any)
	if s := system[2].(map[string]any)["text"].(string); !strings.Contains(s, "sub-agent") {
		t.Errorf("child system prompt: %q", s)
	}
	bare := plan(t, harness.NameClaudeCodeBare, harness.WireMessages, req, child)
	if got := bare["output_config"]; !cmp.Equal(got, map[string]any{"effort": "high"}) {
		t.Errorf("bare child output_config %v", got)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// The same tool selection reaches every wire: names and order agree.
func TestToolsAgreeAcrossWires(t *testing.T) {
	for _, name := range []string{harness.NameClaudeCode, harness.NameClaudeCodeBare} {
		for _, r := range harnesstest.SharedRequests() {
			req := sharedRequest(t, r)
			if _, err := harness.Plan(context.Background(), harness.Config{Wire: harness.WireMessages}, name, req, nil); errors.Is(err, harness.ErrNoClientShell) {
				continue // the default-model shape: refused on every wire (golden want.error)
			}
			m := toolNames(plan(t, name, harness.WireMessages, req, nil))
			for _, w := range []harness.Wire{harness.WireResponses, harness.WireChat} {
				if got := toolNames(plan(t, name, w, req, nil)); !cmp.Equal(m, got) {
					t.Errorf("%s %s: %s tools %v, messages tools %v", name, r, w, got, m)
				}
			}
		}
	}
}

func TestModelRules(t *testing.T) {
	tests := []struct {
		model     string
		family    string
		maj, min  int
		maxTokens int64
		adaptive  bool
	}{
		{"claude-opus-4-6", "opus", 4, 6, 64000, true},
		{"anthropic/claude-opus-4.6:thinking", "opus", 4, 6, 64000, true},
		{"claude-opus4-7-20260101", "opus", 4, 7, 64000, true},
		{"claude-opus-4-20250514", "opus", 4, 0, 32000, false},
		{"claude-opus-4-5", "opus", 4, 5, 32000, false},
		{"claude-opus-5", "opus", 5, 0, 64000, true},
		{"claude-sonnet-4-6", "sonnet", 4, 6, 32000, true},
		{"claude-sonnet-4-5-20250929", "sonnet", 4, 5, 32000, false},
		{"claude-haiku-4-5-20251001", "haiku", 4, 5, 32000, false},
		{"claude-mythos-preview", "", 0, 0, 32000, true},
		{"glm-4.6", "", 0, 0, 32000, false},
	}
	for _, tc := range tests {
		f, maj, min, _ := claudecode.ModelVersion(tc.model)
		if f != tc.family || maj != tc.maj || min != tc.min {
			t.Errorf("%s: ModelVersion = %s %d.%d", tc.model, f, maj, min)
		}
		if got := claudecode.MaxTokens(tc.model); got != tc.maxTokens {
			t.Errorf("%s: MaxTokens = %d", tc.model, got)
		}
		if got := claudecode.Adaptive(tc.model); got != tc.adaptive {
			t.Errorf("%s: Adaptive = %v", tc.model, got)
		}
	}
}

func FuzzModelVersion(f *testing.F) {
	for _, s := range []string{"claude-opus-4-6", "x/claude-sonnet4.6:y", "claude-haiku-", "claude-opus-99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fam, maj, min, ok := claudecode.ModelVersion(s)
		if ok && (fam == "" || maj < 0 || min < 0 || min > 99) {
			t.Errorf("%q: %s %d.%d", s, fam, maj, min)
		}
		_ = claudecode.MaxTokens(s)
	})
}

func TestBillingBlock(t *testing.T) {
	// Claude Code 2.1.332 as captured: the first user text
	// "Create a file out.txt containing hello, then say done." gave the
	// suffix fa9, and no request hash.
	if got, want := claudecode.BillingBlock("Create a file out.txt containing hello, then say done."),
		"x-anthropic-billing-header: cc_version=2.1.332.fa9; cc_entrypoint=sdk-cli;"; got != want {
		t.Errorf("BillingBlock = %q, want %q", got, want)
	}
	a := claudecode.ForkBillingBlock("Make a file called out.txt", "main", "m", []byte("[1]"), []byte("[2]"))
	b := claudecode.ForkBillingBlock("Make a file called out.txt", "main", "m", []byte("[1]"), []byte("[3]"))
	short := claudecode.ForkBillingBlock("hi", "main", "m", nil, nil)
	const prefix = "x-anthropic-billing-header: cc_version=2.1.158."
	for _, s := range []string{a, b, short} {
		if !strings.HasPrefix(s, prefix) || !strings.HasSuffix(s, ";") || !strings.Contains(s, "; cc_entrypoint=sdk-cli; cch=") {
			t.Errorf("billing block %q", s)
		}
	}
	// The version suffix depends on characters 4, 7 and 20 of the first
	// user text only; the hash on the body.
	if a[len(prefix):len(prefix)+3] != b[len(prefix):len(prefix)+3] || a == b {
		t.Errorf("suffix or hash: %q %q", a, b)
	}
	c := claudecode.ForkBillingBlock("Make a File called out.txt", "main", "m", []byte("[1]"), []byte("[2]"))
	if c[len(prefix):len(prefix)+3] == a[len(prefix):len(prefix)+3] {
		t.Errorf("character 7 does not change the suffix: %q %q", a, c)
	}
	if got := claudecode.UserID(`s"1`); got != `{"device_id":"`+claudecode.DeviceID+`","account_uuid":"","session_id":"s\"1"}` {
		t.Errorf("UserID = %s", got)
	}
}

func TestFirstTurn(t *testing.T) {
	if !claudecode.FirstTurn(sharedRequest(t, "plain")) || claudecode.FirstTurn(sharedRequest(t, "tool_history")) ||
		claudecode.FirstTurn(&protocol.ResponsesRequest{}) {
		t.Error("FirstTurn")
	}
}
