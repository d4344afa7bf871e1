package harness

import (
	"encoding/json"

	"github.com/harnessflow/harnessflow/codec"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/stages/textcall"
)

// ProtocolGraph builds the protocol layer of the response direction for a
// wire (the registered codec's, [codec.Graph]): upstream bytes →
// ResponseEvents, with no harness postprocessing. Harnesses append their
// harness.post node to it.
func ProtocolGraph(w Wire, opts ResponseOptions) (*pipeline.Graph, error) {
	return codec.Graph(w, opts.decode())
}

// decode returns the options of the protocol layer.
func (o ResponseOptions) decode() codec.Options { return o.Options }

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
		on, off := thinkingSwitch(t.Shaped.Body)
		// DeepSeek's template_thinking switch is off unless sent: its
		// template opens the block only when the body turns it on.
		opts.ThinkingOpen = !off && (on || t.Env.Model.Reasoning != request.ReasoningTemplateThinking)
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

// thinkingSwitch reports whether a chat body turns the model's thinking
// on or off: chat_template_kwargs enable_thinking or thinking, or thinking
// {"type": "enabled" | "disabled"}. Off, the template closes the block in
// the prompt (or opens none) and the reply does not start inside one.
func thinkingSwitch(body []byte) (on, off bool) {
	var b struct {
		Kwargs struct {
			EnableThinking *bool `json:"enable_thinking"`
			Thinking       *bool `json:"thinking"`
		} `json:"chat_template_kwargs"`
		Thinking json.RawMessage `json:"thinking"`
	}
	if json.Unmarshal(body, &b) != nil {
		return false, false
	}
	var typed struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(b.Thinking, &typed)
	is := func(p *bool, v bool) bool { return p != nil && *p == v }
	on = is(b.Kwargs.EnableThinking, true) || is(b.Kwargs.Thinking, true) || typed.Type == "enabled"
	off = is(b.Kwargs.EnableThinking, false) || is(b.Kwargs.Thinking, false) || typed.Type == "disabled"
	return on, off
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
