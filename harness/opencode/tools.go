package opencode

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/stages/request"
)

// SchemaURL is the "$schema" of every tool's parameters.
const SchemaURL = "https://json-schema.org/draft/2020-12/schema"

// ToolNames lists opencode's tools, in the order they are sent.
var ToolNames = []string{"bash", "edit", "glob", "grep", "read", "skill", "task", "todowrite", "webfetch", "write"}

// searchTools are the tools the search agent keeps.
var searchTools = []string{"bash", "glob", "grep", "read", "webfetch"}

// taskDropped are the tools the task agent drops.
var taskDropped = []string{"task", "todowrite"}

// forkOnly are the tools only the variant fork sends (opencode 1.18 has no
// webfetch tool by default).
var forkOnly = []string{"webfetch"}

// IsTool reports whether name is one of opencode's tools.
func IsTool(name string) bool { return slices.Contains(ToolNames, name) }

// schemas are the parameter schemas of the tools, without "$schema": the
// parameter names, types and required lists are opencode's; the property
// descriptions are ours.
var schemas = map[string]string{
	"bash": `{"type":"object","properties":{` +
		`"command":{"type":"string","description":"The shell command to run"},` +
		`"timeout":{"type":"integer","exclusiveMinimum":0,"maximum":9007199254740991,"description":"Timeout in milliseconds (optional)"},` +
		`"workdir":{"type":"string","description":"Directory to run the command in; defaults to the working directory. Use it instead of cd"},` +
		`"description":{"type":"string","description":"What the command does, in five to ten words"}},` +
		`"required":["command","description"]}`,
	"edit": `{"type":"object","properties":{` +
		`"filePath":{"type":"string","description":"Absolute path of the file to change"},` +
		`"oldString":{"type":"string","description":"The exact text to replace"},` +
		`"newString":{"type":"string","description":"The text to put in its place (different from oldString)"},` +
		`"replaceAll":{"type":"boolean","description":"Replace every occurrence of oldString (default false)"}},` +
		`"required":["filePath","oldString","newString"]}`,
	"glob": `{"type":"object","properties":{` +
		`"pattern":{"type":"string","description":"Glob pattern the file paths must match"},` +
		`"path":{"type":"string","description":"Directory to search; leave it out to search the working directory"}},` +
		`"required":["pattern"]}`,
	"grep": `{"type":"object","properties":{` +
		`"pattern":{"type":"string","description":"Regular expression to look for in file contents"},` +
		`"path":{"type":"string","description":"Directory to search; defaults to the working directory"},` +
		`"include":{"type":"string","description":"Only search files whose names match this pattern, e.g. \"*.go\" or \"*.{ts,tsx}\""}},` +
		`"required":["pattern"]}`,
	"read": `{"type":"object","properties":{` +
		`"filePath":{"type":"string","description":"Absolute path of the file to read"},` +
		`"offset":{"type":"integer","minimum":0,"maximum":9007199254740991,"description":"First line to read, counting from 1"},` +
		`"limit":{"type":"integer","minimum":0,"maximum":9007199254740991,"description":"How many lines to read (2000 when left out)"}},` +
		`"required":["filePath"]}`,
	"skill": `{"type":"object","properties":{` +
		`"name":{"type":"string","description":"Name of a skill listed in available_skills"}},` +
		`"required":["name"]}`,
	"task": `{"type":"object","properties":{` +
		`"description":{"type":"string","description":"The task in three to five words"},` +
		`"prompt":{"type":"string","description":"What the agent is to do"},` +
		`"subagent_type":{"type":"string","description":"Which kind of agent does the task"},` +
		`"task_id":{"type":"string","description":"Set only to continue an earlier task: its task_id"},` +
		`"command":{"type":"string","description":"The command that started the task"}},` +
		`"required":["description","prompt","subagent_type"]}`,
	"todowrite": `{"type":"object","properties":{` +
		`"todos":{"type":"array","items":{"type":"object","properties":{` +
		`"content":{"type":"string","description":"The task, briefly"},` +
		`"status":{"type":"string","description":"pending, in_progress, completed or cancelled"},` +
		`"priority":{"type":"string","description":"high, medium or low"}},` +
		`"required":["content","status","priority"]},"description":"The whole todo list as it is now"}},` +
		`"required":["todos"]}`,
	"webfetch": `{"type":"object","properties":{` +
		`"url":{"type":"string","description":"Address to fetch"},` +
		`"format":{"anyOf":[{"type":"string","enum":["text","markdown","html"],"default":"markdown","description":"Format of the returned content (markdown when left out)"},{"type":"null"}]},` +
		`"timeout":{"type":"number","description":"Timeout in seconds, at most 120 (optional)"}},` +
		`"required":["url"]}`,
	"write": `{"type":"object","properties":{` +
		`"content":{"type":"string","description":"The file's new content"},` +
		`"filePath":{"type":"string","description":"Absolute path of the file to write"}},` +
		`"required":["content","filePath"]}`,
}

// todaySchemas are the schemas where opencode 1.18 differs from the fork:
// bash takes no description and its timeout also has a minimum.
var todaySchemas = map[string]string{
	"bash": `{"type":"object","properties":{` +
		`"command":{"type":"string","description":"The shell command to run"},` +
		`"timeout":{"minimum":-9007199254740991,"exclusiveMinimum":0,"type":"integer","maximum":9007199254740991,"description":"Timeout in milliseconds (optional)"},` +
		`"workdir":{"type":"string","description":"Directory to run the command in; defaults to the working directory. Use it instead of cd"}},` +
		`"required":["command"]}`,
}

// ToolData is what the tool_*.tmpl descriptions are rendered with.
type ToolData struct {
	// OS is the client's operating system ("linux", "darwin", …).
	OS string
	// Shell is the client's shell ("bash" when it did not say).
	Shell string
}

// Tools returns the tool set of the agent: names and schemas as opencode
// 1.18 has them (the fork's — with webfetch, and bash's description — in
// the variant fork), each schema with "$schema", descriptions from
// tool_NAME.tmpl.
func Tools(env *harness.Env, agent Agent) ([]request.Tool, error) {
	data := ToolData{OS: strings.ToLower(env.Workspace.OS), Shell: env.Workspace.Shell}
	if data.OS == "" {
		data.OS = "linux"
	}
	if data.Shell == "" {
		data.Shell = "bash"
	}
	var out []request.Tool
	forked := fork(env)
	for _, name := range ToolNames {
		switch {
		case !forked && slices.Contains(forkOnly, name):
			continue
		case agent == AgentSearch && !slices.Contains(searchTools, name):
			continue
		case agent == AgentTask && slices.Contains(taskDropped, name):
			continue
		}
		desc, err := env.Prompts.Render(harness.NameOpenCode, "tool_"+name, data)
		if err != nil {
			return nil, err
		}
		schema := schemas[name]
		if t, ok := todaySchemas[name]; ok && !forked {
			schema = t
		}
		out = append(out, request.Tool{Name: name, Description: strings.TrimRight(desc, "\n"),
			Parameters: withSchema(schema)})
	}
	return out, nil
}

// withSchema puts the "$schema" key first in a schema object.
func withSchema(schema string) json.RawMessage {
	return json.RawMessage(`{"$schema":"` + SchemaURL + `",` + strings.TrimPrefix(schema, "{"))
}
