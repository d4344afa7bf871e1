package opencode

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/wire/chat"
)

// OutputData is what output.tmpl is rendered with: a client shell output
// taken out of Codex's framing.
type OutputData struct {
	// Output is what the command printed.
	Output string
	// Failed says the command exited with a code other than 0.
	Failed bool
	// ExitCode is the exit code (when Failed).
	ExitCode int
}

// history flattens one turn's history for an agent.
type history struct {
	env        *harness.Env
	agent      Agent
	table      bridge.Table
	noTruncate string
}

func newHistory(env *harness.Env, agent Agent) (*history, error) {
	marker, err := env.Prompts.Marker(harness.NameOpenCode, MarkerNoTruncate)
	if err != nil {
		return nil, err
	}
	h := &history{env: env, agent: agent, table: Table(), noTruncate: marker}
	// Render once now, so that a broken template fails the plan, not a
	// later output silently.
	if _, err := h.renderOutput(OutputData{Output: "x", Failed: true, ExitCode: 1}); err != nil {
		return nil, err
	}
	return h, nil
}

// flatten is the request.history stage of opencode: the policy is made per
// run, so the calls it reversed (whose outputs it unwraps) belong to that
// run alone.
func (h *history) flatten(s *request.Shaping) error {
	p := h.Policy()
	out, err := request.Flatten(s.Transcript, s.Request.Input, &p, s.ToolNames)
	if err != nil {
		return err
	}
	s.Transcript = out
	return nil
}

// Policy returns opencode's flatten policy for one run (see the package
// doc).
func (h *history) Policy() request.FlattenPolicy {
	bridged := map[string]bool{}
	p := request.FlattenPolicy{
		Text:                  request.TextMerge,
		TextReplace:           true,
		Unanswered:            request.UnansweredKeep,
		Developer:             request.DeveloperAsUser,
		SkipContextual:        true,
		SkipEmpty:             true,
		ContentText:           true,
		DiscardUnanswered:     true,
		DiscardText:           false, // keep earlier answers (see the package doc)
		DropOrphans:           true,
		BlankCallContent:      true,
		DropReasoning:         true,
		DropTrailingReasoning: true,
		CallName:              func(_, name string) string { return name },
		LocalShellName:        "bash",
		LocalShellArguments:   bashArguments,
		MapCall: func(c *request.Call) {
			if h.reverse(c) {
				bridged[c.ID] = true
			}
			c.Arguments = Reserialize(c.Name, c.Arguments)
		},
		MapOutput: func(o *request.Output) { h.output(o, bridged[o.CallID()]) },
	}
	if h.agent == AgentMain {
		p.MapUserContent = QuoteUserContent
	}
	return p
}

// reverse turns a call of the client's shell tool back into the opencode
// call it stands for; it reports whether it did.
func (h *history) reverse(c *request.Call) bool {
	switch v := c.Item.(type) {
	case *protocol.FunctionCall:
		if IsTool(v.Name) {
			return false // already opencode's own call
		}
	case *protocol.LocalShellCall:
	default:
		return false
	}
	tool, args, ok := h.table.ReverseItem(c.Item)
	if !ok {
		return false
	}
	c.Name, c.Arguments = tool, args
	return true
}

// output rewrites a tool output: content items become their text, the
// no-truncate marker is removed, and the output of a reversed client shell
// call is taken out of Codex's framing.
func (h *history) output(o *request.Output, bridged bool) {
	if !o.IsText() {
		text, _ := protocol.FunctionCallOutputPayload{Items: o.Items}.ToText()
		o.Text, o.Items = text, nil
	}
	o.Text = strings.TrimPrefix(o.Text, h.noTruncate)
	if !bridged {
		return
	}
	out, code, hasExit, ok := bridge.UnwrapOutput(o.Text)
	if !ok {
		return
	}
	d := OutputData{Output: strings.TrimRight(out, "\n"), Failed: hasExit && code != 0, ExitCode: code}
	if text, err := h.renderOutput(d); err == nil {
		o.Text = text
	} else {
		o.Text = out
	}
}

func (h *history) renderOutput(d OutputData) (string, error) {
	text, err := h.env.Prompts.Render(harness.NameOpenCode, "output", d)
	return strings.TrimRight(text, "\n"), err
}

// bashArguments renders a local_shell_call (one the bridge table cannot
// reverse) as a bash call: {"command":[…],"timeout":ms|null}.
func bashArguments(a *protocol.LocalShellAction) string {
	return request.ShellCallArguments(a, request.ShellTimeoutMillis)
}

// QuoteUserContent is the main agent's user content: the message's text as
// a JSON string, quotes included, with the escapes \\n and \n turned back
// into newlines. (The fork also special-cases a few strings of its own
// test fixtures; those rules are left out.)
func QuoteUserContent(parts []request.Part) []request.Part {
	return request.TextParts(QuoteText(request.JoinText(parts, "")))
}

// QuoteText JSON-quotes a user text the opencode way (see
// QuoteUserContent).
func QuoteText(text string) string {
	q := string(chat.AppendString(nil, text))
	q = strings.ReplaceAll(q, `\\n`, "\n")
	return strings.ReplaceAll(q, `\n`, "\n")
}

// Reserialize writes a call's arguments the way opencode does, per tool:
//
//   - todowrite: {"todos":[…]} with each todo's content, status and
//     priority (strings, "" when missing) in that order, or priority,
//     content, status when every todo is completed;
//   - write: filePath, content; edit: filePath, oldString, newString
//     (replaceAll is dropped); each only when all are strings;
//   - bash: command (a string, required), then workdir, description and
//     timeout when present, in the order they have in the original text;
//   - grep: pattern (required), path, include; glob: pattern (required),
//     path; read: filePath (required), offset, limit;
//   - task: description, subagent_type, prompt (strings, required) and
//     task_id, command when present, in their original order;
//   - anything else, or arguments that do not fit the rule of their tool:
//     the JSON compacted with its keys in their order; text that is not
//     JSON stays as it is.
//
// Values are written compacted, strings re-encoded.
func Reserialize(tool, args string) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) == nil && obj != nil {
		if s, ok := reserialize(tool, args, obj); ok {
			return s
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, []byte(args)) != nil {
		return args
	}
	return buf.String()
}

// field is one key of re-serialised arguments.
type field struct {
	key string
	raw []byte
	pos int
}

func reserialize(tool, text string, obj map[string]json.RawMessage) (string, bool) {
	str := func(k string) (field, bool) {
		raw := bytes.TrimSpace(obj[k])
		var s string
		if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
			return field{}, false
		}
		return field{key: k, raw: chat.AppendString(nil, s), pos: keyPos(text, k)}, true
	}
	val := func(k string) (field, bool) {
		raw, ok := obj[k]
		if !ok {
			return field{}, false
		}
		var buf bytes.Buffer
		if json.Compact(&buf, raw) != nil {
			return field{}, false
		}
		return field{key: k, raw: buf.Bytes(), pos: keyPos(text, k)}, true
	}
	need := func(keys ...string) ([]field, bool) {
		out := make([]field, 0, len(keys))
		for _, k := range keys {
			f, ok := str(k)
			if !ok {
				return nil, false
			}
			out = append(out, f)
		}
		return out, true
	}
	opt := func(fs []field, get func(string) (field, bool), keys ...string) []field {
		for _, k := range keys {
			if f, ok := get(k); ok {
				fs = append(fs, f)
			}
		}
		return fs
	}
	var fs []field
	byPos := false
	switch tool {
	case "todowrite":
		if s, ok := todos(obj["todos"]); ok {
			return `{"todos":` + s + `}`, true
		}
		return "", false
	case "write":
		f, ok := need("filePath", "content")
		if !ok {
			return "", false
		}
		fs = f
	case "edit":
		f, ok := need("filePath", "oldString", "newString")
		if !ok {
			return "", false
		}
		fs = f
	case "bash":
		f, ok := need("command")
		if !ok {
			return "", false
		}
		fs = opt(opt(f, str, "workdir", "description"), val, "timeout")
		byPos = true
	case "grep":
		f, ok := need("pattern")
		if !ok {
			return "", false
		}
		fs = opt(f, str, "path", "include")
	case "glob":
		f, ok := need("pattern")
		if !ok {
			return "", false
		}
		fs = opt(f, str, "path")
	case "read":
		f, ok := need("filePath")
		if !ok {
			return "", false
		}
		fs = opt(f, val, "offset", "limit")
	case "task":
		f, ok := need("description", "subagent_type", "prompt")
		if !ok {
			return "", false
		}
		fs = opt(f, str, "task_id", "command")
		byPos = true
	default:
		return "", false
	}
	if byPos {
		sortFields(fs)
	}
	b := []byte{'{'}
	for i, f := range fs {
		if i > 0 {
			b = append(b, ',')
		}
		b = chat.AppendString(b, f.key)
		b = append(b, ':')
		b = append(b, f.raw...)
	}
	return string(append(b, '}')), true
}

// keyPos is where `"key"` first appears in the original text (keys not
// found sort last).
func keyPos(text, key string) int {
	if i := strings.Index(text, `"`+key+`"`); i >= 0 {
		return i
	}
	return len(text) + 1
}

// sortFields orders fields by their position in the original text, ties
// keeping their order.
func sortFields(fs []field) {
	for i := 1; i < len(fs); i++ {
		for j := i; j > 0 && fs[j].pos < fs[j-1].pos; j-- {
			fs[j], fs[j-1] = fs[j-1], fs[j]
		}
	}
}

// todos re-serialises a todo list (see Reserialize); ok is false when it
// is not an array.
func todos(raw json.RawMessage) (string, bool) {
	var items []map[string]json.RawMessage
	if json.Unmarshal(raw, &items) != nil || items == nil {
		return "", false
	}
	get := func(it map[string]json.RawMessage, k string) []byte {
		var s string
		_ = json.Unmarshal(it[k], &s) // not a string: ""
		return chat.AppendString(nil, s)
	}
	completed := true
	for _, it := range items {
		var s string
		if json.Unmarshal(it["status"], &s) != nil || s != "completed" {
			completed = false
		}
	}
	order := []string{"content", "status", "priority"}
	if completed {
		order = []string{"priority", "content", "status"}
	}
	b := []byte{'['}
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		for j, k := range order {
			if j > 0 {
				b = append(b, ',')
			}
			b = chat.AppendString(b, k)
			b = append(b, ':')
			b = append(b, get(it, k)...)
		}
		b = append(b, '}')
	}
	return string(append(b, ']')), true
}
