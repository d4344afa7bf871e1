package harness

import "strings"

// NameAuto is the config name that picks the harness per request by the
// fork's default rule ([DefaultFor], docs/routing.md#the-auto-harness).
const NameAuto = "auto"

// DefaultFor is the fork's default harness for a request
// (docs/routing.md#the-auto-harness): from the model the upstream is sent,
// the upstream's wire, its name (the fork's provider id and name) and its
// base URL, all lowercased, the first rule that matches:
//
//  1. claude-code: the messages wire, or the model has "anthropic/" or
//     "claude", or the name has "anthropic", or the URL has
//     "api.anthropic.com";
//  2. kimi-code: the model or the name has "kimi" or "moonshot", or the URL
//     has "api.kimi.com", "api.moonshot.ai" or "api.moonshot.cn";
//  3. qwen-code: the model has "qwen" or "/qwq" or starts with "qwq", or
//     the name has "qwen" or "dashscope", or the URL has
//     "dashscope.aliyuncs.com/compatible-mode" or
//     "dashscope-intl.aliyuncs.com/compatible-mode";
//  4. claude-code-bare: the model or the name has "deepseek", or the URL
//     has "api.deepseek.com";
//  5. otherwise "" (native).
//
// The result still routes by wire: on the responses wire a named chat
// harness is served as native ([Resolve]).
func DefaultFor(model string, wire Wire, provider, baseURL string) string {
	m, p, u := strings.ToLower(model), strings.ToLower(provider), strings.ToLower(baseURL)
	has := func(s string, subs ...string) bool {
		for _, x := range subs {
			if strings.Contains(s, x) {
				return true
			}
		}
		return false
	}
	switch {
	case wire == WireMessages || has(m, "anthropic/", "claude") || has(p, "anthropic") || has(u, "api.anthropic.com"):
		return NameClaudeCode
	case has(m, "kimi", "moonshot") || has(p, "kimi", "moonshot") || has(u, "api.kimi.com", "api.moonshot.ai", "api.moonshot.cn"):
		return NameKimiCode
	case has(m, "qwen", "/qwq") || strings.HasPrefix(m, "qwq") || has(p, "qwen", "dashscope") ||
		has(u, "dashscope.aliyuncs.com/compatible-mode", "dashscope-intl.aliyuncs.com/compatible-mode"):
		return NameQwenCode
	case has(m, "deepseek") || has(p, "deepseek") || has(u, "api.deepseek.com"):
		return NameClaudeCodeBare
	}
	return ""
}

// pick resolves the auto harness for one request of model (any other
// name is returned as it is). A default this build has no package for is
// served as native.
func (c Config) pick(r *Registry, name, model string) string {
	if name != NameAuto {
		return name
	}
	h := DefaultFor(model, c.wire(), c.Provider, c.BaseURL)
	if _, ok := r.Lookup(h); !ok {
		return ""
	}
	return h
}
