package pi

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/prompts"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/wire/chat"
)

// Marker names of markers.json.
const (
	// MarkerNoTruncate is the prefix removed from every tool output.
	MarkerNoTruncate = "no_truncate"
	// MarkerNoResult answers a call the history never answered (pi's
	// synthetic tool result).
	MarkerNoResult = "no_result"
)

// OutputData is what output.tmpl is rendered with: the result of a bridged
// call taken out of the client's framing.
type OutputData struct {
	// Tool is the native tool that was called ("bash", "read", …).
	Tool string
	// Output is what the command printed.
	Output string
	// Failed says the command exited with a code other than 0.
	Failed bool
	// ExitCode is the exit code (when Failed).
	ExitCode int
	// ExitCodes says the exit code is shown (pi 0.73.1; not in the variant
	// fork, whose harness never shows it).
	ExitCodes bool
}

// History flattens the engine history the way pi (or an agent built on
// pi) sends it.
type History struct {
	// Harness names the pack templates (output.tmpl, markers.json).
	Harness string
	// Pack is the prompt pack.
	Pack *prompts.Pack
	// Table is the bridge, for the client's calls in the history.
	Table bridge.Table
	// Fork flattens as the fork's pi harness does: an assistant text no
	// call follows is dropped at the next user message, unanswered calls
	// are discarded there, the arguments of read, bash, edit and write
	// keep only their keys in a fixed order, and exit codes are not shown.
	Fork bool
	// Own reports whether a tool name is the agent's own (a call of it in
	// the history is not reversed through the bridge).
	Own func(name string) bool

	noTruncate, noResult string
}

// Init reads the markers and checks output.tmpl renders.
func (h *History) Init() error {
	var err error
	if h.noTruncate, err = h.Pack.Marker(h.Harness, MarkerNoTruncate); err != nil {
		return err
	}
	if h.noResult, err = h.Pack.Marker(h.Harness, MarkerNoResult); err != nil {
		return err
	}
	_, err = h.render(OutputData{Tool: "bash", Output: "x", Failed: true, ExitCode: 1, ExitCodes: true})
	return err
}

// Flatten is the request.history stage: the policy is made per run, so
// the calls it reversed belong to that run alone. User messages go as
// arrays of parts, as pi sends them.
func (h *History) Flatten(s *request.Shaping) error {
	p := h.Policy()
	start := len(s.Transcript)
	out, err := request.Flatten(s.Transcript, s.Request.Input, &p, s.ToolNames)
	if err != nil {
		return err
	}
	for i := start; i < len(out); i++ {
		if out[i].Role == request.RoleUser {
			out[i].AsParts = true
		}
	}
	s.Transcript = out
	return nil
}

// Policy returns the flatten policy of one run (see the package doc).
func (h *History) Policy() request.FlattenPolicy {
	bridged := map[string]string{} // call id → native tool, for reversed calls
	p := request.FlattenPolicy{
		Text:                   request.TextMerge,
		Defer:                  true,
		Unanswered:             request.UnansweredAbort,
		AbortedText:            h.noResult,
		Developer:              request.DeveloperDrop,
		SkipContextual:         true,
		SkipDeveloperFragments: true,
		SkipEmpty:              true,
		DropOrphans:            true,
		DropTrailingReasoning:  true,
		CallName:               func(_, name string) string { return name },
		LocalShellName:         "bash",
		LocalShellArguments:    bashArguments,
		MapCall: func(c *request.Call) {
			if tool, ok := h.reverse(c); ok {
				bridged[c.ID] = tool
			}
			c.Arguments = h.Reserialize(c.Name, c.Arguments)
		},
		MapOutput: func(o *request.Output) { h.output(o, bridged[o.CallID()]) },
	}
	if h.Fork {
		p.TextReplace = true
		p.Defer = false
		p.Unanswered = request.UnansweredKeep
		p.DiscardUnanswered = true
		p.DiscardText = true
		p.ContentText = true
	}
	return p
}

// reverse turns a call of the client's shell tool back into the native
// call it stands for; it returns the native tool.
func (h *History) reverse(c *request.Call) (string, bool) {
	switch v := c.Item.(type) {
	case *protocol.FunctionCall:
		if h.Own != nil && h.Own(v.Name) {
			return "", false
		}
	case *protocol.LocalShellCall:
	default:
		return "", false
	}
	tool, args, ok := h.Table.ReverseItem(c.Item)
	if !ok {
		return "", false
	}
	c.Name, c.Arguments = tool, args
	return tool, true
}

// output rewrites a tool output: content items become their texts joined
// by newlines (images dropped), the no-truncate marker is removed, and the
// output of a reversed client call is taken out of the client's framing
// and rendered by output.tmpl.
func (h *History) output(o *request.Output, tool string) {
	if !o.IsText() {
		var texts []string
		for _, it := range o.Items {
			if it.Type == protocol.ContentInputText || it.Type == protocol.ContentOutputText {
				texts = append(texts, it.Text)
			}
		}
		o.Text, o.Items = strings.Join(texts, "\n"), nil
	}
	o.Text = strings.TrimPrefix(o.Text, h.noTruncate)
	if tool == "" {
		return
	}
	out, code, hasExit, ok := bridge.UnwrapOutput(o.Text)
	if !ok {
		return
	}
	d := OutputData{Tool: tool, Output: strings.TrimRight(out, "\n"), Failed: hasExit && code != 0, ExitCode: code, ExitCodes: !h.Fork}
	if text, err := h.render(d); err == nil {
		o.Text = text
	} else {
		o.Text = out
	}
}

func (h *History) render(d OutputData) (string, error) {
	text, err := h.Pack.Render(h.Harness, "output", d)
	return strings.TrimRight(text, "\n"), err
}

// bashArguments renders a local_shell_call the bridge cannot reverse as a
// bash call: {"command":[…],"timeout":seconds|null}.
func bashArguments(a *protocol.LocalShellAction) string {
	return request.ShellCallArguments(a, request.ShellTimeoutSeconds)
}

// forkKeys are the keys the fork's harness keeps, in its order.
var forkKeys = map[string][]string{
	"read":  {"path", "offset", "limit"},
	"bash":  {"command", "timeout"},
	"write": {"path", "content"},
}

// Reserialize writes a call's arguments as the agent sends them again:
// pi writes JSON.stringify of the parsed arguments — compact, every key
// in the model's order. The variant fork keeps only the known keys of
// read (path, offset, limit), bash (command, timeout), write (path,
// content) and edit ({"path","edits":[{"oldText","newText"}]}), in that
// order. Text that is not JSON stays as it is.
func (h *History) Reserialize(tool, args string) string {
	if h.Fork {
		if s, ok := forkArguments(tool, args); ok {
			return s
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, []byte(args)) != nil {
		return args
	}
	return buf.String()
}

func forkArguments(tool, args string) (string, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
		return "", false
	}
	pick := func(b []byte, obj map[string]json.RawMessage, keys []string) []byte {
		b = append(b, '{')
		n := 0
		for _, k := range keys {
			raw, ok := obj[k]
			if !ok {
				continue
			}
			var c bytes.Buffer
			if json.Compact(&c, raw) != nil {
				continue
			}
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = chat.AppendString(b, k)
			b = append(b, ':')
			b = append(b, c.Bytes()...)
		}
		return append(b, '}')
	}
	if keys, ok := forkKeys[tool]; ok {
		return string(pick(nil, obj, keys)), true
	}
	if tool != "edit" {
		return "", false
	}
	b := []byte{'{'}
	n := 0
	if raw, ok := obj["path"]; ok {
		var c bytes.Buffer
		if json.Compact(&c, raw) == nil {
			b = append(append(b, `"path":`...), c.Bytes()...)
			n++
		}
	}
	var edits []map[string]json.RawMessage
	if raw, ok := obj["edits"]; ok && json.Unmarshal(raw, &edits) == nil {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, `"edits":[`...)
		for i, e := range edits {
			if i > 0 {
				b = append(b, ',')
			}
			b = pick(b, e, []string{"oldText", "newText"})
		}
		b = append(b, ']')
	}
	return string(append(b, '}')), true
}
