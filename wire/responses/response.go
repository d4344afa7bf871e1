package responses

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/harnessflow/harnessflow/internal/jsonx"
	"github.com/harnessflow/harnessflow/protocol"
)

// Response statuses (the "status" of the Response object).
const (
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
	StatusIncomplete = "incomplete"
	StatusFailed     = "failed"
)

// Terminal event types.
const (
	EventCompleted  = "response.completed"
	EventIncomplete = "response.incomplete"
	EventFailed     = "response.failed"
)

// NewResponseID returns a fresh response id: "resp_" and 24 random hex
// digits.
func NewResponseID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "resp_" + hex.EncodeToString(b[:])
}

// echo holds the request parameters a Response object repeats, encoded
// once: the fields before "model", those between "output" and "store",
// those between "store" and "usage", and those after "usage".
type echo struct {
	beforeModel, beforeStore, beforeUsage, afterUsage []byte
}

var (
	jsonNull         = []byte("null")
	defaultText      = []byte(`{"format":{"type":"text"}}`)
	defaultMetadata  = []byte(`{}`)
	defaultTools     = []byte(`[]`)
	defaultChoice    = []byte(`"auto"`)
	defaultTruncate  = []byte(`"disabled"`)
	defaultReasoning = jsonNull
)

// newEcho encodes the echoed fields of req (nil: the defaults of a request
// that set nothing). A field that does not encode is written as its
// default, never as invalid JSON.
func newEcho(req *protocol.ResponsesRequest) (echo, error) {
	var fields *jsonx.Fields
	parallel := true
	var err error
	if req != nil {
		parallel = req.ParallelCalls()
		c := *req
		c.Input = nil // the conversation is not echoed
		var raw []byte
		if raw, err = c.MarshalJSON(); err == nil {
			fields, err = jsonx.NewFields(raw)
		}
		if err != nil {
			err = fmt.Errorf("responses: echo the request's parameters: %w", err)
			fields = nil
		}
	}
	get := func(k string, def []byte) []byte {
		if fields == nil {
			return def
		}
		raw, _ := fields.Peek(k)
		v := bytes.TrimSpace(raw)
		if len(v) == 0 || string(v) == "null" {
			return def
		}
		return v
	}
	field := func(b []byte, k string, v []byte) []byte {
		b = append(b, ',', '"')
		b = append(b, k...)
		b = append(b, '"', ':')
		return append(b, v...)
	}
	// The four parts are written one after the other into one array
	// (sized for the big echoed values) and cut apart at the end.
	size := 768
	if fields != nil {
		for _, k := range []string{"tools", "text", "metadata", "tool_choice"} {
			v, _ := fields.Peek(k)
			size += len(v)
		}
	}
	if req != nil {
		size += len(req.Instructions) + len(req.Instructions)/8
	}
	b := make([]byte, 0, size)
	instructions := jsonNull
	if req != nil && req.Instructions != "" {
		instructions = protocol.AppendString(nil, req.Instructions)
	}
	b = field(b, "instructions", instructions)
	b = field(b, "max_output_tokens", get("max_output_tokens", jsonNull))
	b = field(b, "max_tool_calls", get("max_tool_calls", jsonNull))
	modelEnd := len(b)

	b = field(b, "parallel_tool_calls", strconv.AppendBool(nil, parallel))
	b = field(b, "previous_response_id", get("previous_response_id", jsonNull))
	b = field(b, "prompt_cache_key", get("prompt_cache_key", jsonNull))
	b = field(b, "reasoning", reasoningEcho(req))
	b = field(b, "safety_identifier", get("safety_identifier", jsonNull))
	b = field(b, "service_tier", get("service_tier", jsonNull))
	storeEnd := len(b)

	b = field(b, "temperature", get("temperature", jsonNull))
	b = field(b, "text", get("text", defaultText))
	b = field(b, "tool_choice", get("tool_choice", defaultChoice))
	b = field(b, "tools", get("tools", defaultTools))
	b = field(b, "top_logprobs", get("top_logprobs", jsonNull))
	b = field(b, "top_p", get("top_p", jsonNull))
	b = field(b, "truncation", get("truncation", defaultTruncate))
	usageEnd := len(b)

	if u := get("user", nil); u != nil {
		b = field(b, "user", u)
	}
	b = field(b, "metadata", get("metadata", defaultMetadata))
	e := echo{
		beforeModel: b[:modelEnd:modelEnd],
		beforeStore: b[modelEnd:storeEnd:storeEnd],
		beforeUsage: b[storeEnd:usageEnd:usageEnd],
		afterUsage:  b[usageEnd:len(b):len(b)],
	}
	return e, err
}

// reasoningEcho is the "reasoning" of the Response object: {effort,
// summary} as requested (null where not), or null without a reasoning
// object.
func reasoningEcho(req *protocol.ResponsesRequest) []byte {
	if req == nil || req.Reasoning == nil {
		return defaultReasoning
	}
	b := []byte(`{"effort":`)
	b = appendStrOrNull(b, req.Reasoning.Effort)
	b = append(b, `,"summary":`...)
	b = appendStrOrNull(b, req.Reasoning.Summary)
	return append(b, '}')
}

func appendStrOrNull(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return protocol.AppendString(b, s)
}

// appendUsage appends the Responses usage object of u (null when nil).
func appendUsage(b []byte, u *protocol.TokenUsage) []byte {
	if u == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"input_tokens":`...)
	b = strconv.AppendInt(b, u.InputTokens, 10)
	b = append(b, `,"input_tokens_details":{"cached_tokens":`...)
	b = strconv.AppendInt(b, u.CachedInputTokens, 10)
	b = append(b, `},"output_tokens":`...)
	b = strconv.AppendInt(b, u.OutputTokens, 10)
	b = append(b, `,"output_tokens_details":{"reasoning_tokens":`...)
	b = strconv.AppendInt(b, u.ReasoningOutputTokens, 10)
	b = append(b, `},"total_tokens":`...)
	total := u.TotalTokens
	if total == 0 {
		total = u.InputTokens + u.OutputTokens
	}
	b = strconv.AppendInt(b, total, 10)
	return append(b, '}')
}
