package bridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/harnessflow/harnessflow/internal/jsonx"
	"github.com/harnessflow/harnessflow/protocol"
)

// Mapping says how one harness-native tool reaches the client.
type Mapping struct {
	Tool string // native tool name the model calls, e.g. "bash", "read", "Bash"
	// Shell builds the shell call from the native call's JSON arguments.
	// CallID and ItemID are filled in by the caller.
	Shell func(args json.RawMessage) (ShellCall, error)
	// Plain marks the native shell tool: its commands go to the client as
	// they are, and a client shell call without a bridge comment reverses to
	// it. Every other mapping's command gets the comment (see Build). At
	// most one mapping of a table is Plain.
	Plain bool
	// FromCommand builds the native arguments of a plain command for
	// Reverse; nil gives {"command":CMD}, with the workdir as a leading
	// "cd DIR && ".
	FromCommand func(cmd string, workdir string) (args string)
	// Patch, when set, says the call as an apply_patch patch (see
	// WritePatch): a client that advertised apply_patch gets the call as
	// an apply_patch call instead of a shell command when Patch returns ok.
	Patch func(args json.RawMessage) (patch string, ok bool)
	// FromPatch, when set, reads a client apply_patch call of the history
	// back into the native arguments (see WriteFromPatch); ok false means
	// the patch is not one this mapping makes.
	FromPatch func(patch string) (args string, ok bool)
}

// Table is a harness's bridge: one Mapping per native tool.
type Table []Mapping

// Lookup returns the mapping of a native tool.
func (t Table) Lookup(tool string) (Mapping, bool) {
	for _, m := range t {
		if m.Tool == tool {
			return m, true
		}
	}
	return Mapping{}, false
}

// Validate reports a mapping without a tool name or Shell, a tool name with
// white space, a tool mapped twice and more than one Plain mapping.
func (t Table) Validate() error {
	plain := ""
	for i, m := range t {
		switch {
		case m.Tool == "":
			return fmt.Errorf("bridge: mapping %d has no tool name", i)
		case strings.ContainsAny(m.Tool, " \t\r\n"):
			return fmt.Errorf("bridge: tool name %q has white space", m.Tool)
		case m.Shell == nil:
			return fmt.Errorf("bridge: mapping of %q has no Shell", m.Tool)
		case slices.ContainsFunc(t[:i], func(o Mapping) bool { return o.Tool == m.Tool }):
			return fmt.Errorf("bridge: tool %q is mapped twice", m.Tool)
		case m.Plain && plain != "":
			return fmt.Errorf("bridge: %q and %q are both Plain", plain, m.Tool)
		}
		if m.Plain {
			plain = m.Tool
		}
	}
	return nil
}

// TagPrefix starts the comment line that marks a bridged command:
// "# harnessflow-bridge TOOL ARGS\n", ARGS being the compact JSON of the
// native call's arguments.
const TagPrefix = "# harnessflow-bridge "

// Build returns the shell call of a native call with these arguments: what
// Shell builds and, unless the mapping is Plain, with the bridge comment
// line before the command (an argv becomes a script, joined with Join). The
// comment holds the native arguments, so the command is at least as long as
// they are, twice the content for a write.
func (m Mapping) Build(args json.RawMessage) (ShellCall, error) {
	if m.Shell == nil {
		return ShellCall{}, fmt.Errorf("bridge: mapping of %q has no Shell", m.Tool)
	}
	sc, err := m.Shell(args)
	if err != nil {
		return ShellCall{}, fmt.Errorf("bridge: %s: %w", m.Tool, err)
	}
	if m.Plain {
		return sc, nil
	}
	tag, err := Tag(m.Tool, args)
	if err != nil {
		return ShellCall{}, err
	}
	body := sc.Script
	if sc.Argv != nil {
		if s, ok := shellScript(sc.Argv); ok {
			body = s
		} else {
			body = Join(sc.Argv)
		}
	}
	if _, rest := splitTag(body); rest != body {
		body = rest // never two comment lines
	}
	sc.Argv, sc.Script = nil, tag+body
	return sc, nil
}

// Tag returns the bridge comment line for a native call (with its newline).
// args must be JSON (empty means {}); it is compacted, never HTML-escaped.
func Tag(tool string, args json.RawMessage) (string, error) {
	if tool == "" || strings.ContainsAny(tool, " \t\r\n") {
		return "", fmt.Errorf("bridge: tool name %q cannot be tagged", tool)
	}
	var buf bytes.Buffer
	if len(bytes.TrimSpace(args)) == 0 {
		buf.WriteString("{}")
	} else if err := json.Compact(&buf, args); err != nil {
		return "", fmt.Errorf("bridge: %s: arguments: %w", tool, err)
	}
	return TagPrefix + tool + " " + buf.String() + "\n", nil
}

// splitTag splits a command into its bridge comment line (with the
// newline) and the rest; without a well-formed comment line, tag is "".
func splitTag(cmd string) (tag, rest string) {
	if _, _, ok := parseTag(cmd); !ok {
		return "", cmd
	}
	i := strings.IndexByte(cmd, '\n')
	return cmd[:i+1], cmd[i+1:]
}

// parseTag reads the bridge comment line at the start of cmd.
func parseTag(cmd string) (tool, args string, ok bool) {
	rest, found := strings.CutPrefix(cmd, TagPrefix)
	if !found {
		return "", "", false
	}
	line, _, found := strings.Cut(rest, "\n")
	if !found {
		return "", "", false
	}
	tool, args, found = strings.Cut(line, " ")
	if !found || tool == "" || !json.Valid([]byte(args)) {
		return "", "", false
	}
	return tool, args, true
}

// clientShellNames are the client tools whose calls without a bridge
// comment Reverse takes for plain shell commands.
var clientShellNames = []string{"exec_command", "local_shell", "shell", "shell_command", "bash", "run_shell_command"}

// ClientShellNames returns the client shell tools Reverse knows
// (exec_command, local_shell, shell, shell_command, bash,
// run_shell_command), for a program that must tell a client's shell tool
// from its other tools the same way.
func ClientShellNames() []string { return slices.Clone(clientShellNames) }

// Reverse turns a client shell call back into the native call the model
// made, for showing the model its own history. clientArgs are the call's
// JSON arguments: {"cmd": LINE} or {"command": LINE or [ARGV]} with an
// optional "workdir" or "working_directory" (a local_shell_call's action
// has that shape). An argv that is bash -lc SCRIPT stands for SCRIPT, any
// other is joined with Join.
//
// A command whose first line is a bridge comment naming a tool of the table
// reverses to that tool and the arguments in the comment, exactly as the
// model sent them (compacted), whatever the client tool was called. Any
// other command of a known client shell tool (exec_command, local_shell,
// shell, shell_command, bash, run_shell_command) reverses to the table's
// Plain mapping, with FromCommand(LINE, workdir); a yield or timeout, and
// anything this package wrote into the line (cd, env), is not taken apart.
// Otherwise ok is false.
func (t Table) Reverse(clientTool string, clientArgs string) (tool string, args string, ok bool) {
	cmd, workdir, found := commandOf(clientArgs)
	if !found {
		return "", "", false
	}
	return t.reverse(clientTool, cmd, workdir)
}

func (t Table) reverse(clientTool, cmd, workdir string) (string, string, bool) {
	if tool, args, ok := parseTag(cmd); ok {
		if _, known := t.Lookup(tool); known {
			return tool, args, true
		}
	}
	if !slices.Contains(clientShellNames, clientTool) {
		return "", "", false
	}
	for _, m := range t {
		if m.Plain {
			if m.FromCommand != nil {
				return m.Tool, m.FromCommand(cmd, workdir), true
			}
			return m.Tool, defaultFromCommand(cmd, workdir), true
		}
	}
	return "", "", false
}

// ReverseItem is Reverse for an item of the client's history: a top-level
// function_call or a local_shell_call; and a call of the client's
// apply_patch (custom, or a function taking {"input"}) that a mapping's
// FromPatch reads.
func (t Table) ReverseItem(item protocol.ResponseItem) (tool string, args string, ok bool) {
	switch v := item.(type) {
	case *protocol.CustomToolCall:
		if v.Namespace != "" || v.Name != PatchToolName {
			return "", "", false
		}
		return t.reversePatch(v.Input)
	case *protocol.FunctionCall:
		if v.Namespace != "" {
			return "", "", false
		}
		if v.Name == PatchToolName {
			if patch, ok := patchInput(v.Arguments); ok {
				return t.reversePatch(patch)
			}
		}
		return t.Reverse(v.Name, v.Arguments)
	case *protocol.LocalShellCall:
		cmd := lineOf(v.Action.Command)
		if cmd == "" {
			return "", "", false
		}
		wd := ""
		if v.Action.WorkingDirectory != nil {
			wd = *v.Action.WorkingDirectory
		}
		return t.reverse(protocol.ToolTypeLocalShell, cmd, wd)
	}
	return "", "", false
}

func defaultFromCommand(cmd, workdir string) string {
	if workdir != "" {
		cmd = "cd " + Quote(workdir) + " && " + cmd
	}
	var o jsonObject
	o.str("command", cmd)
	return o.String()
}

// lineOf returns argv as one command line (bash -lc X is X).
func lineOf(argv []string) string {
	if s, ok := shellScript(argv); ok {
		return s
	}
	return Join(argv)
}

// commandOf reads the command line and workdir of a client shell call's
// arguments.
func commandOf(args string) (cmd, workdir string, ok bool) {
	obj, err := parseArgs(json.RawMessage(args))
	if err != nil {
		return "", "", false
	}
	for _, k := range [...]string{"workdir", "working_directory"} {
		if wd, _ := obj.str(k); wd != "" {
			workdir = wd
			break
		}
	}
	if c, _ := obj.str("cmd"); c != "" {
		return c, workdir, true
	}
	raw, present := obj["command"]
	if !present {
		return "", "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil && s != "" {
		return s, workdir, true
	}
	var argv []string
	if json.Unmarshal(raw, &argv) == nil && len(argv) > 0 {
		return lineOf(argv), workdir, true
	}
	return "", "", false
}

// args is a native call's arguments, decoded one level.
type args map[string]json.RawMessage

// errNotObject is the error for arguments that are not a JSON object.
var errNotObject = errors.New("arguments are not a JSON object")

// parseArgs decodes a JSON object; empty input is {}.
func parseArgs(raw json.RawMessage) (args, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return args{}, nil
	}
	if raw[0] != '{' {
		return nil, errNotObject
	}
	// Read with jsonx rather than encoding/json: a call's arguments are
	// parsed while the stream's stack is at its deepest (the bridge runs
	// inside the response chain), and reflection would add a kilobyte and
	// a half to it (server's TestStreamStackBudget).
	raw = bytes.Clone(raw) // the values are views of it
	a := args{}
	var sc jsonx.Scanner
	ok := sc.ParseObject(raw, func(key []byte) bool {
		v, ok := sc.Raw()
		if ok {
			a[string(key)] = json.RawMessage(v)
		}
		return ok
	})
	if err := sc.Check(ok); err != nil {
		return nil, err
	}
	return a, nil
}

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// str reads a string; absent or null is "" (present false).
func (a args) str(k string) (string, error) {
	raw, ok := a[k]
	if !ok || isNull(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%s: want a string, got %s", k, abbreviate(raw))
	}
	return s, nil
}

// int reads a number (or a string holding one); absent or null is 0. A
// fraction is cut off.
func (a args) int(k string) (int64, error) {
	raw, ok := a[k]
	if !ok || isNull(raw) {
		return 0, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err == nil {
		return int64(f), nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s = strings.TrimSpace(s); s == "" {
			return 0, nil
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return int64(f), nil
		}
	}
	return 0, fmt.Errorf("%s: want a number, got %s", k, abbreviate(raw))
}

// bool reads a boolean (or "true"/"false"); absent or null is false.
func (a args) bool(k string) (bool, error) {
	raw, ok := a[k]
	if !ok || isNull(raw) {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err == nil {
		return b, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if v, err := strconv.ParseBool(strings.TrimSpace(s)); err == nil {
			return v, nil
		}
	}
	return false, fmt.Errorf("%s: want a boolean, got %s", k, abbreviate(raw))
}

func abbreviate(raw json.RawMessage) string {
	const n = 40
	if len(raw) > n {
		return string(raw[:n]) + "…"
	}
	return string(raw)
}
