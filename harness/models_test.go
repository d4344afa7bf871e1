package harness

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

func TestBuiltinFamilies(t *testing.T) {
	b := BuiltinModels()
	for _, tt := range []struct {
		model   string
		want    request.ReasoningControl
		efforts []string
		matched bool
	}{
		{"zai/GLM-4.6", request.ReasoningThinkingToggle, nil, true},
		{"glm-4.7", request.ReasoningThinkingToggle, nil, true},
		{"zai-org/GLM-4.6", request.ReasoningTemplateEnableThinking, nil, true},
		{"zai-org/GLM-4.5-Air-FP8", request.ReasoningTemplateEnableThinking, nil, true},
		{"deepseek-ai/DeepSeek-V3.1-Terminus", request.ReasoningTemplateThinking, nil, true},
		{"deepseek-v3.2", request.ReasoningThinkingToggle, nil, true},
		{"moonshotai/Kimi-K2.5", request.ReasoningTemplateThinking, nil, true},
		{"kimi-k2.5", request.ReasoningThinkingToggle, nil, true},
		{"Qwen/Qwen3-235B-A22B", request.ReasoningTemplateEnableThinking, nil, true},
		{"qwen3.5-397b", request.ReasoningTemplateEnableThinking, nil, true},
		{"Qwen/Qwen3-Coder-480B-A35B-Instruct", request.ReasoningDefault, nil, true},
		{"openai/gpt-oss-120b", request.ReasoningEffortField, []string{"low", "medium", "high"}, true},
		{"gpt-5.5", request.ReasoningDefault, nil, true},
		{"my-local-model", request.ReasoningDefault, nil, false},
	} {
		got := b.Lookup(tt.model)
		if got.Reasoning != tt.want || !slices.Equal(got.Efforts, tt.efforts) || got.Matched != tt.matched {
			t.Errorf("%s: %+v, want reasoning %q efforts %v matched %v", tt.model, got, tt.want, tt.efforts, tt.matched)
		}
	}
	var nilTable *ModelTable
	if got := nilTable.Lookup("glm-4.6"); got.Reasoning != request.ReasoningThinkingToggle {
		t.Errorf("nil table: %+v", got)
	}
}

func TestModelTable(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	m, err := LoadModelTable(write("ok.json", `[{"match":"My-Model","reasoning":"thinking_toggle","max_output_tokens":4096},{"match":"glm-4.6"},
		{"match":"plain-box","tools_in_prompt":true,"tool_format":"qwen3_coder"},
		{"match":"or-model","reasoning":"openrouter","efforts":["low","HIGH"]},
		{"match":"tmpl","reasoning":"template_thinking"},{"match":"enab","reasoning":"template_enable_thinking"},
		{"match":"hosted","reasoning":"thinking_type"},{"match":"oai","reasoning":"reasoning_effort","efforts":["none","xhigh"]}]`))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Lookup("org/my-model-7b"); got.Reasoning != request.ReasoningThinkingToggle || got.MaxOutputTokens != 4096 || !got.Matched {
		t.Errorf("file entry: %+v", got)
	}
	if got := m.Lookup("glm-4.6"); got.Reasoning != request.ReasoningDefault || !got.Matched {
		t.Errorf("a file entry overrides the built-in one: %+v", got)
	}
	if got := m.Lookup("plain-box-1"); !got.ToolsInPrompt || got.ToolFormat != "qwen3_coder" {
		t.Errorf("tools in prompt: %+v", got)
	}
	for model, want := range map[string]request.ReasoningControl{
		"or-model": request.ReasoningOpenRouter, "tmpl": request.ReasoningTemplateThinking, "enab-x": request.ReasoningTemplateEnableThinking,
		"hosted": request.ReasoningThinkingType, "oai": request.ReasoningEffortField, "zai-org/glm-5": request.ReasoningTemplateEnableThinking,
	} {
		if got := m.Lookup(model); got.Reasoning != want {
			t.Errorf("%s: %+v, want %q", model, got, want)
		}
	}
	for name, c := range map[string]struct{ data, want string }{
		"not an array":     {`{"match":"x"}`, "want a JSON array"},
		"unknown field":    {`[{"match":"x","thinking":true}]`, `unknown field "thinking"`},
		"empty match":      {`[{"match":" "}]`, `entry 0: empty "match"`},
		"bad reasoning":    {`[{"match":"x","reasoning":"effort"}]`, `unknown reasoning "effort" (want one of "", "thinking_toggle", "reasoning_effort"`},
		"bad effort":       {`[{"match":"x","efforts":["low","turbo"]}]`, `efforts: unknown effort "turbo"`},
		"bad tool format":  {`[{"match":"x"},{"match":"y","tool_format":"Qwen3 Coder"}]`, `entry 1: tool_format: unknown tool format "Qwen3 Coder"`},
		"tools not bool":   {`[{"match":"x","tools_in_prompt":"yes"}]`, "tools_in_prompt"},
		"negative max":     {`[{"match":"x","max_output_tokens":-1}]`, "negative"},
		"empty variant":    {`[{"match":"x","variants":{"terminus-2":""}}]`, "variants"},
		"matched not read": {`[{"match":"x","Matched":true}]`, `unknown field "Matched"`},
		"syntax error":     {`[{"match":`, "unexpected EOF"},
		"empty file":       {"", "EOF"},
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

// TestHarnessReasoning: the harness routes see the thinking toggle for
// the models the table toggled before it had other controls, and nothing
// for the other forms.
func TestHarnessReasoning(t *testing.T) {
	for model, want := range map[string]request.ReasoningControl{
		"glm-4.6":                     request.ReasoningThinkingToggle,
		"zai-org/GLM-4.6":             request.ReasoningThinkingToggle,
		"deepseek-ai/DeepSeek-V3.1":   request.ReasoningThinkingToggle,
		"moonshotai/Kimi-K2.5":        request.ReasoningThinkingToggle,
		"moonshotai/Kimi-K2-Instruct": request.ReasoningDefault,
		"Qwen/Qwen3-32B":              request.ReasoningDefault,
		"openai/gpt-oss-20b":          request.ReasoningDefault,
		"my-model":                    request.ReasoningDefault,
	} {
		e := &Env{Model: BuiltinModels().Lookup(model), Request: &protocol.ResponsesRequest{Model: model}}
		if got := e.RequestOptions().ReasoningControl; got != want {
			t.Errorf("%s: %q, want %q", model, got, want)
		}
	}
}

// Looking a model up in the built-in table (a nil *ModelTable, as serve
// does per request without --model-caps) reads the table in place: no copy
// of it per request.
func TestBuiltinLookupAllocatesNothing(t *testing.T) {
	var table *ModelTable
	if caps := table.Lookup("zai-org/GLM-4.6"); !caps.Matched {
		t.Fatal("zai-org/GLM-4.6: no built-in entry matched")
	}
	if n := testing.AllocsPerRun(100, func() { table.Lookup("qwen3-coder-480b") }); n != 0 {
		t.Errorf("a built-in lookup allocates %.0f times, want none", n)
	}
}
