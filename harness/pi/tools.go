package pi

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/harnessflow/harnessflow/prompts"
	"github.com/harnessflow/harnessflow/stages/request"
)

// ToolNames are pi's four default tools, in the order pi sends them.
var ToolNames = []string{"read", "bash", "edit", "write"}

// Schemas are the parameter schemas of pi's tools: names, types, required
// lists, key order and additionalProperties as pi 0.73.1 sends them
// (captured), the property descriptions in our words. grep and find are
// pi's optional tools (its --tools flag); they are bridged, not sent.
var Schemas = map[string]string{
	"read": `{"type":"object","required":["path"],"properties":{` +
		`"path":{"type":"string","description":"File to read, relative to the working directory or absolute"},` +
		`"offset":{"type":"number","description":"First line to show, counting from 1"},` +
		`"limit":{"type":"number","description":"How many lines to show at most"}}}`,
	"bash": `{"type":"object","required":["command"],"properties":{` +
		`"command":{"type":"string","description":"The bash command line to run"},` +
		`"timeout":{"type":"number","description":"Seconds after which the command is stopped (optional; none by default)"}}}`,
	"edit": `{"type":"object","required":["path","edits"],"properties":{` +
		`"path":{"type":"string","description":"File to change, relative to the working directory or absolute"},` +
		`"edits":{"type":"array","items":{"type":"object","required":["oldText","newText"],"properties":{` +
		`"oldText":{"type":"string","description":"The exact text to replace; it occurs once in the file as it is now and overlaps no other oldText of this call"},` +
		`"newText":{"type":"string","description":"The text that takes its place"}},"additionalProperties":false},` +
		`"description":"The replacements, each located in the file as it was before this call; merge changes that touch the same lines"}},` +
		`"additionalProperties":false}`,
	"write": `{"type":"object","required":["path","content"],"properties":{` +
		`"path":{"type":"string","description":"File to write, relative to the working directory or absolute"},` +
		`"content":{"type":"string","description":"The file's whole new content"}}}`,
}

// Tool returns one tool of harness h's pack: its description from
// tool_NAME.tmpl (trailing newlines trimmed), its schema and strict:false,
// as pi sends every tool.
func Tool(pack *prompts.Pack, h, name, schema string) (request.Tool, error) {
	desc, err := pack.Render(h, "tool_"+name, nil)
	if err != nil {
		return request.Tool{}, fmt.Errorf("tool %s: %w", name, err)
	}
	if !json.Valid([]byte(schema)) {
		return request.Tool{}, fmt.Errorf("tool %s: schema is not JSON", name)
	}
	f := false
	return request.Tool{Name: name, Description: strings.TrimRight(desc, "\n"), Parameters: json.RawMessage(schema), Strict: &f}, nil
}

// Tools returns pi's four tools (descriptions from harness h's pack).
func Tools(pack *prompts.Pack, h string) ([]request.Tool, error) {
	out := make([]request.Tool, 0, len(ToolNames))
	for _, n := range ToolNames {
		t, err := Tool(pack, h, n, Schemas[n])
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}
