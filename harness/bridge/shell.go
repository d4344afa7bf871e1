package bridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/harnessflow/harnessflow/protocol"
)

// ShellKind is the shape of the shell tool a client advertised.
type ShellKind int

// The client shell kinds.
const (
	// ShellNone: the client advertised no shell tool.
	ShellNone ShellKind = iota
	// ShellExecCommand: a function taking one command line as a string
	// (Codex's exec_command {cmd}, or a shell function whose "command" is a
	// string).
	ShellExecCommand
	// ShellArgv: a function taking an argv array as "command" (the older
	// Codex shell tool).
	ShellArgv
	// ShellLocal: the built-in {"type":"local_shell"} tool.
	ShellLocal
)

// String returns the kind's name.
func (k ShellKind) String() string {
	switch k {
	case ShellNone:
		return "none"
	case ShellExecCommand:
		return "exec_command"
	case ShellArgv:
		return "argv"
	case ShellLocal:
		return "local_shell"
	}
	return "ShellKind(" + strconv.Itoa(int(k)) + ")"
}

// ClientShell is the shell tool a client advertised (see DetectShell), and
// the names of all the tools it advertised.
//
// A ClientShell written as a literal (not from DetectShell) has no schema:
// it is taken to have the usual parameters of its kind (exec_command: cmd,
// workdir, yield_time_ms; argv: command, workdir, timeout_ms) and to
// advertise only Name.
type ClientShell struct {
	Kind ShellKind
	Name string // the tool's name ("local_shell" for ShellLocal)

	props      map[string]bool // parameter names the schema has; nil: the kind's defaults
	cmdKey     string          // ShellExecCommand: "cmd" (default) or "command"
	yieldMin   int64           // the documented yield_time_ms range; 0: 250..30000
	yieldMax   int64
	advertised map[string]bool // toolKey(namespace, name) of every advertised tool
	patch      patchKind       // how the client takes apply_patch calls (patch.go)
	msTimeout  string          // a timeout parameter in milliseconds other than the kind's (shellParams)
	describe   string          // a required description parameter the bridge fills (shellParams)
}

// Default documented range of exec_command's yield_time_ms.
const (
	DefaultYieldMinMS = 250
	DefaultYieldMaxMS = 30000
)

// shellNames are the function names DetectShell takes for a shell tool
// when their schema has a "command" parameter: Codex's older tools, the
// chat clients' bash (opencode, …) and run_shell_command, and Claude
// Code's Bash.
var shellNames = []string{"shell", "shell_command", "bash", "run_shell_command", "Bash"}

// ShellNames returns the function names DetectShell takes for a shell tool
// (with a "command" parameter), after exec_command and local_shell, which
// it tries first: for the error that says a client has none.
func ShellNames() []string { return slices.Clone(shellNames) }

// shellParams are the parameters of the clients' shell tools, other than
// the command, workdir and timeout of the kinds, that a bridged call fills
// when the tool's schema has them: timeout (Claude Code's Bash, opencode's
// bash) when its description says it is in milliseconds, and a description
// of the command when the schema requires one (opencode's bash does). A
// client's tool with another such parameter is one more entry.
var shellParams = struct {
	msTimeouts []string // parameters taking the timeout in milliseconds
	describe   []string // parameters taking a short description of the command
}{msTimeouts: []string{"timeout"}, describe: []string{"description"}}

// DetectShell finds the client's shell tool among the tools of a request,
// trying in this order:
//
//  1. a function named exec_command (ShellExecCommand, key "cmd");
//  2. a {"type":"local_shell"} tool (ShellLocal);
//  3. a function named shell, shell_command, bash or run_shell_command whose
//     "command" parameter is an array (ShellArgv) or a string
//     (ShellExecCommand with key "command");
//  4. any function with a string "cmd" parameter (ShellExecCommand).
//
// Within a step the first tool in request order wins. Only top-level tools
// are candidates; tools inside namespaces are recorded as advertised but
// never used as the shell. Without a candidate the result has Kind ShellNone
// (and still knows the advertised names).
func DetectShell(tools []protocol.ToolSpec) ClientShell {
	c := detect(tools)
	c.patch = detectPatch(tools)
	c.advertised = make(map[string]bool, len(tools))
	for _, t := range tools {
		switch t.Type {
		case protocol.ToolTypeNamespace:
			for _, in := range t.Tools {
				c.advertised[toolKey(t.Name, in.ToolName())] = true
			}
		default:
			c.advertised[toolKey("", t.ToolName())] = true
		}
	}
	return c
}

// WithLoaded returns c with the tools a tool search loaded (the tools of
// the history's tool_search_output items) advertised too: the client can
// run them, so their calls pass the bridge as the client's own
// (docs/request-shaping.md#tool-search). The shell detected is not
// changed.
func (c ClientShell) WithLoaded(tools []protocol.ToolSpec) ClientShell {
	if len(tools) == 0 {
		return c
	}
	adv := make(map[string]bool, len(c.advertised)+len(tools))
	for k, v := range c.advertised {
		adv[k] = v
	}
	for _, t := range tools {
		switch t.Type {
		case protocol.ToolTypeNamespace:
			for _, in := range t.Tools {
				adv[toolKey(t.Name, in.ToolName())] = true
			}
		default:
			adv[toolKey("", t.ToolName())] = true
		}
	}
	c.advertised = adv
	return c
}

func detect(tools []protocol.ToolSpec) ClientShell {
	for _, t := range tools {
		if t.Type == protocol.ToolTypeFunction && t.Name == "exec_command" {
			return execShell(t, "cmd")
		}
	}
	for _, t := range tools {
		if t.Type == protocol.ToolTypeLocalShell {
			return ClientShell{Kind: ShellLocal, Name: protocol.ToolTypeLocalShell}
		}
	}
	for _, t := range tools {
		if t.Type != protocol.ToolTypeFunction || !slices.Contains(shellNames, t.Name) {
			continue
		}
		s := parseSchema(t.Parameters)
		switch {
		case s.is("command", "array"):
			return ClientShell{Kind: ShellArgv, Name: t.Name, props: s.props}
		case s.is("command", "string"):
			return execShell(t, "command")
		}
	}
	for _, t := range tools {
		if t.Type == protocol.ToolTypeFunction && parseSchema(t.Parameters).is("cmd", "string") {
			return execShell(t, "cmd")
		}
	}
	return ClientShell{}
}

func execShell(t protocol.ToolSpec, key string) ClientShell {
	s := parseSchema(t.Parameters)
	c := ClientShell{Kind: ShellExecCommand, Name: t.Name, props: s.props, cmdKey: key}
	c.yieldMin, c.yieldMax = yieldRange(s.desc["yield_time_ms"])
	for _, k := range shellParams.msTimeouts {
		if (s.is(k, "number") || s.is(k, "integer")) && strings.Contains(strings.ToLower(s.desc[k]), "millisecond") {
			c.msTimeout = k
			break
		}
	}
	for _, k := range shellParams.describe {
		if s.required[k] && s.is(k, "string") {
			c.describe = k
			break
		}
	}
	return c
}

// describeLine is the description a bridged command gets where the
// client's shell requires one: its first line that is not a comment, cut
// to 60 characters.
func describeLine(line string) string {
	first := ""
	for l := range strings.SplitSeq(line, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			first = l
			break
		}
	}
	if r := []rune(first); len(r) > 60 {
		first = string(r[:57]) + "..."
	}
	return "Run: " + first
}

func toolKey(namespace, name string) string { return namespace + "\x00" + name }

// Advertised reports whether the client advertised a tool of that name (in
// that namespace; "" for a top-level tool).
func (c ClientShell) Advertised(name, namespace string) bool {
	if c.advertised == nil {
		return namespace == "" && c.Kind != ShellNone && name == c.Name
	}
	return c.advertised[toolKey(namespace, name)]
}

// has reports whether the shell's schema has parameter k.
func (c ClientShell) has(k string) bool {
	if c.props != nil {
		return c.props[k]
	}
	switch c.Kind {
	case ShellExecCommand:
		return k == c.key() || k == "workdir" || k == "yield_time_ms"
	case ShellArgv:
		return k == "command" || k == "workdir" || k == "timeout_ms"
	}
	return false
}

func (c ClientShell) key() string {
	if c.cmdKey == "" {
		return "cmd"
	}
	return c.cmdKey
}

// schema is what DetectShell reads from a function's parameters.
type schema struct {
	props    map[string]bool
	types    map[string][]string // property -> its JSON types
	desc     map[string]string   // property -> description
	required map[string]bool
}

func (s schema) is(prop, typ string) bool { return slices.Contains(s.types[prop], typ) }

func parseSchema(raw json.RawMessage) schema {
	s := schema{props: map[string]bool{}, types: map[string][]string{}, desc: map[string]string{}, required: map[string]bool{}}
	var root struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if json.Unmarshal(raw, &root) != nil {
		return s
	}
	for _, k := range root.Required {
		s.required[k] = true
	}
	for name, p := range root.Properties {
		s.props[name] = true
		var prop struct {
			Type        json.RawMessage   `json:"type"`
			Description string            `json:"description"`
			AnyOf       []json.RawMessage `json:"anyOf"`
		}
		if json.Unmarshal(p, &prop) != nil {
			continue
		}
		s.desc[name] = prop.Description
		s.types[name] = appendTypes(nil, prop.Type)
		for _, alt := range prop.AnyOf {
			var a struct {
				Type json.RawMessage `json:"type"`
			}
			if json.Unmarshal(alt, &a) == nil {
				s.types[name] = appendTypes(s.types[name], a.Type)
			}
		}
	}
	return s
}

// appendTypes appends a JSON-schema "type" (a string or an array of them).
func appendTypes(dst []string, raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return append(dst, one)
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		return append(dst, many...)
	}
	return dst
}

var rangeRE = regexp.MustCompile(`range\D{0,20}?(\d+)\s*(?:-|–|to|\.\.)\s*(\d+)\s*ms`)

// yieldRange reads "effective range is 250-30000 ms" from a description;
// anything else gives the default range.
func yieldRange(desc string) (lo, hi int64) {
	if m := rangeRE.FindStringSubmatch(desc); m != nil {
		a, err1 := strconv.ParseInt(m[1], 10, 64)
		b, err2 := strconv.ParseInt(m[2], 10, 64)
		if err1 == nil && err2 == nil && a > 0 && a <= b {
			return a, b
		}
	}
	return DefaultYieldMinMS, DefaultYieldMaxMS
}

// ShellCall is one shell command for the client to run, as a harness
// synthesized it or as a Mapping built it from a native call.
type ShellCall struct {
	CallID string
	ItemID string
	Argv   []string // the command as argv; wins over Script when non-nil
	// Script is one shell command line (it may hold several lines); used
	// when Argv is nil.
	Script    string
	Workdir   string
	TimeoutMS int64 // 0 = none
	Env       map[string]string
}

// ErrNoShell is the error of ClientShell.Item for a client without a shell
// tool.
var ErrNoShell = errors.New("bridge: the client advertised no shell tool")

// Item returns sc as a call of the client's shell tool:
//
//   - ShellExecCommand: a function_call of Name with arguments
//     {"cmd": LINE, "workdir"?: ..., "yield_time_ms"?: ...}; LINE is the
//     script, or argv joined with Quote (["bash","-lc",X] and sh -c X are
//     just X). yield_time_ms is the timeout clamped to the documented range
//     (250..30000 ms), and only when the schema has it; a schema with
//     "timeout_ms" instead gets the timeout as is, and one with a
//     "timeout" in milliseconds (Claude Code's Bash, opencode's bash) that.
//     A required "description" gets the command's first line ("Run: …"). Env becomes a K=V prefix
//     of a joined argv, or an "export K=V; " prefix of a script. Without a
//     "workdir" parameter the line starts with "cd DIR || exit 1; ".
//   - ShellArgv: a function_call of Name with {"command": [ARGV],
//     "workdir"?: ..., "timeout_ms"?: ..., "env"?: ...}, each key only when
//     the schema has it; a script is run as ["bash","-lc",SCRIPT]. A
//     workdir or env the schema cannot take is written into a bash -lc
//     script (cd, export) or, for env on an argv, an "env K=V" prefix.
//   - ShellLocal: a local_shell_call with status "completed" and action
//     {command, timeout_ms, working_directory, env}.
//   - ShellNone: ErrNoShell.
//
// The item's call id is sc.CallID (required) and its id sc.ItemID. A bridge
// comment line at the start of a script stays the first line of the
// command. Arguments are compact JSON with keys in the order above, without
// HTML escaping. Env names must be shell names ([A-Za-z_][A-Za-z0-9_]*).
func (c ClientShell) Item(sc ShellCall) (protocol.ResponseItem, error) {
	if c.Kind == ShellNone {
		return nil, ErrNoShell
	}
	if sc.CallID == "" {
		return nil, errors.New("bridge: shell call has no call id")
	}
	if sc.Argv != nil && len(sc.Argv) == 0 || sc.Argv == nil && sc.Script == "" {
		return nil, errors.New("bridge: shell call has an empty command")
	}
	env, err := envAssignments(sc.Env)
	if err != nil {
		return nil, err
	}
	switch c.Kind {
	case ShellExecCommand:
		return c.execItem(sc, env), nil
	case ShellArgv:
		return c.argvItem(sc, env), nil
	case ShellLocal:
		return localItem(sc), nil
	}
	return nil, fmt.Errorf("bridge: unknown shell kind %v", c.Kind)
}

// envAssignments returns the sorted, quoted K=V words of env.
func envAssignments(env map[string]string) ([]string, error) {
	if len(env) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		if !isName(k) {
			return nil, fmt.Errorf("bridge: environment variable name %q is not a shell name", k)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k + "=" + Quote(env[k])
	}
	return out, nil
}

func isName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// text returns sc's command as a command line, split into its bridge
// comment line (if any) and the rest; simple says the rest is one joined
// argv (a simple command, where a K=V prefix applies).
func (sc ShellCall) text() (tag, body string, simple bool) {
	body = sc.Script
	if sc.Argv != nil {
		if s, ok := shellScript(sc.Argv); ok {
			body = s
		} else {
			body, simple = Join(sc.Argv), true
		}
	}
	tag, body = splitTag(body)
	return tag, body, simple
}

func cdPrefix(dir string) string { return "cd " + Quote(dir) + " || exit 1; " }

// line returns sc as one command line: its bridge comment line first, then
// env written into the command (a K=V prefix of a simple command, else an
// export), then, with cd, a change to the workdir, then the command.
func (sc ShellCall) line(env []string, cd bool) string {
	tag, body, simple := sc.text()
	if len(env) > 0 {
		if simple {
			body = strings.Join(env, " ") + " " + body
		} else {
			body = "export " + strings.Join(env, " ") + "; " + body
		}
	}
	if cd {
		body = cdPrefix(sc.Workdir) + body
	}
	return tag + body
}

func (c ClientShell) execItem(sc ShellCall, env []string) *protocol.FunctionCall {
	cd := sc.Workdir != "" && !c.has("workdir")
	var o jsonObject
	line := sc.line(env, cd)
	o.str(c.key(), line)
	if sc.Workdir != "" && !cd {
		o.str("workdir", sc.Workdir)
	}
	if sc.TimeoutMS > 0 {
		switch {
		case c.has("yield_time_ms"):
			lo, hi := c.yieldMin, c.yieldMax
			if lo == 0 && hi == 0 {
				lo, hi = DefaultYieldMinMS, DefaultYieldMaxMS
			}
			o.int("yield_time_ms", min(max(sc.TimeoutMS, lo), hi))
		case c.has("timeout_ms"):
			o.int("timeout_ms", sc.TimeoutMS)
		case c.msTimeout != "":
			o.int(c.msTimeout, sc.TimeoutMS)
		}
	}
	if c.describe != "" {
		o.str(c.describe, describeLine(sc.line(nil, false)))
	}
	return &protocol.FunctionCall{ID: sc.ItemID, Name: c.Name, CallID: sc.CallID, Arguments: o.String()}
}

func (c ClientShell) argvItem(sc ShellCall, env []string) *protocol.FunctionCall {
	cd := sc.Workdir != "" && !c.has("workdir")
	envKey := len(env) > 0 && c.has("env")
	envInCommand := len(env) > 0 && !envKey
	argv := sc.Argv
	_, isScript := shellScript(argv)
	switch {
	case argv == nil || cd || envInCommand && isScript:
		var inline []string
		if envInCommand {
			inline = env
		}
		argv = []string{"bash", "-lc", sc.line(inline, cd)}
	case envInCommand:
		pre := []string{"env"}
		for _, kv := range env {
			k, _, _ := strings.Cut(kv, "=")
			pre = append(pre, k+"="+sc.Env[k]) // argv words are not shell-quoted
		}
		argv = append(pre, argv...)
	}
	var o jsonObject
	o.strs("command", argv)
	if sc.Workdir != "" && !cd {
		o.str("workdir", sc.Workdir)
	}
	if sc.TimeoutMS > 0 && c.has("timeout_ms") {
		o.int("timeout_ms", sc.TimeoutMS)
	}
	if envKey {
		o.env("env", sc.Env)
	}
	return &protocol.FunctionCall{ID: sc.ItemID, Name: c.Name, CallID: sc.CallID, Arguments: o.String()}
}

func localItem(sc ShellCall) *protocol.LocalShellCall {
	argv := sc.Argv
	if argv == nil {
		argv = []string{"bash", "-lc", sc.Script}
	}
	a := protocol.LocalShellAction{Type: "exec", Command: slices.Clone(argv)}
	if sc.TimeoutMS > 0 {
		t := uint64(sc.TimeoutMS)
		a.TimeoutMS = &t
	}
	if sc.Workdir != "" {
		wd := sc.Workdir
		a.WorkingDirectory = &wd
	}
	if len(sc.Env) > 0 {
		a.Env = make(map[string]string, len(sc.Env))
		for k, v := range sc.Env {
			a.Env[k] = v
		}
	}
	callID := sc.CallID
	return &protocol.LocalShellCall{ID: sc.ItemID, CallID: &callID, Status: "completed", Action: a}
}

// jsonObject writes one compact JSON object, keys in call order, strings
// escaped as encoding/json does without HTML escaping.
type jsonObject struct {
	b []byte
}

func (o *jsonObject) key(k string) {
	if len(o.b) == 0 {
		o.b = append(o.b, '{')
	} else {
		o.b = append(o.b, ',')
	}
	o.b = protocol.AppendString(o.b, k)
	o.b = append(o.b, ':')
}

func (o *jsonObject) str(k, v string) {
	o.key(k)
	o.b = protocol.AppendString(o.b, v)
}

func (o *jsonObject) int(k string, v int64) {
	o.key(k)
	o.b = strconv.AppendInt(o.b, v, 10)
}

func (o *jsonObject) bool(k string, v bool) {
	o.key(k)
	o.b = strconv.AppendBool(o.b, v)
}

func (o *jsonObject) strs(k string, v []string) {
	o.key(k)
	o.b = append(o.b, '[')
	for i, s := range v {
		if i > 0 {
			o.b = append(o.b, ',')
		}
		o.b = protocol.AppendString(o.b, s)
	}
	o.b = append(o.b, ']')
}

func (o *jsonObject) env(k string, env map[string]string) {
	keys := make([]string, 0, len(env))
	for name := range env {
		keys = append(keys, name)
	}
	slices.Sort(keys)
	var in jsonObject
	for _, name := range keys {
		in.str(name, env[name])
	}
	o.key(k)
	o.b = append(o.b, in.String()...)
}

func (o *jsonObject) String() string {
	if len(o.b) == 0 {
		return "{}"
	}
	return string(o.b) + "}"
}
