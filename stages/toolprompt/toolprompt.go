// Package toolprompt puts a request's tools into the prompt, for chat
// servers that take no tools field (docs/tools-in-prompt.md):
// the tools are described in the system message in a text tool-call
// format's own convention, earlier calls in the history become that
// format's call text in the assistant's content, tool results become user
// messages holding <tool_response>…</tool_response>, and no tools,
// tool_choice or parallel_tool_calls go upstream. The response side reads
// the calls back out of the text (the chat.textcalls stage) with the same
// format; ToolKinds are left as request.tools made them, so a recovered call
// turns into the item its tool kind says.
//
// Formats with a renderer: hermes and qwen3_coder. The instruction texts are
// templates of the prompt pack (prompts/pack/toolprompt/<format>.tmpl).
package toolprompt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/prompts"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/wire/chat"
)

// Formats with a prompt renderer; the names are those of the text
// tool-call formats.
const (
	// FormatHermes: a call is <tool_call>\n{"name": N, "arguments": {…}}\n</tool_call>;
	// tools are listed as one JSON object per line.
	FormatHermes = "hermes"
	// FormatQwen3Coder: a call is
	// <tool_call>\n<function=N>\n<parameter=P>\nVALUE\n</parameter>\n…</function>\n</tool_call>;
	// tools are listed as XML-like elements.
	FormatQwen3Coder = "qwen3_coder"
)

// NodeName is the name of the request-graph node; it goes after
// request.history.
const NodeName = "request.toolprompt"

// PackName is the prompt-pack directory of the instruction templates
// (prompts/pack/toolprompt/<format>.tmpl).
const PackName = "toolprompt"

// Formats returns the formats that have a renderer.
func Formats() []string { return []string{FormatHermes, FormatQwen3Coder} }

// Supported reports whether format has a renderer.
func Supported(format string) bool { return slices.Contains(Formats(), format) }

// Resolve returns the format the tools are rendered in: a format with a
// renderer as it is; "" or "auto" chosen by the model name — qwen3_coder
// for a name holding "qwen3-coder" or "qwen3_coder", hermes for any other.
// Any other name ("off", a format without a renderer) is an error.
func Resolve(format, model string) (string, error) {
	switch f := strings.ToLower(strings.TrimSpace(format)); {
	case f == "" || f == "auto":
		m := strings.ToLower(model)
		if strings.Contains(m, "qwen3-coder") || strings.Contains(m, "qwen3_coder") {
			return FormatQwen3Coder, nil
		}
		return FormatHermes, nil
	case Supported(f):
		return f, nil
	default:
		return "", fmt.Errorf("toolprompt: tool format %q cannot carry tools in the prompt (have %s, or auto)", format, strings.Join(Formats(), ", "))
	}
}

// Options configure the stage.
type Options struct {
	// Format is the tool format (FormatHermes or FormatQwen3Coder).
	Format string
	// Prompts is the prompt pack with the instruction templates; nil
	// means the embedded one.
	Prompts *prompts.Pack
	// Logger receives debug records (arguments that are not a JSON
	// object); nil means slog.Default().
	Logger *slog.Logger
}

func (o Options) pack() *prompts.Pack {
	if o.Prompts != nil {
		return o.Prompts
	}
	return prompts.Default()
}

func (o Options) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.Default()
}

// Stage returns the request.toolprompt stage (see the package doc). An
// unsupported format is an error here, not at the first request.
func Stage(opts Options) (pipeline.Stage[*request.Shaping, *request.Shaping], error) {
	if !Supported(opts.Format) {
		return nil, fmt.Errorf("toolprompt: no renderer for tool format %q (have %s)", opts.Format, strings.Join(Formats(), ", "))
	}
	if !opts.pack().Has(PackName, opts.Format) {
		return nil, fmt.Errorf("toolprompt: the prompt pack has no %s/%s template", PackName, opts.Format)
	}
	return request.Update(func(s *request.Shaping) error { return Apply(s, opts) }), nil
}

// Node returns the request.toolprompt node of Stage.
func Node(opts Options) (pipeline.Node, error) {
	st, err := Stage(opts)
	if err != nil {
		return pipeline.Node{}, err
	}
	return pipeline.StageNode(NodeName, st,
		pipeline.Describe("tools → the system prompt as "+opts.Format+" text; calls and results → text; no tools field")), nil
}

// Apply rewrites one shaping state: the instructions for s.Tools go at the
// end of the leading system message (a system message is added when there
// is none), the transcript's calls and results become text, and s.Tools and
// the body's tools, tool_choice and parallel_tool_calls are cleared.
// s.ToolKinds is kept. A request with no tools gets no instructions, but its
// history is still rewritten (a server without tools takes no tool
// messages either).
func Apply(s *request.Shaping, opts Options) error {
	if s == nil {
		return errors.New("toolprompt: no shaping state")
	}
	if len(s.Tools) > 0 {
		text, err := Instructions(opts.pack(), opts.Format, s.Tools, choiceOf(s))
		if err != nil {
			return err
		}
		addSystem(s, text)
	}
	s.Transcript = rewriteHistory(s.Transcript, opts.Format, opts.logger())
	s.Tools = nil
	s.Body.Tools, s.Body.ToolChoice, s.Body.ParallelToolCalls = nil, nil, nil
	return nil
}

// Choice is what the request's tool_choice asks of this reply, for the
// instructions: Mode is "" (auto), "required", "none" or "function" (then
// Name is the function's wire name).
type Choice struct {
	Mode string
	Name string
}

// choiceOf reads the request's tool_choice.
func choiceOf(s *request.Shaping) Choice {
	raw := bytes.TrimSpace(s.Request.ToolChoice)
	if len(raw) == 0 {
		return Choice{}
	}
	var mode string
	if json.Unmarshal(raw, &mode) == nil {
		switch mode {
		case "required", "none":
			return Choice{Mode: mode}
		}
		return Choice{}
	}
	var c struct {
		Type      string `json:"type"`
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
		Mode      string `json:"mode"`
		Function  struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return Choice{}
	}
	switch {
	case c.Type == "allowed_tools" && c.Mode == "required":
		return Choice{Mode: "required"}
	case c.Function.Name != "":
		return Choice{Mode: "function", Name: c.Function.Name}
	case (c.Type == "function" || c.Type == "custom") && c.Name != "":
		name := c.Name
		if n, ok := s.ToolNames[request.ToolRef{Namespace: c.Namespace, Name: c.Name}]; ok && c.Type == "function" {
			name = n
		}
		return Choice{Mode: "function", Name: name}
	}
	return Choice{}
}

// Instructions renders the tool instructions of format for tools from the
// pack's template.
func Instructions(pack *prompts.Pack, format string, tools []request.Tool, choice Choice) (string, error) {
	var data any
	switch format {
	case FormatHermes:
		lines := make([]string, len(tools))
		for i, t := range tools {
			lines[i] = hermesTool(t)
		}
		data = struct {
			Tools []string
			Choice
		}{lines, choice}
	case FormatQwen3Coder:
		list := make([]coderTool, len(tools))
		for i, t := range tools {
			list[i] = newCoderTool(t)
		}
		data = struct {
			Tools []coderTool
			Choice
		}{list, choice}
	default:
		return "", fmt.Errorf("toolprompt: no renderer for tool format %q", format)
	}
	text, err := pack.Render(PackName, format, data)
	if err != nil {
		return "", fmt.Errorf("toolprompt: %s instructions: %w", format, err)
	}
	return strings.TrimRight(text, "\n"), nil
}

// hermesTool is one tool as a JSON line: {"type":"function","function":{…}}.
func hermesTool(t request.Tool) string {
	b := []byte(`{"type":"function","function":{"name":`)
	b = chat.AppendString(b, t.Name)
	b = append(b, `,"description":`...)
	b = chat.AppendString(b, t.Description)
	b = append(b, `,"parameters":`...)
	b = append(b, compactOr(t.Parameters, `{"type":"object","properties":{}}`)...)
	return string(append(b, "}}"...))
}

// coderTool is one tool for the qwen3_coder template.
type coderTool struct {
	Name, Description string
	Params            []coderParam
	// Required is the JSON array of required parameters, or "".
	Required string
}

// coderParam is one parameter of a qwen3_coder tool: its name, its type
// (the schema's "type", a JSON value when not a string; "any" when absent),
// its description and the other keys of its schema as compact JSON.
type coderParam struct {
	Name, Type, Description string
	Extra                   []keyValue
}

type keyValue struct{ Key, Value string }

func newCoderTool(t request.Tool) coderTool {
	ct := coderTool{Name: t.Name, Description: t.Description}
	schema, err := objectFields(t.Parameters)
	if err != nil {
		return ct
	}
	for _, f := range schema {
		switch f.key {
		case "properties":
			props, err := objectFields(f.value)
			if err != nil {
				continue
			}
			for _, p := range props {
				ct.Params = append(ct.Params, newCoderParam(p.key, p.value))
			}
		case "required":
			if r := compactOr(f.value, ""); r != "" && r != "[]" {
				ct.Required = r
			}
		}
	}
	return ct
}

func newCoderParam(name string, schema json.RawMessage) coderParam {
	p := coderParam{Name: name, Type: "any"}
	fields, err := objectFields(schema)
	if err != nil {
		return p
	}
	for _, f := range fields {
		switch f.key {
		case "type":
			var s string
			if json.Unmarshal(f.value, &s) == nil {
				p.Type = s
			} else {
				p.Type = compactOr(f.value, "any")
			}
		case "description":
			var s string
			if json.Unmarshal(f.value, &s) == nil {
				p.Description = s
				continue
			}
			p.Extra = append(p.Extra, keyValue{f.key, compactOr(f.value, "")})
		default:
			p.Extra = append(p.Extra, keyValue{f.key, compactOr(f.value, "")})
		}
	}
	return p
}

// CallText returns one call in format's text. A call whose arguments are
// not a JSON object is written with its arguments as a JSON string (hermes)
// or as one parameter "input" (qwen3_coder).
func CallText(format string, c request.Call) string {
	switch format {
	case FormatQwen3Coder:
		var b strings.Builder
		b.WriteString("<tool_call>\n<function=")
		b.WriteString(c.Name)
		b.WriteString(">\n")
		fields, err := objectFields(json.RawMessage(orEmptyObject(c.Arguments)))
		if err != nil {
			fields = []field{{key: "input", value: chat.AppendString(nil, c.Arguments)}}
		}
		for _, f := range fields {
			b.WriteString("<parameter=")
			b.WriteString(f.key)
			b.WriteString(">\n")
			b.WriteString(parameterValue(f.value))
			b.WriteString("\n</parameter>\n")
		}
		b.WriteString("</function>\n</tool_call>")
		return b.String()
	default:
		b := []byte("<tool_call>\n{\"name\": ")
		b = chat.AppendString(b, c.Name)
		b = append(b, `, "arguments": `...)
		args := orEmptyObject(c.Arguments)
		if json.Valid([]byte(args)) {
			b = append(b, compactOr(json.RawMessage(args), args)...)
		} else {
			b = chat.AppendString(b, c.Arguments)
		}
		return string(append(b, "}\n</tool_call>"...))
	}
}

// parameterValue is a qwen3_coder parameter value: a string as its text,
// anything else as compact JSON.
func parameterValue(v json.RawMessage) string {
	var s string
	if len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil {
		return s
	}
	return compactOr(v, string(v))
}

// ResultText wraps one tool result's text as the formats show it to the
// model: <tool_response>\n…\n</tool_response>.
func ResultText(text string) string {
	return "<tool_response>\n" + text + "\n</tool_response>"
}

// addSystem appends text to the leading system message, after a blank line,
// or puts a system message holding text first.
func addSystem(s *request.Shaping, text string) {
	if len(s.Transcript) > 0 && s.Transcript[0].Role == request.RoleSystem {
		m := &s.Transcript[0]
		parts := slices.Clone(m.Content)
		if n := len(parts); n > 0 && parts[n-1].Kind == request.PartText {
			if parts[n-1].Text != "" {
				parts[n-1].Text += "\n\n"
			}
			parts[n-1].Text += text
		} else {
			parts = append(parts, request.Part{Kind: request.PartText, Text: text})
		}
		m.Content, m.Blank = parts, false
		return
	}
	s.Transcript = slices.Insert(s.Transcript, 0, request.Message{Role: request.RoleSystem, Content: request.TextParts(text)})
}

// rewriteHistory turns calls into assistant text and runs of tool results
// into one user message each.
func rewriteHistory(msgs []request.Message, format string, log *slog.Logger) []request.Message {
	out := make([]request.Message, 0, len(msgs))
	var results *request.Message // the user message collecting a run of results
	for _, m := range msgs {
		if m.Role == request.RoleTool || m.Output != nil {
			if results == nil {
				out = append(out, request.Message{Role: request.RoleUser})
				results = &out[len(out)-1]
			}
			o := m.Output
			if o == nil { // a result a harness wrote as content
				o = &request.Output{Text: request.JoinText(m.Content, "\n")}
			}
			addResult(results, o)
			continue
		}
		results = nil
		if m.Role == request.RoleAssistant && len(m.Calls) > 0 {
			text := request.JoinText(m.Content, "")
			var other []request.Part
			for _, p := range m.Content {
				if p.Kind != request.PartText {
					other = append(other, p)
				}
			}
			for _, c := range m.Calls {
				if !json.Valid([]byte(orEmptyObject(c.Arguments))) {
					log.Debug("request.toolprompt: call arguments are not JSON; written as a string", "tool", c.Name)
				}
				if text != "" {
					text += "\n"
				}
				text += CallText(format, c)
			}
			m.Content = append(request.TextParts(text), other...)
			m.Blank, m.AsParts, m.Calls = false, false, nil
		}
		out = append(out, m)
	}
	return out
}

// addResult appends one tool result to the collecting user message: its
// text wrapped in <tool_response>, images as image parts after it, other
// media as placeholder texts inside it.
func addResult(u *request.Message, o *request.Output) {
	text, images := "", []request.Part(nil)
	if o != nil {
		if o.IsText() {
			text = o.Text
		} else {
			var texts []string
			for _, it := range o.Items {
				switch it.Type {
				case protocol.ContentInputText, protocol.ContentOutputText:
					texts = append(texts, it.Text)
				case protocol.ContentInputImage:
					images = append(images, request.Part{Kind: request.PartImage, URL: it.ImageURL, Detail: it.Detail})
				case protocol.ContentInputAudio:
					texts = append(texts, request.OmittedAudio)
				case protocol.ContentInputVideo:
					texts = append(texts, request.OmittedVideo)
				default:
					if it.EncryptedContent != "" {
						texts = append(texts, request.OmittedEncrypted)
					}
				}
			}
			text = strings.Join(texts, "\n")
		}
	}
	r := ResultText(text)
	if n := len(u.Content); n > 0 && u.Content[n-1].Kind == request.PartText {
		u.Content[n-1].Text += "\n" + r
	} else {
		if n > 0 {
			r = "\n" + r
		}
		u.Content = append(u.Content, request.Part{Kind: request.PartText, Text: r})
	}
	u.Content = append(u.Content, images...)
}

// field is one member of a JSON object, in the order written.
type field struct {
	key   string
	value json.RawMessage
}

// objectFields returns the members of a JSON object in order; anything but
// an object is an error.
func objectFields(raw json.RawMessage) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var fields []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		fields = append(fields, field{key, v})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("text after the JSON object")
	}
	return fields, nil
}

// compactOr returns raw compacted, or def when raw is empty or not JSON.
func compactOr(raw json.RawMessage, def string) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return def
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return def
	}
	return b.String()
}

func orEmptyObject(args string) string {
	if strings.TrimSpace(args) == "" {
		return "{}"
	}
	return args
}
