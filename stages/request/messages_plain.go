package request

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/wire/anthropic"
)

// PlainMessagesMaxTokens is the max_tokens of the plain Messages
// conversion for a request without max_output_tokens: the wire requires
// one.
const PlainMessagesMaxTokens = 32000

// The thinking budgets of the plain Messages conversion per reasoning
// effort (low, medium, high and above).
const (
	plainBudgetLow    = 4096
	plainBudgetMedium = 8192
	plainBudgetHigh   = 16384
)

// PlainMessagesPolicy is the flatten policy of the plain Messages
// conversion: the native one (texts merged, user turns deferred while calls
// are open, unanswered calls aborted, developer messages as user
// messages), with the reasoning after the last call or text left out (a
// Messages server takes thinking only before what it led to).
func PlainMessagesPolicy() *FlattenPolicy {
	return &FlattenPolicy{Defer: true, DropTrailingReasoning: true}
}

// NewMessagesGraph returns the plain Messages request graph: the engine
// request converted to an Anthropic Messages body with no agent emulated —
// request.system → request.tools → request.history → request.options →
// request.encode. It is the request of a client that speaks one of the
// inbound wires (a Chat Completions or Messages client) to a Messages
// upstream on no harness route (docs/inbound.md#to-a-messages-upstream):
// such a client sends its own agent's prompt and tools.
func NewMessagesGraph(opts Options) (*pipeline.Graph, error) {
	system := SystemNode()
	if opts.BaseInstructions {
		system = BaseSystemNode()
	}
	g, err := pipeline.New("request.messages",
		system,
		ToolsNode(opts),
		HistoryNode(opts, PlainMessagesPolicy()),
		pipeline.StageNode(NodeOptions, PlainMessagesOptions(),
			pipeline.Describe("model, max_tokens, stream, tool_choice, thinking, temperature, top_p")),
		MessagesEncodeNode(MessagesStyle{}),
	)
	if err != nil {
		return nil, fmt.Errorf("request: messages graph: %w", err)
	}
	return g, nil
}

// PlainMessagesOptions returns the request.options stage of the plain
// Messages conversion. It sets the Messages body's top-level fields from
// the engine request:
//
//   - model; max_tokens from max_output_tokens, else
//     [PlainMessagesMaxTokens]; stream always (the wire's answers are read
//     as a stream);
//   - tool_choice "auto" / "required" / "none" / a named function →
//     {"type":"auto"} / {"type":"any"} / {"type":"none"} /
//     {"type":"tool","name"}, parallel_tool_calls false →
//     disable_parallel_tool_use; no tool_choice without tools;
//   - a reasoning effort other than none → thinking enabled with a budget
//     (low 4096, medium 8192, high and above 16384 tokens), max_tokens
//     raised above the budget when it is not; temperature and top_p are
//     then left out (the API takes neither with thinking), else sent as
//     they are.
func PlainMessagesOptions() pipeline.Stage[*Shaping, *Shaping] {
	return stage(func(_ context.Context, s *Shaping) error {
		req := s.Request
		yes := true
		b := anthropic.Request{Model: req.Model, MaxTokens: PlainMessagesMaxTokens, Stream: &yes}
		if raw, ok := req.Extra["max_output_tokens"]; ok {
			n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
			if err != nil || n <= 0 {
				return fmt.Errorf("max_output_tokens: want a positive integer, got %s", raw)
			}
			b.MaxTokens = n
		}
		if len(s.Tools) > 0 {
			b.ToolChoice = plainToolChoice(s, req.ToolChoice, !req.ParallelCalls())
		}
		if budget := plainBudget(req.Reasoning); budget > 0 {
			b.Thinking = &anthropic.Thinking{Type: "enabled", BudgetTokens: &budget}
			if b.MaxTokens <= budget {
				b.MaxTokens = budget + PlainMessagesMaxTokens/8
			}
		} else {
			for _, k := range []string{"temperature", "top_p"} {
				raw, ok := req.Extra[k]
				if !ok {
					continue
				}
				if k == "temperature" {
					var t float64
					if err := json.Unmarshal(raw, &t); err != nil {
						return fmt.Errorf("temperature: %w", err)
					}
					b.Temperature = &t
					continue
				}
				if b.Extra == nil {
					b.Extra = anthropic.Extra{}
				}
				b.Extra[k] = raw
			}
		}
		s.MessagesBody = b
		s.Path = anthropic.Path
		return nil
	})
}

// plainBudget is the thinking budget of a reasoning config, 0 for none.
func plainBudget(r *protocol.ReasoningConfig) int64 {
	if r == nil {
		return 0
	}
	switch normalizeEffort(r.Effort) {
	case "", "none":
		return 0
	case "minimal", "low":
		return plainBudgetLow
	case "medium":
		return plainBudgetMedium
	default:
		return plainBudgetHigh
	}
}

// plainToolChoice converts a Responses tool_choice to the Messages form;
// one it has no form for is "auto".
func plainToolChoice(s *Shaping, raw json.RawMessage, oneCall bool) json.RawMessage {
	choice := map[string]any{"type": "auto"}
	raw = bytes.TrimSpace(raw)
	var word string
	var obj struct {
		Type      string `json:"type"`
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	}
	switch {
	case len(raw) == 0 || string(raw) == "null":
	case json.Unmarshal(raw, &word) == nil:
		switch word {
		case "required":
			choice["type"] = "any"
		case "none":
			choice["type"] = "none"
		}
	case json.Unmarshal(raw, &obj) == nil && (obj.Type == "function" || obj.Type == "custom") && obj.Name != "":
		name := obj.Name
		if obj.Type == "function" {
			name = s.functionCallName(obj.Namespace, obj.Name)
		}
		choice["type"], choice["name"] = "tool", name
	}
	if oneCall && choice["type"] != "none" {
		choice["disable_parallel_tool_use"] = true
	}
	b, _ := json.Marshal(choice) // strings and booleans always encode
	return b
}
