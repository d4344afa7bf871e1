package claudecode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/harness/internal/claudestyle"
	"github.com/harnessflow/harnessflow/prompts"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

// SubagentSpawn is the client's sub-agent label of a spawned child agent
// (Codex's x-openai-subagent header); a request with it is a child-agent
// request.
const SubagentSpawn = "collab_spawn"

// Tool name of the tool search tool in the Bare profile.
const toolSearchName = "ToolSearch"

// SchemaDraft is the $schema every tool schema carries.
const SchemaDraft = "https://json-schema.org/draft/2020-12/schema"

// hiddenTools are the client tools the Full profile never shows: Claude
// Code has its own way to do what they do.
var hiddenTools = []string{"exec_command", "write_stdin", "request_user_input", "update_plan", "view_image",
	"LSP", "TodoWrite", "Monitor", "PushNotification"}

// childDropped are the tools a child agent does not get.
var childDropped = []string{"AskUserQuestion", "EnterPlanMode", "ExitPlanMode", "TaskOutput"}

// neverShown is dropped in every profile.
const neverShown = "RemoteTrigger"

// knownTools are the names that get Claude Code's own description and
// schema whatever the client said about them.
var knownTools = []string{"LSP", "Bash", "AskUserQuestion", "Edit", "Read", "Glob", "Grep", "Write", "TodoWrite"}

// supplemental are the reference tools the Full profile adds when they are
// not there yet.
var supplemental = []string{"Agent", "CronCreate", "CronDelete", "CronList", "EnterPlanMode", "EnterWorktree",
	"ExitPlanMode", "ExitWorktree", "NotebookEdit", "ScheduleWakeup", "Skill", "TaskCreate", "TaskGet", "TaskList",
	"TaskOutput", "TaskStop", "TaskUpdate", "WebFetch", "WebSearch", "Workflow"}

// shellFamily are the native tools shown when the client has a shell,
// per profile; they are all bridged.
var shellFamily = map[string][]string{
	harness.ProfileFull: {claudestyle.ToolBash, claudestyle.ToolRead, claudestyle.ToolWrite, claudestyle.ToolEdit,
		claudestyle.ToolGlob, claudestyle.ToolGrep},
	harness.ProfileBare: {claudestyle.ToolBash, claudestyle.ToolEdit, claudestyle.ToolRead},
}

// bareKept are the function tools the Bare profile keeps.
var bareKept = []string{"Bash", "Edit", "Read"}

// toolRank is the fixed order of the final tool list; other names rank
// last (26), keeping their order.
var toolRank = map[string]int{
	"Agent": 0, "AskUserQuestion": 1, "Bash": 2, "CronCreate": 3, "CronDelete": 4, "CronList": 5, "Edit": 6,
	"EnterPlanMode": 7, "EnterWorktree": 8, "ExitPlanMode": 9, "ExitWorktree": 10, "Glob": 11, "Grep": 12,
	"NotebookEdit": 13, "Read": 14, "ScheduleWakeup": 15, "Skill": 16, "TaskCreate": 17, "TaskGet": 18,
	"TaskList": 19, "TaskOutput": 20, "TaskStop": 21, "TaskUpdate": 22, "WebFetch": 23, "WebSearch": 24,
	"Workflow": 25, "Write": 26,
}

func rank(name string) int {
	if r, ok := toolRank[name]; ok {
		return r
	}
	return 26
}

// currentToolsFile is the pack file of Claude Code 2.1.332's tool set
// (names and schemas as captured, descriptions in our words); tools.json
// keeps the fork's.
const currentToolsFile = "current_tools.json"

// DeferredPlaceholder is the tool Claude Code 2.1.332 sends with
// defer_loading set, so that tool search stays on when every other
// deferred tool is left out; it is never meant to be called.
const DeferredPlaceholder = "DeferredToolPlaceholder"

// currentTools are the tools Claude Code 2.1.332 sends in the Full profile
// (the rest of its tools wait behind ToolSearch), in its order. The
// client's other function tools follow them.
var currentTools = []string{"Agent", "Bash", "Edit", "ListAgents", "Read", "ReportFindings", "ScheduleWakeup",
	"Skill", "ToolSearch", "Workflow", DeferredPlaceholder, "Write"}

// currentShell are the current tools bridged onto the client's shell.
var currentShell = []string{claudestyle.ToolBash, claudestyle.ToolRead, claudestyle.ToolWrite, claudestyle.ToolEdit}

// currentRank is the position of a name in currentTools; other names rank
// last, keeping their order.
func currentRank(name string) int {
	if i := slices.Index(currentTools, name); i >= 0 {
		return i
	}
	return len(currentTools)
}

// loadCurrentTools reads current_tools.json of the pack, checked as
// tools.json is ({"tools":[ToolDef…]}, each named, described, with an
// object schema).
func loadCurrentTools(p *prompts.Pack) ([]claudestyle.ToolDef, error) {
	data, err := p.Data(harness.NameClaudeCode, currentToolsFile)
	if err != nil {
		return nil, err
	}
	var file struct {
		Tools []claudestyle.ToolDef `json:"tools"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		return nil, fmt.Errorf("%s/%s: %w", harness.NameClaudeCode, currentToolsFile, err)
	}
	for i, t := range file.Tools {
		var schema struct {
			Type string `json:"type"`
		}
		if t.Name == "" || t.Description == "" || json.Unmarshal(t.InputSchema, &schema) != nil || schema.Type != "object" {
			return nil, fmt.Errorf("%s/%s: tool %d (%q): want a name, a description and an object schema",
				harness.NameClaudeCode, currentToolsFile, i, t.Name)
		}
	}
	return file.Tools, nil
}

// Shape is the one source of truth of a turn, shared by the three wires:
// the profile, whether the request is a child agent's, the system prompt and
// the tool list (in its final order).
type Shape struct {
	Profile string
	Child   bool
	// Fork is the variant fork (VariantFork): the fork's request where it
	// differs from Claude Code 2.1.332's.
	Fork bool
	// System is the system prompt: the Messages wire's third system block,
	// the instructions of the Responses and Chat wires (there followed by
	// Environment).
	System string
	// Environment is the environment text (environment.tmpl) that Claude
	// Code 2.1.332 sends as a role "system" message after the first user
	// message: Full profile only, not for a child agent nor in the variant
	// fork, whose system prompt carries its environment section
	// (env_section.tmpl) instead. "" when there is none.
	Environment string
	// Tools are the tools, wire-neutral (name, description, schema).
	Tools []request.Tool
}

// HasTool reports whether the tool list has a tool called name.
func (s *Shape) HasTool(name string) bool {
	return slices.ContainsFunc(s.Tools, func(t request.Tool) bool { return t.Name == name })
}

// NewShape builds the turn's shape from the env: the route's profile, the
// child-agent flag (the client's sub-agent label), the tools selected from
// the client's tools, and the system prompt for them.
func NewShape(env *harness.Env) (*Shape, error) {
	s := &Shape{Profile: env.Route.Profile, Child: env.Subagent == SubagentSpawn,
		Fork: env.Model.Variant(harness.NameClaudeCode) == VariantFork || env.Model.Variant(harness.NameClaudeCodeBare) == VariantFork}
	if s.Profile != harness.ProfileBare {
		s.Profile = harness.ProfileFull
	}
	defs, err := claudestyle.LoadTools(env.Prompts, harness.NameClaudeCode)
	if err != nil {
		return nil, err
	}
	if s.current() {
		cur, err := loadCurrentTools(env.Prompts)
		if err != nil {
			return nil, err
		}
		defs = append(cur, defs...) // Find takes the first: the current definition wins
	}
	if s.Tools, err = s.selectTools(env, defs); err != nil {
		return nil, err
	}
	if s.System, err = s.systemPrompt(env); err != nil {
		return nil, err
	}
	return s, nil
}

// current reports whether the turn gets Claude Code 2.1.332's tool set
// (Full profile, not the variant fork).
func (s *Shape) current() bool { return s.Profile == harness.ProfileFull && !s.Fork }

// selectTools is the tool selection. In the Full profile (not the variant
// fork), as Claude Code 2.1.332: Bash, Read, Write and Edit bridged onto
// the client's shell; the client's function tools as below; the client's
// tool_search dropped; then the rest of currentTools (Agent, ListAgents,
// ReportFindings, ScheduleWakeup, Skill, ToolSearch, Workflow,
// DeferredToolPlaceholder), the list in currentTools' order, the client's
// tools last. Otherwise the fork's selection:
//
//   - the native shell and file tools (Full: Bash, Read, Write, Edit, Glob,
//     Grep; Bare: Bash, Edit, Read) when the client advertised a shell
//     tool, since the bridge runs them there;
//   - the client's function tools: Bare keeps only Bash, Edit and Read;
//     Full drops the hidden ones (exec_command, write_stdin,
//     request_user_input, update_plan, view_image, LSP, TodoWrite, Monitor,
//     PushNotification) and keeps the rest with their own description and
//     schema (a $schema key added); a known Claude Code name gets Claude
//     Code's own definition;
//   - the client's tool_search becomes ToolSearch in Bare and is dropped in
//     Full; namespaces, custom tools, local_shell, web_search and
//     image_generation are dropped;
//   - Full adds the supplemental reference tools (Agent, CronCreate, …,
//     Workflow) that are not there yet;
//   - a child agent loses AskUserQuestion, EnterPlanMode, ExitPlanMode and
//     TaskOutput, and RemoteTrigger is never shown;
//   - the list is stable-sorted by Claude Code's fixed rank.
func (s *Shape) selectTools(env *harness.Env, defs []claudestyle.ToolDef) ([]request.Tool, error) {
	var out []request.Tool
	have := map[string]bool{}
	allowed := func(name string) bool {
		return name != neverShown && !(s.Child && slices.Contains(childDropped, name)) && !have[name]
	}
	native := func(name string) error {
		if !allowed(name) {
			return nil
		}
		d, ok := claudestyle.Find(defs, name)
		if !ok {
			return fmt.Errorf("claude-code: no tool %q in tools.json or %s", name, currentToolsFile)
		}
		desc := d.Description
		if s.Profile == harness.ProfileBare && d.BareDescription != "" {
			desc = d.BareDescription
		}
		out = append(out, request.Tool{Name: d.Name, Description: desc, Parameters: d.InputSchema, Strict: d.Strict})
		have[name] = true
		return nil
	}
	shell, extra, order := shellFamily[s.Profile], supplemental, rank
	if s.current() {
		shell, extra, order = currentShell, currentTools, currentRank
	}
	if env.Client.Kind != bridge.ShellNone {
		for _, n := range shell {
			if err := native(n); err != nil {
				return nil, err
			}
		}
	}
	for i := range env.Request.Tools {
		t := &env.Request.Tools[i]
		switch t.Type {
		case protocol.ToolTypeFunction:
			switch {
			case s.Profile == harness.ProfileBare && !slices.Contains(bareKept, t.Name):
				continue
			case s.Profile == harness.ProfileFull && slices.Contains(hiddenTools, t.Name):
				continue
			case slices.Contains(knownTools, t.Name):
				if err := native(t.Name); err != nil {
					return nil, err
				}
				continue
			case !allowed(t.Name) || t.Name == "":
				continue
			}
			desc := t.Description
			if desc == "" {
				desc = t.Name
			}
			schema, err := withSchemaDraft(t.Parameters)
			if err != nil {
				return nil, fmt.Errorf("tools[%d] %s: parameters: %w", i, t.Name, err)
			}
			out = append(out, request.Tool{Name: t.Name, Description: desc, Parameters: schema})
			have[t.Name] = true
		case protocol.ToolTypeToolSearch:
			if s.Profile != harness.ProfileBare || !allowed(toolSearchName) {
				continue
			}
			schema, err := withSchemaDraft(t.Parameters)
			if err != nil {
				return nil, fmt.Errorf("tools[%d] tool_search: parameters: %w", i, err)
			}
			desc := t.Description
			if desc == "" {
				desc = toolSearchName
			}
			out = append(out, request.Tool{Name: toolSearchName, Description: desc, Parameters: schema})
			have[toolSearchName] = true
		}
	}
	if s.Profile == harness.ProfileFull {
		for _, n := range extra {
			if err := native(n); err != nil {
				return nil, err
			}
		}
	}
	slices.SortStableFunc(out, func(a, b request.Tool) int { return order(a.Name) - order(b.Name) })
	return out, nil
}

// withSchemaDraft returns a JSON Schema object with a "$schema" key first
// (unless it has one); an empty schema is the empty object schema.
func withSchemaDraft(schema json.RawMessage) (json.RawMessage, error) {
	schema = bytes.TrimSpace(schema)
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(schema, &obj); err != nil {
		return nil, err
	}
	if _, ok := obj["$schema"]; ok {
		return schema, nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, schema); err != nil {
		return nil, err
	}
	rest := bytes.TrimPrefix(b.Bytes(), []byte("{"))
	out := []byte(`{"$schema":"` + SchemaDraft + `"`)
	if len(bytes.TrimSpace(rest)) > 1 { // not just "}"
		out = append(out, ',')
	}
	return append(out, rest...), nil
}

// systemPrompt renders the profile's system prompt: the child-agent prompt
// for a child, "CWD/Date" for Bare, the long prompt for Full (naming Bash,
// or PowerShell when there is no Bash tool) — with its environment section
// in the variant fork, and otherwise with the environment text apart
// (s.Environment).
func (s *Shape) systemPrompt(env *harness.Env) (string, error) {
	w := env.Workspace
	cwd := w.Cwd
	if cwd == "" {
		cwd = "unknown"
	}
	shellName := w.Shell
	if shellName == "" {
		shellName = "unknown"
	}
	data := map[string]any{"cwd": cwd, "date": w.Date, "platform": w.OS}
	name := "system"
	switch {
	case s.Child:
		name = "child"
	case s.Profile == harness.ProfileBare:
		name = "bare"
	default:
		shell := "PowerShell"
		if s.HasTool(claudestyle.ToolBash) {
			shell = claudestyle.ToolBash
		}
		data["shell"], data["shellName"], data["git"], data["model"] = shell, shellName, "unknown", env.Request.Model
		data["modelName"], data["environment"] = ModelDisplayName(env.Request.Model), ""
		section := "environment"
		if s.Fork {
			section = "env_section"
		}
		text, err := env.Prompts.Render(harness.NameClaudeCode, section, data)
		if err != nil {
			return "", err
		}
		if s.Fork {
			data["environment"] = strings.TrimRight(text, "\n")
		} else {
			s.Environment = strings.TrimRight(text, "\n")
		}
	}
	text, err := env.Prompts.Render(harness.NameClaudeCode, name, data)
	return strings.TrimRight(text, "\n"), err
}

// Instructions is the system prompt of the Responses and Chat wires: the
// system prompt, then the environment text after a blank line when there
// is one (those wires have no role "system" message after the first user
// message that every server takes).
func (s *Shape) Instructions() string {
	if s.Environment == "" {
		return s.System
	}
	return s.System + "\n\n" + s.Environment
}

// ModelDisplayName is the name Claude Code gives a model in its texts:
// "Opus 5.5" for claude-opus-5-5, "Sonnet 4" for claude-sonnet-4-20250514;
// the model id itself for a name that is not a Claude model's.
func ModelDisplayName(model string) string {
	family, major, minor, ok := ModelVersion(model)
	if !ok {
		return model
	}
	name := strings.ToUpper(family[:1]) + family[1:] + " " + strconv.Itoa(major)
	if minor > 0 {
		name += "." + strconv.Itoa(minor)
	}
	return name
}

// modelVersion matches Claude model names: claude-opus-4-6…, claude-opus-4.6,
// claude-opus4-6, claude-sonnet-4-5-20250929, …
var modelVersion = regexp.MustCompile(`claude-(opus|sonnet|haiku)-?(\d+)(?:[-.](\d{1,2}))?(?:\D|$)`)

// ModelVersion reads the family ("opus", "sonnet", "haiku") and version of a
// Claude model name, after taking off a provider/ prefix and a :suffix.
func ModelVersion(model string) (family string, major, minor int, ok bool) {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	if i := strings.IndexByte(m, ':'); i >= 0 {
		m = m[:i]
	}
	sm := modelVersion.FindStringSubmatch(m)
	if sm == nil {
		return "", 0, 0, false
	}
	major, _ = strconv.Atoi(sm[2])
	if sm[3] != "" {
		minor, _ = strconv.Atoi(sm[3])
	}
	return sm[1], major, minor, true
}

// atLeast46 reports whether a model is family at version 4.6 or later.
func atLeast46(model, family string) bool {
	f, major, minor, ok := ModelVersion(model)
	return ok && f == family && (major > 4 || major == 4 && minor >= 6)
}

// Token limits.
const (
	MaxTokensLarge   = 64000 // opus 4.6 and later
	MaxTokensDefault = 32000
	// MaxTokensOpus5 is what Claude Code 2.1.332 sends for opus 5 and
	// later (the variant fork keeps MaxTokens).
	MaxTokensOpus5 = 128000
)

// MaxTokens is the max_tokens of a model: 64000 for opus 4.6 and later,
// 32000 otherwise.
func MaxTokens(model string) int64 {
	if atLeast46(model, "opus") {
		return MaxTokensLarge
	}
	return MaxTokensDefault
}

// Adaptive reports whether a model takes adaptive thinking: opus or sonnet
// 4.6 and later, and claude-mythos-preview.
func Adaptive(model string) bool {
	return atLeast46(model, "opus") || atLeast46(model, "sonnet") ||
		strings.Contains(strings.ToLower(model), "claude-mythos-preview")
}

// modelDefaults are the values Claude Code 2.1.332 sends for a Claude
// model when nothing else is asked (captured on loopback for
// claude-opus-5-5, claude-opus-4-6 and claude-sonnet-4-5; the newer models
// of a family are taken to behave as the newest captured one).
type modelDefaults struct {
	maxTokens int64
	// effort is the output_config effort sent when the request names none
	// the model takes ("" for none).
	effort string
	// effortBeta: the anthropic-beta value carries effort-2025-11-24.
	effortBeta bool
	// turnBetas: it carries per-turn-control-2026-07-01 and
	// mid-conversation-tool-changes-2026-07-01.
	turnBetas bool
}

// currentDefaults returns Claude Code 2.1.332's values for model: opus 5
// and later 128000 tokens, effort medium, every beta; the other adaptive
// models (opus and sonnet 4.6 and later) MaxTokens, effort high, no
// per-turn betas; older Claude models MaxTokens, no effort and neither
// beta. ok is false for a name that is not a Claude model's (the fixed
// values then apply: MaxTokens, every beta, the requested effort only).
func currentDefaults(model string) (d modelDefaults, ok bool) {
	family, major, _, ok := ModelVersion(model)
	switch {
	case !ok:
		return modelDefaults{}, false
	case family == "opus" && major >= 5:
		return modelDefaults{maxTokens: MaxTokensOpus5, effort: "medium", effortBeta: true, turnBetas: true}, true
	case Adaptive(model):
		return modelDefaults{maxTokens: MaxTokens(model), effort: "high", effortBeta: true}, true
	}
	return modelDefaults{maxTokens: MaxTokens(model)}, true
}

// requestedEffort is the request's reasoning effort, lowercased ("" when
// none was given).
func requestedEffort(req *protocol.ResponsesRequest) string {
	if req.Reasoning == nil {
		return ""
	}
	return strings.ToLower(strings.TrimSpace(req.Reasoning.Effort))
}

// Effort is the output_config effort of a turn ("" for none): Bare always
// "high"; Full the requested effort mapped to Claude's levels (minimal and
// low → low, medium → medium, high, xhigh, max, ultra → high), only when the
// model declares the efforts it takes and the requested one is among them
// and is not "none"; failing that, outside the variant fork, the effort
// Claude Code 2.1.332 sends for the model by default (currentDefaults;
// none for "none"). A child agent ignores the requested effort (it would
// use the model's default level, which the model table does not give).
func (s *Shape) Effort(env *harness.Env) string {
	if s.Profile == harness.ProfileBare {
		return "high"
	}
	e := requestedEffort(env.Request)
	if s.Child || e == "none" {
		return ""
	}
	if e != "" && len(env.Model.Efforts) > 0 && slices.Contains(env.Model.Efforts, e) {
		return request.ChatEffort(e)
	}
	if d, ok := currentDefaults(env.Request.Model); ok && !s.Fork {
		return d.effort
	}
	return ""
}

// MaxTokens is the turn's max_tokens: Claude Code 2.1.332's value for a
// Claude model (currentDefaults), the package's MaxTokens in the variant
// fork and for other names.
func (s *Shape) MaxTokens(model string) int64 {
	if d, ok := currentDefaults(model); ok && !s.Fork {
		return d.maxTokens
	}
	return MaxTokens(model)
}

// ThinkingOn reports whether the turn asks for thinking: not for a child
// agent, nor for the effort "none".
func (s *Shape) ThinkingOn(env *harness.Env) bool {
	return !s.Child && requestedEffort(env.Request) != "none"
}
