package qwencode

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

// ToolNames lists Qwen Code 0.24.4's tools in the order it sends them
// (captured; names are facts).
var ToolNames = []string{"agent", "edit", "get_goal", "glob", "grep_search", "list_agents", "notebook_edit",
	"read_file", "run_shell_command", "skill", "tool_call", "tool_search", "update_goal", "write_file"}

// IsTool reports whether name is one of Qwen Code's tools.
func IsTool(name string) bool { return slices.Contains(ToolNames, name) }

// toolDefs are the tools: the parameter names, types, bounds and required
// lists are Qwen Code's; the descriptions are ours.
var toolDefs = map[string]struct{ desc, schema string }{
	"agent": {"Start a helper agent on a self-contained sub-task and get its report back.",
		`{"type":"object","properties":{` +
			`"description":{"type":"string","description":"The sub-task in three to five words"},` +
			`"prompt":{"type":"string","description":"What the helper agent is to do"},` +
			`"subagent_type":{"type":"string","description":"Which kind of agent does it, or \"fork\" to share this conversation"},` +
			`"fork_turns":{"oneOf":[{"type":"string","enum":["all"]},{"type":"string","pattern":"^[1-9][0-9]*$"}],"description":"With fork only: \"all\", or how many recent user turns to share"},` +
			`"fork_tools":{"type":"array","items":{"type":"string","minLength":1},"description":"With fork only: the tools the helper may use"},` +
			`"fork_profile":{"type":"string","minLength":2,"maxLength":50,"description":"With fork only: a short name for the helper"},` +
			`"run_in_background":{"type":"boolean","default":true,"description":"Run it in the background"},` +
			`"isolation":{"type":"string","enum":["worktree"],"description":"Give the helper its own git worktree"},` +
			`"working_dir":{"type":"string","description":"Directory the helper works in"}},` +
			`"required":["description","prompt"]}`},
	"edit": {"Replace exact text in a file. old_string must match the file exactly, with enough context to be unique unless replace_all is set.",
		`{"properties":{` +
			`"file_path":{"description":"Absolute path of the file to change","type":"string"},` +
			`"old_string":{"description":"The exact text to replace","type":"string"},` +
			`"new_string":{"description":"The text to put in its place","type":"string"},` +
			`"replace_all":{"type":"boolean","description":"Replace every occurrence (default false)"}},` +
			`"required":["file_path","old_string","new_string"],"type":"object"}`},
	"get_goal":    {"Show the session's current goal and its status.", ""},
	"list_agents": {"List the helper agents of this session and what they are doing.", ""},
	"glob": {"Find files whose paths match a glob pattern, newest first.",
		`{"properties":{` +
			`"pattern":{"description":"Glob pattern the paths must match","type":"string"},` +
			`"path":{"description":"Directory to search; leave it out for the working directory","type":"string"}},` +
			`"required":["pattern"],"type":"object"}`},
	"grep_search": {"Search file contents for a regular expression and list the matching lines.",
		`{"properties":{` +
			`"pattern":{"type":"string","description":"Regular expression to look for"},` +
			`"glob":{"type":"string","description":"Only search files matching this pattern, e.g. \"*.go\""},` +
			`"path":{"type":"string","description":"File or directory to search; defaults to the working directory"},` +
			`"limit":{"type":"integer","minimum":1,"description":"Show at most this many matching lines"}},` +
			`"required":["pattern"],"type":"object"}`},
	"notebook_edit": {"Change, insert or delete a cell of a Jupyter notebook.",
		`{"properties":{` +
			`"notebook_path":{"type":"string","description":"Absolute path of the notebook"},` +
			`"cell_id":{"type":"string","description":"The cell to change, or after which to insert"},` +
			`"new_source":{"type":"string","description":"The cell's new source"},` +
			`"cell_type":{"type":"string","enum":["code","markdown"],"description":"Kind of cell"},` +
			`"edit_mode":{"type":"string","enum":["replace","insert","delete"],"description":"What to do with the cell"}},` +
			`"required":["notebook_path"],"type":"object"}`},
	"read_file": {"Read a file. Large files can be read in pieces with offset and limit.",
		`{"properties":{` +
			`"file_path":{"description":"Absolute path of the file","type":"string"},` +
			`"offset":{"description":"First line to read, counting from 0 (needs limit)","type":["integer","null"]},` +
			`"limit":{"description":"How many lines to read","type":["integer","null"]},` +
			`"pages":{"description":"For a PDF: the pages to read, e.g. \"1-3\"","type":["string","null"]}},` +
			`"required":["file_path"],"type":"object"}`},
	"run_shell_command": {"Run a command with bash -c and return its output, errors and exit code.",
		`{"type":"object","properties":{` +
			`"command":{"type":"string","description":"The command line to run"},` +
			`"is_background":{"type":"boolean","description":"Run it in the background (for servers and watchers)"},` +
			`"timeout":{"type":"integer","minimum":1,"maximum":600000,"description":"Timeout in milliseconds (optional)"},` +
			`"description":{"type":"string","description":"What the command does, in one sentence"},` +
			`"directory":{"type":"string","description":"Absolute directory to run it in (optional)"}},` +
			`"required":["command"]}`},
	"skill": {"Load a skill's instructions by name.",
		`{"type":"object","properties":{` +
			`"skill":{"type":"string","description":"The skill's name"},` +
			`"args":{"type":"string","description":"Arguments for the skill (optional)"}},` +
			`"required":["skill"]}`},
	"tool_call": {"Call a deferred tool found with tool_search.",
		`{"type":"object","properties":{` +
			`"name":{"type":"string","description":"The deferred tool's exact name","minLength":1},` +
			`"arguments":{"type":"object","description":"Its arguments"}},` +
			`"required":["name","arguments"],"additionalProperties":false}`},
	"tool_search": {"Find deferred tools by keyword, or pick one with select:NAME.",
		`{"type":"object","properties":{` +
			`"query":{"type":"string","description":"Keywords, or select:NAME","minLength":1},` +
			`"max_results":{"type":"integer","description":"How many results at most","minimum":1,"maximum":20,"default":5}},` +
			`"required":["query"]}`},
	"update_goal": {"Mark the session's goal complete or blocked, with the reason.",
		`{"type":"object","properties":{` +
			`"status":{"type":"string","enum":["complete","blocked"],"description":"The goal's new status"},` +
			`"reason":{"type":"string","minLength":1,"description":"Why"},` +
			`"blockerKind":{"type":"string","enum":["authority","external","repeated","infeasible"],"description":"What blocks it"}},` +
			`"required":["status","reason"]}`},
	"write_file": {"Write a file, creating it or replacing its content.",
		`{"properties":{` +
			`"file_path":{"description":"Absolute path of the file","type":"string"},` +
			`"content":{"description":"The file's new content","type":"string"},` +
			`"record_as_artifact":{"description":"Whether the file counts as a result of the session","type":"boolean"}},` +
			`"required":["file_path","content"],"type":"object"}`},
}

const emptySchema = `{"type":"object","properties":{}}`

// Tools returns Qwen Code's tool set.
func Tools() []request.Tool {
	out := make([]request.Tool, 0, len(ToolNames))
	for _, n := range ToolNames {
		d := toolDefs[n]
		schema := d.schema
		if schema == "" {
			schema = emptySchema
		}
		out = append(out, request.Tool{Name: n, Description: d.desc, Parameters: json.RawMessage(schema)})
	}
	return out
}

// Table is qwen-code's bridge: run_shell_command runs as the client's shell
// command; read_file (offset from 0), write_file, edit, glob and
// grep_search run as the commands package harness/bridge generates. The
// other tools have no bridge: their calls reach the client under their own
// names and are counted as unbridged.
func Table() bridge.Table {
	return bridge.Table{
		bridge.ShellSpec{Tool: "run_shell_command", Command: "command", Workdir: "directory", Timeout: "timeout",
			TimeoutUnit: time.Millisecond, Plain: true}.Mapping(),
		bridge.ReadSpec{Tool: "read_file", Path: "file_path", Offset: "offset", Limit: "limit", ZeroBased: true}.Mapping(),
		bridge.WriteSpec{Tool: "write_file", Path: "file_path", Content: "content"}.Mapping(),
		bridge.EditSpec{Tool: "edit", Path: "file_path", Old: "old_string", New: "new_string", ReplaceAll: "replace_all"}.Mapping(),
		bridge.GlobSpec{Tool: "glob", Pattern: "pattern", Path: "path"}.Mapping(),
		bridge.GrepSpec{Tool: "grep_search", Pattern: "pattern", Path: "path", Include: "glob"}.Mapping(),
	}
}

// reverse turns a call of the client's shell tool in the history back into
// the Qwen Code call it stands for; it reports whether it did.
func reverse(table bridge.Table, c *request.Call) bool {
	switch v := c.Item.(type) {
	case *protocol.FunctionCall:
		if IsTool(v.Name) {
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

// OutputData is what output.tmpl is rendered with: a bridged call's
// output taken out of the client's framing.
type OutputData struct {
	// Output is the command's output, trailing newlines trimmed.
	Output string
	// ExitCode is the exit code; HasExit says the client reported one.
	ExitCode int
	HasExit  bool
}

// unwrap renders the output of a reversed call with output.tmpl.
func unwrap(env *harness.Env, o *request.Output) {
	if !o.IsText() {
		text, _ := protocol.FunctionCallOutputPayload{Items: o.Items}.ToText()
		o.Text, o.Items = text, nil
	}
	out, code, hasExit, ok := bridge.UnwrapOutput(o.Text)
	if !ok {
		return
	}
	text, err := env.Prompts.Render(harness.NameQwenCode, "output",
		OutputData{Output: strings.TrimRight(out, "\n"), ExitCode: code, HasExit: hasExit})
	if err != nil {
		o.Text = out
		return
	}
	o.Text = strings.TrimRight(text, "\n")
}
