package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/harnessflow/harnessflow/stages/request"
)

// ModelCaps is what a model supports, as far as shaping is concerned.
type ModelCaps struct {
	// Match is the lowercase substring of the model name the entry is for.
	Match string `json:"match"`
	// Reasoning is how the model's reasoning is switched
	// ("thinking_toggle", or "" for nothing to send).
	Reasoning request.ReasoningControl `json:"reasoning,omitempty"`
	// Efforts lists the reasoning efforts the model accepts; empty means
	// any.
	Efforts []string `json:"efforts,omitempty"`
	// MaxOutputTokens caps the output, when the model has a known cap (0:
	// unknown).
	MaxOutputTokens int64 `json:"max_output_tokens,omitempty"`
	// Variants picks a harness variant for the model, harness name →
	// variant: {"mini-swe-agent":"text"} runs mini-swe-agent's text
	// protocol for a model without function calling. Each harness
	// documents its variants and rejects a name it does not know.
	Variants map[string]string `json:"variants,omitempty"`
}

// Variant returns the variant the entry picks for harness ("" for the
// harness's default).
func (m ModelCaps) Variant(harness string) string { return m.Variants[harness] }

// ModelTable maps model names to capabilities: the first entry whose Match
// is a substring of the lowercased model name wins.
type ModelTable struct {
	entries []ModelCaps
}

// builtinModels are the models whose reasoning switch we know. Other models
// get no switch; a --model-caps file adds or overrides entries.
var builtinModels = []ModelCaps{
	{Match: "glm-4.5", Reasoning: request.ReasoningThinkingToggle},
	{Match: "glm-4.6", Reasoning: request.ReasoningThinkingToggle},
	{Match: "glm-4.7", Reasoning: request.ReasoningThinkingToggle},
	{Match: "glm-5", Reasoning: request.ReasoningThinkingToggle},
	{Match: "deepseek-v3.1", Reasoning: request.ReasoningThinkingToggle},
	{Match: "deepseek-v3.2", Reasoning: request.ReasoningThinkingToggle},
	{Match: "kimi-k2.5", Reasoning: request.ReasoningThinkingToggle},
}

// BuiltinModels returns the built-in model table.
func BuiltinModels() *ModelTable {
	return &ModelTable{entries: append([]ModelCaps(nil), builtinModels...)}
}

// LoadModelTable reads a model-capabilities file — a JSON array of
// {"match","reasoning","efforts","max_output_tokens","variants"} objects —
// whose entries go before the built-in ones.
func LoadModelTable(path string) (*ModelTable, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("harness: model caps: %w", err)
	}
	var entries []ModelCaps
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&entries); err != nil {
		return nil, fmt.Errorf("harness: model caps %s: want a JSON array of {\"match\",\"reasoning\",\"efforts\",\"max_output_tokens\",\"variants\"}: %w", path, err)
	}
	for i, e := range entries {
		if strings.TrimSpace(e.Match) == "" {
			return nil, fmt.Errorf("harness: model caps %s: entry %d: empty \"match\"", path, i)
		}
		switch e.Reasoning {
		case request.ReasoningDefault, request.ReasoningThinkingToggle:
		default:
			return nil, fmt.Errorf("harness: model caps %s: entry %d: unknown reasoning %q (want \"thinking_toggle\" or \"\")", path, i, e.Reasoning)
		}
		for h, v := range e.Variants {
			if h == "" || v == "" {
				return nil, fmt.Errorf("harness: model caps %s: entry %d: variants: empty harness name or variant", path, i)
			}
		}
		entries[i].Match = strings.ToLower(e.Match)
	}
	return &ModelTable{entries: append(entries, builtinModels...)}, nil
}

// Lookup returns the capabilities of model; a model no entry matches gets
// zero capabilities.
func (t *ModelTable) Lookup(model string) ModelCaps {
	if t == nil {
		t = BuiltinModels()
	}
	m := strings.ToLower(model)
	for _, e := range t.entries {
		if strings.Contains(m, e.Match) {
			return e
		}
	}
	return ModelCaps{}
}
