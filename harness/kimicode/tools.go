package kimicode

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/harness/internal/kimistyle"
	"github.com/harnessflow/harnessflow/harness/internal/packtools"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/prompts"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

// The tool files of the pack: Kimi Code 2.1.0's tools and the fork's.
const (
	ToolsFile     = "tools.json"
	ForkToolsFile = "fork_tools.json"
)

// Tools returns the tool list of the turn (tools.json, or fork_tools.json
// for the variant fork).
func Tools(p *prompts.Pack, fork bool) ([]request.Tool, error) {
	file := ToolsFile
	if fork {
		file = ForkToolsFile
	}
	return packtools.Load(p, harness.NameKimiCode, file)
}

// ReadLimit is how many lines a Read without n_lines returns (Kimi Code's
// cap for one call).
const ReadLimit = 1000

// unavailable are the tools that cannot run through the client, and why.
var unavailable = map[string]string{
	"Agent":           "subagents are not available through this client",
	"AgentSwarm":      "subagents are not available through this client",
	"AskUserQuestion": "the client asks no questions for the model; ask in your reply instead",
	"CreateGoal":      "goals are not kept through this client",
	"CronCreate":      "scheduled prompts are not available through this client",
	"CronDelete":      "scheduled prompts are not available through this client",
	"CronList":        "scheduled prompts are not available through this client",
	"EnterPlanMode":   "plan mode is not available through this client",
	"ExitPlanMode":    "plan mode is not available through this client",
	"FetchURL":        "fetching URLs is not available through this client; use Bash with curl if the network is allowed",
	"GetGoal":         "goals are not kept through this client",
	"ReadMediaFile":   "media files cannot be shown through this client",
	"SetGoalBudget":   "goals are not kept through this client",
	"Skill":           "skills are not run by this client; read the skill's file with Read instead",
	"TaskList":        "background tasks are not tracked through this client",
	"TaskOutput":      "background tasks are not tracked through this client",
	"TaskStop":        "background tasks are not tracked through this client",
	"TodoList":        "the to-do list is not kept through this client",
	"UpdateGoal":      "goals are not kept through this client",
	"WaitFor":         "background tasks are not tracked through this client",
}

// Table is kimi-code's bridge: Bash runs as the client's shell command
// (command, cwd, timeout in seconds); Read (1-based line_offset, negative
// from the end, n_lines, 1000 lines by default), Write (mode append or
// overwrite), Edit, Glob and Grep (glob as the file filter) run as the
// commands package harness/bridge generates; every other tool of either
// list is answered with a tool error saying it cannot run here.
func Table() bridge.Table {
	t := bridge.Table{
		bridge.ShellSpec{Tool: "Bash", Command: "command", Workdir: "cwd", Timeout: "timeout",
			TimeoutUnit: time.Second, Plain: true}.Mapping(),
		bridge.ReadSpec{Tool: "Read", Path: "path", Offset: "line_offset", Limit: "n_lines",
			DefaultLimit: ReadLimit, FromEnd: true}.Mapping(),
		bridge.WriteSpec{Tool: "Write", Path: "path", Content: "content", Mode: "mode", Append: "append"}.Mapping(),
		bridge.EditSpec{Tool: "Edit", Path: "path", Old: "old_string", New: "new_string", ReplaceAll: "replace_all"}.Mapping(),
		bridge.GlobSpec{Tool: "Glob", Pattern: "pattern", Path: "path"}.Mapping(),
		bridge.GrepSpec{Tool: "Grep", Pattern: "pattern", Path: "path", Include: "glob"}.Mapping(),
	}
	names := make([]string, 0, len(unavailable))
	for n := range unavailable {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		t = append(t, bridge.UnavailableSpec{Tool: n, Why: unavailable[n]}.Mapping())
	}
	return t
}

// isTool reports whether name is one of the tools of either list.
func isTool(name string) bool {
	if _, ok := unavailable[name]; ok {
		return true
	}
	return slices.Contains([]string{"Bash", "Read", "Write", "Edit", "Glob", "Grep"}, name)
}

// historyNode is request.history: the kimi-family flattening with Kimi
// Code's options; the client's shell calls are first shown as the Kimi
// Code calls they came from and their outputs rendered as Kimi Code
// renders tool results. The policy is made per run, so the calls it
// reversed belong to that run alone.
func historyNode(env *harness.Env, fork bool) pipeline.Node {
	table := Table()
	return pipeline.StageNode(request.NodeHistory, request.Update(func(s *request.Shaping) error {
		p := kimistyle.Policy()
		p.MapUserContent = nil // Kimi Code sends the prompt as it is
		bridged := map[string]bool{}
		p.MapCall = func(c *request.Call) {
			if reverse(table, c) {
				bridged[c.ID] = true
			}
			c.Arguments = compactArguments(c.Arguments)
		}
		base := p.MapOutput
		p.MapOutput = func(o *request.Output) {
			if bridged[o.CallID()] && render(o, fork) {
				return
			}
			base(o)
		}
		out, err := request.Flatten(s.Transcript, s.Request.Input, &p, s.ToolNames)
		if err != nil {
			return err
		}
		s.Transcript = out
		return nil
	}), pipeline.Describe("history → transcript, client shell calls shown as Kimi Code calls, outputs as Kimi Code renders them"))
}

// reverse turns a call of the client's shell tool in the history back into
// the Kimi Code call it stands for; it reports whether it did.
func reverse(table bridge.Table, c *request.Call) bool {
	switch v := c.Item.(type) {
	case *protocol.FunctionCall:
		if isTool(v.Name) {
			return false
		}
	case *protocol.LocalShellCall:
	default:
		return false
	}
	tool, args, ok := table.ReverseItem(c.Item)
	if !ok {
		return false
	}
	c.Name, c.Arguments = tool, args
	return true
}

// compactArguments removes the white space outside strings of a call's
// arguments, keeping the key order; arguments that are not JSON stay as
// they are.
func compactArguments(args string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(args)) != nil {
		return args
	}
	return b.String()
}

// The status texts of Kimi Code's tool results: sentinels the model knows
// from Kimi Code, used verbatim.
const (
	// ToolFailed leads a failed result.
	ToolFailed = "<system>ERROR: Tool execution failed.</system>"
	// CommandOK is an empty successful command's result.
	CommandOK = "Command executed successfully."
)

// render writes the output of a bridged call as Kimi Code shows a tool
// result (see the package doc); it reports false, leaving the output to
// the family's rule, when the output is not in the client's exec framing.
func render(o *request.Output, fork bool) bool {
	text := o.Text
	if !o.IsText() {
		t, _ := protocol.FunctionCallOutputPayload{Items: o.Items}.ToText()
		text = t
	}
	out, code, hasExit, ok := bridge.UnwrapOutput(text)
	if !ok {
		return false
	}
	failed := hasExit && code != 0 || o.Success != nil && !*o.Success && !hasExit
	out = strings.TrimRight(out, "\n")
	var body string
	switch {
	case fork && failed && !hasExit:
		body = kimistyle.ErrorPrefix + out + kimistyle.SystemSuffix
	case fork && failed: // the fork drops the exit code; it is kept here (docs/request-shaping.md#kimi-code)
		body = kimistyle.ErrorPrefix + "Command failed with exit code: " + strconv.Itoa(code) + "." + kimistyle.SystemSuffix
		if out != "" {
			body += "\n" + out
		}
	case fork && strings.TrimSpace(out) == "":
		body = CommandOK
	case fork:
		body = out
	case failed && !hasExit:
		body = ToolFailed + "\n" + out
	case failed:
		if out == "" {
			out = "Process exited with code " + strconv.Itoa(code)
		}
		body = ToolFailed + "\n" + out + "\nCommand failed with exit code: " + strconv.Itoa(code) + "."
	case strings.TrimSpace(out) == "":
		body = CommandOK
	default:
		body = out
	}
	if secs, ok := bridge.WallTime(text); ok && !fork {
		body = WallTimePrefix + wallSeconds(secs) + WallTimeSuffix + "\n" + body
	}
	o.Text, o.Items = body, nil
	return true
}

// WallTimePrefix and WallTimeSuffix frame the first line of a shell
// result as Kimi Code shows it to its model: "Wall time: S seconds".
const (
	WallTimePrefix = "Wall time: "
	WallTimeSuffix = " seconds"
)

// wallSeconds writes Codex's wall time with three decimals, as Kimi Code
// writes its own.
func wallSeconds(s string) string {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return strconv.FormatFloat(f, 'f', 3, 64)
}
