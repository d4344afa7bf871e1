package claudecode_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/claudecode"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/wire/anthropic"
)

// capturedTool is one tool of testdata/captured_2.1.332_tools.json: the
// tools Claude Code 2.1.332 sent (claude-opus-5-5, on loopback), names and
// schemas with every description taken out.
type capturedTool struct {
	Name         string         `json:"name"`
	InputSchema  map[string]any `json:"input_schema"`
	DeferLoading *bool          `json:"defer_loading,omitempty"`
}

// withoutDescriptions drops the description strings of a schema (the texts
// are our own; the rest is Claude Code's).
func withoutDescriptions(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			if _, text := x.(string); k == "description" && text {
				continue
			}
			out[k] = withoutDescriptions(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = withoutDescriptions(x)
		}
		return out
	}
	return v
}

// The Full profile's tools on the Messages wire are Claude Code 2.1.332's
// twelve, in its order, with its schemas (descriptions aside) and the
// placeholder's defer_loading; a child agent gets the same; the variant
// fork keeps the fork's set; Bare is not changed.
func TestCurrentToolSet(t *testing.T) {
	data, err := os.ReadFile("testdata/captured_2.1.332_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	var want []capturedTool
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	req := sharedRequest(t, "plain")
	body := plan(t, harness.NameClaudeCode, harness.WireMessages, req, nil)
	raw, err := json.Marshal(body["tools"])
	if err != nil {
		t.Fatal(err)
	}
	var got []capturedTool
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i].InputSchema = withoutDescriptions(got[i].InputSchema).(map[string]any)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tools differ from Claude Code 2.1.332's (-captured +ours):\n%s", d)
	}
	for _, tool := range body["tools"].([]any) {
		if d, _ := tool.(map[string]any)["description"].(string); d == "" {
			t.Errorf("tool %v has no description", tool.(map[string]any)["name"])
		}
	}

	fork := harness.Config{Wire: harness.WireMessages, Variants: map[string]string{harness.NameClaudeCode: claudecode.VariantFork}}
	forkTools := toolNames(planWith(t, fork, harness.NameClaudeCode, req, nil))
	for _, n := range []string{"Glob", "Grep", "TaskCreate", "WebFetch", "NotebookEdit"} {
		if !slices.Contains(forkTools, n) {
			t.Errorf("variant fork: tools %v lack the fork's %s", forkTools, n)
		}
	}
	for _, n := range []string{"ListAgents", "ReportFindings", claudecode.DeferredPlaceholder} {
		if slices.Contains(forkTools, n) {
			t.Errorf("variant fork: tools %v carry 2.1.332's %s", forkTools, n)
		}
	}
	bare := toolNames(plan(t, harness.NameClaudeCodeBare, harness.WireMessages, req, nil))
	if slices.Contains(bare, "ListAgents") || slices.Contains(bare, "Agent") {
		t.Errorf("Bare tools %v: the Full profile's set leaked in", bare)
	}
}

// The top-level values and beta flags Claude Code 2.1.332 sends per model
// (captured for claude-opus-5-5, claude-opus-4-6 and claude-sonnet-4-5 with
// no effort asked), and the fork's and an unknown model's fixed values.
func TestCurrentModelDefaults(t *testing.T) {
	const all = claudecode.BetaFull
	without := func(flags ...string) string {
		return strings.Join(slices.DeleteFunc(strings.Split(all, ","), func(f string) bool { return slices.Contains(flags, f) }), ",")
	}
	turnBetas := []string{"per-turn-control-2026-07-01", "mid-conversation-tool-changes-2026-07-01"}
	tests := []struct {
		name, model, variant, effort string
		maxTokens                    float64
		thinking                     string
		outputEffort                 string
		beta                         string
	}{
		{name: "opus 5.5", model: "claude-opus-5-5", maxTokens: 128000,
			thinking: `{"display":"omitted","type":"adaptive"}`, outputEffort: "medium", beta: all},
		{name: "opus 4.6", model: "claude-opus-4-6", maxTokens: 64000,
			thinking: `{"display":"omitted","type":"adaptive"}`, outputEffort: "high", beta: without(turnBetas...)},
		{name: "sonnet 4.5", model: "claude-sonnet-4-5", maxTokens: 32000,
			thinking: `{"budget_tokens":31999,"display":"omitted","type":"enabled"}`,
			beta:     without(append(turnBetas, "effort-2025-11-24")...)},
		{name: "effort none", model: "claude-opus-5-5", effort: "none", maxTokens: 128000,
			beta: all},
		{name: "unknown model", model: "test-model", maxTokens: 32000,
			thinking: `{"budget_tokens":31999,"display":"omitted","type":"enabled"}`, beta: all},
		{name: "fork opus 5.5", model: "claude-opus-5-5", variant: claudecode.VariantFork, maxTokens: 64000,
			thinking: `{"type":"adaptive"}`, beta: claudecode.ForkBetaFull},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := sharedRequest(t, "plain")
			req.Model = tt.model
			if tt.effort != "" {
				req.Reasoning = &protocol.ReasoningConfig{Effort: tt.effort}
			}
			cfg := harness.Config{Wire: harness.WireMessages}
			if tt.variant != "" {
				cfg.Variants = map[string]string{harness.NameClaudeCode: tt.variant}
			}
			turn, err := harness.Plan(context.Background(), cfg, harness.NameClaudeCode, req, nil)
			if err != nil {
				t.Fatal(err)
			}
			var body struct {
				MaxTokens    float64         `json:"max_tokens"`
				Thinking     json.RawMessage `json:"thinking"`
				OutputConfig *struct {
					Effort string `json:"effort"`
				} `json:"output_config"`
			}
			if err := json.Unmarshal(turn.Shaped.Body, &body); err != nil {
				t.Fatal(err)
			}
			var thinking string
			if body.Thinking != nil {
				var m map[string]any
				if err := json.Unmarshal(body.Thinking, &m); err != nil {
					t.Fatal(err)
				}
				b, _ := json.Marshal(m) // sorted keys
				thinking = string(b)
			}
			var effort string
			if body.OutputConfig != nil {
				effort = body.OutputConfig.Effort
			}
			if body.MaxTokens != tt.maxTokens || thinking != tt.thinking || effort != tt.outputEffort {
				t.Errorf("max_tokens %v, thinking %s, effort %q; want %v, %s, %q",
					body.MaxTokens, thinking, effort, tt.maxTokens, tt.thinking, tt.outputEffort)
			}
			if got := turn.Shaped.Headers[anthropic.HeaderBeta]; got != tt.beta {
				t.Errorf("anthropic-beta %q, want %q", got, tt.beta)
			}
		})
	}
}
