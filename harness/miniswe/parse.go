package miniswe

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// Variants of the harness (the model table's "variants" entry for
// "mini-swe-agent", and `harnessflow parse --variant`).
const (
	// VariantTool is tool-call mode, the default ("" means it too): the
	// client's function tools, and a reply must call one.
	VariantTool = "tool"
	// VariantText is text mode, for models without function calling: no
	// tools, and a reply must hold exactly one ```bash block.
	VariantText = "text"
)

// textMode reports whether a variant is text mode.
func textMode(variant string) (bool, error) {
	switch variant {
	case "", VariantTool:
		return false, nil
	case VariantText:
		return true, nil
	}
	return false, fmt.Errorf("mini-swe-agent: unknown variant %q (want %q or %q)", variant, VariantTool, VariantText)
}

// pySpace is Python's \s for str patterns (Unicode white space).
const pySpace = `\t\n\v\f\r\x1c-\x1f\x{85}\p{Z}`

// ActionPattern is the action of text mode: a ```bash fence (lowercase,
// exactly), optional white space up to a newline, then the shortest text up
// to a newline followed by ```. It matches what mini-swe-agent's regex
// (from version 1.12 on) matches: a fence without a label or with another
// label does not count, blanks after the label and CRLF line ends are
// fine, and a fence inside the command (a heredoc) cuts it short.
var ActionPattern = regexp.MustCompile("(?s)" + ActionFence + "[" + pySpace + "]*\n(.*?)\n```")

// pyStrip strips what Python's str.strip() strips.
func pyStrip(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f })
}

// Actions returns the text-mode actions of a reply, each stripped, in
// order. A reply is valid when it holds exactly one.
func Actions(reply string) []string {
	ms := ActionPattern.FindAllStringSubmatch(reply, -1)
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = pyStrip(m[1])
	}
	return out
}

// FormatErrorReason is the short reason of a text-mode reply without
// exactly one action.
func FormatErrorReason(found int) string {
	return fmt.Sprintf("Expected exactly 1 action, found %d.", found)
}

// Reasons of tool-call mode (the original's error strings).
const (
	NoToolCallReason = "No tool calls found in the response. Every response MUST include at least one tool call."
	missingCommand   = "Missing 'command' argument in bash tool call."
)

// Result is what `harnessflow parse --harness mini-swe-agent` prints:
// {"action":"shell","command":…} (with "commands" when a tool-call reply
// makes several calls) or {"action":"format_error","reason":…}.
type Result struct {
	// Action is "shell" or "format_error".
	Action string `json:"action"`
	// Command is the (first) command (shell).
	Command string `json:"command,omitempty"`
	// Commands are all the commands of a tool-call reply with several
	// calls, in order.
	Commands []string `json:"commands,omitempty"`
	// Reason says why the reply has no action (format_error).
	Reason string `json:"reason,omitempty"`
}

// Parse is the harness's text parser (`harnessflow parse`). Variant "text"
// reads a reply in text mode (exactly one ```bash block). Variant "" or
// "tool" reads it in tool-call mode, as the original's tool-call parser
// does: the reply is a JSON message {"content","tool_calls":[…]} (calls as
// {"name","arguments"} or the chat form {"function":{"name","arguments"}})
// or plain text, which has no call; every call must be of the tool bash
// with a string "command" argument.
func Parse(reply, variant string) (any, error) {
	text, err := textMode(variant)
	if err != nil {
		return nil, err
	}
	if text {
		acts := Actions(reply)
		if len(acts) != 1 {
			return Result{Action: "format_error", Reason: FormatErrorReason(len(acts))}, nil
		}
		return Result{Action: "shell", Command: acts[0]}, nil
	}
	return parseToolReply(reply), nil
}

// toolReply is a reply of tool-call mode as JSON.
type toolReply struct {
	Content   *string `json:"content"`
	ToolCalls []struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Function  *struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

func parseToolReply(reply string) Result {
	var r toolReply
	t := strings.TrimSpace(reply)
	if !strings.HasPrefix(t, "{") || json.Unmarshal([]byte(t), &r) != nil {
		return Result{Action: "format_error", Reason: NoToolCallReason}
	}
	if len(r.ToolCalls) == 0 {
		return Result{Action: "format_error", Reason: NoToolCallReason}
	}
	var cmds []string
	for _, c := range r.ToolCalls {
		name, raw := c.Name, c.Arguments
		if c.Function != nil {
			name, raw = c.Function.Name, c.Function.Arguments
		}
		if name != "bash" {
			return Result{Action: "format_error", Reason: fmt.Sprintf("Unknown tool '%s'.", name)}
		}
		var s string // arguments may be a JSON string holding the object
		if json.Unmarshal(raw, &s) == nil {
			raw = json.RawMessage(s)
		}
		var args map[string]any
		if err := json.Unmarshal(raw, &args); err != nil {
			return Result{Action: "format_error", Reason: "Error parsing tool call arguments: " + err.Error()}
		}
		cmd, ok := args["command"].(string)
		if !ok {
			return Result{Action: "format_error", Reason: missingCommand}
		}
		cmds = append(cmds, cmd)
	}
	res := Result{Action: "shell", Command: cmds[0]}
	if len(cmds) > 1 {
		res.Commands = cmds
	}
	return res
}
