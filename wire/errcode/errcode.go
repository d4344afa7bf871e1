// Package errcode recognises the errors model servers answer with and
// names them by the codes the engine treats specially
// (docs/errors.md): a request over the model's context window is
// "context_length_exceeded", an exhausted balance "insufficient_quota", an
// overloaded server "server_is_overloaded", a rate limit
// "rate_limit_exceeded". Codex 0.171 shows its own guidance for the first
// two only when they come in a response.failed event, and treats an HTTP
// 503 with the third as an overload (codex-rs/codex-api: sse/responses.rs,
// api_bridge.rs).
//
// The table ([Rules]) holds, per code, each server's own wording (matched
// ASCII case-insensitively as a substring of the message, or equal to the
// error's type or code) and where it comes from.
package errcode

import (
	"net/http"
	"strings"
)

// The codes the engine treats specially.
const (
	ContextLengthExceeded = "context_length_exceeded"
	InsufficientQuota     = "insufficient_quota"
	ServerOverloaded      = "server_is_overloaded"
	RateLimitExceeded     = "rate_limit_exceeded"
)

// Rule is one row of the table: an upstream error matching Match is
// Code.
type Rule struct {
	// Code is the engine's code.
	Code string
	// Server names who answers with this wording.
	Server string
	// Match is the wording, lower case: a substring of the message, or
	// the error's type or code exactly.
	Match string
	// Field says where Match is looked for: "message", "type" or "code".
	Field string
	// Example is the server's whole message as it answers (the numbers
	// are an example's).
	Example string
	// Source is where the wording comes from.
	Source string
}

// Rules is the table, in the order it is tried. docs/errors.md shows it.
var Rules = []Rule{
	{ContextLengthExceeded, "any OpenAI-compatible server", ContextLengthExceeded, "code", `"code": "context_length_exceeded"`, "OpenAI API error codes; Groq sends it too"},
	{ContextLengthExceeded, "vLLM, DeepSeek, OpenAI", "maximum context length is", "message",
		"This model's maximum context length is 32768 tokens. However, you requested 33000 tokens (32000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
		"vllm/entrypoints/openai/serving_engine.py (_validate_input); DeepSeek and OpenAI answer the same sentence"},
	{ContextLengthExceeded, "OpenRouter", "maximum context length is", "message",
		"This endpoint's maximum context length is 131072 tokens. However, you requested about 140000 tokens (…). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.",
		"OpenRouter's 400 answer, as clients record it"},
	{ContextLengthExceeded, "SGLang, Together", "is longer than the model's context length", "message",
		"The input (33000 tokens) is longer than the model's context length (32768 tokens).",
		"sglang/srt/managers/tokenizer_manager.py (_validate_one_request)"},
	{ContextLengthExceeded, "SGLang (newer)", "exceeds the model's maximum context length", "message",
		"Requested token count exceeds the model's maximum context length of 32768 tokens. You requested a total of 33000 tokens: …",
		"sglang/srt/managers/tokenizer_manager.py"},
	{ContextLengthExceeded, "llama.cpp server", "exceed_context_size_error", "type",
		`{"error":{"code":400,"message":"request (33000 tokens) exceeds the available context size (32768 tokens), try increasing it","type":"exceed_context_size_error"}}`,
		"tools/server/server.cpp (ERROR_TYPE_EXCEED_CONTEXT_SIZE)"},
	{ContextLengthExceeded, "llama.cpp server", "exceeds the available context size", "message",
		"the request exceeds the available context size, try increasing it",
		"tools/server/server.cpp (older releases say it without the token counts)"},
	{ContextLengthExceeded, "Ollama", "exceeded max context length", "message",
		"prompt too long; exceeded max context length by 232 tokens",
		"ollama llm/server.go (a prompt over num_ctx with truncation off)"},
	{ContextLengthExceeded, "TGI", "tokens + `max_new_tokens` must be <=", "message",
		"Input validation error: `inputs` tokens + `max_new_tokens` must be <= 32768. Given: 33000 `inputs` tokens and 1000 `max_new_tokens`",
		"text-generation-inference router/src/validation.rs (ValidationError::MaxTotalTokens)"},
	{ContextLengthExceeded, "LM Studio", "greater than the context length", "message",
		"The number of tokens to keep from the initial prompt is greater than the context length. Try to load the model with a larger context length, or provide a shorter input",
		"LM Studio's server (llama.cpp engine), as users report it"},
	{ContextLengthExceeded, "LM Studio", "the model is loaded with context length of only", "message",
		"Trying to keep the first 33000 tokens when context the overflows. However, the model is loaded with context length of only 32768 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input",
		"LM Studio's server, as users report it"},
	{ContextLengthExceeded, "Anthropic", "prompt is too long", "message",
		"prompt is too long: 215000 tokens > 200000 maximum",
		"Anthropic Messages API, invalid_request_error"},
	{ContextLengthExceeded, "Mistral", "too large for model with", "message",
		"Prompt contains 33000 tokens and 0 draft tokens, too large for model with 32768 maximum context length",
		"Mistral API (la Plateforme), invalid_request_message"},
	{ContextLengthExceeded, "Kimi (Moonshot)", "exceeded model token limit", "message",
		"Invalid request: Your request exceeded model token limit: 262144 (requested: 270000)",
		"Moonshot API"},
	{InsufficientQuota, "OpenAI", InsufficientQuota, "code", `"code": "insufficient_quota"`, "OpenAI API error codes"},
	{InsufficientQuota, "DeepSeek", "insufficient balance", "message", "Insufficient Balance", "DeepSeek API error codes (HTTP 402)"},
	{InsufficientQuota, "OpenRouter", "insufficient credits", "message", "Insufficient credits. Add more using https://openrouter.ai/settings/credits", "OpenRouter API errors (HTTP 402)"},
	{InsufficientQuota, "Anthropic", "billing_error", "type", `{"type":"error","error":{"type":"billing_error","message":"…"}}`, "Anthropic API errors (HTTP 402)"},
	{InsufficientQuota, "Anthropic", "credit balance is too low", "message", "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.", "Anthropic API, invalid_request_error"},
	{ServerOverloaded, "Anthropic", "overloaded_error", "type", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "Anthropic API errors (HTTP 529)"},
	{ServerOverloaded, "OpenAI", ServerOverloaded, "code", `"code": "server_is_overloaded"`, "what Codex reads (codex-api/src/api_bridge.rs)"},
	{ServerOverloaded, "OpenAI", "slow_down", "code", `"code": "slow_down"`, "what Codex reads (codex-api/src/api_bridge.rs)"},
	{RateLimitExceeded, "OpenAI, Groq, vLLM behind gateways", RateLimitExceeded, "code", `"code": "rate_limit_exceeded"`, "OpenAI API error codes"},
	{RateLimitExceeded, "Anthropic", "rate_limit_error", "type", `{"type":"error","error":{"type":"rate_limit_error","message":"…"}}`, "Anthropic API errors (HTTP 429)"},
}

// Classify returns the engine's code for an upstream error — its HTTP
// status (0 for an error inside a stream), type, code and message — or ""
// when no rule matches. An HTTP 529 (Anthropic's overload) is an overload
// and an HTTP 429 without a rule of its own a rate limit.
func Classify(status int, typ, code, message string) string {
	typ, code, msg := strings.ToLower(typ), strings.ToLower(code), strings.ToLower(message)
	for _, r := range Rules {
		var hit bool
		switch r.Field {
		case "type":
			hit = typ == r.Match
		case "code":
			hit = code == r.Match
		default:
			hit = strings.Contains(msg, r.Match)
		}
		if hit {
			return r.Code
		}
	}
	switch status {
	case 529:
		return ServerOverloaded
	case http.StatusTooManyRequests:
		return RateLimitExceeded
	}
	return ""
}

// InStream reports whether the engine reads code only in a
// response.failed event (context length, quota): an answer that should
// make it show its own guidance goes in the stream, not as an HTTP error.
func InStream(code string) bool {
	return code == ContextLengthExceeded || code == InsufficientQuota
}
