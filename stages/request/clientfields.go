package request

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/wire/anthropic"
	"github.com/harnessflow/harnessflow/wire/chat"
)

// TokenField is the chat body field a server takes the output limit in.
type TokenField string

// Token limit fields of the chat wire.
const (
	// TokenFieldDefault is max_tokens: what OpenAI-compatible servers
	// (vLLM, SGLang, llama.cpp, Ollama, the hosted open-model APIs) take.
	TokenFieldDefault TokenField = ""
	// TokenFieldMaxTokens is max_tokens, said explicitly.
	TokenFieldMaxTokens TokenField = "max_tokens"
	// TokenFieldMaxCompletionTokens is max_completion_tokens: OpenAI's
	// reasoning models refuse max_tokens.
	TokenFieldMaxCompletionTokens TokenField = "max_completion_tokens"
)

// Known reports whether f is a token field this package can send.
func (f TokenField) Known() bool {
	return f == TokenFieldDefault || f == TokenFieldMaxTokens || f == TokenFieldMaxCompletionTokens
}

// The Responses request fields the client-field mapping reads
// (docs/request-shaping.md#client-fields). They are not fields of
// protocol.ResponsesRequest: they arrive in its Extra.
const (
	FieldMaxOutputTokens  = "max_output_tokens"
	FieldTemperature      = "temperature"
	FieldTopP             = "top_p"
	FieldTopLogprobs      = "top_logprobs"
	FieldUser             = "user"
	FieldSafetyIdentifier = "safety_identifier"
	FieldMetadata         = "metadata"
	FieldServiceTier      = "service_tier"
	FieldPromptCacheKey   = "prompt_cache_key"
)

// ClientFieldNames are the client fields a model entry may list as
// unsupported, in the order the mapping reads them.
func ClientFieldNames() []string {
	return []string{FieldMaxOutputTokens, FieldTemperature, FieldTopP, FieldTopLogprobs, FieldUser,
		FieldSafetyIdentifier, FieldMetadata, FieldServiceTier, FieldPromptCacheKey}
}

// DefaultMessagesMaxTokens is the Messages wire's max_tokens (a required
// field there) when neither the request nor the model table gives one: the
// smallest output cap of Anthropic's current and past models, so no model
// refuses it.
const DefaultMessagesMaxTokens = 4096

// ClientFields says which of a Responses client's limit, sampling and
// identity fields reach the upstream, and in which form
// (docs/request-shaping.md#client-fields). The model table fills it per
// model family (harness.ModelCaps.ClientFields); the zero value sends none
// of them, which is what the harness routes want (they send what their
// agent sends).
type ClientFields struct {
	// Send turns the mapping on (the native routes).
	Send bool
	// TokenField is the chat field max_output_tokens goes in.
	TokenField TokenField
	// MaxOutputTokens is the model's own output cap (0: unknown): a
	// larger request is lowered to it, and on the Messages wire it is the
	// max_tokens of a request that sets none.
	MaxOutputTokens int64
	// PromptCacheKey passes the client's prompt_cache_key on: the server
	// keys its prompt cache on it. Never invented when the client sent
	// none.
	PromptCacheKey bool
	// Metadata passes the client's metadata object on (chat wire).
	Metadata bool
	// Unsupported are client fields (ClientFieldNames) the server refuses:
	// dropped with a debug log.
	Unsupported []string
}

// Servers whose handling of the client fields is known whatever the model
// (substrings of the lowercased base URL).
const (
	serverOpenAI    = "api.openai.com"
	serverMoonshot  = "api.moonshot.ai"
	serverMoonshotC = "api.moonshot.cn"
)

// ForServer returns f with what the server at baseURL is known to take
// added (docs/request-shaping.md#client-fields): OpenAI's API takes the
// limit as max_completion_tokens (its reasoning models refuse max_tokens),
// keys its prompt cache on prompt_cache_key and keeps metadata; Moonshot's
// keys its prompt cache on prompt_cache_key. A token field the model table
// set is kept. Without Send, f is returned as it is.
func (f ClientFields) ForServer(baseURL string) ClientFields {
	if !f.Send {
		return f
	}
	u := strings.ToLower(baseURL)
	switch {
	case strings.Contains(u, serverOpenAI):
		if f.TokenField == TokenFieldDefault {
			f.TokenField = TokenFieldMaxCompletionTokens
		}
		f.PromptCacheKey, f.Metadata = true, true
	case strings.Contains(u, serverMoonshot), strings.Contains(u, serverMoonshotC):
		f.PromptCacheKey = true
	}
	return f
}

// clientValues are the client fields of one request, their JSON types
// checked.
type clientValues struct {
	maxOutput   *int64
	temperature json.RawMessage // a JSON number
	topP        json.RawMessage // a JSON number
	topLogprobs *int64
	user        string
	safetyID    string
	metadata    json.RawMessage // a JSON object
	serviceTier string
	cacheKey    string
}

// readClientValues reads the client fields of req. A field of the wrong
// JSON type is an error naming it (the Responses API refuses it too); a
// value out of range is left for the upstream to refuse.
func readClientValues(req *protocol.ResponsesRequest) (clientValues, error) {
	v := clientValues{serviceTier: req.ServiceTier, cacheKey: req.PromptCacheKey}
	var err error
	if v.maxOutput, err = extraInt(req.Extra, FieldMaxOutputTokens); err != nil {
		return v, err
	}
	if v.topLogprobs, err = extraInt(req.Extra, FieldTopLogprobs); err != nil {
		return v, err
	}
	if v.temperature, err = extraNumber(req.Extra, FieldTemperature); err != nil {
		return v, err
	}
	if v.topP, err = extraNumber(req.Extra, FieldTopP); err != nil {
		return v, err
	}
	if v.user, err = extraString(req.Extra, FieldUser); err != nil {
		return v, err
	}
	if v.safetyID, err = extraString(req.Extra, FieldSafetyIdentifier); err != nil {
		return v, err
	}
	if raw := extraValue(req.Extra, FieldMetadata); raw != nil {
		if raw[0] != '{' {
			return v, fmt.Errorf("%s: want a JSON object, got %s", FieldMetadata, short(raw))
		}
		v.metadata = raw
	}
	return v, nil
}

// extraValue is the trimmed JSON value of key in e, nil when absent or
// null.
func extraValue(e protocol.Extra, key string) json.RawMessage {
	raw := bytes.TrimSpace(e[key])
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

func extraInt(e protocol.Extra, key string) (*int64, error) {
	raw := extraValue(e, key)
	if raw == nil {
		return nil, nil
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%s: want an integer, got %s", key, short(raw))
	}
	return &n, nil
}

func extraNumber(e protocol.Extra, key string) (json.RawMessage, error) {
	raw := extraValue(e, key)
	if raw == nil {
		return nil, nil
	}
	if c := raw[0]; c != '-' && (c < '0' || c > '9') { // raw is valid JSON: this is a number
		return nil, fmt.Errorf("%s: want a number, got %s", key, short(raw))
	}
	return raw, nil
}

func extraString(e protocol.Extra, key string) (string, error) {
	raw := extraValue(e, key)
	if raw == nil {
		return "", nil
	}
	var s string
	if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", fmt.Errorf("%s: want a string, got %s", key, short(raw))
	}
	return s, nil
}

// short is a JSON value for an error message, cut to 40 bytes.
func short(raw json.RawMessage) string {
	if len(raw) > 40 {
		n := 40
		for n > 0 && !utf8.RuneStart(raw[n]) {
			n--
		}
		return string(raw[:n]) + "…"
	}
	return string(raw)
}

// clientDrop logs a client field left out and why.
func clientDrop(log *slog.Logger, field, why string) {
	log.Debug("request.options: client field not sent: "+why, "field", field)
}

// takes reports whether the upstream takes field, logging the drop when it
// does not (present: the client sent the field).
func (f ClientFields) takes(log *slog.Logger, field string, present bool) bool {
	if !present {
		return false
	}
	if slices.Contains(f.Unsupported, field) {
		clientDrop(log, field, "the model's server does not take it")
		return false
	}
	return true
}

// limit is the client's max_output_tokens lowered to the model's cap.
func (f ClientFields) limit(log *slog.Logger, n int64) int64 {
	if f.MaxOutputTokens > 0 && n > f.MaxOutputTokens {
		log.Debug("request.options: max_output_tokens lowered to the model's cap", "asked", n, "cap", f.MaxOutputTokens)
		return f.MaxOutputTokens
	}
	return n
}

// ApplyClientFields sets on a chat body the client fields f lets through
// (docs/request-shaping.md#client-fields): max_output_tokens as f.TokenField
// (max_tokens by default), lowered to the model's cap; temperature, top_p;
// top_logprobs as logprobs:true and top_logprobs; user; safety_identifier;
// metadata and prompt_cache_key only when f says the server takes them.
// service_tier is request.options' (it is dropped here when unsupported). A
// field f does not let through is left out with a debug log naming it; a
// field of the wrong JSON type is an error. With f.Send false it does
// nothing.
func ApplyClientFields(s *Shaping, f ClientFields, log *slog.Logger) error {
	if !f.Send {
		return nil
	}
	v, err := readClientValues(s.Request)
	if err != nil {
		return err
	}
	b := &s.Body
	set := func(k string, raw json.RawMessage) {
		if b.Extra == nil {
			b.Extra = make(chat.Extra, 4)
		}
		b.Extra[k] = raw
	}
	if f.takes(log, FieldMaxOutputTokens, v.maxOutput != nil) {
		n := ptr(f.limit(log, *v.maxOutput))
		if f.TokenField == TokenFieldMaxCompletionTokens {
			b.MaxCompletionTokens, b.MaxTokens = n, nil
		} else {
			b.MaxTokens, b.MaxCompletionTokens = n, nil
		}
	}
	if f.takes(log, FieldTemperature, v.temperature != nil) {
		set("temperature", v.temperature)
	}
	if f.takes(log, FieldTopP, v.topP != nil) {
		set("top_p", v.topP)
	}
	if f.takes(log, FieldTopLogprobs, v.topLogprobs != nil) {
		set("logprobs", json.RawMessage("true"))
		set("top_logprobs", strconv.AppendInt(nil, *v.topLogprobs, 10))
	}
	if f.takes(log, FieldUser, v.user != "") {
		set("user", chat.AppendString(nil, v.user))
	}
	if f.takes(log, FieldSafetyIdentifier, v.safetyID != "") {
		set("safety_identifier", chat.AppendString(nil, v.safetyID))
	}
	if f.takes(log, FieldMetadata, v.metadata != nil) {
		if f.Metadata {
			set("metadata", v.metadata)
		} else {
			clientDrop(log, FieldMetadata, "neither the model table nor the known servers say the server takes it")
		}
	}
	if v.serviceTier != "" && !f.takes(log, FieldServiceTier, true) {
		b.ServiceTier = ""
	}
	if f.takes(log, FieldPromptCacheKey, v.cacheKey != "") {
		if f.PromptCacheKey {
			b.PromptCacheKey = v.cacheKey
		} else {
			clientDrop(log, FieldPromptCacheKey, "neither the model table nor the known servers say the server uses it")
		}
	}
	return nil
}

// Anthropic's service tiers.
const (
	anthropicTierAuto     = "auto"
	anthropicTierStandard = "standard_only"
)

// ApplyMessagesClientFields sets on the Messages body (Shaping.MessagesBody)
// the client fields f lets through, in Anthropic's fields
// (docs/request-shaping.md#client-fields): max_tokens (required there) from
// max_output_tokens lowered to the model's cap, else the model's cap, else
// DefaultMessagesMaxTokens; temperature; top_p; metadata.user_id from
// safety_identifier, else user; service_tier "auto" as "auto" and "default"
// as "standard_only". top_logprobs, the metadata object, prompt_cache_key
// and the other service tiers have no Messages form: left out with a debug
// log. With f.Send false it does nothing.
func ApplyMessagesClientFields(s *Shaping, f ClientFields, log *slog.Logger) error {
	if !f.Send {
		return nil
	}
	v, err := readClientValues(s.Request)
	if err != nil {
		return err
	}
	b := &s.MessagesBody
	set := func(k string, raw json.RawMessage) {
		if b.Extra == nil {
			b.Extra = make(anthropic.Extra, 2)
		}
		b.Extra[k] = raw
	}
	switch {
	case f.takes(log, FieldMaxOutputTokens, v.maxOutput != nil):
		b.MaxTokens = f.limit(log, *v.maxOutput)
	case f.MaxOutputTokens > 0:
		b.MaxTokens = f.MaxOutputTokens
	default:
		b.MaxTokens = DefaultMessagesMaxTokens
	}
	if f.takes(log, FieldTemperature, v.temperature != nil) {
		if t, err := strconv.ParseFloat(string(v.temperature), 64); err == nil {
			b.Temperature = &t
		} else {
			clientDrop(log, FieldTemperature, "the value is beyond a float64: "+short(v.temperature))
		}
	}
	if f.takes(log, FieldTopP, v.topP != nil) {
		set("top_p", v.topP)
	}
	if f.takes(log, FieldTopLogprobs, v.topLogprobs != nil) {
		clientDrop(log, FieldTopLogprobs, "the Messages wire has no log probabilities")
	}
	user := ""
	if f.takes(log, FieldUser, v.user != "") {
		user = v.user
	}
	if f.takes(log, FieldSafetyIdentifier, v.safetyID != "") {
		user = v.safetyID
	}
	if user != "" {
		if b.Metadata == nil {
			b.Metadata = &anthropic.Metadata{}
		}
		b.Metadata.UserID = user
	}
	if f.takes(log, FieldMetadata, v.metadata != nil) {
		clientDrop(log, FieldMetadata, "the Messages wire's metadata takes only user_id")
	}
	if f.takes(log, FieldServiceTier, v.serviceTier != "") {
		switch v.serviceTier {
		case "auto":
			set("service_tier", json.RawMessage(`"`+anthropicTierAuto+`"`))
		case "default":
			set("service_tier", json.RawMessage(`"`+anthropicTierStandard+`"`))
		default:
			clientDrop(log, FieldServiceTier, "the Messages wire has no tier "+strconv.Quote(v.serviceTier))
		}
	}
	if f.takes(log, FieldPromptCacheKey, v.cacheKey != "") {
		clientDrop(log, FieldPromptCacheKey, "the Messages wire caches by cache_control marks, not by key")
	}
	return nil
}

// MessagesOptionsNode returns the request.options node of a native
// Messages graph: the model and stream from the request, then the client
// fields of opts.ClientFields in Anthropic's form
// ([ApplyMessagesClientFields]).
func MessagesOptionsNode(opts Options) pipeline.Node {
	log := opts.logger()
	return pipeline.StageNode(NodeOptions, Update(func(s *Shaping) error {
		s.MessagesBody.Model = s.Request.Model
		s.MessagesBody.Stream = ptr(s.Request.Stream)
		return ApplyMessagesClientFields(s, opts.ClientFields, log) // the pipeline names the stage
	}), pipeline.Describe("model, stream, max_tokens, sampling and user id from the client's request"))
}
