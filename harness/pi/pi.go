// Package pi registers the "pi" harness: the requests the pi coding agent
// (@mariozechner/pi-coding-agent) sends to a chat endpoint, with its four
// tools bridged onto the client's shell. The default is pi 0.73.1 as
// captured on loopback (docs/harness-pi.md has the field-by-field table);
// the variant "fork" (VariantFork) sends what the Codex fork's pi harness
// sends where the two differ.
//
// # Body
//
// {"model","messages","stream":true,"stream_options":{"include_usage":
// true},"store":false,"max_completion_tokens":16384,"tools"}, as pi sends
// it for a custom model. The token limit is min(the model table's output
// cap, 32000), 16384 when the table knows none, and goes as max_tokens to
// the hosts pi sends that field to (Moonshot, chutes.ai, the Cloudflare AI
// gateway). store is left out for the hosts pi marks as not taking it
// (DeepSeek, x.ai, Cerebras, z.ai, Moonshot, opencode.ai, chutes.ai,
// Cloudflare). Towards api.openai.com the conversation key goes as
// prompt_cache_key, where pi sends its session id. A model pi would count as a reasoning model — one whose
// model-table entry takes reasoning_effort, or any model on a DeepSeek
// host — gets pi's reasoning fields at the request's effort (pi's default
// "medium" when the request names none; "none" is pi's "off"):
// reasoning_effort and the system prompt as a developer message, or on a
// DeepSeek host thinking:{"type":"enabled"|"disabled"} with
// reasoning_effort and the system role. The variant fork sends the fork's
// fixed body instead: store:false, thinking enabled, reasoning_effort
// "high", no token limit, always the system role.
//
// # System prompt
//
// system.tmpl (our words for pi's five blocks: identity, the tool list,
// custom tools, guidelines, where pi's own documentation is), then, when
// the request carries AGENTS.md instructions, context.tmpl (one section
// per file, as pi puts the project's context files there), then env.tmpl
// (the client's date and working directory, "\" written as "/"), joined
// as pi joins them. The variant fork renders fork_system.tmpl (the fork's
// extra bullet and its "<pi>" documentation paths) and no project context.
//
// # History
//
// The engine history as pi replays its session: user messages (not the
// engine's context) as arrays of parts, images kept; developer messages
// left out; an assistant text with the calls that follow it in one
// assistant message ("content": null when there is no text), reasoning as
// reasoning_content; earlier final answers kept; a call never answered
// gets pi's synthetic result ("no_result" in markers.json) before the
// next user message and at the end; orphan outputs
// are dropped. Calls of the client's shell tool are shown as the pi calls
// they came from (the bridge comment), their outputs taken out of the
// client's framing and rendered by output.tmpl: the output or "(no
// output)" and, for bash, the exit code when it is not 0, as pi shows it.
// Arguments are compacted in the model's key order. The variant fork
// flattens as the fork does (History.Fork).
//
// # Headers
//
// Those of the OpenAI JS SDK pi sends with (Headers); the variant fork
// adds none.
//
// # Tools and bridge
//
// read, bash, edit and write with pi's schemas (tools.go) and our
// descriptions (tool_*.tmpl), strict:false. bash runs as the client's
// shell command with its timeout in seconds; read, write and edit (several
// replacements, bridge.EditsSpec) and pi's optional grep and find run as
// generated commands (package harness/bridge).
package pi

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/wire/chat"
)

func init() { harness.MustRegister(Spec()) }

// Version is the pi release whose requests the harness sends.
const Version = "0.73.1"

// VariantFork is the variant that sends the fork's pi request where it
// differs from pi 0.73.1's (see the package doc).
const VariantFork = "fork"

// Token limits: pi's default output limit of a custom model and its cap.
const (
	DefaultMaxTokens = 16384
	MaxTokensCap     = 32000
)

// Spec returns the pi harness.
func Spec() harness.Spec {
	return harness.Spec{
		Name:        harness.NamePi,
		Description: "pi: its prompt and four tools (read, bash, edit, write) bridged onto the client's shell, sessions replayed as pi does",
		Wires:       []harness.Wire{harness.WireChat},
		RouteName:   "Pi",
		Request:     RequestGraph,
		Bridge:      Table(),
		Variants: []harness.VariantSpec{{Name: "request", Values: []string{VariantFork},
			Doc: "fork sends the request of the Codex fork's pi harness; the default sends pi 0.73.1's own"}},
	}
}

// Table returns pi's bridge: bash onto the client's shell (timeout in
// seconds); read, write, edit and the optional grep and find onto
// generated commands.
func Table() bridge.Table {
	return bridge.Table{
		bridge.ShellSpec{Tool: "bash", Command: "command", Workdir: bridge.NoKey, Timeout: "timeout",
			TimeoutUnit: 1e9, Plain: true}.Mapping(),
		bridge.ReadSpec{Tool: "read", Path: "path", Offset: "offset", Limit: "limit", DefaultLimit: 2000}.Mapping(),
		bridge.WriteSpec{Tool: "write", Path: "path", Content: "content"}.Mapping(),
		bridge.EditsSpec{Tool: "edit", Path: "path", Edits: "edits", Old: "oldText", New: "newText"}.Mapping(),
		bridge.GrepSpec{Tool: "grep", Pattern: "pattern", Path: "path", Include: "glob"}.Mapping(),
		bridge.GlobSpec{Tool: "find", Pattern: "pattern", Path: "path"}.Mapping(),
	}
}

func fork(env *harness.Env) bool { return env.Model.Variant(harness.NamePi) == VariantFork }

// IsTool reports whether name is one of pi's tools.
func IsTool(name string) bool {
	for _, n := range ToolNames {
		if n == name {
			return true
		}
	}
	return name == "grep" || name == "find"
}

// RequestGraph returns the pi request graph (chat only): request.system →
// request.tools → request.history → request.options → request.provider →
// request.encode.
func RequestGraph(env *harness.Env) (*pipeline.Graph, error) {
	forked := fork(env)
	system, err := SystemPrompt(env, harness.NamePi, forked)
	if err != nil {
		return nil, fmt.Errorf("pi: system prompt: %w", err)
	}
	tools, err := Tools(env.Prompts, harness.NamePi)
	if err != nil {
		return nil, fmt.Errorf("pi: %w", err)
	}
	h := &History{Harness: harness.NamePi, Pack: env.Prompts, Table: Table(), Fork: forked, Own: IsTool}
	if err := h.Init(); err != nil {
		return nil, fmt.Errorf("pi: history: %w", err)
	}
	body := Body(env, forked)
	role := request.RoleSystem
	if body.Developer {
		role = request.RoleDeveloper
	}
	opts := env.RequestOptions()
	return pipeline.New("request.pi",
		SystemNode(role, system),
		ToolsNode(tools, "pi's four tools, bridged onto the client's shell (the client's tools are not shown)"),
		pipeline.StageNode(request.NodeHistory, request.Update(h.Flatten),
			pipeline.Describe("history → transcript as pi replays a session, client shell calls shown as pi calls")),
		request.ChatBodyNode(request.ChatBody{Stream: true, Edit: func(s *request.Shaping) error {
			if !forked {
				s.Headers = Headers(env.Workspace.OS)
			}
			return body.Apply(s)
		}}, body.describe()+"; pi's SDK headers"),
		request.ProviderNode(opts),
		request.ChatEncodeNode(request.ChatStyle{NullCallContent: true}),
	)
}

// SDKVersion is the OpenAI JS SDK pi 0.73.1 sends with.
const SDKVersion = "6.26.0"

// Headers are the identifying headers of pi 0.73.1's chat requests: those
// of the OpenAI JS SDK it sends with, as captured on Linux x64 under Node
// 20 (pi adds none of its own), the OS taken from the client's.
func Headers(clientOS string) map[string]string {
	sdkOS := "Linux"
	switch strings.ToLower(clientOS) {
	case "darwin", "macos":
		sdkOS = "MacOS"
	case "windows":
		sdkOS = "Windows"
	}
	return map[string]string{
		"User-Agent":                  "OpenAI/JS " + SDKVersion,
		"accept-language":             "*",
		"sec-fetch-mode":              "cors",
		"x-stainless-arch":            "x64",
		"x-stainless-lang":            "js",
		"x-stainless-os":              sdkOS,
		"x-stainless-package-version": SDKVersion,
		"x-stainless-retry-count":     "0",
		"x-stainless-runtime":         "node",
		"x-stainless-runtime-version": "v20.20.2",
	}
}

// SystemNode is request.system: the agent's prompt as the first message,
// in role (system, or developer where pi sends that).
func SystemNode(role, text string) pipeline.Node {
	return pipeline.StageNode(request.NodeSystem, request.Update(func(s *request.Shaping) error {
		s.Transcript = append(s.Transcript, request.Message{Role: role, Content: request.TextParts(text)})
		return nil
	}), pipeline.Describe("the agent's own system prompt ("+role+" role)"))
}

// ToolsNode is request.tools: a fixed tool set, each of the function kind.
func ToolsNode(tools []request.Tool, describe string) pipeline.Node {
	return pipeline.StageNode(request.NodeTools, request.Update(func(s *request.Shaping) error {
		s.Tools = append(s.Tools[:0], tools...)
		s.ToolKinds = make(protocol.ToolKinds, len(tools))
		for _, t := range tools {
			s.ToolKinds[t.Name] = protocol.ToolOutputKind{Kind: protocol.KindFunction}
		}
		return nil
	}), pipeline.Describe(describe))
}

// BodyFields are the top-level fields of a pi body besides model,
// messages, stream and tools.
type BodyFields struct {
	// Store sends "store":false.
	Store bool
	// MaxTokens is the output limit (0: none), sent as max_tokens when
	// MaxTokensField says so, as max_completion_tokens otherwise.
	MaxTokens      int64
	MaxTokensField bool
	// Thinking is the thinking object (DeepSeek format), "" for none.
	Thinking string
	// Effort is reasoning_effort, "" for none.
	Effort string
	// Temperature is the temperature as JSON, "" for none.
	Temperature string
	// Developer sends the system prompt as a developer message.
	Developer bool
	// CacheKey is prompt_cache_key, "" for none.
	CacheKey string
}

// Apply sets the fields on the body (ChatBody.Edit).
func (b BodyFields) Apply(s *request.Shaping) error {
	body := &s.Body
	if b.Store {
		f := false
		body.Store = &f
	}
	if b.MaxTokens > 0 {
		n := b.MaxTokens
		if b.MaxTokensField {
			body.MaxTokens = &n
		} else {
			body.MaxCompletionTokens = &n
		}
	}
	if b.Thinking != "" {
		body.Thinking = json.RawMessage(b.Thinking)
	}
	body.ReasoningEffort = b.Effort
	body.PromptCacheKey = b.CacheKey
	if b.Temperature != "" {
		if body.Extra == nil {
			body.Extra = chat.Extra{}
		}
		body.Extra["temperature"] = json.RawMessage(b.Temperature)
	}
	return nil
}

func (b BodyFields) describe() string {
	var parts []string
	if b.Store {
		parts = append(parts, "store false")
	}
	if b.MaxTokens > 0 {
		parts = append(parts, fmt.Sprintf("token limit %d", b.MaxTokens))
	}
	if b.Thinking != "" {
		parts = append(parts, "thinking "+b.Thinking)
	}
	if b.Effort != "" {
		parts = append(parts, "reasoning_effort "+b.Effort)
	}
	if b.Temperature != "" {
		parts = append(parts, "temperature "+b.Temperature)
	}
	return "model, stream with usage, " + strings.Join(parts, ", ")
}

// Hosts pi treats specially, by substring of the lowercased base URL
// (pi-ai's compat detection).
var (
	noStoreHosts   = []string{"cerebras.ai", "api.x.ai", "chutes.ai", "deepseek.com", "api.z.ai", "api.moonshot.", "opencode.ai", "api.cloudflare.com", "gateway.ai.cloudflare.com"}
	maxTokensHosts = []string{"chutes.ai", "api.moonshot.", "gateway.ai.cloudflare.com"}
	noEffortHosts  = []string{"api.x.ai", "api.z.ai", "api.moonshot.", "gateway.ai.cloudflare.com"}
)

func hostIn(baseURL string, hosts []string) bool {
	u := strings.ToLower(baseURL)
	for _, h := range hosts {
		if strings.Contains(u, h) {
			return true
		}
	}
	return false
}

// Body returns the fields of a pi turn (see the package doc).
func Body(env *harness.Env, forked bool) BodyFields {
	if forked {
		return BodyFields{Store: true, Thinking: `{"type":"enabled"}`, Effort: "high"}
	}
	b := BodyFields{Store: !hostIn(env.BaseURL, noStoreHosts), MaxTokens: DefaultMaxTokens,
		MaxTokensField: hostIn(env.BaseURL, maxTokensHosts)}
	if c := env.Model.MaxOutputTokens; c > 0 {
		b.MaxTokens = min(c, MaxTokensCap)
	}
	if hostIn(env.BaseURL, []string{"api.openai.com"}) {
		b.CacheKey = env.ConversationKey // pi sends its session id there
	}
	level := "medium"
	if r := env.Request.Reasoning; r != nil && r.Effort != "" {
		level = string(r.Effort)
	}
	switch {
	case strings.Contains(strings.ToLower(env.BaseURL), "deepseek.com"):
		if level == "none" {
			b.Thinking = `{"type":"disabled"}`
		} else {
			b.Thinking, b.Effort = `{"type":"enabled"}`, level
		}
	case env.Model.Reasoning == request.ReasoningEffortField:
		if level != "none" && !hostIn(env.BaseURL, noEffortHosts) {
			b.Effort = level
		}
		b.Developer = !hostIn(env.BaseURL, noStoreHosts)
	}
	return b
}

// SystemData is what system.tmpl and env.tmpl are rendered with.
type SystemData struct {
	// Cwd is the client's working directory ("." when it did not say),
	// with "\" written as "/".
	Cwd string
	// Date is the client's date, YYYY-MM-DD.
	Date string
	// Docs are the request's AGENTS.md instructions (context.tmpl).
	Docs []Doc
}

// Doc is one project instructions file.
type Doc struct {
	// Source names the file (DIR/AGENTS.md).
	Source string
	// Text is its content.
	Text string
}

// SystemPrompt renders harness h's system prompt (see the package doc);
// fork renders the fork's template and no project context.
func SystemPrompt(env *harness.Env, h string, forked bool) (string, error) {
	d := SystemData{Cwd: strings.ReplaceAll(env.Workspace.Cwd, `\`, "/"), Date: env.Workspace.Date}
	if d.Cwd == "" {
		d.Cwd = "."
	}
	for _, doc := range env.ProjectDocs {
		d.Docs = append(d.Docs, Doc{Source: doc.Source(), Text: doc.Text})
	}
	name := "system"
	if forked {
		name, d.Docs = "fork_system", nil
	}
	base, err := env.Prompts.Render(h, name, d)
	if err != nil {
		return "", err
	}
	out := strings.TrimRight(base, "\n")
	if len(d.Docs) > 0 {
		ctx, err := env.Prompts.Render(h, "context", d)
		if err != nil {
			return "", err
		}
		out += "\n\n" + strings.TrimRight(ctx, "\n") + "\n\n"
	}
	tail, err := env.Prompts.Render(h, "env", d)
	if err != nil {
		return "", err
	}
	return out + "\n" + strings.TrimRight(tail, "\n"), nil
}
