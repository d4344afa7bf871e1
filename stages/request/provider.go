package request

import (
	"context"
	"strings"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/wire/chat"
)

// Provider names an upstream whose chat bodies need cleaning (docs/request-shaping.md#provider-quirks).
type Provider string

// Providers with body quirks.
const (
	// ProviderAuto detects the provider from Options.BaseURL.
	ProviderAuto Provider = ""
	// ProviderNone applies no quirk.
	ProviderNone Provider = "none"
	// ProviderDeepSeek (api.deepseek.com): developer messages become user messages.
	ProviderDeepSeek Provider = "deepseek"
	// ProviderOpenRouter (openrouter.ai): token limits capped at 1024, and
	// max_tokens:1024 added when no limit is set.
	ProviderOpenRouter Provider = "openrouter"
	// ProviderGroq (api.groq.com): token limits capped at 32768, and the
	// fields Groq rejects removed.
	ProviderGroq Provider = "groq"
)

// Token limits of the provider quirks.
const (
	OpenRouterMaxTokens = 1024
	GroqMaxTokens       = 32768
)

// groqRejected are the body fields the Groq quirk removes.
var groqRejected = []string{"prompt_cache_key", "thinking", "parallel_tool_calls", "response_format",
	"reasoning_effort", "service_tier", "store", "verbosity"}

// DetectProvider picks the provider from a base URL by substring checks on
// the lowercased URL: api.deepseek.com, openrouter.ai, api.groq.com. Any other
// URL gives ProviderNone.
func DetectProvider(baseURL string) Provider {
	u := strings.ToLower(baseURL)
	switch {
	case strings.Contains(u, "api.deepseek.com"):
		return ProviderDeepSeek
	case strings.Contains(u, "openrouter.ai"):
		return ProviderOpenRouter
	case strings.Contains(u, "api.groq.com"):
		return ProviderGroq
	}
	return ProviderNone
}

// provider resolves ProviderAuto.
func (o Options) provider() Provider {
	if o.Provider != ProviderAuto {
		return o.Provider
	}
	return DetectProvider(o.BaseURL)
}

// ApplyProviderQuirks cleans a chat body for provider p, in place (docs/request-shaping.md#provider-quirks).
// Fields kept in the body's Extra are cleaned too.
func ApplyProviderQuirks(p Provider, b *chat.Request) {
	switch p {
	case ProviderDeepSeek:
		for i := range b.Messages {
			if b.Messages[i].Role == chat.RoleDeveloper {
				b.Messages[i].Role = chat.RoleUser
			}
		}
	case ProviderOpenRouter:
		if b.MaxTokens == nil && b.MaxCompletionTokens == nil {
			b.MaxTokens = ptr(int64(OpenRouterMaxTokens))
		}
		capTokens(b, OpenRouterMaxTokens)
	case ProviderGroq:
		capTokens(b, GroqMaxTokens)
		b.PromptCacheKey, b.Thinking, b.ParallelToolCalls, b.ResponseFormat = "", nil, nil, nil
		b.ReasoningEffort, b.ServiceTier, b.Store, b.Verbosity = "", "", nil, ""
		for _, k := range groqRejected {
			delete(b.Extra, k)
		}
		for i := range b.Messages {
			b.Messages[i].ReasoningContent, b.Messages[i].ReasoningSet = "", false
			delete(b.Messages[i].Extra, "reasoning_content")
		}
	}
}

// capTokens lowers the token limits that exceed limit. The pointers are
// replaced, never written through: they may be shared with the caller.
func capTokens(b *chat.Request, limit int64) {
	if b.MaxTokens != nil && *b.MaxTokens > limit {
		b.MaxTokens = ptr(limit)
	}
	if b.MaxCompletionTokens != nil && *b.MaxCompletionTokens > limit {
		b.MaxCompletionTokens = ptr(limit)
	}
}

// ProviderQuirks returns the request.provider stage: the provider body
// quirks (docs/request-shaping.md#provider-quirks) for the provider of opts (explicit, or detected from
// the base URL).
func ProviderQuirks(opts Options) pipeline.Stage[*Shaping, *Shaping] {
	p := opts.provider()
	return stage(func(_ context.Context, s *Shaping) error {
		ApplyProviderQuirks(p, &s.Body)
		applyTranscriptQuirks(p, s.Transcript)
		return nil
	})
}

// ProviderNode returns the request.provider node.
func ProviderNode(opts Options) pipeline.Node {
	return pipeline.StageNode(NodeProvider, ProviderQuirks(opts),
		pipeline.Describe("provider body quirks (deepseek, openrouter, groq)"))
}

// applyTranscriptQuirks applies the message-level quirks of provider p to a
// transcript before it is rendered.
func applyTranscriptQuirks(p Provider, msgs []Message) {
	switch p {
	case ProviderDeepSeek:
		for i := range msgs {
			if msgs[i].Role == RoleDeveloper {
				msgs[i].Role = RoleUser
			}
		}
	case ProviderGroq:
		for i := range msgs {
			msgs[i].Reasoning = ""
		}
	}
}
