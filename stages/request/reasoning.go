package request

import (
	"encoding/json"
	"slices"

	"github.com/harnessflow/harnessflow/wire/chat"
)

// Reasoning controls beyond ReasoningDefault and ReasoningThinkingToggle:
// each is one form in which a chat upstream takes a reasoning switch or
// level (docs/reasoning-controls.md). With all of them, a request without
// an effort sends nothing, so the server's default applies.
const (
	// ReasoningEffortField sends the top-level reasoning_effort string
	// (OpenAI-compatible servers; gpt-oss on vLLM). The effort is mapped to
	// the nearest one the model accepts (Options.Efforts; by default low,
	// medium and high, the levels every server that takes the field knows).
	ReasoningEffortField ReasoningControl = "reasoning_effort"
	// ReasoningTemplateEnableThinking sends
	// chat_template_kwargs: {"enable_thinking": bool} (Qwen3 and GLM-4.5
	// and later on vLLM and SGLang): false for the efforts none and minimal,
	// true otherwise.
	ReasoningTemplateEnableThinking ReasoningControl = "template_enable_thinking"
	// ReasoningTemplateThinking sends chat_template_kwargs: {"thinking": bool}
	// (DeepSeek V3.1 and V3.2, Kimi K2 on vLLM and SGLang): false for none
	// and minimal, true otherwise.
	ReasoningTemplateThinking ReasoningControl = "template_thinking"
	// ReasoningThinkingType sends thinking: {"type":"enabled"|"disabled"}
	// (the hosted Kimi, GLM and DeepSeek APIs) following the effort:
	// disabled for none and minimal, enabled otherwise. Unlike
	// ReasoningThinkingToggle, no effort sends nothing and minimal
	// disables.
	ReasoningThinkingType ReasoningControl = "thinking_type"
	// ReasoningOpenRouter sends OpenRouter's reasoning: {"effort": E}, E
	// mapped to the nearest of none, minimal, low, medium, high, xhigh (or
	// of Options.Efforts).
	ReasoningOpenRouter ReasoningControl = "openrouter"
)

// ReasoningControls lists every reasoning control by its name, in the order
// the documentation gives them ("" is ReasoningDefault).
func ReasoningControls() []ReasoningControl {
	return []ReasoningControl{ReasoningDefault, ReasoningThinkingToggle, ReasoningEffortField,
		ReasoningTemplateEnableThinking, ReasoningTemplateThinking, ReasoningThinkingType, ReasoningOpenRouter}
}

// Known reports whether c is one of ReasoningControls.
func (c ReasoningControl) Known() bool { return slices.Contains(ReasoningControls(), c) }

// Efforts lists the reasoning efforts on their scale, least first. "max"
// and "ultra" rank together above xhigh.
var effortScale = []string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}

// effortRank returns the place of e on the scale, or -1.
func effortRank(e string) int {
	if e == "ultra" {
		e = "max"
	}
	return slices.Index(effortScale, e)
}

// KnownEffort reports whether e (lowercased, trimmed) is an effort on the
// scale none < minimal < low < medium < high < xhigh < max (= ultra).
func KnownEffort(e string) bool { return effortRank(normalizeEffort(e)) >= 0 }

// Default effort sets of the effort-valued controls.
var (
	defaultFieldEfforts      = []string{"low", "medium", "high"}
	defaultOpenRouterEfforts = []string{"none", "minimal", "low", "medium", "high", "xhigh"}
)

// NearestEffort returns effort if accepted holds it (or accepted is empty),
// else the accepted effort nearest to it on the scale, the higher one on a
// tie. An effort off the scale, or an accepted list with none on it, gives
// effort as it is. Efforts compare lowercased and trimmed.
func NearestEffort(effort string, accepted []string) string {
	e := normalizeEffort(effort)
	if len(accepted) == 0 {
		return e
	}
	r := effortRank(e)
	best, bestDist := "", -1
	for _, a := range accepted {
		a = normalizeEffort(a)
		if a == e {
			return e
		}
		ar := effortRank(a)
		if r < 0 || ar < 0 {
			continue
		}
		d := ar - r
		if d < 0 {
			d = -d
		}
		if bestDist < 0 || d < bestDist || d == bestDist && ar > effortRank(best) {
			best, bestDist = a, d
		}
	}
	if best == "" {
		return e
	}
	return best
}

// thinkingOn says whether a toggle form turns thinking on for effort (already
// mapped): off for none and minimal, on for anything else.
func thinkingOn(effort string) bool { return effort != "none" && effort != "minimal" }

// effectiveControl is the control request.options applies: on OpenRouter
// (detected from the base URL, or set) every control but the default and
// the thinking toggle becomes ReasoningOpenRouter, the one form OpenRouter
// takes for every model it routes (docs/reasoning-controls.md#openrouter).
func (o Options) effectiveControl() ReasoningControl {
	c := o.ReasoningControl
	if c != ReasoningDefault && c != ReasoningThinkingToggle && o.provider() == ProviderOpenRouter {
		return ReasoningOpenRouter
	}
	return c
}

// SetReasoning sets the reasoning fields of body b for the request's effort
// (as the client sent it; "" for none given) under control c, with accepted
// the efforts the model takes (nil: the control's default set). It handles
// the effort-following controls (ReasoningEffortField,
// ReasoningTemplateEnableThinking, ReasoningTemplateThinking,
// ReasoningThinkingType, ReasoningOpenRouter) and reports whether c is one of
// them; the default and the thinking toggle are request.options' own and
// leave b as it is. No effort sets nothing. Fields that go in
// chat_template_kwargs are merged into what the body already has there.
func SetReasoning(b *chat.Request, c ReasoningControl, effort string, accepted []string) bool {
	switch c {
	case ReasoningEffortField, ReasoningTemplateEnableThinking, ReasoningTemplateThinking, ReasoningThinkingType, ReasoningOpenRouter:
	default:
		return false
	}
	e := normalizeEffort(effort)
	if e == "" {
		return true
	}
	switch c {
	case ReasoningEffortField:
		if accepted == nil {
			accepted = defaultFieldEfforts
		}
		b.ReasoningEffort = NearestEffort(e, accepted)
	case ReasoningOpenRouter:
		if accepted == nil {
			accepted = defaultOpenRouterEfforts
		}
		setExtra(b, "reasoning", append(append([]byte(`{"effort":`), chat.AppendString(nil, NearestEffort(e, accepted))...), '}'))
	case ReasoningThinkingType:
		if thinkingOn(NearestEffort(e, accepted)) {
			b.Thinking = thinkingEnabled
		} else {
			b.Thinking = thinkingDisabled
		}
	case ReasoningTemplateEnableThinking:
		setTemplateKwarg(b, "enable_thinking", thinkingOn(NearestEffort(e, accepted)))
	case ReasoningTemplateThinking:
		setTemplateKwarg(b, "thinking", thinkingOn(NearestEffort(e, accepted)))
	}
	return true
}

func setExtra(b *chat.Request, key string, v json.RawMessage) {
	if b.Extra == nil {
		b.Extra = chat.Extra{}
	}
	b.Extra[key] = v
}

// setTemplateKwarg sets one boolean of chat_template_kwargs, keeping the
// other keys the body has there (a body whose chat_template_kwargs is not an
// object gets a new one).
func setTemplateKwarg(b *chat.Request, key string, on bool) {
	kw := map[string]json.RawMessage{}
	if old, ok := b.Extra["chat_template_kwargs"]; ok {
		if err := json.Unmarshal(old, &kw); err != nil || kw == nil {
			kw = map[string]json.RawMessage{}
		}
	}
	kw[key] = json.RawMessage(boolText(on))
	data, err := json.Marshal(kw) // sorted keys; cannot fail on raw values that parsed
	if err != nil {
		data = []byte(`{"` + key + `":` + boolText(on) + `}`)
	}
	setExtra(b, "chat_template_kwargs", data)
}

func boolText(on bool) string {
	if on {
		return "true"
	}
	return "false"
}
