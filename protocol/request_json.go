package protocol

import (
	"encoding/json"
	"fmt"

	"github.com/harnessflow/harnessflow/internal/jsonx"
)

// MarshalJSON implements json.Marshaler, writing the fields in the order of docs/protocol.md#responses-request.
func (r ResponsesRequest) MarshalJSON() ([]byte, error) {
	w := newEnc(make([]byte, 0, 1024))
	f := w.Open()
	w.Str("model", r.Model)
	w.StrOpt("instructions", r.Instructions)
	w.Key("input")
	writeItems(w, r.Input)
	if r.Tools != nil {
		w.Key("tools")
		writeTools(w, r.Tools)
	}
	w.Raw("tool_choice", r.ToolChoice, `"auto"`)
	w.BoolOpt("parallel_tool_calls", r.ParallelToolCalls)
	w.Key("reasoning")
	if c := r.Reasoning; c == nil {
		w.B = append(w.B, "null"...)
	} else {
		cf := w.Open()
		w.StrOpt("effort", c.Effort)
		w.StrOpt("summary", c.Summary)
		w.RawOpt("context", c.Context)
		w.Extra(c.Extra)
		w.Close(cf)
	}
	w.BoolOpt("store", r.Store)
	w.Bool("stream", r.Stream)
	w.RawOpt("stream_options", r.StreamOptions)
	w.Strings("include", r.Include)
	w.StrOpt("service_tier", r.ServiceTier)
	w.StrOpt("prompt_cache_key", r.PromptCacheKey)
	if t := r.Text; t != nil {
		w.Key("text")
		tf := w.Open()
		w.StrOpt("verbosity", t.Verbosity)
		if x := t.Format; x != nil {
			w.Key("format")
			xf := w.Open()
			w.Str("type", x.Type)
			w.Bool("strict", x.Strict)
			w.Raw("schema", x.Schema, "null")
			w.Str("name", x.Name)
			w.Extra(x.Extra)
			w.Close(xf)
		}
		w.Extra(t.Extra)
		w.Close(tf)
	}
	w.RawOpt("client_metadata", r.ClientMetadata)
	w.Extra(r.Extra)
	w.Close(f)
	if w.Err != nil {
		return nil, fmt.Errorf("protocol: responses request: %w", w.Err)
	}
	return w.B, nil
}

// UnmarshalJSON implements json.Unmarshaler. Unknown fields go to Extra.
func (r *ResponsesRequest) UnmarshalJSON(data []byte) error {
	d, err := jsonx.NewFields(data)
	if err != nil {
		return fmt.Errorf("protocol: responses request: %w", err)
	}
	v := ResponsesRequest{
		Model:        d.Str("model"),
		Instructions: d.Str("instructions"),
		Input:        make(Items, 0),
	}
	if raw, ok := d.Take("input"); ok {
		if err := v.Input.UnmarshalJSON(raw); err != nil {
			return fmt.Errorf("protocol: responses request: input: %w", err)
		}
		if v.Input == nil {
			v.Input = make(Items, 0)
		}
	}
	if d.Array("tools", func(_ int, raw json.RawMessage) error {
		t, err := decodeTool(raw)
		v.Tools = append(v.Tools, t)
		return err
	}) && v.Tools == nil {
		v.Tools = make([]ToolSpec, 0)
	}
	v.ToolChoice = d.Raw("tool_choice")
	if v.ToolChoice == nil {
		v.ToolChoice = json.RawMessage(`"auto"`)
	}
	v.ParallelToolCalls = d.BoolPtr("parallel_tool_calls")
	d.Object("reasoning", func(c *jsonx.Fields) error {
		v.Reasoning = &ReasoningConfig{
			Effort:  c.Str("effort"),
			Summary: c.Str("summary"),
			Context: c.Raw("context"),
			Extra:   c.Extra("type"),
		}
		return c.Err
	})
	v.Store = d.BoolPtr("store")
	v.Stream = d.Bool("stream")
	v.StreamOptions = d.Raw("stream_options")
	v.Include = d.Strings("include")
	if v.Include == nil {
		v.Include = make([]string, 0)
	}
	v.ServiceTier = d.Str("service_tier")
	v.PromptCacheKey = d.Str("prompt_cache_key")
	d.Object("text", func(t *jsonx.Fields) error {
		v.Text = &TextConfig{Verbosity: t.Str("verbosity")}
		t.Object("format", func(x *jsonx.Fields) error {
			v.Text.Format = &TextFormat{
				Type:   x.Str("type"),
				Strict: x.Bool("strict"),
				Schema: x.Raw("schema"),
				Name:   x.Str("name"),
				Extra:  x.Extra("type"),
			}
			return x.Err
		})
		v.Text.Extra = t.Extra("type")
		return t.Err
	})
	v.ClientMetadata = d.Raw("client_metadata")
	v.Extra = d.Extra("type")
	if d.Err != nil {
		return fmt.Errorf("protocol: responses request: %w", d.Err)
	}
	*r = v
	return nil
}

// promptJSON is the JSON form of a Prompt (used by test fixtures and the CLI).
type promptJSON struct {
	Input              Items           `json:"input"`
	Tools              []ToolSpec      `json:"tools"`
	ParallelToolCalls  bool            `json:"parallel_tool_calls"`
	Cwd                string          `json:"cwd,omitempty"`
	BaseInstructions   string          `json:"base_instructions"`
	OutputSchema       json.RawMessage `json:"output_schema,omitempty"`
	OutputSchemaStrict bool            `json:"output_schema_strict"`
}

// MarshalJSON implements json.Marshaler: {"input","tools","parallel_tool_calls","cwd"?,
// "base_instructions","output_schema"?,"output_schema_strict"}.
func (p Prompt) MarshalJSON() ([]byte, error) {
	tools := p.Tools
	if tools == nil {
		tools = []ToolSpec{}
	}
	b, err := json.Marshal(promptJSON{
		Input: p.Input, Tools: tools, ParallelToolCalls: p.ParallelToolCalls, Cwd: p.Cwd,
		BaseInstructions: p.BaseInstructions, OutputSchema: p.OutputSchema,
		OutputSchemaStrict: p.OutputSchemaStrict,
	})
	if err != nil {
		return nil, fmt.Errorf("protocol: prompt: %w", err)
	}
	return b, nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (p *Prompt) UnmarshalJSON(data []byte) error {
	var v promptJSON
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("protocol: prompt: %w", err)
	}
	*p = Prompt{
		Input: v.Input, Tools: v.Tools, ParallelToolCalls: v.ParallelToolCalls, Cwd: v.Cwd,
		BaseInstructions: v.BaseInstructions, OutputSchema: v.OutputSchema,
		OutputSchemaStrict: v.OutputSchemaStrict,
	}
	return nil
}
