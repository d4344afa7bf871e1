// Package zcode registers the "zcode" harness: the request ZCode (a coding
// agent for GLM models) sends to an Anthropic Messages server. It is served
// on the messages wire only; on the chat and responses wires the name routes
// to the native translation.
//
// The body is {"model","messages","system":[3 blocks],"tools":[14],
// "tool_choice":{"type":"auto"},"max_tokens":64000,"stream":true}, with no
// thinking, metadata or temperature. The model loses a "zai/" or "z.ai/"
// prefix. It goes to /messages (the base URL ends in the API version) with
// ZCode's headers: anthropic-version, its user agent, x-zcode-agent,
// x-zcode-app-version, x-title, accept-language and http-referer.
//
// System: three text blocks, each with an ephemeral cache mark — the
// product line, the harness section and the runtime environment (working
// directory, platform, shell and model from the client's
// <environment_context>; the git state is not known to a proxy and says
// so). All texts are ours, in prompts/pack/zcode.
//
// Tools: ZCode's fixed fourteen (Agent, AskUserQuestion, Bash, Edit,
// EnterPlanMode, ExitPlanMode, Read, Skill, TodoRead, TodoWrite, WebFetch,
// Write, SendMessage, ReadSessionContext) from prompts/pack/zcode/tools.json;
// the client's tools are not shown. Bash, Read, Write and Edit are bridged
// to the client (Bash → its shell tool, Read and Edit → generated shell
// commands, Write → apply_patch when the client has it, else a shell
// command); calls of the others reach the client under their own names.
//
// Messages, from the client's history:
//
//   - consecutive messages of one role are merged; the assistant's texts,
//     signed reasoning (thinking blocks with their signature) and calls
//     (tool_use) form one turn; tool results are user tool_result blocks,
//     first in their message and in call order; a user prompt that arrives
//     while calls are open waits for their results;
//   - the client's own calls that the bridge made are shown as the native
//     calls the model made (Read, Write, …; any other shell call as Bash);
//     custom calls that are not bridged writes are left out, with their
//     outputs; a call never answered gets an "aborted" result;
//   - contextual user messages (environment, AGENTS.md, …) are left out;
//     developer messages too, except a <skills_instructions> block, which
//     becomes a role "system" message listing the skills (file paths
//     taken out) after the next user prompt;
//   - tool results: the client's exec framing is taken off; is_error is
//     true for a failure (success false, or a non-zero exit status), false
//     for a successful Bash call, absent otherwise;
//   - a date reminder (markers "# currentDate" and "Today's date is ") goes
//     before the first user prompt unless one is there;
//   - after every ten assistant steps without a TodoWrite or TodoRead call a
//     role "system" reminder to keep the to-do list follows;
//   - cache marks: on the text blocks (not the reminders) of a last user
//     prompt, or on the result of a last message holding one tool result.
//
// Not emulated: the Explore sub-agent (its trimmed tool list and prompt:
// the client does not say which agent role a request is for), compaction
// requests, and the initial git-status snapshot.
package zcode

import (
	"fmt"
	"slices"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/internal/claudestyle"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/wire/anthropic"
)

func init() { harness.MustRegister(Spec()) }

// Spec returns the zcode harness.
func Spec() harness.Spec {
	return harness.Spec{
		Name:        harness.NameZCode,
		Description: "ZCode on an Anthropic Messages server: three system blocks, its fourteen tools, Messages history",
		Wires:       []harness.Wire{harness.WireMessages},
		RouteName:   "ZCode",
		Request:     RequestGraph,
		Bridge:      Bridge,
	}
}

// Bridge maps ZCode's file and shell tools onto the client's tools.
var Bridge = claudestyle.Table(claudestyle.ToolBash, claudestyle.ToolRead, claudestyle.ToolWrite, claudestyle.ToolEdit)

// Wire constants of ZCode 0.14.8.
const (
	// MaxTokens is the max_tokens of every request.
	MaxTokens = 64000
	// AppVersion is the ZCode version the headers name.
	AppVersion = "0.14.8"
	// UserAgent is ZCode's user agent.
	UserAgent = "ZCode/" + AppVersion + " ai-sdk/provider-utils/4.0.27 runtime/node.js/24"
	// Agent is the x-zcode-agent header value.
	Agent = "glm"
	// Title is the x-title header value.
	Title = "Z Code@cli"
	// Referer is the http-referer header value.
	Referer = "http://127.0.0.1:60047"
	// RemindEvery is how many assistant steps without a to-do call bring a
	// to-do reminder.
	RemindEvery = 10
)

// Headers returns the headers of every ZCode request (the credential is
// the proxy's to add).
func Headers() map[string]string {
	return map[string]string{
		anthropic.HeaderVersion: anthropic.Version,
		"user-agent":            UserAgent,
		"x-zcode-agent":         Agent,
		"x-zcode-app-version":   AppVersion,
		"x-title":               Title,
		"accept-language":       "*",
		"http-referer":          Referer,
	}
}

// Policy returns zcode's flatten policy: assistant texts, reasoning and calls
// merged into one turn; user turns deferred while calls are open; calls
// never answered aborted; contextual user messages left out; trailing
// reasoning dropped; bridged calls shown as the native calls.
func Policy() *request.FlattenPolicy {
	return claudestyle.MessagesPolicy(claudestyle.ReverseCall(Bridge))
}

// Model returns the model name ZCode sends: without a "zai/" or "z.ai/"
// prefix.
func Model(model string) string {
	for _, p := range []string{"zai/", "z.ai/"} {
		if len(model) >= len(p) && strings.EqualFold(model[:len(p)], p) {
			return model[len(p):]
		}
	}
	return model
}

// texts are the prompt texts of one turn.
type texts struct {
	system   [3]string
	date     string
	todo     string
	skills   func(lines []string) (string, error)
	heading  string
	line     string
	skillTag string
	results  claudestyle.Results
}

func loadTexts(env *harness.Env) (*texts, error) {
	p := env.Prompts
	h := harness.NameZCode
	t := &texts{}
	var err error
	marker := func(name string) string {
		if err != nil {
			return ""
		}
		var s string
		s, err = p.Marker(h, name)
		return s
	}
	t.heading, t.line, t.skillTag = marker("date_heading"), marker("date_line"), marker("skills")
	if err != nil {
		return nil, err
	}
	model := env.Request.Model
	if !strings.Contains(model, "/") {
		model = "zai/" + model
	}
	shell := env.Workspace.Shell
	if shell == "" {
		shell = "unknown"
	}
	cwd := env.Workspace.Cwd
	if cwd == "" {
		cwd = "unknown"
	}
	render := func(name string, data map[string]any) string {
		if err != nil {
			return ""
		}
		var s string
		s, err = p.Render(h, name, data)
		return s
	}
	t.system[0] = render("header", nil)
	t.system[1] = strings.TrimRight(render("harness", nil), "\n")
	t.system[2] = strings.TrimRight(render("environment", map[string]any{
		"cwd": cwd, "git": "unknown", "platform": env.Workspace.OS, "shell": shell, "os": env.Workspace.OS, "model": model,
	}), "\n")
	t.date = render("date_reminder", map[string]any{"heading": t.heading, "line": t.line, "date": env.Workspace.Date,
		"memory": env.ProjectDocs})
	t.todo = strings.TrimRight(render("todo_reminder", nil), "\n")
	t.results = claudestyle.Results{EmptyBash: render("empty_output", nil), ErrorFalse: []string{claudestyle.ToolBash}}
	if err != nil {
		return nil, err
	}
	t.skills = func(lines []string) (string, error) {
		s, err := p.Render(h, "skills", map[string]any{"skills": lines})
		return strings.TrimRight(s, "\n"), err
	}
	return t, nil
}

// RequestGraph returns zcode's request graph for env.Wire (messages only):
// request.system → request.tools → request.history → request.options →
// request.encode.
func RequestGraph(env *harness.Env) (*pipeline.Graph, error) {
	t, err := loadTexts(env)
	if err != nil {
		return nil, fmt.Errorf("zcode: %w", err)
	}
	defs, err := claudestyle.LoadTools(env.Prompts, harness.NameZCode)
	if err != nil {
		return nil, fmt.Errorf("zcode: %w", err)
	}
	yes := true
	return pipeline.New("request.zcode",
		pipeline.StageNode(request.NodeSystem, request.Update(func(s *request.Shaping) error {
			for _, text := range t.system {
				s.Transcript = append(s.Transcript, request.Message{Role: request.RoleSystem, Content: request.TextParts(text)})
			}
			return nil
		}), pipeline.Describe("the three system blocks: product line, harness section, environment")),
		pipeline.StageNode(request.NodeTools, request.Update(func(s *request.Shaping) error {
			s.Tools = make([]request.Tool, len(defs))
			s.ToolKinds = make(protocol.ToolKinds, len(defs))
			for i, d := range defs {
				s.Tools[i] = request.Tool{Name: d.Name, Description: d.Description, Parameters: d.InputSchema, Strict: d.Strict}
				s.ToolKinds[d.Name] = protocol.ToolOutputKind{Kind: protocol.KindFunction}
			}
			return nil
		}), pipeline.Describe("ZCode's fourteen tools (the client's tools are not shown)")),
		pipeline.StageNode(request.NodeHistory, request.Update(func(s *request.Shaping) error {
			items, err := history(s.Request, t)
			if err != nil {
				return err
			}
			s.Transcript, err = request.Flatten(s.Transcript, items, Policy(), nil)
			return err
		}), pipeline.Describe("history → Messages transcript (merged turns, results in call order, skills as system text)")),
		pipeline.StageNode(request.NodeOptions, request.Update(func(s *request.Shaping) error {
			s.MessagesBody = anthropic.Request{
				Model:      Model(s.Request.Model),
				ToolChoice: []byte(`{"type":"auto"}`),
				MaxTokens:  MaxTokens,
				Stream:     &yes,
			}
			s.Path = anthropic.Path
			s.Headers = Headers()
			return nil
		}), pipeline.Describe("model, tool_choice auto, max_tokens 64000, stream; ZCode's headers")),
		request.MessagesEncodeNode(request.MessagesStyle{
			SystemCache: true,
			ToolResult:  t.results.Render,
			Edit:        func(_ *request.Shaping, body *anthropic.Request) error { return t.edit(body) },
		}),
	)
}

// history returns the history items zcode shows: custom calls that are not
// bridged writes left out (with their outputs), developer messages left
// out except a skills block, which becomes a system message after the next
// user prompt.
func history(req *protocol.ResponsesRequest, t *texts) ([]protocol.ResponseItem, error) {
	items := claudestyle.DropUnreversible(req, Bridge).Input
	out := make([]protocol.ResponseItem, 0, len(items))
	var pending []protocol.ResponseItem // skills system messages waiting for a user prompt
	for _, it := range items {
		m, ok := it.(*protocol.Message)
		if !ok || m == nil {
			out = append(out, it)
			continue
		}
		switch m.Role {
		case protocol.RoleDeveloper:
			for _, c := range m.Content {
				if !strings.HasPrefix(strings.TrimSpace(c.Text), t.skillTag) {
					continue
				}
				text, err := t.skills(claudestyle.Skills(c.Text))
				if err != nil {
					return nil, err
				}
				pending = append(pending, &protocol.Message{Role: protocol.RoleSystem,
					Content: []protocol.ContentItem{{Type: protocol.ContentInputText, Text: text}}})
			}
			continue
		case protocol.RoleUser:
			out = append(out, it)
			if !request.IsContextualUser(m) {
				out = append(out, pending...)
				pending = nil
			}
			continue
		}
		out = append(out, it)
	}
	return append(out, pending...), nil
}

// edit adds the date reminder, the to-do reminders and the cache marks.
func (t *texts) edit(body *anthropic.Request) error {
	claudestyle.AddDateReminder(body.Messages, t.date, t.heading, t.line)
	body.Messages = t.todoReminders(body.Messages)
	if n := len(body.Messages); n > 0 && body.Messages[n-1].Role == anthropic.RoleUser {
		last := &body.Messages[n-1].Content
		results := 0
		for _, b := range last.Blocks {
			if b.Type == anthropic.BlockToolResult {
				results++
			}
		}
		prompt := false
		for k := range last.Blocks {
			b := &last.Blocks[k]
			if b.Type == anthropic.BlockText && b.Text != "" && !strings.HasPrefix(b.Text, harness.SystemReminderTag) {
				b.CacheControl = anthropic.Ephemeral()
				prompt = true
			}
		}
		if !prompt && results == 1 {
			for k := range last.Blocks {
				if last.Blocks[k].Type == anthropic.BlockToolResult {
					last.Blocks[k].CacheControl = anthropic.Ephemeral()
				}
			}
		}
	}
	return nil
}

// todoReminders inserts a system reminder after the results of every
// RemindEvery-th assistant step without a to-do call.
func (t *texts) todoReminders(msgs []anthropic.Message) []anthropic.Message {
	steps := 0
	var at []int // indexes after which a reminder goes
	for i := range msgs {
		if msgs[i].Role != anthropic.RoleAssistant {
			continue
		}
		calls, todo := false, false
		for _, b := range msgs[i].Content.Blocks {
			if b.Type == anthropic.BlockToolUse {
				calls = true
				todo = todo || b.Name == "TodoWrite" || b.Name == "TodoRead"
			}
		}
		switch {
		case todo:
			steps = 0
			continue
		case !calls:
			continue
		}
		if steps++; steps%RemindEvery == 0 {
			j := i
			if i+1 < len(msgs) && msgs[i+1].Role == anthropic.RoleUser {
				j = i + 1
			}
			at = append(at, j)
		}
	}
	if len(at) == 0 {
		return msgs
	}
	out := make([]anthropic.Message, 0, len(msgs)+len(at))
	for i := range msgs {
		out = append(out, msgs[i])
		if slices.Contains(at, i) {
			out = append(out, anthropic.Message{Role: anthropic.RoleSystem, Content: anthropic.Text(t.todo)})
		}
	}
	return out
}
