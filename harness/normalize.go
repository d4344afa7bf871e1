package harness

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

// TypeAdditionalTools is the type of the input item in which Codex's
// default ("responses lite") model receives its tools.
const TypeAdditionalTools = request.TypeAdditionalTools

// HarnessRequest is the request as every emulating harness sees it
// (docs/request-shaping.md#the-engines-base-instructions). The client's
// request is not changed; a copy is returned when anything moves:
//
//   - base instructions: when the request has no instructions, the first
//     developer message before any user message — the one that carries
//     the engine's base prompt (Codex 0.171 sends it there) — becomes the
//     instructions and leaves the input, unless every text of it is a
//     contextual developer fragment (then it is an ordinary developer
//     message). Each harness then treats it as it treats base
//     instructions;
//   - additional_tools: the tools of every "additional_tools" input item
//     are appended to the request's tools and the item leaves the input —
//     it is a tool list, not conversation.
//
// A malformed additional_tools item is an error.
func HarnessRequest(req *protocol.ResponsesRequest) (*protocol.ResponsesRequest, error) {
	base := -1
	if strings.TrimSpace(req.Instructions) == "" {
		base = request.BaseMessage(req.Input)
	}
	var extra []protocol.ToolSpec
	moved := base >= 0
	for i, it := range req.Input {
		o, ok := it.(*protocol.OtherItem)
		if !ok || o == nil || o.Type != TypeAdditionalTools {
			continue
		}
		moved = true
		if len(o.Raw) == 0 {
			continue
		}
		var at struct {
			Tools []protocol.ToolSpec `json:"tools"`
		}
		if err := json.Unmarshal(o.Raw, &at); err != nil {
			return nil, fmt.Errorf("input[%d]: %s: %w", i, TypeAdditionalTools, err)
		}
		extra = append(extra, at.Tools...)
	}
	if !moved {
		return req, nil
	}
	out := *req
	out.Input = make(protocol.Items, 0, len(req.Input))
	for i, it := range req.Input {
		if i == base {
			out.Instructions = request.MessageText(it.(*protocol.Message))
			continue
		}
		if o, ok := it.(*protocol.OtherItem); ok && o != nil && o.Type == TypeAdditionalTools {
			continue
		}
		out.Input = append(out.Input, it)
	}
	if len(extra) > 0 {
		out.Tools = append(append(make([]protocol.ToolSpec, 0, len(req.Tools)+len(extra)), req.Tools...), extra...)
	}
	return &out, nil
}

// ProjectDoc is the project instructions the client read for the session:
// Codex sends the AGENTS.md files that apply to the working directory as a
// user message "# AGENTS.md instructions for DIR" with the text between
// <INSTRUCTIONS> and </INSTRUCTIONS>.
type ProjectDoc struct {
	// Dir is the directory the instructions are for ("" when the header
	// names none).
	Dir string
	// Text is the instructions, trimmed.
	Text string
}

const (
	agentsHeader = "# AGENTS.md instructions"
	agentsOpen   = "<INSTRUCTIONS>"
	agentsClose  = "</INSTRUCTIONS>"
)

// ProjectDocs returns the project instructions of the request's user
// messages, in order, the same text once; blank ones are left out.
func ProjectDocs(items []protocol.ResponseItem) []ProjectDoc {
	var out []ProjectDoc
	seen := map[string]bool{}
	for _, it := range items {
		m, ok := it.(*protocol.Message)
		if !ok || m == nil || m.Role != protocol.RoleUser {
			continue
		}
		for _, c := range m.Content {
			if c.Type != protocol.ContentInputText {
				continue
			}
			d, ok := parseProjectDoc(c.Text)
			if !ok || d.Text == "" || seen[d.Text] {
				continue
			}
			seen[d.Text] = true
			out = append(out, d)
		}
	}
	return out
}

// parseProjectDoc reads one AGENTS.md fragment (markers matched ASCII
// case-insensitively, as the contextual filters match them).
func parseProjectDoc(text string) (ProjectDoc, bool) {
	t := strings.TrimSpace(text)
	if !request.IsContextualUserText(t) || len(t) < len(agentsHeader) || !strings.EqualFold(t[:len(agentsHeader)], agentsHeader) {
		return ProjectDoc{}, false
	}
	lower := strings.ToLower(t)
	open := strings.Index(lower, strings.ToLower(agentsOpen))
	end := strings.LastIndex(lower, strings.ToLower(agentsClose))
	if open < 0 || end < open+len(agentsOpen) {
		return ProjectDoc{}, false
	}
	header := strings.TrimSpace(t[len(agentsHeader):open])
	dir := ""
	if len(header) > 4 && strings.EqualFold(header[:4], "for ") {
		dir = strings.TrimSpace(strings.SplitN(header[4:], "\n", 2)[0])
	}
	return ProjectDoc{Dir: dir, Text: strings.TrimSpace(t[open+len(agentsOpen) : end])}, true
}

// Source names the file the instructions came from: DIR/AGENTS.md, or
// AGENTS.md when the client named no directory.
func (d ProjectDoc) Source() string {
	if d.Dir == "" {
		return "AGENTS.md"
	}
	return strings.TrimSuffix(d.Dir, "/") + "/AGENTS.md"
}

// ProjectInstructions is the text of every project doc of the env, joined
// by a blank line; "" when the client sent none.
func (e *Env) ProjectInstructions() string {
	texts := make([]string, 0, len(e.ProjectDocs))
	for _, d := range e.ProjectDocs {
		texts = append(texts, d.Text)
	}
	return strings.Join(texts, "\n\n")
}
