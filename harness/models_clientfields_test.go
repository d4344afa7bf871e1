package harness

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/stages/request"
)

// The client-field knowledge of the model table: the built-in entries,
// a model-caps file's entries, and the checks.
func TestModelClientFields(t *testing.T) {
	b := BuiltinModels()
	for _, tt := range []struct {
		model string
		want  request.ClientFields
	}{
		{"my-local-model", request.ClientFields{Send: true}},
		{"kimi-k2.5", request.ClientFields{Send: true, PromptCacheKey: true}},
		{"moonshotai/Kimi-K2.5", request.ClientFields{Send: true}}, // served by vLLM or SGLang: no cache key
		{"gpt-5.5", request.ClientFields{Send: true, TokenField: request.TokenFieldMaxCompletionTokens, PromptCacheKey: true,
			Metadata: true, Unsupported: []string{"temperature", "top_p", "top_logprobs"}}},
	} {
		got := b.Lookup(tt.model).ClientFields()
		if got.Send != tt.want.Send || got.TokenField != tt.want.TokenField || got.PromptCacheKey != tt.want.PromptCacheKey ||
			got.Metadata != tt.want.Metadata || got.MaxOutputTokens != tt.want.MaxOutputTokens || !slices.Equal(got.Unsupported, tt.want.Unsupported) {
			t.Errorf("%s: %+v, want %+v", tt.model, got, tt.want)
		}
	}

	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tab, err := LoadModelTable(write("ok.json", `[{"match":"My-Model","max_output_tokens":8192,"max_tokens_field":"max_completion_tokens",`+
		`"prompt_cache_key":true,"metadata":true,"unsupported":["top_logprobs","user"]}]`))
	if err != nil {
		t.Fatal(err)
	}
	got := tab.Lookup("my-model-7b").ClientFields()
	if got.TokenField != request.TokenFieldMaxCompletionTokens || got.MaxOutputTokens != 8192 || !got.PromptCacheKey || !got.Metadata ||
		!slices.Equal(got.Unsupported, []string{"top_logprobs", "user"}) {
		t.Errorf("file entry: %+v", got)
	}
	for name, c := range map[string]struct{ text, want string }{
		"field": {`[{"match":"x","max_tokens_field":"max_new_tokens"}]`, `entry 0: max_tokens_field "max_new_tokens": want "max_tokens" or "max_completion_tokens"`},
		"unsupported": {`[{"match":"x","unsupported":["frequency_penalty"]}]`,
			`entry 0: unsupported: unknown client field "frequency_penalty" (want one of max_output_tokens, temperature`},
	} {
		if _, err := LoadModelTable(write(name+".json", c.text)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", name, err, c.want)
		}
	}
}
