package protocol

import (
	"encoding/json"
	"fmt"
)

// MarshalJSON implements json.Marshaler, writing the fields in the order of SPEC §A.5.
func (r ResponsesRequest) MarshalJSON() ([]byte, error) {
	w := newEnc(make([]byte, 0, 1024))
	f := w.open()
	w.str("model", r.Model)
	w.strOpt("instructions", r.Instructions)
	w.key("input")
	writeItems(w, r.Input)
	if r.Tools != nil {
		w.key("tools")
		writeTools(w, r.Tools)
	}
	w.raw("tool_choice", r.ToolChoice, `"auto"`)
	w.boolean("parallel_tool_calls", r.ParallelToolCalls)
	w.key("reasoning")
	if c := r.Reasoning; c == nil {
		w.b = append(w.b, "null"...)
	} else {
		cf := w.open()
		w.strOpt("effort", c.Effort)
		w.strOpt("summary", c.Summary)
		if len(c.Context) > 0 {
			w.raw("context", c.Context, "")
		}
		w.extra(c.Extra)
		w.close(cf)
	}
	w.boolean("store", r.Store)
	w.boolean("stream", r.Stream)
	if len(r.StreamOptions) > 0 {
		w.raw("stream_options", r.StreamOptions, "")
	}
	w.strings("include", r.Include)
	w.strOpt("service_tier", r.ServiceTier)
	w.strOpt("prompt_cache_key", r.PromptCacheKey)
	if t := r.Text; t != nil {
		w.key("text")
		tf := w.open()
		w.strOpt("verbosity", t.Verbosity)
		if x := t.Format; x != nil {
			w.key("format")
			xf := w.open()
			w.str("type", x.Type)
			w.boolean("strict", x.Strict)
			w.raw("schema", x.Schema, "null")
			w.str("name", x.Name)
			w.extra(x.Extra)
			w.close(xf)
		}
		w.extra(t.Extra)
		w.close(tf)
	}
	if len(r.ClientMetadata) > 0 {
		w.raw("client_metadata", r.ClientMetadata, "")
	}
	w.extra(r.Extra)
	w.close(f)
	if w.err != nil {
		return nil, fmt.Errorf("protocol: responses request: %w", w.err)
	}
	return w.b, nil
}

// UnmarshalJSON implements json.Unmarshaler. Unknown fields go to Extra.
func (r *ResponsesRequest) UnmarshalJSON(data []byte) error {
	d, err := newDec(data)
	if err != nil {
		return fmt.Errorf("protocol: responses request: %w", err)
	}
	v := ResponsesRequest{
		Model:        d.str("model"),
		Instructions: d.str("instructions"),
		Input:        make(Items, 0),
	}
	if raw, ok := d.take("input"); ok {
		if err := v.Input.UnmarshalJSON(raw); err != nil {
			return fmt.Errorf("protocol: responses request: input: %w", err)
		}
		if v.Input == nil {
			v.Input = make(Items, 0)
		}
	}
	if d.array("tools", func(_ int, raw json.RawMessage) error {
		t, err := decodeTool(raw)
		v.Tools = append(v.Tools, t)
		return err
	}) && v.Tools == nil {
		v.Tools = make([]ToolSpec, 0)
	}
	v.ToolChoice = d.raw("tool_choice")
	if v.ToolChoice == nil {
		v.ToolChoice = json.RawMessage(`"auto"`)
	}
	v.ParallelToolCalls = d.boolean("parallel_tool_calls")
	d.object("reasoning", func(c *dec) error {
		v.Reasoning = &ReasoningConfig{
			Effort:  c.str("effort"),
			Summary: c.str("summary"),
			Context: c.raw("context"),
			Extra:   c.extra(),
		}
		return c.err
	})
	v.Store = d.boolean("store")
	v.Stream = d.boolean("stream")
	v.StreamOptions = d.raw("stream_options")
	v.Include = d.strings("include")
	if v.Include == nil {
		v.Include = make([]string, 0)
	}
	v.ServiceTier = d.str("service_tier")
	v.PromptCacheKey = d.str("prompt_cache_key")
	d.object("text", func(t *dec) error {
		v.Text = &TextConfig{Verbosity: t.str("verbosity")}
		t.object("format", func(x *dec) error {
			v.Text.Format = &TextFormat{
				Type:   x.str("type"),
				Strict: x.boolean("strict"),
				Schema: x.raw("schema"),
				Name:   x.str("name"),
				Extra:  x.extra(),
			}
			return x.err
		})
		v.Text.Extra = t.extra()
		return t.err
	})
	v.ClientMetadata = d.raw("client_metadata")
	v.Extra = d.extra()
	if d.err != nil {
		return fmt.Errorf("protocol: responses request: %w", d.err)
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
