// Package anthropictest checks Messages request bodies against the official
// SDK: a body is decoded into anthropic-sdk-go's BetaMessageNewParams (the
// beta type models role:"system" messages, context_management and strict
// tools, which Claude Code 2.1 sends) and encoded back, and whatever the SDK
// lost or changed is reported. It is for tests only.
package anthropictest

import (
	"encoding/json"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/go-cmp/cmp"
)

// Unmodelled lists the top-level fields a body may carry that the SDK's
// request type does not model, so the oracle cannot vouch for them:
//
//   - stream: the SDK sets it itself (New vs NewStreaming);
//   - temperature: anthropic-sdk-go v2.15 no longer has it (newer models
//     reject sampling parameters next to thinking), yet Claude Code still
//     sends temperature 1 for child agents and title requests.
var Unmodelled = []string{"stream", "temperature"}

// Diff round-trips body through BetaMessageNewParams and returns a
// description of what was lost or changed ("" when nothing was), after
// taking out Unmodelled and normalising the one rewrite the SDK makes on
// purpose: a string content (of a message, a tool result or the system
// prompt) comes back as one text block.
func Diff(body []byte) (string, error) {
	var params anthropic.BetaMessageNewParams
	if err := json.Unmarshal(body, &params); err != nil {
		return "", fmt.Errorf("anthropic-sdk-go cannot decode the body: %w", err)
	}
	again, err := json.Marshal(params)
	if err != nil {
		return "", fmt.Errorf("anthropic-sdk-go cannot encode the body back: %w", err)
	}
	var ours, sdk map[string]any
	if err := json.Unmarshal(body, &ours); err != nil {
		return "", fmt.Errorf("body: %w", err)
	}
	if err := json.Unmarshal(again, &sdk); err != nil {
		return "", fmt.Errorf("sdk re-encoding: %w", err)
	}
	for _, k := range Unmodelled {
		delete(ours, k)
	}
	normalize(ours)
	normalize(sdk)
	return cmp.Diff(ours, sdk), nil
}

// normalize turns string contents into one text block, in place.
func normalize(body map[string]any) {
	if s, ok := body["system"].(string); ok {
		body["system"] = textBlocks(s)
	}
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		m, ok := m.(map[string]any)
		if !ok {
			continue
		}
		if s, ok := m["content"].(string); ok {
			m["content"] = textBlocks(s)
		}
		blocks, _ := m["content"].([]any)
		for _, b := range blocks {
			b, ok := b.(map[string]any)
			if !ok || b["type"] != "tool_result" {
				continue
			}
			if s, ok := b["content"].(string); ok {
				b["content"] = textBlocks(s)
			}
		}
	}
}

func textBlocks(s string) []any {
	return []any{map[string]any{"type": "text", "text": s}}
}
