package harness

import (
	"encoding/json"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/decode"
	"github.com/harnessflow/harnessflow/stages/textcall"
)

// ProtocolGraph builds the protocol layer of the response direction for a
// wire ([decode.Graph]): upstream bytes → ResponseEvents, with no harness
// postprocessing. Harnesses append their harness.post node to it.
func ProtocolGraph(w Wire, opts ResponseOptions) (*pipeline.Graph, error) {
	return decode.Graph(w, opts.decode())
}

// decode returns the options of the protocol layer.
func (o ResponseOptions) decode() decode.Options {
	return decode.Options{ToolKinds: o.ToolKinds, Unary: o.Unary, MaxEventBytes: o.MaxEventBytes,
		ToolFormat: o.ToolFormat, Model: o.Model, ToolSchemas: o.ToolSchemas, TextCalls: o.TextCalls, Logger: o.Logger,
		ThinkingOpen: o.ThinkingOpen}
}

// textCallOptions fills what opts leaves open of text tool-call recovery
// from the turn: the format (the options', else the model's caps entry,
// else the deployment's default), the model, the tool schemas and the
// outcome observer.
func (t *Turn) textCallOptions(opts *ResponseOptions) {
	if opts.ToolFormat == "" {
		opts.ToolFormat = t.Env.Model.ToolFormat
	}
	if opts.ToolFormat == "" {
		opts.ToolFormat = t.toolFormat
	}
	if !opts.ThinkingOpen && t.Env.Model.ThinkingOpen {
		opts.ThinkingOpen = !thinkingOff(t.Shaped.Body)
	}
	if opts.Model == "" && t.Env.Request != nil {
		opts.Model = t.Env.Request.Model
	}
	if opts.ToolSchemas == nil {
		opts.ToolSchemas = t.ToolSchemas
	}
	if opts.TextCalls == nil {
		opts.TextCalls = t.textCalls
	}
	if opts.Logger == nil {
		opts.Logger = t.Env.Logger
	}
}

// thinkingOff reports whether a chat body turns the model's thinking off:
// chat_template_kwargs enable_thinking or thinking false, or thinking
// {"type":"disabled"} — then the template closes the block in the prompt
// (or opens none) and the reply does not start inside one.
func thinkingOff(body []byte) bool {
	var b struct {
		Kwargs struct {
			EnableThinking *bool `json:"enable_thinking"`
			Thinking       *bool `json:"thinking"`
		} `json:"chat_template_kwargs"`
		Thinking json.RawMessage `json:"thinking"`
	}
	if json.Unmarshal(body, &b) != nil {
		return false
	}
	var typed struct {
		Type string `json:"type"`
	}
	off := func(p *bool) bool { return p != nil && !*p }
	return off(b.Kwargs.EnableThinking) || off(b.Kwargs.Thinking) ||
		(json.Unmarshal(b.Thinking, &typed) == nil && typed.Type == "disabled")
}

// ToolSchemas reads the parameter types of the tools the model was shown:
// the chat body's tools, or, when the body has none (tools in the prompt),
// the request's function and custom tools.
func (t *Turn) ToolSchemas() textcall.Schemas {
	var body struct {
		Tools json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(t.Shaped.Body, &body) == nil && len(body.Tools) > 0 {
		if s, err := textcall.SchemasFromChatTools(body.Tools); err == nil && len(s) > 0 {
			return s
		}
	}
	s := textcall.Schemas{}
	if t.Env.Request == nil {
		return s
	}
	for _, tool := range t.Env.Request.Tools {
		switch tool.Type {
		case protocol.ToolTypeFunction:
			s[tool.Name] = textcall.ParamTypes(tool.Parameters)
		case protocol.ToolTypeCustom:
			s[tool.Name] = map[string]string{"input": "string"}
		}
	}
	return s
}
