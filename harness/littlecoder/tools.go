package littlecoder

import (
	"slices"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/pi"
	"github.com/harnessflow/harnessflow/stages/request"
)

// ToolNames are little-coder's tools in the order the fork sends them.
var ToolNames = []string{"read", "bash", "edit", "write",
	"BrowserNavigate", "BrowserClick", "BrowserType", "BrowserScroll", "BrowserExtract", "BrowserBack", "BrowserHistory",
	"EvidenceAdd", "EvidenceGet", "EvidenceList", "glob", "webfetch", "websearch",
	"ShellSession", "ShellSessionCwd", "ShellSessionReset"}

// IsTool reports whether name is one of little-coder's tools.
func IsTool(name string) bool { return slices.Contains(ToolNames, name) || pi.IsTool(name) }

// schemas are the parameter schemas of the tools beyond pi's four, as the
// fork sends them (types, required lists, key order), with our property
// descriptions.
var schemas = map[string]string{
	"BrowserNavigate": `{"type":"object","required":["url"],"properties":{"url":{"type":"string","description":"The http or https address to open"}}}`,
	"BrowserClick": `{"type":"object","properties":{"selector":{"type":"string","description":"CSS selector of the element"},` +
		`"role":{"type":"string","description":"ARIA role of the element, with name"},"name":{"type":"string","description":"Accessible name of the element, with role"}}}`,
	"BrowserType": `{"type":"object","required":["selector","text"],"properties":{"selector":{"type":"string","description":"CSS selector of the field"},` +
		`"text":{"type":"string","description":"The text to type"},"submit":{"type":"boolean","description":"Press Enter afterwards"}}}`,
	"BrowserScroll": `{"type":"object","properties":{"direction":{"type":"string","description":"up or down"},` +
		`"amount":{"type":"integer","description":"Pixels to scroll"}}}`,
	"BrowserExtract": `{"type":"object","properties":{"cursor":{"type":"string","description":"The cursor of the previous chunk, to get the next one"}}}`,
	"BrowserBack":    `{"type":"object","properties":{}}`,
	"BrowserHistory": `{"type":"object","properties":{}}`,
	"EvidenceAdd": `{"type":"object","required":["source","note","snippet"],"properties":{"source":{"type":"string","description":"Where the snippet comes from (a URL or a file)"},` +
		`"note":{"type":"string","description":"One line on why it matters"},"snippet":{"type":"string","description":"The quoted text, at most 1KB"}}}`,
	"EvidenceGet":  `{"type":"object","required":["id"],"properties":{"id":{"type":"string","description":"The evidence id"}}}`,
	"EvidenceList": `{"type":"object","properties":{}}`,
	"glob": `{"type":"object","required":["pattern"],"properties":{"pattern":{"type":"string","description":"Glob pattern the paths must match"},` +
		`"path":{"type":"string","description":"Directory to start from (the working directory when left out)"}}}`,
	"webfetch": `{"type":"object","required":["url"],"properties":{"url":{"type":"string","description":"The address to fetch"},` +
		`"prompt":{"type":"string","description":"What to look for in the page"}}}`,
	"websearch":         `{"type":"object","required":["query"],"properties":{"query":{"type":"string","description":"The search terms"}}}`,
	"ShellSession":      `{"type":"object","required":["command"],"properties":{"command":{"type":"string","description":"The command line to run"},"timeout":{"type":"integer","description":"Seconds before the command is stopped (30 when left out)"}}}`,
	"ShellSessionCwd":   `{"type":"object","properties":{}}`,
	"ShellSessionReset": `{"type":"object","properties":{}}`,
}

// Tools returns the twenty tools (descriptions from the pack).
func Tools(env *harness.Env) ([]request.Tool, error) {
	out := make([]request.Tool, 0, len(ToolNames))
	for _, n := range ToolNames {
		s, ok := schemas[n]
		if !ok {
			s = pi.Schemas[n]
		}
		t, err := pi.Tool(env.Prompts, harness.NameLittleCoder, n, s)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}
