package sweagent

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/prompts"
)

// FenceRule says which fenced block of a reply is the action.
type FenceRule uint8

// Fence rules.
const (
	// FenceLast is SWE-agent's own rule (its thought/action parser, the
	// default): a fence is a line that starts with ``` at column 0; fences
	// nest; the action is the last top-level block that was closed, with
	// its label line (any label) left out.
	FenceLast FenceRule = iota
	// FenceFirst is the rule of the Codex fork whose swe-agent harness this
	// package reimplements (variant "fork"): the text between the first
	// ``` anywhere in the reply and the next ```, its first line dropped
	// only when it is bash, sh or shell.
	FenceFirst
)

// Variants of the harness (the model table's "variants" entry for
// "swe-agent", and `harnessflow parse --variant`).
const (
	// VariantDefault reads fences with FenceLast.
	VariantDefault = ""
	// VariantFork reads fences with FenceFirst.
	VariantFork = "fork"
)

// fenceRule returns the fence rule of a variant.
func fenceRule(variant string) (FenceRule, error) {
	switch variant {
	case VariantDefault:
		return FenceLast, nil
	case VariantFork:
		return FenceFirst, nil
	}
	return 0, fmt.Errorf("swe-agent: unknown variant %q (want %q or %q)", variant, VariantDefault, VariantFork)
}

// Forms an action can be written in, in the order Extract tries them.
const (
	FormToolInvoke  = "tool_invoke"  // <tool_invoke><name>execute_bash</name>…<code>CMD</code>…</tool_invoke>
	FormInvoke      = "invoke"       // <invoke name="bash"><parameter name="command">CMD</parameter></invoke>
	FormExecuteBash = "execute_bash" // <execute_bash>CMD</execute_bash> or with an inner <code>
	FormFence       = "fence"        // a fenced block (see FenceRule)
)

// Extract finds the shell command in one model reply. It tries, in order,
// the three pseudo-XML forms (FormToolInvoke, FormInvoke, FormExecuteBash;
// their XML entities decoded) and then the fenced blocks (rule); the first
// form that yields a command that is not blank wins. The command is
// trimmed. ok is false when no form yields one.
func Extract(text string, rule FenceRule) (cmd, form string, ok bool) {
	for _, x := range [...]struct {
		form string
		get  func(string) string
	}{
		{FormToolInvoke, func(s string) string { return decodeXML(toolInvoke(s)) }},
		{FormInvoke, func(s string) string { return decodeXML(invoke(s)) }},
		{FormExecuteBash, func(s string) string { return decodeXML(executeBash(s)) }},
		{FormFence, func(s string) string { return fence(s, rule) }},
	} {
		if cmd := strings.TrimSpace(x.get(text)); cmd != "" {
			return cmd, x.form, true
		}
	}
	return "", "", false
}

// between returns the text between the first open in s and the next close
// after it.
func between(s, open, close string) (string, bool) {
	i := strings.Index(s, open)
	if i < 0 {
		return "", false
	}
	rest := s[i+len(open):]
	j := strings.Index(rest, close)
	if j < 0 {
		return "", false
	}
	return rest[:j], true
}

// blocks calls f with the body of each open … close block of s, in order,
// until f returns true.
func blocks(s, open, close string, f func(body string) bool) {
	for {
		i := strings.Index(s, open)
		if i < 0 {
			return
		}
		s = s[i+len(open):]
		j := strings.Index(s, close)
		if j < 0 {
			return
		}
		if f(s[:j]) {
			return
		}
		s = s[j+len(close):]
	}
}

// toolInvoke: the code of the first <tool_invoke> block whose first <name>
// is exactly execute_bash and that has a <code>.
func toolInvoke(s string) string {
	var cmd string
	blocks(s, "<tool_invoke>", "</tool_invoke>", func(body string) bool {
		name, ok := between(body, "<name>", "</name>")
		if !ok || name != "execute_bash" {
			return false
		}
		code, ok := between(body, "<code>", "</code>")
		if ok {
			cmd = code
		}
		return ok
	})
	return cmd
}

var invokeNames = []string{`name="bash"`, `name='bash'`, `name="execute_bash"`, `name='execute_bash'`}

// invoke: the command of the first <invoke …> block of the bash or
// execute_bash tool that has one: its <parameter name="command"> (or
// 'command'), where a bare <parameter> later in the block wins; otherwise
// its <command> tag.
func invoke(s string) string {
	for {
		i := strings.Index(s, "<invoke")
		if i < 0 {
			return ""
		}
		s = s[i+len("<invoke"):]
		gt := strings.IndexByte(s, '>')
		if gt < 0 {
			return ""
		}
		tag, rest := s[:gt], s[gt+1:]
		end := strings.Index(rest, "</invoke>")
		if end < 0 {
			return ""
		}
		body := rest[:end]
		s = rest[end+len("</invoke>"):]
		named := false
		for _, n := range invokeNames {
			if strings.Contains(tag, n) {
				named = true
				break
			}
		}
		if !named {
			continue
		}
		if cmd, ok := invokeParameter(body); ok {
			return cmd
		}
		if cmd, ok := between(body, "<command>", "</command>"); ok {
			return cmd
		}
	}
}

func invokeParameter(body string) (string, bool) {
	for _, open := range [...]string{`<parameter name="command">`, `<parameter name='command'>`} {
		i := strings.Index(body, open)
		if i < 0 {
			continue
		}
		rest := body[i+len(open):]
		if j := strings.Index(rest, "<parameter>"); j >= 0 {
			rest = rest[j+len("<parameter>"):]
		}
		if k := strings.Index(rest, "</parameter>"); k >= 0 {
			rest = rest[:k]
		}
		return rest, true
	}
	return "", false
}

// executeBash: the first <execute_bash> block, or its inner <code>.
func executeBash(s string) string {
	body, ok := between(s, "<execute_bash>", "</execute_bash>")
	if !ok {
		return ""
	}
	if code, ok := between(body, "<code>", "</code>"); ok {
		return code
	}
	return body
}

var xmlEntities = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&quot;", `"`, "&apos;", "'")

// decodeXML decodes the entities of the pseudo-XML forms, &amp; last (so
// "&amp;lt;" becomes "&lt;").
func decodeXML(s string) string {
	if !strings.Contains(s, "&") {
		return s
	}
	return strings.ReplaceAll(xmlEntities.Replace(s), "&amp;", "&")
}

// isPySpace reports whether r is white space for Python's \s in str
// patterns (str.isspace): Unicode White_Space and the separators
// U+001C..U+001F.
func isPySpace(r rune) bool { return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f }

// fenceLine is one fence line SWE-agent's pattern
//
//	^```(\S*)\s*\n|^```\s*$   (multi-line mode, Python's \s)
//
// matches: s[start:end] is the match; label is group 1, and hasLabel says
// the first alternative matched (the group took part, possibly empty).
type fenceLine struct {
	start, end int
	label      string
	hasLabel   bool
}

// fenceLines finds the matches of SWE-agent's fence pattern in order,
// without overlap, as Python's finditer does, in one pass: at each line
// start holding ```, the label is the run of non-space runes after it; the
// first alternative matches when the white space after the label holds a
// newline (the match ends after the last one, as the greedy \s* gives
// back), the second when there is no label and the white space runs to
// the end of the text.
func fenceLines(s string) []fenceLine {
	var out []fenceLine
	for pos := 0; pos < len(s); {
		i := strings.Index(s[pos:], "```")
		if i < 0 {
			break
		}
		p := pos + i
		if p > 0 && s[p-1] != '\n' {
			// Not at a line start: go on from the next line.
			nl := strings.IndexByte(s[p:], '\n')
			if nl < 0 {
				break
			}
			pos = p + nl + 1
			continue
		}
		j := p + 3
		for j < len(s) {
			r, size := utf8.DecodeRuneInString(s[j:])
			if isPySpace(r) {
				break
			}
			j += size
		}
		k, lastNL := j, -1
		for k < len(s) {
			r, size := utf8.DecodeRuneInString(s[k:])
			if !isPySpace(r) {
				break
			}
			if r == '\n' {
				lastNL = k
			}
			k += size
		}
		switch {
		case lastNL >= 0:
			out = append(out, fenceLine{start: p, end: lastNL + 1, label: s[p+3 : j], hasLabel: true})
			pos = lastNL + 1
		case j == p+3 && k == len(s):
			out = append(out, fenceLine{start: p, end: k})
			pos = k
		default:
			pos = p + 1
		}
	}
	return out
}

// fence returns the action of the fenced blocks under rule, untrimmed.
func fence(s string, rule FenceRule) string {
	if rule == FenceFirst {
		return firstFence(s)
	}
	action, _, _ := lastFence(s)
	return action
}

// lastFence is SWE-agent's thought/action split: the fence lines are read
// in order with a stack; a fence without a label closes the innermost open
// block, any other opens one (a bare ``` at the end of the text opens
// nothing); the last block that closed at the top level is the action, and
// the thought is the text around it. ok is false when no block closed.
func lastFence(s string) (action, thought string, ok bool) {
	var stack []fenceLine
	var start, end fenceLine
	for _, m := range fenceLines(s) {
		if len(stack) > 0 && m.label == "" {
			open := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				start, end, ok = open, m, true
			}
		} else if m.hasLabel {
			stack = append(stack, m)
		}
	}
	if !ok {
		return "", "", false
	}
	return s[start.end:end.start], s[:start.start] + s[end.end:], true
}

// firstFence is the fork's rule: the text between the first ``` and the
// next one, anywhere, its first line dropped when it is bash, sh or shell.
func firstFence(s string) string {
	body, ok := between(s, "```", "```")
	if !ok {
		return ""
	}
	first, rest, found := strings.Cut(body, "\n")
	switch strings.TrimSpace(first) {
	case "bash", "sh", "shell":
		if !found {
			return ""
		}
		return rest
	}
	return body
}

// Kind is what an extracted command becomes.
type Kind uint8

// Command kinds.
const (
	// KindShell is a shell command: a local_shell_call bash -lc CMD.
	KindShell Kind = iota
	// KindEditor is a str_replace_editor command (custom tool
	// swe_agent_command).
	KindEditor
	// KindSubmit is the submit command (custom tool swe_agent_command).
	KindSubmit
)

// ToolName is the custom tool an editor or submit command is a call of.
const ToolName = "swe_agent_command"

// NoActionReason is the reason of a reply without an action (SWE-agent's
// format error).
const NoActionReason = "No action found in model response."

// Parser reads the action of a reply and says what it becomes. Its phrases
// are the prompt pack's markers of swe-agent.
type Parser struct {
	// Fence is the fence rule.
	Fence FenceRule
	// EditorPrefix starts an editor command (marker "editor-prefix":
	// "str_replace_editor ").
	EditorPrefix string
	// Submit is the submit command (marker "submit": "submit").
	Submit string
}

// NewParser returns the parser of a variant with the markers of pack.
func NewParser(pack *prompts.Pack, variant string) (*Parser, error) {
	rule, err := fenceRule(variant)
	if err != nil {
		return nil, err
	}
	p := &Parser{Fence: rule}
	if p.EditorPrefix, err = pack.Marker(harness.NameSWEAgent, "editor-prefix"); err != nil {
		return nil, err
	}
	if p.Submit, err = pack.Marker(harness.NameSWEAgent, "submit"); err != nil {
		return nil, err
	}
	return p, nil
}

// Classify says what an extracted command becomes: a command starting
// (after leading white space) with the editor prefix is an editor
// command, the submit command alone is the submit command, anything else
// is a shell command.
func (p *Parser) Classify(cmd string) Kind {
	cmd = strings.TrimLeft(cmd, " \t\r\n")
	switch {
	case strings.HasPrefix(cmd, p.EditorPrefix):
		return KindEditor
	case cmd == p.Submit:
		return KindSubmit
	}
	return KindShell
}

// Result is what `harnessflow parse --harness swe-agent` prints for one
// reply: {"action":"shell","command":…},
// {"action":"custom","tool":"swe_agent_command","input":…} or
// {"action":"format_error","reason":…}.
type Result struct {
	// Action is "shell", "custom" or "format_error".
	Action string `json:"action"`
	// Command is the shell command (shell).
	Command string `json:"command,omitempty"`
	// Tool and Input are the custom tool and its input (custom).
	Tool  string `json:"tool,omitempty"`
	Input string `json:"input,omitempty"`
	// Reason says why the reply has no action (format_error).
	Reason string `json:"reason,omitempty"`
}

// Parse reads one reply: its command (Extract), classified.
func (p *Parser) Parse(reply string) Result {
	cmd, _, ok := Extract(reply, p.Fence)
	switch {
	case !ok:
		return Result{Action: "format_error", Reason: NoActionReason}
	case p.Classify(cmd) == KindShell:
		return Result{Action: "shell", Command: cmd}
	}
	return Result{Action: "custom", Tool: ToolName, Input: cmd}
}

// Parse is the harness's text parser (`harnessflow parse`), with the
// embedded prompt pack: variant "" reads fences as SWE-agent does, "fork"
// as the fork does.
func Parse(reply, variant string) (any, error) {
	p, err := NewParser(prompts.Default(), variant)
	if err != nil {
		return nil, err
	}
	return p.Parse(reply), nil
}
