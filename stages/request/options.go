package request

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/wire/chat"
)

// Thinking switch values (the "thinking" field of ThinkingToggle models).
var (
	thinkingEnabled  = json.RawMessage(`{"type":"enabled"}`)
	thinkingDisabled = json.RawMessage(`{"type":"disabled"}`)
)

// ApplyOptions returns the request.options stage: the body-level fields of
// docs/request-shaping.md#body-fields are set from the engine request — model, stream, tool_choice,
// parallel_tool_calls, response_format (from text.format), service_tier,
// store, verbosity (from text.verbosity) — and, when opts asks for them,
// thinking (ThinkingToggle models) and reasoning_effort, or the reasoning
// fields of the model's other control (SetReasoning; SendEffort does not
// apply to those). The client's limit, sampling and identity fields go
// through ApplyClientFields with opts.ClientFields and what the server of
// opts.BaseURL is known to take (ClientFields.ForServer).
//
// tool_choice and parallel_tool_calls are left out when the body has no
// tools: OpenAI rejects them without tools. Run it after request.tools.
// parallel_tool_calls and store are sent only when the client sent them:
// their defaults differ between the wires, and a default the client did not
// ask for would change what the model does (parallel calls) or what the
// provider keeps (store).
// tool_choice is converted to the chat form: "auto", "none" and "required"
// pass; a named function or custom choice, {"type":"function","name":N},
// becomes {"type":"function","function":{"name":<chat name of N>}}; an
// allowed_tools choice becomes its mode; a choice with no chat form becomes
// "auto", with a debug log.
func ApplyOptions(opts Options) pipeline.Stage[*Shaping, *Shaping] {
	return stage(func(_ context.Context, s *Shaping) error {
		log := opts.logger()
		req, b := s.Request, &s.Body
		b.Model = req.Model
		b.Stream = ptr(req.Stream)
		if len(b.Tools) > 0 || len(s.Tools) > 0 {
			b.ToolChoice = chatToolChoice(s, req.ToolChoice, log)
			b.ParallelToolCalls = req.ParallelToolCalls // nil (not sent) when the client sent none
		} else {
			b.ToolChoice, b.ParallelToolCalls = nil, nil
		}
		if t := req.Text; t != nil {
			b.Verbosity = t.Verbosity
			if f := t.Format; f != nil {
				typ := f.Type
				if typ == "" {
					typ = "json_schema"
				}
				b.ResponseFormat = &chat.ResponseFormat{
					Type:       typ,
					JSONSchema: &chat.JSONSchema{Name: f.Name, Schema: f.Schema, Strict: ptr(f.Strict)},
				}
			}
		}
		b.ServiceTier = req.ServiceTier
		b.Store = req.Store // nil (not sent) when the client sent none
		if opts.IncludeUsage && req.Stream && len(b.StreamOptions) == 0 {
			b.StreamOptions = includeUsage
		}
		if err := ApplyClientFields(s, opts.ClientFields.ForServer(opts.BaseURL), log); err != nil {
			return err // the pipeline names the stage
		}

		effort := ""
		if req.Reasoning != nil {
			effort = normalizeEffort(req.Reasoning.Effort)
		}
		if SetReasoning(b, opts.effectiveControl(), effort, opts.Efforts) {
			return nil // an effort-following control: docs/reasoning-controls.md
		}
		toggle := opts.ReasoningControl == ReasoningThinkingToggle
		if toggle {
			if effort == "none" {
				b.Thinking = thinkingDisabled
			} else {
				b.Thinking = thinkingEnabled
			}
		}
		if opts.SendEffort && !(toggle && effort == "thinking") {
			b.ReasoningEffort = ChatEffort(effort)
		}
		return nil
	})
}

// OptionsNode returns the request.options node.
func OptionsNode(opts Options) pipeline.Node {
	return pipeline.StageNode(NodeOptions, ApplyOptions(opts),
		pipeline.Describe("model, stream, tool_choice, parallel_tool_calls, response_format, thinking, effort"))
}

// ChatEffort maps a Responses reasoning effort to the chat wire's
// reasoning_effort (docs/request-shaping.md#reasoning-switches): "" and "none" → "" (not sent); minimal, low →
// low; medium → medium; high, xhigh, max, ultra → high; anything else is sent
// as it is.
func ChatEffort(effort string) string {
	switch e := strings.ToLower(strings.TrimSpace(effort)); e {
	case "", "none":
		return ""
	case "minimal", "low":
		return "low"
	case "medium":
		return "medium"
	case "high", "xhigh", "max", "ultra":
		return "high"
	default:
		return effort
	}
}

var (
	autoChoice   = json.RawMessage(`"auto"`)
	includeUsage = json.RawMessage(`{"include_usage":true}`)
)

// chatToolChoice converts a Responses tool_choice to the chat wire's.
func chatToolChoice(s *Shaping, raw json.RawMessage, log *slog.Logger) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return autoChoice
	}
	if raw[0] == '"' {
		return raw
	}
	var c struct {
		Type      string          `json:"type"`
		Name      string          `json:"name"`
		Namespace string          `json:"namespace"`
		Function  json.RawMessage `json:"function"`
		Mode      string          `json:"mode"`
	}
	if err := json.Unmarshal(raw, &c); err == nil {
		switch {
		case c.Type == "function" && len(c.Function) > 0:
			return raw // already in the chat form
		case (c.Type == "function" || c.Type == "custom") && c.Name != "":
			name := c.Name
			if c.Type == "function" {
				name = s.functionCallName(c.Namespace, c.Name)
			}
			b := append([]byte(`{"type":"function","function":{"name":`), chat.AppendString(nil, name)...)
			return append(b, "}}"...)
		case c.Type == "allowed_tools" && (c.Mode == "auto" || c.Mode == "required"):
			return chat.AppendString(nil, c.Mode)
		}
	}
	log.Debug("request.options: tool_choice has no chat form; sending \"auto\"", "tool_choice", string(raw))
	return autoChoice
}

func ptr[T any](v T) *T { return &v }

// normalizeEffort lowercases and trims a reasoning effort.
func normalizeEffort(e string) string { return strings.ToLower(strings.TrimSpace(e)) }
