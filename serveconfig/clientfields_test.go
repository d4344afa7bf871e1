package serveconfig

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/stages/request"
)

// A model entry's client-field capabilities (docs/request-shaping.md#client-fields)
// reach its model table, over the built-in entry; bad values are errors
// on their line.
func TestModelClientFieldCaps(t *testing.T) {
	name := filepath.Join(t.TempDir(), "serve.toml")
	doc := base + "max_tokens_field = \"max_completion_tokens\"\nprompt_cache_key = true\nmetadata = false\nunsupported = [\"top_p\"]\n"
	c, err := Parse([]byte(doc), name, testEnv())
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Route("m")
	if err != nil {
		t.Fatal(err)
	}
	table, err := r.Entry.ModelTable(harness.BuiltinModels(), "gpt-5.5") // the built-in gpt-5 entry says metadata true
	if err != nil {
		t.Fatal(err)
	}
	got := table.Lookup("gpt-5.5").ClientFields()
	if got.TokenField != request.TokenFieldMaxCompletionTokens || !got.PromptCacheKey || got.Metadata || !slices.Equal(got.Unsupported, []string{"top_p"}) {
		t.Errorf("client fields %+v", got)
	}

	for _, tt := range []struct{ doc, want string }{
		{base + "max_tokens_field = \"max_new_tokens\"\n", `F:8: model "m": max_tokens_field "max_new_tokens": want "max_tokens" or "max_completion_tokens"`},
		{base + "unsupported = [\"seed\"]\n", `F:8: model "m": unsupported: unknown client field "seed"`},
	} {
		_, err := Parse([]byte(tt.doc), name, testEnv())
		if err == nil || !strings.Contains(strings.ReplaceAll(err.Error(), name, "F"), tt.want) {
			t.Errorf("error %v, want it to contain %q", err, tt.want)
		}
	}
}
