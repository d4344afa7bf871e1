package deepseektui

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

// BriefingData is what briefing_request.tmpl is rendered with.
type BriefingData struct {
	// Workspace is the working directory, "<unknown>" when not given.
	Workspace string
	// Checklist is the last checklist of the history (renderChecklist).
	Checklist string
	// Readme is the README's name, "" for none.
	Readme string
	// Active are up to MaxActive "path (file|dir)" lines.
	Active []string
}

// compactionGraph is the request graph of Codex's compaction turn: the
// fork's handoff request, with the conversation (see the package doc).
func compactionGraph(env *harness.Env) (*pipeline.Graph, error) {
	name := harness.NameDeepSeekTUI
	system, err := env.Prompts.Render(name, "briefing_system", nil)
	if err != nil {
		return nil, fmt.Errorf("deepseek-tui: %w", err)
	}
	ws := readWorkspace(env)
	table := Table()
	d := BriefingData{Workspace: ws.cwd, Readme: ws.readme, Active: activePaths(ws, "dir"),
		Checklist: renderChecklist(lastChecklist(env.Request.Input, table))}
	if d.Workspace == "" {
		d.Workspace = "<unknown>"
	}
	brief, err := env.Prompts.Render(name, "briefing_request", d)
	if err != nil {
		return nil, fmt.Errorf("deepseek-tui: %w", err)
	}
	mark := marker(env, "compaction")
	opts := env.RequestOptions()
	return pipeline.New("request.deepseek-tui.compaction",
		request.FixedSystemNode(strings.TrimSpace(system)),
		pipeline.StageNode(request.NodeTools, request.Update(func(s *request.Shaping) error {
			s.Tools, s.ToolKinds = nil, protocol.ToolKinds{}
			return nil
		}), pipeline.Describe("no tools")),
		pipeline.StageNode(request.NodeHistory, request.Update(func(s *request.Shaping) error {
			out, err := flatten(s, table)
			if err != nil {
				return err
			}
			for i := len(out) - 1; i >= 0; i-- {
				if out[i].Role == request.RoleUser && out[i].Output == nil && strings.Contains(joinText(out[i]), mark) {
					out = append(out[:i], out[i+1:]...)
					break
				}
			}
			s.Transcript = append(out, request.Message{Role: request.RoleUser, Content: request.TextParts(strings.TrimRight(brief, "\n"))})
			return nil
		}), pipeline.Describe("the conversation, then the briefing request in place of Codex's compaction prompt")),
		request.ChatBodyNode(request.ChatBody{MaxTokens: CompactionMaxTokens, Extra: map[string]string{"temperature": CompactionTemperature}},
			"model, max_tokens 4096, temperature 0.2, no stream"),
		request.ProviderNode(opts),
		request.ChatEncodeNode(styleOf()),
	)
}

func joinText(m request.Message) string {
	var b strings.Builder
	for _, p := range m.Content {
		if p.Kind == request.PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// lastChecklist is the checklist of the history's last checklist_write or
// todo_write call (as the model made it, the client's shell call reversed).
func lastChecklist(items []protocol.ResponseItem, table interface {
	ReverseItem(protocol.ResponseItem) (string, string, bool)
}) []checkItem {
	var last []checkItem
	for _, it := range items {
		name, args := "", ""
		switch v := it.(type) {
		case *protocol.FunctionCall:
			name, args = v.Name, v.Arguments
			if !isTool(name) {
				if t, a, ok := table.ReverseItem(it); ok {
					name, args = t, a
				}
			}
		case *protocol.LocalShellCall:
			if t, a, ok := table.ReverseItem(it); ok {
				name, args = t, a
			}
		}
		if name != "checklist_write" && name != "todo_write" {
			continue
		}
		var a struct {
			Todos json.RawMessage `json:"todos"`
		}
		if json.Unmarshal([]byte(args), &a) != nil {
			continue
		}
		if cs, err := checklist(a.Todos); err == nil {
			last = cs
		}
	}
	return last
}
