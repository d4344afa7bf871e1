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
// Formats with a renderer: those whose textcall format has a prompt half
// (textcall.Format.Prompt: the tool list, the result wrapping) — hermes and
// qwen3_coder; the calls are written by the format's render half
// (textcall.Format.Render). The instruction texts are templates of the
// prompt pack (prompts/pack/toolprompt/<format>.tmpl).
package toolprompt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/prompts"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/stages/textcall"
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

// Formats returns the text tool-call formats with a prompt half
// (textcall.Format.Prompt), sorted.
func Formats() []string {
	var out []string
	for _, name := range textcall.Names() {
		if _, ok := promptOf(name); ok {
			out = append(out, name)
		}
	}
	return out
}

// Supported reports whether format has a renderer.
func Supported(format string) bool { _, ok := promptOf(format); return ok }

// promptOf returns the named format and its prompt half.
func promptOf(format string) (*textcall.Format, bool) {
	f, ok := textcall.Lookup(format)
	if !ok || f.Prompt == nil || f.Render == nil {
		return nil, false
	}
	return f, true
}

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
	f, ok := promptOf(format)
	if !ok {
		return "", fmt.Errorf("toolprompt: no renderer for tool format %q", format)
	}
	defs := make([]textcall.ToolDef, len(tools))
	for i, t := range tools {
		defs[i] = textcall.ToolDef{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
	}
	data := struct {
		Tools any
		Choice
	}{f.Prompt.Tools(defs), choice}
	text, err := pack.Render(PackName, format, data)
	if err != nil {
		return "", fmt.Errorf("toolprompt: %s instructions: %w", format, err)
	}
	return strings.TrimRight(text, "\n"), nil
}

// CallText returns one call in format's text (the format's render half,
// textcall.Format.Render), its arguments compacted when they are JSON. A
// call whose arguments are not a JSON object is written with its arguments
// as a JSON string (hermes) or as one parameter "input" (qwen3_coder).
func CallText(format string, c request.Call) string {
	f, ok := promptOf(format)
	if !ok {
		f, _ = promptOf(FormatHermes)
	}
	args := orEmptyObject(c.Arguments)
	args = textcall.CompactJSON(json.RawMessage(args), args)
	return f.Render([]textcall.Call{{Name: c.Name, Arguments: json.RawMessage(args)}})
}

// ResultText wraps one tool result's text as format shows it to the
// model (for hermes and qwen3_coder <tool_response>\n…\n</tool_response>).
func ResultText(format, text string) string {
	f, ok := promptOf(format)
	if !ok {
		f, _ = promptOf(FormatHermes)
	}
	return f.Prompt.Result(text)
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
			addResult(results, o, format)
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
// text wrapped as the format wraps results (<tool_response>), images as image parts after it, other
// media as placeholder texts inside it.
func addResult(u *request.Message, o *request.Output, format string) {
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
	r := ResultText(format, text)
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

func orEmptyObject(args string) string {
	if strings.TrimSpace(args) == "" {
		return "{}"
	}
	return args
}
