package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/stages/textcall"
)

// ModelCaps is what a model supports, as far as shaping is concerned.
type ModelCaps struct {
	// Match is the lowercase substring of the model name the entry is for.
	Match string `json:"match"`
	// Reasoning is the form in which the model's upstream takes a
	// reasoning switch or level (docs/reasoning-controls.md):
	// "thinking_toggle", "reasoning_effort", "template_enable_thinking",
	// "template_thinking", "thinking_type", "openrouter", or "" for nothing
	// to send.
	Reasoning request.ReasoningControl `json:"reasoning,omitempty"`
	// Efforts lists the reasoning efforts the model accepts; empty means
	// the control's default set. A request's effort maps to the nearest
	// one (request.NearestEffort).
	Efforts []string `json:"efforts,omitempty"`
	// MaxOutputTokens caps the output, when the model has a known cap (0:
	// unknown).
	MaxOutputTokens int64 `json:"max_output_tokens,omitempty"`
	// Variants picks a harness variant for the model, harness name →
	// variant: {"mini-swe-agent":"text"} runs mini-swe-agent's text
	// protocol for a model without function calling. Each harness
	// documents its variants and rejects a name it does not know.
	Variants map[string]string `json:"variants,omitempty"`
	// ToolsInPrompt renders the request's tools into the system prompt and
	// earlier calls and outputs into the history as text in the tool
	// format's convention, and sends no tools field (stages/toolprompt),
	// for a server that takes no tools.
	ToolsInPrompt bool `json:"tools_in_prompt,omitempty"`
	// ToolFormat names the text tool-call format the model writes
	// ("hermes", "qwen3_coder", …, "auto" or "off"); "" leaves it to the
	// configuration. The loader only checks it is an identifier; the
	// stages that use it check the name.
	ToolFormat string `json:"tool_format,omitempty"`
	// MaxTokensField is the chat field the client's max_output_tokens goes
	// in on the native route: "max_tokens" (also when empty) or
	// "max_completion_tokens" (docs/request-shaping.md#client-fields).
	MaxTokensField request.TokenField `json:"max_tokens_field,omitempty"`
	// PromptCacheKey says the model's server keys its prompt cache on the
	// client's prompt_cache_key, so the native route passes it on.
	PromptCacheKey bool `json:"prompt_cache_key,omitempty"`
	// Metadata says the model's chat server takes the client's metadata
	// object, so the native route passes it on.
	Metadata bool `json:"metadata,omitempty"`
	// Unsupported lists client fields (request.ClientFieldNames) the
	// model's server refuses: the native route leaves them out, with a
	// debug log.
	Unsupported []string `json:"unsupported,omitempty"`
	// ThinkingOpen says the model's chat template ends the generation
	// prompt with the reasoning block's opening tag when thinking is on
	// (QwQ, the Qwen3 thinking models, DeepSeek-R1 and V3.1, GLM 4.5+
	// served from their templates), so the reply starts inside the block
	// and only </think> shows: text tool-call recovery reads it as
	// reasoning up to there (docs/text-tool-calls.md#reasoning-in-the-text).
	// It is not applied to a turn whose chat body turns thinking off, nor,
	// for the template_thinking control (off unless sent), to one whose
	// body does not turn it on.
	ThinkingOpen bool `json:"thinking_open,omitempty"`
	// Matched says an entry of the table matched the model (Lookup sets
	// it): a model no entry knows gets the native route's default
	// reasoning form (docs/reasoning-controls.md#unknown-models).
	Matched bool `json:"-"`
}

// ClientFields returns the client-field mapping of the native routes for
// the model (docs/request-shaping.md#client-fields): sent, in the entry's
// token field, lowered to its output cap, with its prompt-cache-key,
// metadata and unsupported-field knowledge.
func (m ModelCaps) ClientFields() request.ClientFields {
	return request.ClientFields{Send: true, TokenField: m.MaxTokensField, MaxOutputTokens: m.MaxOutputTokens,
		PromptCacheKey: m.PromptCacheKey, Metadata: m.Metadata, Unsupported: m.Unsupported}
}

// Variant returns the variant the entry picks for harness ("" for the
// harness's default).
func (m ModelCaps) Variant(harness string) string { return m.Variants[harness] }

// ModelTable maps model names to capabilities: the first entry whose Match
// is a substring of the lowercased model name wins.
type ModelTable struct {
	entries []ModelCaps
}

// builtinModels are the models whose reasoning form we know
// (docs/reasoning-controls.md#built-in-entries); first match wins. A name
// with its Hugging Face organization ("zai-org/glm-4.6") is how vLLM and
// SGLang serve a model by default, so those entries take the chat-template
// forms; the bare names are the hosted APIs' and take their thinking
// field. A --model-caps file adds entries before these.
var builtinModels = []ModelCaps{
	{Match: "zai-org/glm-", Reasoning: request.ReasoningTemplateEnableThinking, ThinkingOpen: true},
	// Templates that open the reasoning block in the prompt: the reply
	// starts inside it (ThinkingOpen). QwQ and R1 always think.
	{Match: "qwq", ThinkingOpen: true},
	{Match: "deepseek-r1", ThinkingOpen: true},
	{Match: "thinking-2507", Reasoning: request.ReasoningTemplateEnableThinking, ThinkingOpen: true},
	{Match: "qwen3-next-80b-a3b-thinking", Reasoning: request.ReasoningTemplateEnableThinking, ThinkingOpen: true},
	{Match: "deepseek-ai/deepseek-v3.1", Reasoning: request.ReasoningTemplateThinking, ThinkingOpen: true},
	{Match: "deepseek-ai/deepseek-v3.2", Reasoning: request.ReasoningTemplateThinking},
	{Match: "moonshotai/kimi-k2", Reasoning: request.ReasoningTemplateThinking},
	{Match: "glm-4.5", Reasoning: request.ReasoningThinkingToggle},
	{Match: "glm-4.6", Reasoning: request.ReasoningThinkingToggle},
	{Match: "glm-4.7", Reasoning: request.ReasoningThinkingToggle},
	{Match: "glm-5", Reasoning: request.ReasoningThinkingToggle},
	{Match: "deepseek-v3.1", Reasoning: request.ReasoningThinkingToggle},
	{Match: "deepseek-v3.2", Reasoning: request.ReasoningThinkingToggle},
	// Moonshot's API keys its prompt cache on prompt_cache_key (Kimi CLI
	// sends it).
	{Match: "kimi-k2.5", Reasoning: request.ReasoningThinkingToggle, PromptCacheKey: true},
	{Match: "qwen3-coder"}, // no thinking mode: nothing to send
	{Match: "qwen3", Reasoning: request.ReasoningTemplateEnableThinking},
	{Match: "gpt-oss", Reasoning: request.ReasoningEffortField, Efforts: []string{"low", "medium", "high"}},
	// OpenAI's own reasoning models refuse reasoning_effort next to
	// function tools on /chat/completions: send nothing, as before. They
	// take the limit as max_completion_tokens only, key their prompt cache
	// on prompt_cache_key, keep metadata, and refuse temperature, top_p and
	// log probabilities.
	{Match: "gpt-5", MaxTokensField: request.TokenFieldMaxCompletionTokens, PromptCacheKey: true, Metadata: true,
		Unsupported: []string{request.FieldTemperature, request.FieldTopP, request.FieldTopLogprobs}},
}

// BuiltinModels returns the built-in model table.
func BuiltinModels() *ModelTable {
	return &ModelTable{entries: append([]ModelCaps(nil), builtinModels...)}
}

// LoadModelTable reads a model-capabilities file — a JSON array of
// {"match","reasoning","efforts","max_output_tokens","variants",
// "tools_in_prompt","tool_format","thinking_open","max_tokens_field","prompt_cache_key",
// "metadata","unsupported"} objects — whose entries go before the
// built-in ones.
func LoadModelTable(path string) (*ModelTable, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("harness: model caps: %w", err)
	}
	var entries []ModelCaps
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&entries); err != nil {
		return nil, fmt.Errorf("harness: model caps %s: want a JSON array of {%s}: %w", path, capsFields, err)
	}
	for i, e := range entries {
		if err := checkCaps(e); err != nil {
			return nil, fmt.Errorf("harness: model caps %s: entry %d: %w", path, i, err)
		}
		entries[i].Match = strings.ToLower(e.Match)
		entries[i].Matched = false
	}
	return &ModelTable{entries: append(entries, builtinModels...)}, nil
}

const capsFields = `"match","reasoning","efforts","max_output_tokens","variants","tools_in_prompt","tool_format","thinking_open",` +
	`"max_tokens_field","prompt_cache_key","metadata","unsupported"`

// checkCaps validates one entry of a model-caps file.
func checkCaps(e ModelCaps) error {
	if strings.TrimSpace(e.Match) == "" {
		return errors.New(`empty "match"`)
	}
	return e.Check()
}

// NewModelTable returns a table of entries followed by the built-in ones.
// Each entry is validated as a model-caps file's ([ModelCaps.Check]);
// unlike a file's, an entry may have an empty Match, which matches every
// model (the routing config gives one model's capabilities that way).
func NewModelTable(entries ...ModelCaps) (*ModelTable, error) {
	t := &ModelTable{entries: make([]ModelCaps, 0, len(entries)+len(builtinModels))}
	for i, e := range entries {
		if err := e.Check(); err != nil {
			return nil, fmt.Errorf("harness: model caps entry %d: %w", i, err)
		}
		e.Match = strings.ToLower(e.Match)
		e.Matched = false
		t.entries = append(t.entries, e)
	}
	t.entries = append(t.entries, builtinModels...)
	return t, nil
}

// Check validates the capabilities of an entry (all but Match): a known
// reasoning form and efforts, a max_output_tokens not negative, non-empty
// variant names, a tool_format that is a format name, a known
// max_tokens_field and unsupported fields that are client fields.
func (e ModelCaps) Check() error {
	if !e.Reasoning.Known() {
		names := make([]string, 0, 8)
		for _, c := range request.ReasoningControls() {
			names = append(names, strconv.Quote(string(c)))
		}
		return fmt.Errorf("unknown reasoning %q (want one of %s)", e.Reasoning, strings.Join(names, ", "))
	}
	for _, x := range e.Efforts {
		if !request.KnownEffort(x) {
			return fmt.Errorf("efforts: unknown effort %q (want none, minimal, low, medium, high, xhigh or max)", x)
		}
	}
	if e.MaxOutputTokens < 0 {
		return fmt.Errorf("max_output_tokens %d is negative", e.MaxOutputTokens)
	}
	for h, v := range e.Variants {
		if h == "" || v == "" {
			return errors.New("variants: empty harness name or variant")
		}
	}
	if !e.MaxTokensField.Known() {
		return fmt.Errorf("max_tokens_field %q: want %q or %q", e.MaxTokensField, request.TokenFieldMaxTokens, request.TokenFieldMaxCompletionTokens)
	}
	for _, f := range e.Unsupported {
		if !slices.Contains(request.ClientFieldNames(), f) {
			return fmt.Errorf("unsupported: unknown client field %q (want one of %s)", f, strings.Join(request.ClientFieldNames(), ", "))
		}
	}
	if e.ToolFormat != "" {
		if err := textcall.CheckName(e.ToolFormat); err != nil {
			return fmt.Errorf("tool_format: %w", err)
		}
	}
	return nil
}

// Lookup returns the capabilities of model, Matched set; a model no entry
// matches gets zero capabilities.
func (t *ModelTable) Lookup(model string) ModelCaps {
	entries := builtinModels // a nil table is the built-in one, read in place
	if t != nil {
		entries = t.entries
	}
	m := strings.ToLower(model)
	for _, e := range entries {
		if strings.Contains(m, e.Match) {
			e.Matched = true
			return e
		}
	}
	return ModelCaps{}
}
