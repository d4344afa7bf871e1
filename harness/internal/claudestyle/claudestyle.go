// Package claudestyle is what the Anthropic-family harnesses (claude-code
// and zcode) share: their native tools' definitions read from the prompt
// pack, the bridge of the native file and shell tools onto the client's
// tools, the reverse mapping that shows the model its own calls again, the
// rendering of tool results on the Messages wire, and the date reminder of
// the first user message. It lives here so that neither harness imports
// the other.
package claudestyle

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/prompts"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/wire/anthropic"
)

// The native tools the bridge maps onto the client's tools.
const (
	ToolBash      = "Bash"
	ToolRead      = "Read"
	ToolWrite     = "Write"
	ToolEdit      = "Edit"
	ToolGlob      = "Glob"
	ToolGrep      = "Grep"
	ToolTodoWrite = "TodoWrite"
)

// ReadLimit is how many lines a Read without a limit returns.
const ReadLimit = 2000

// ToolDef is one native tool of a harness, as its tools.json data file in
// the prompt pack describes it (descriptions in our wording; names and
// parameter names are the harness's own).
type ToolDef struct {
	Name string `json:"name"`
	// Description is the tool's description.
	Description string `json:"description"`
	// BareDescription is the one-line description of claude-code's Bare
	// profile; "" when the tool has none.
	BareDescription string `json:"bare_description,omitempty"`
	// InputSchema is the JSON Schema of the tool's input.
	InputSchema json.RawMessage `json:"input_schema"`
	// Strict, when set, is sent as the tool's strict flag.
	Strict *bool `json:"strict,omitempty"`
}

// LoadTools reads the tools.json data file of harness: {"tools":[ToolDef…]}.
// Every tool must have a name, a description and an object schema, and no
// name may repeat.
func LoadTools(p *prompts.Pack, harness string) ([]ToolDef, error) {
	data, err := p.Data(harness, "tools.json")
	if err != nil {
		return nil, err
	}
	var file struct {
		Tools []ToolDef `json:"tools"`
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		return nil, fmt.Errorf("%s/tools.json: %w", harness, err)
	}
	seen := map[string]bool{}
	for i, t := range file.Tools {
		var schema struct {
			Type string `json:"type"`
		}
		switch {
		case t.Name == "":
			return nil, fmt.Errorf("%s/tools.json: tool %d has no name", harness, i)
		case seen[t.Name]:
			return nil, fmt.Errorf("%s/tools.json: tool %q is defined twice", harness, t.Name)
		case t.Description == "":
			return nil, fmt.Errorf("%s/tools.json: tool %q has no description", harness, t.Name)
		case json.Unmarshal(t.InputSchema, &schema) != nil || schema.Type != "object":
			return nil, fmt.Errorf("%s/tools.json: tool %q: input_schema is not an object schema", harness, t.Name)
		}
		seen[t.Name] = true
	}
	return file.Tools, nil
}

// Find returns the definition called name.
func Find(defs []ToolDef, name string) (ToolDef, bool) {
	i := slices.IndexFunc(defs, func(d ToolDef) bool { return d.Name == name })
	if i < 0 {
		return ToolDef{}, false
	}
	return defs[i], true
}

// mappings are the bridge mappings of the native tools, keyed by name.
// Bash takes its timeout in milliseconds and has no working-directory
// argument; Read counts lines from 1 and returns at most ReadLimit of them
// by default; Write goes to the client's apply_patch when it can; Grep's
// file filter is "glob".
func mappings() map[string]bridge.Mapping {
	write := bridge.WriteSpec{Tool: ToolWrite, Path: "file_path"}.Mapping()
	write.Patch = bridge.WritePatch("file_path", "content")
	write.FromPatch = bridge.WriteFromPatch("file_path", "content")
	return map[string]bridge.Mapping{
		ToolBash:  bridge.ShellSpec{Tool: ToolBash, Workdir: bridge.NoKey, Timeout: "timeout", Plain: true}.Mapping(),
		ToolRead:  bridge.ReadSpec{Tool: ToolRead, Path: "file_path", DefaultLimit: ReadLimit}.Mapping(),
		ToolWrite: write,
		ToolEdit:  bridge.EditSpec{Tool: ToolEdit, Path: "file_path"}.Mapping(),
		ToolGlob:  bridge.GlobSpec{Tool: ToolGlob}.Mapping(),
		ToolGrep:  bridge.GrepSpec{Tool: ToolGrep, Include: "glob"}.Mapping(),
	}
}

// Table returns the bridge table of the named native tools (Bash, Read,
// Write, Edit, Glob, Grep), in that order.
func Table(names ...string) bridge.Table {
	all := mappings()
	var t bridge.Table
	for _, n := range []string{ToolBash, ToolRead, ToolWrite, ToolEdit, ToolGlob, ToolGrep} {
		if slices.Contains(names, n) {
			t = append(t, all[n])
		}
	}
	return t
}

// ReverseCall returns a flatten hook that shows the model its own calls:
// a client call the bridge made from a native call (a shell command with
// the bridge comment, an apply_patch of a whole file, or any shell command,
// which reads as a Bash call) becomes that native call again, arguments as
// the model sent them.
func ReverseCall(t bridge.Table) func(c *request.Call) {
	return func(c *request.Call) {
		if c.Item == nil {
			return
		}
		if tool, args, ok := t.ReverseItem(c.Item); ok {
			c.Name, c.Arguments = tool, args
		}
	}
}

// MessagesPolicy is the flatten policy the Anthropic-family harnesses send
// on the Messages wire: assistant texts, signed reasoning and calls merged
// into one turn; user turns deferred while calls are open; calls never
// answered aborted; contextual user messages left out; trailing reasoning
// dropped; mapCall shows each call as the model saw it.
func MessagesPolicy(mapCall func(c *request.Call)) *request.FlattenPolicy {
	return &request.FlattenPolicy{
		Defer:                 true,
		Developer:             request.DeveloperAsUser,
		SkipContextual:        true,
		DropTrailingReasoning: true,
		CallName:              func(_, name string) string { return name },
		MapCall:               mapCall,
	}
}

// DropUnreversible returns req with the custom tool calls that t cannot show
// as native calls left out of its input, with their outputs (the model
// never had those tools; a Messages server refuses a tool_use of an unknown
// shape less readily than a missing one). req itself is not changed; it is
// returned as it is when nothing is dropped.
func DropUnreversible(req *protocol.ResponsesRequest, t bridge.Table) *protocol.ResponsesRequest {
	drop := map[string]bool{}
	for _, it := range req.Input {
		if c, ok := it.(*protocol.CustomToolCall); ok && c != nil {
			if _, _, ok := t.ReverseItem(c); !ok {
				drop[c.CallID] = true
			}
		}
	}
	if len(drop) == 0 {
		return req
	}
	out := *req
	out.Input = make(protocol.Items, 0, len(req.Input))
	for _, it := range req.Input {
		switch v := it.(type) {
		case *protocol.CustomToolCall:
			if v != nil && drop[v.CallID] {
				continue
			}
		case *protocol.CustomToolCallOutput:
			if v != nil && drop[v.CallID] {
				continue
			}
		}
		out.Input = append(out.Input, it)
	}
	return &out
}

// Results is how tool results are rendered on the Messages wire.
type Results struct {
	// EmptyBash is the text of a Bash result that printed nothing.
	EmptyBash string
	// NoMatches is the text of a Grep that found nothing.
	NoMatches string
	// ErrorFalse lists the tools whose successful results carry
	// is_error:false (Bash); others carry no flag unless they failed.
	ErrorFalse []string
}

// Render renders one tool result. The client's exec framing (Codex's
// "Chunk ID … Output:" header) is taken off; the result failed when the
// client said so (success false) or the command exited with a non-zero
// status. Then:
//
//   - Bash: the output is trimmed; a failed command's output follows an
//     "Exit code N" line; an empty successful output becomes EmptyBash;
//   - Grep: exit status 1 with no output means no match, not a failure
//     (NoMatches);
//   - TodoWrite: trailing newlines are removed;
//   - a failure the client reported, a call it never answered (the
//     "aborted" result the flattener makes up), and a failed bridged file or
//     search command are wrapped as <tool_use_error>…</tool_use_error>.
//
// is_error is true for a failure, false for a success of the ErrorFalse
// tools, and absent otherwise. Results of content items are sent as blocks
// (DefaultToolResult's rendering).
func (r Results) Render(tool string, o *request.Output) request.ToolResult {
	if !o.IsText() {
		return request.DefaultToolResult(tool, o)
	}
	out, code, hasExit, framed := bridge.UnwrapOutput(o.Text)
	// An output without a history item is the flattener's answer to a call
	// the client never answered: a failure.
	reported := o.Success != nil && !*o.Success || o.Item == nil
	exitFailed := framed && hasExit && code != 0
	if tool == ToolGrep && exitFailed && code == 1 && strings.TrimSpace(out) == "" {
		exitFailed, out = false, r.NoMatches
	}
	switch tool {
	case ToolBash:
		out = strings.TrimSpace(out)
		if exitFailed {
			out = strings.TrimRight("Exit code "+strconv.Itoa(code)+"\n"+out, "\n")
		} else if out == "" && !reported {
			out = r.EmptyBash
		}
	case ToolTodoWrite:
		out = strings.TrimRight(out, "\n")
	}
	if reported || exitFailed && tool != ToolBash {
		out = "<tool_use_error>" + out + "</tool_use_error>"
	}
	res := request.ToolResult{Content: anthropic.Text(out)}
	switch {
	case reported || exitFailed:
		t := true
		res.IsError = &t
	case slices.Contains(r.ErrorFalse, tool):
		f := false
		res.IsError = &f
	}
	return res
}

// HasDateReminder reports whether a text block of the messages already
// holds both date markers.
func HasDateReminder(msgs []anthropic.Message, heading, line string) bool {
	for i := range msgs {
		for _, b := range msgs[i].Content.Blocks {
			if b.Type == anthropic.BlockText && strings.Contains(b.Text, heading) && strings.Contains(b.Text, line) {
				return true
			}
		}
		if c := msgs[i].Content; c.Kind == anthropic.ContentText && strings.Contains(c.Text, heading) && strings.Contains(c.Text, line) {
			return true
		}
	}
	return false
}

// FirstPrompt returns the index of the first user message that has a text
// block (not only tool results), or -1.
func FirstPrompt(msgs []anthropic.Message) int {
	for i := range msgs {
		if msgs[i].Role != anthropic.RoleUser {
			continue
		}
		if msgs[i].Content.Kind == anthropic.ContentText {
			return i
		}
		for _, b := range msgs[i].Content.Blocks {
			if b.Type == anthropic.BlockText {
				return i
			}
		}
	}
	return -1
}

// AddDateReminder puts reminder, a text block, before the first text block
// of the first user prompt, unless the messages already hold a date
// reminder (both markers in one text block). It reports whether it added
// one.
func AddDateReminder(msgs []anthropic.Message, reminder, heading, line string) bool {
	if HasDateReminder(msgs, heading, line) {
		return false
	}
	i := FirstPrompt(msgs)
	if i < 0 {
		return false
	}
	c := &msgs[i].Content
	if c.Kind == anthropic.ContentText {
		*c = anthropic.Blocks(anthropic.TextBlock(c.Text))
	}
	at := slices.IndexFunc(c.Blocks, func(b anthropic.Block) bool { return b.Type == anthropic.BlockText })
	c.Blocks = slices.Insert(slices.Clone(c.Blocks), at, anthropic.TextBlock(reminder))
	return true
}

// FirstUserText returns the text of the first user message of the history
// that is not one of the engine's contextual fragments, "" when there is
// none.
func FirstUserText(items []protocol.ResponseItem) string {
	for _, it := range items {
		m, ok := it.(*protocol.Message)
		if !ok || m == nil || m.Role != protocol.RoleUser || request.IsContextualUser(m) {
			continue
		}
		var parts []string
		for _, c := range m.Content {
			if c.Type == protocol.ContentInputText || c.Type == protocol.ContentOutputText {
				parts = append(parts, c.Text)
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, "\n")
		}
	}
	return ""
}

// Skills reads the skill lines of a Codex <skills_instructions> block: the
// "- name: description (file: PATH)" lines of its "### Available skills"
// section (of the whole block when it has no such heading), as
// "name: description", the file path taken out. Other lines are skipped.
func Skills(text string) []string {
	lines := strings.Split(text, "\n")
	if i := slices.IndexFunc(lines, func(l string) bool { return strings.TrimSpace(l) == "### Available skills" }); i >= 0 {
		lines = lines[i+1:]
		if j := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "#") }); j >= 0 {
			lines = lines[:j]
		}
	}
	var out []string
	for _, line := range lines {
		l, ok := strings.CutPrefix(strings.TrimSpace(line), "- ")
		if !ok || !strings.Contains(l, ": ") {
			continue
		}
		i := strings.LastIndex(l, " (file: ")
		if i < 0 || !strings.HasSuffix(l, ")") {
			continue
		}
		out = append(out, strings.TrimSpace(l[:i]))
	}
	return out
}

// StepsSince counts the assistant turns with tool calls after the last one
// that called any of the named tools (all of them when none did).
func StepsSince(msgs []anthropic.Message, names ...string) int {
	n := 0
	for i := range msgs {
		if msgs[i].Role != anthropic.RoleAssistant {
			continue
		}
		calls, named := false, false
		for _, b := range msgs[i].Content.Blocks {
			if b.Type == anthropic.BlockToolUse {
				calls = true
				named = named || slices.Contains(names, b.Name)
			}
		}
		switch {
		case named:
			n = 0
		case calls:
			n++
		}
	}
	return n
}
