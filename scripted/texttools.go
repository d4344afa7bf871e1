package scripted

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/harnessflow/harnessflow/stages/textcall"
	"github.com/harnessflow/harnessflow/wire/chat"
)

// Options change how a Handler answers, for testing clients against model
// servers that lack tool support (`harnessflow mock-upstream --text-tools
// FORMAT --reject-tools`).
//
// With TextToolFormat the chat answers carry their tool calls as text in
// the assistant content, the way a server without a tool parser passes on
// what an open model wrote, instead of "tool_calls" deltas (finish reason
// "stop"); the text is streamed in fragments of uneven sizes that cut its
// markers. The formats:
//
//	hermes:          <tool_call>\n{"name": N, "arguments": {…}}\n</tool_call>
//	qwen3_coder:     <tool_call>\n<function=N>\n<parameter=P>\nVALUE\n</parameter>\n…</function>\n</tool_call>
//	llama3_json:     {"name": N, "parameters": {…}}; {…} — the calls are the whole reply (Llama 3.x, no <|python_tag|>)
//	qwen3_thinking:  hermes calls in a reply that starts inside a reasoning block the prompt opened
//	                 (Qwen3 thinking, QwQ): REASONING</think>\n\nTEXT<tool_call>…; every answer starts so
//
// (a qwen3_coder VALUE is a string parameter's raw text, or the JSON of
// any other value). A request without tools may list its tools in its
// prompt instead (a <tools> block holding one JSON tool definition per
// line, {"type":"function","function":{…}} or {"name","parameters"}, or
// <function><name>N</name>… entries with <parameter><name>P</name>
// <type>T</type> children); the model then calls those, so a nameless
// scripted call finds the shell tool a prompt lists, and a user message
// holding <tool_response>…</tool_response> is a tool result.
//
// With RejectTools a chat or Messages request whose "tools" is not empty
// gets HTTP 400 "tools are not supported", as a server without tool
// support answers; calls are then answered as text (TextToolFormat, hermes
// when it is empty).
type Options struct {
	// TextToolFormat is "" (tool_calls deltas) or one of TextToolFormats.
	TextToolFormat string
	// RejectTools refuses requests that carry tools (HTTP 400).
	RejectTools bool
}

// Text tool-call formats (Options.TextToolFormat).
const (
	TextToolsHermes        = "hermes"
	TextToolsQwen3Coder    = "qwen3_coder"
	TextToolsLlama3JSON    = "llama3_json"
	TextToolsQwen3Thinking = "qwen3_thinking"
)

// TextToolFormats lists the formats Options.TextToolFormat takes.
var TextToolFormats = []string{TextToolsHermes, TextToolsQwen3Coder, TextToolsLlama3JSON, TextToolsQwen3Thinking}

// thinkingText is the reasoning a qwen3_thinking answer starts with when
// its turn gives none.
const thinkingText = "The request is clear.\nI will answer it step by step."

// ErrToolsRejected is the message of the HTTP 400 of Options.RejectTools.
const ErrToolsRejected = "tools are not supported"

// Check reports an unknown TextToolFormat.
func (o Options) Check() error {
	if o.TextToolFormat == "" || slices.Contains(TextToolFormats, o.TextToolFormat) {
		return nil
	}
	return fmt.Errorf("scripted: unknown text tool-call format %q: want %s", o.TextToolFormat, strings.Join(TextToolFormats, " or "))
}

// textTools is the format calls are written in, "" for tool_calls.
func (o Options) textTools() string {
	if o.TextToolFormat == "" && o.RejectTools {
		return TextToolsHermes
	}
	return o.TextToolFormat
}

// toolCallText writes an answer's calls in format, with the render half
// of the text tool-call format (qwen3_thinking, and a format Options.Check
// would refuse, write hermes calls).
func toolCallText(format string, calls []call) string {
	if format == TextToolsQwen3Thinking || !slices.Contains(TextToolFormats, format) {
		format = TextToolsHermes
	}
	tc := make([]textcall.Call, len(calls))
	for i, c := range calls {
		tc[i] = textcall.Call{Name: c.name, Arguments: json.RawMessage(c.args)}
	}
	text, err := textcall.RenderCalls(format, tc)
	if err != nil { // every format of TextToolFormats but qwen3_thinking is a textcall format
		text, _ = textcall.RenderCalls(TextToolsHermes, tc)
	}
	return text
}

// textAnswer rewrites an answer for a model whose server passes its text
// on as it is (Options.TextToolFormat format): the calls as text; a Llama
// 3 reply of calls holds nothing else; a qwen3_thinking answer starts
// inside the reasoning block the prompt opened, so its reasoning comes
// first in the content, closed by </think>.
func textAnswer(format string, a *answer) {
	if len(a.calls) > 0 {
		a.toolText, a.calls = toolCallText(format, a.calls), nil
		if a.finish == "tool_calls" {
			a.finish = "stop"
		}
		if format == TextToolsLlama3JSON {
			a.text = ""
		}
	}
	if format == TextToolsQwen3Thinking {
		thought := a.reasoning
		if thought == "" {
			thought = thinkingText
		}
		a.thinkText, a.reasoning = thought+"</think>\n\n", ""
	}
}

// awkwardSizes are the fragment sizes tool-call text is streamed in, in
// turn: uneven, and small enough to cut every marker.
var awkwardSizes = []int{3, 1, 6, 2, 9, 4, 5}

// awkwardFragments cuts s into pieces of awkwardSizes, on rune boundaries.
func awkwardFragments(s string) []string {
	var out []string
	for i := 0; len(s) > 0; i++ {
		cut := min(awkwardSizes[i%len(awkwardSizes)], len(s))
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}

var (
	toolsBlock    = regexp.MustCompile(`(?s)<tools>(.*?)</tools>`)
	xmlFunction   = regexp.MustCompile(`(?s)<function>\s*<name>\s*([^<\s]+)\s*</name>(.*?)</function>`)
	xmlParameter  = regexp.MustCompile(`(?s)<parameter>\s*<name>\s*([^<\s]+)\s*</name>(.*?)</parameter>`)
	xmlType       = regexp.MustCompile(`<type>\s*([^<\s]+)\s*</type>`)
	xmlRequired   = regexp.MustCompile(`(?s)<required>(.*?)</required>`)
	promptToolRef = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
)

// promptToolResult reads a tool result sent back as text, the way a
// request with tools in its prompt does: a user message holding
// <tool_response>…</tool_response> (the last one's text).
func promptToolResult(lastUser string) (string, bool) {
	i := strings.LastIndex(lastUser, "<tool_response>")
	if i < 0 {
		return "", false
	}
	out := lastUser[i+len("<tool_response>"):]
	out, _, _ = strings.Cut(out, "</tool_response>")
	return strings.TrimSpace(out), true
}

// promptTools reads the tools a prompt lists (see Options), in the
// messages before the first assistant message.
func promptTools(messages []message) []chat.Tool {
	var tools []chat.Tool
	seen := map[string]bool{}
	add := func(name string, params json.RawMessage) {
		if name == "" || seen[name] || !promptToolRef.MatchString(name) {
			return
		}
		seen[name] = true
		tools = append(tools, chat.Tool{Type: chat.ToolTypeFunction, Function: chat.FunctionDef{Name: name, Parameters: params}})
	}
	for _, m := range messages {
		if m.role == "assistant" {
			break
		}
		for _, block := range toolsBlock.FindAllStringSubmatch(m.text, -1) {
			for _, line := range strings.Split(block[1], "\n") {
				line = strings.TrimSpace(line)
				if !strings.HasPrefix(line, "{") {
					continue
				}
				var def struct {
					Name       string          `json:"name"`
					Parameters json.RawMessage `json:"parameters"`
					Function   *struct {
						Name       string          `json:"name"`
						Parameters json.RawMessage `json:"parameters"`
					} `json:"function"`
				}
				if json.Unmarshal([]byte(line), &def) != nil {
					continue
				}
				if def.Function != nil {
					add(def.Function.Name, def.Function.Parameters)
				} else {
					add(def.Name, def.Parameters)
				}
			}
			for _, fn := range xmlFunction.FindAllStringSubmatch(block[1], -1) {
				add(fn[1], xmlSchema(fn[2]))
			}
		}
	}
	return tools
}

// xmlSchema builds a JSON schema from the <parameter> entries of an XML
// tool listing.
func xmlSchema(body string) json.RawMessage {
	props := map[string]any{}
	var required []string
	for _, p := range xmlParameter.FindAllStringSubmatch(body, -1) {
		typ := "string"
		if t := xmlType.FindStringSubmatch(p[2]); t != nil {
			typ = t[1]
		}
		props[p[1]] = map[string]any{"type": typ}
	}
	if r := xmlRequired.FindStringSubmatch(body); r != nil {
		var names []string
		if json.Unmarshal([]byte(strings.TrimSpace(r[1])), &names) == nil {
			required = names
		}
	}
	schema := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		schema["required"] = required
	}
	return json.RawMessage(marshal(schema))
}
