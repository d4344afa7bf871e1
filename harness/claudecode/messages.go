package claudecode

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"unicode"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/internal/claudestyle"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/wire/anthropic"
)

// Wire constants of Claude Code 2.1.332, the version the emulation follows
// (captured on loopback); the variant fork keeps the fork's 2.1.158.
const (
	// CLIVersion is the Claude Code version the billing block and the user
	// agent name.
	CLIVersion = "2.1.332"
	// ForkCLIVersion is the version of the variant fork.
	ForkCLIVersion = "2.1.158"
	// UserAgent is Claude Code's user agent.
	UserAgent = "claude-cli/" + CLIVersion + " (external, sdk-cli)"
	// ForkUserAgent is the user agent of the variant fork.
	ForkUserAgent = "claude-cli/" + ForkCLIVersion + " (external, sdk-cli)"
	// VariantFork is the variant that sends the fork's request where it
	// differs from Claude Code 2.1.332's: version 2.1.158 in the user agent
	// and the billing block, the request hash in the billing block, four
	// beta flags, the older SDK headers, adaptive thinking without
	// "display".
	VariantFork = "fork"
	// TitleModel is the model of the title request.
	TitleModel = "claude-haiku-4-5-20251001"
	// TitleMaxTokens is the max_tokens of the title request.
	TitleMaxTokens = 1024
	// RemindEvery is how many assistant steps without a task-list call
	// bring the Full profile's task reminder.
	RemindEvery = 10
	// DeviceID is the device id of metadata.user_id: a fixed id of our own
	// (the SHA-256 of "harnessflow claude-code device"), the same for every
	// request, as one installation's id would be.
	DeviceID = "48e1a68facd302f591193b1a1f0cb0fdf83823fc57757534c4c946cb4bca6989"
)

// The anthropic-beta values: Full or Bare, main request or title request
// (2.1.332's main requests; the Bare value is the Full one without
// claude-code-20250219, as in the fork), and the fork's main requests.
const (
	BetaFull = "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27," +
		"per-turn-control-2026-07-01,mid-conversation-tool-changes-2026-07-01,thinking-token-count-2026-05-13," +
		"advanced-tool-use-2025-11-20,effort-2025-11-24"
	BetaBare = "interleaved-thinking-2025-05-14,context-management-2025-06-27," +
		"per-turn-control-2026-07-01,mid-conversation-tool-changes-2026-07-01,thinking-token-count-2026-05-13," +
		"advanced-tool-use-2025-11-20,effort-2025-11-24"
	ForkBetaFull  = "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,effort-2025-11-24"
	ForkBetaBare  = "interleaved-thinking-2025-05-14,context-management-2025-06-27,effort-2025-11-24"
	BetaFullTitle = "claude-code-20250219,structured-outputs-2025-11-13"
	BetaBareTitle = "structured-outputs-2025-11-13"
)

// Beta flags Claude Code 2.1.332 sends for some models only
// (currentDefaults).
const (
	betaEffort      = "effort-2025-11-24"
	betaTurnControl = "per-turn-control-2026-07-01"
	betaToolChanges = "mid-conversation-tool-changes-2026-07-01"
)

// modelBeta is the anthropic-beta value beta without the flags Claude Code
// 2.1.332 leaves out for a model of defaults d.
func modelBeta(beta string, d modelDefaults) string {
	flags := strings.Split(beta, ",")
	flags = slices.DeleteFunc(flags, func(f string) bool {
		return f == betaEffort && !d.effortBeta || (f == betaTurnControl || f == betaToolChanges) && !d.turnBetas
	})
	return strings.Join(flags, ",")
}

// billingSalt and the character positions are what the billing block's
// version suffix is computed from (a protocol detail of Claude Code).
const billingSalt = "59cf53e54c78"

var billingPositions = [3]int{4, 7, 20}

// Headers returns the headers of a Messages request of the profile (the
// credential is the proxy's to add).
func Headers(profile, session string) map[string]string { return headers(profile, session, false) }

// headers are Headers, or the variant fork's when fork is set.
func headers(profile, session string, fork bool) map[string]string {
	beta, ua, sdk, runtime := BetaFull, UserAgent, "0.128.0", "v26.12.1"
	if profile == harness.ProfileBare {
		beta = BetaBare
	}
	if fork {
		beta, ua, sdk, runtime = ForkBetaFull, ForkUserAgent, "0.81.0", "v24.3.0"
		if profile == harness.ProfileBare {
			beta = ForkBetaBare
		}
	}
	h := map[string]string{
		anthropic.HeaderVersion:                     anthropic.Version,
		anthropic.HeaderBeta:                        beta,
		"anthropic-dangerous-direct-browser-access": "true",
		"x-app":                       "cli",
		"user-agent":                  ua,
		"x-stainless-lang":            "js",
		"x-stainless-package-version": sdk,
		"x-stainless-os":              "Linux",
		"x-stainless-arch":            "x64",
		"x-stainless-runtime":         "node",
		"x-stainless-runtime-version": runtime,
		"x-stainless-retry-count":     "0",
		"x-stainless-timeout":         "600",
	}
	if session != "" {
		h["x-claude-code-session-id"] = session
	}
	return h
}

// TitleBeta is the anthropic-beta value of a title request of the profile.
// (The proxy sends a title request with the main request's headers; the
// value is here for callers that send it themselves.)
func TitleBeta(profile string) string {
	if profile == harness.ProfileBare {
		return BetaBareTitle
	}
	return BetaFullTitle
}

// BillingBlock is the text of the first system block as Claude Code
// 2.1.332 writes it: "x-anthropic-billing-header: cc_version=VERSION.SUFFIX;
// cc_entrypoint=sdk-cli;". SUFFIX is the first three hex digits of
// SHA-256(salt + the characters 4, 7 and 20 of the first user text ('0'
// where it is shorter) + VERSION) — checked against a capture of 2.1.332.
func BillingBlock(firstUser string) string {
	return fmt.Sprintf("x-anthropic-billing-header: cc_version=%s.%s; cc_entrypoint=sdk-cli;",
		CLIVersion, billingSuffix(firstUser, CLIVersion))
}

func billingSuffix(firstUser, version string) string {
	runes := []rune(firstUser)
	var pick [3]rune
	for i, p := range billingPositions {
		pick[i] = '0'
		if p < len(runes) {
			pick[i] = runes[p]
		}
	}
	sum := sha256.Sum256([]byte(billingSalt + string(pick[:]) + version))
	return hex.EncodeToString(sum[:])[:3]
}

// billing is the billing block of the shape's variant.
func billing(shape *Shape, firstUser, kind, model string, messages, tools []byte) string {
	if shape.Fork {
		return ForkBillingBlock(firstUser, kind, model, messages, tools)
	}
	return BillingBlock(firstUser)
}

// ForkBillingBlock is the billing block of the variant fork:
// "x-anthropic-billing-header: cc_version=2.1.158.SUFFIX;
// cc_entrypoint=sdk-cli; cch=HASH;", HASH an opaque five-hex-digit hash of
// the request (kind, model, messages, tools).
func ForkBillingBlock(firstUser, kind, model string, messages, tools []byte) string {
	h := fnv.New64a()
	for _, part := range [][]byte{[]byte(kind), []byte(model), messages, tools} {
		_, _ = h.Write(part) // hash.Hash writes never fail
		_, _ = h.Write([]byte{0})
	}
	return fmt.Sprintf("x-anthropic-billing-header: cc_version=%s.%s; cc_entrypoint=sdk-cli; cch=%05x;",
		ForkCLIVersion, billingSuffix(firstUser, ForkCLIVersion), h.Sum64()&0xFFFFF)
}

// UserID is metadata.user_id: a JSON document of the device id, an empty
// account id and the session id.
func UserID(session string) string {
	b := []byte(`{"device_id":"` + DeviceID + `","account_uuid":"","session_id":`)
	b = protocol.AppendString(b, session)
	return string(append(b, '}'))
}

// messagesTexts are the prompt texts a Messages turn needs.
type messagesTexts struct {
	agent, date, todo, titleSystem string
	// attribution and memory (when the request carries project
	// instructions) lead the first user prompt where the environment goes
	// in a role "system" message (Shape.Environment).
	attribution, memory     string
	heading, line, skillTag string
	skills                  func(lines []string) (string, error)
	title                   func(text string) (string, error)
	results                 claudestyle.Results
}

func loadMessagesTexts(env *harness.Env) (*messagesTexts, error) {
	p, h := env.Prompts, harness.NameClaudeCode
	t := &messagesTexts{}
	var err error
	get := func(f func() (string, error)) string {
		if err != nil {
			return ""
		}
		var s string
		s, err = f()
		return s
	}
	marker := func(name string) string { return get(func() (string, error) { return p.Marker(h, name) }) }
	render := func(name string, data any) string {
		return get(func() (string, error) { return p.Render(h, name, data) })
	}
	t.heading, t.line, t.skillTag = marker("date_heading"), marker("date_line"), marker("skills")
	t.agent = strings.TrimRight(render("agent", nil), "\n")
	t.date = render("date_reminder", map[string]any{"heading": t.heading, "line": t.line, "date": env.Workspace.Date,
		"memory": env.ProjectDocs})
	t.todo = strings.TrimRight(render("todo_reminder", nil), "\n")
	// Like the date reminder, these keep their final newline (Claude Code
	// 2.1.332 sends its first reminder so).
	t.attribution = render("attribution_reminder", map[string]any{
		"modelName": ModelDisplayName(env.Request.Model), "model": env.Request.Model})
	if len(env.ProjectDocs) > 0 {
		t.memory = render("memory_reminder", map[string]any{"memory": env.ProjectDocs})
	}
	t.titleSystem = strings.TrimRight(render("title_system", nil), "\n")
	t.results = claudestyle.Results{EmptyBash: render("empty_output", nil), NoMatches: render("no_matches", nil),
		ErrorFalse: []string{claudestyle.ToolBash}}
	if err != nil {
		return nil, err
	}
	t.skills = func(lines []string) (string, error) {
		s, err := p.Render(h, "skills_reminder", map[string]any{"skills": lines})
		return strings.TrimRight(s, "\n"), err
	}
	t.title = func(text string) (string, error) {
		s, err := p.Render(h, "title_user", map[string]any{"text": text})
		return strings.TrimRight(s, "\n"), err
	}
	return t, nil
}

// MessagesPolicy returns the flatten policy of the Messages wire: assistant
// texts, signed reasoning and calls merged into one turn; user turns
// deferred while calls are open; calls never answered aborted; contextual
// user messages left out; trailing reasoning dropped; bridged calls shown
// as the native calls, Edit inputs normalized.
func MessagesPolicy() *request.FlattenPolicy {
	return claudestyle.MessagesPolicy(func(c *request.Call) {
		reverse(c)
		if c.Name == claudestyle.ToolEdit {
			c.Arguments = normalizeEdit(c.Arguments)
		}
	})
}

var reverse = claudestyle.ReverseCall(Bridge)

// normalizeEdit gives an Edit input a replace_all (false) when it has none
// and takes the spaces and tabs off the end of each line of new_string, as
// Claude Code stores its edits. Keys keep their order; arguments that are
// not an object are kept as they are.
func normalizeEdit(args string) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) != nil {
		return args
	}
	var keys []string
	dec := json.NewDecoder(strings.NewReader(args))
	if _, err := dec.Token(); err != nil {
		return args
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return args
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return args
		}
	}
	if raw, ok := obj["new_string"]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			lines := strings.Split(s, "\n")
			for i, l := range lines {
				lines[i] = strings.TrimRightFunc(l, func(r rune) bool { return r == ' ' || r == '\t' })
			}
			obj["new_string"] = protocol.AppendString(nil, strings.Join(lines, "\n"))
		}
	}
	if _, ok := obj["replace_all"]; !ok {
		obj["replace_all"] = json.RawMessage("false")
		keys = append(keys, "replace_all")
	}
	b := []byte{'{'}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = protocol.AppendString(b, k)
		b = append(b, ':')
		b = append(b, obj[k]...)
	}
	return string(append(b, '}'))
}

// messagesGraph is the request graph of the Messages wire.
func messagesGraph(env *harness.Env, shape *Shape) (*pipeline.Graph, error) {
	t, err := loadMessagesTexts(env)
	if err != nil {
		return nil, fmt.Errorf("claude-code: %w", err)
	}
	return pipeline.New("request.claude-code.messages",
		pipeline.StageNode(request.NodeSystem, request.Update(func(s *request.Shaping) error {
			s.MessagesBody.System = anthropic.Blocks(
				anthropic.Block{Type: anthropic.BlockText, Text: t.agent, CacheControl: anthropic.Ephemeral()},
				anthropic.Block{Type: anthropic.BlockText, Text: shape.System, CacheControl: anthropic.Ephemeral()},
			)
			return nil
		}), pipeline.Describe("the agent line and the profile's system prompt (the billing block comes last, over the body)")),
		pipeline.StageNode(request.NodeTools, request.Update(func(s *request.Shaping) error {
			s.Tools = shape.Tools
			s.ToolKinds = kinds(shape.Tools)
			return nil
		}), pipeline.Describe("the profile's tools, native tool use")),
		pipeline.StageNode(request.NodeHistory, request.Update(func(s *request.Shaping) error {
			items, err := messagesHistory(s.Request, shape, t)
			if err != nil {
				return err
			}
			s.Transcript, err = request.Flatten(s.Transcript, items, MessagesPolicy(), nil)
			return err
		}), pipeline.Describe("history → Messages transcript (merged turns, signed thinking, native calls)")),
		pipeline.StageNode(request.NodeOptions, request.Update(func(s *request.Shaping) error {
			return messagesOptions(s, env, shape, t)
		}), pipeline.Describe("max_tokens, thinking, context_management, output_config, metadata, temperature; headers, ?beta=true; title request")),
		request.MessagesEncodeNode(request.MessagesStyle{
			ToolResult:   t.results.Render,
			CacheLast:    true,
			CollapseText: true,
			Edit: func(s *request.Shaping, body *anthropic.Request) error {
				return messagesEdit(s, body, shape, t)
			},
		}),
	)
}

func kinds(tools []request.Tool) protocol.ToolKinds {
	k := make(protocol.ToolKinds, len(tools))
	for _, t := range tools {
		k[t.Name] = protocol.ToolOutputKind{Kind: protocol.KindFunction}
	}
	return k
}

// messagesHistory returns the history items the Messages wire shows: custom
// calls that are not bridged writes left out (with their outputs), and
// developer messages left out except a <skills_instructions> block — a
// Skill list reminder in Full, the block as it is in Bare, nothing for a
// child agent.
func messagesHistory(req *protocol.ResponsesRequest, shape *Shape, t *messagesTexts) ([]protocol.ResponseItem, error) {
	items := claudestyle.DropUnreversible(req, Bridge).Input
	out := make([]protocol.ResponseItem, 0, len(items))
	for _, it := range items {
		m, ok := it.(*protocol.Message)
		if !ok || m == nil || m.Role != protocol.RoleDeveloper {
			out = append(out, it)
			continue
		}
		if shape.Child {
			continue
		}
		var content []protocol.ContentItem
		for _, c := range m.Content {
			if !strings.HasPrefix(strings.TrimLeftFunc(c.Text, unicode.IsSpace), t.skillTag) {
				continue
			}
			text := c.Text
			if shape.Profile == harness.ProfileFull {
				var err error
				if text, err = t.skills(claudestyle.Skills(c.Text)); err != nil {
					return nil, err
				}
			}
			content = append(content, protocol.ContentItem{Type: protocol.ContentInputText, Text: text})
		}
		if len(content) > 0 {
			out = append(out, &protocol.Message{Role: protocol.RoleDeveloper, Content: content})
		}
	}
	return out, nil
}

// messagesOptions sets the top-level fields, headers, query and the title
// request.
func messagesOptions(s *request.Shaping, env *harness.Env, shape *Shape, t *messagesTexts) error {
	model := s.Request.Model
	yes := true
	b := &s.MessagesBody
	b.Model = model
	b.MaxTokens = shape.MaxTokens(model)
	b.Stream = &yes
	b.Metadata = &anthropic.Metadata{UserID: UserID(env.ConversationKey)}
	if shape.ThinkingOn(env) {
		if Adaptive(model) {
			b.Thinking = &anthropic.Thinking{Type: "adaptive", Display: "omitted"}
			if shape.Fork {
				b.Thinking.Display = ""
			}
		} else {
			budget := b.MaxTokens - 1
			b.Thinking = &anthropic.Thinking{Type: "enabled", BudgetTokens: &budget}
			if !shape.Fork { // 2.1.332 omits the thinking text with a budget too
				b.Thinking.Display = "omitted"
			}
		}
		b.ContextManagement = &anthropic.ContextManagement{Edits: []anthropic.ContextEdit{
			{Type: "clear_thinking_20251015", Keep: json.RawMessage(`"all"`)}}}
	}
	if e := shape.Effort(env); e != "" {
		b.OutputConfig = &anthropic.OutputConfig{Effort: e}
	}
	if shape.Child {
		one := 1.0
		b.Temperature = &one
	}
	s.Path = anthropic.Path
	s.Query = map[string]string{"beta": "true"}
	s.Headers = headers(shape.Profile, env.ConversationKey, shape.Fork)
	if d, ok := currentDefaults(model); ok && !shape.Fork {
		s.Headers[anthropic.HeaderBeta] = modelBeta(s.Headers[anthropic.HeaderBeta], d)
	}
	if FirstTurn(s.Request) && len(shape.Tools) > 0 {
		title, err := titleRequest(s.Request, env, shape, t)
		if err != nil {
			return err
		}
		s.TitleRequest = title
	}
	return nil
}

// FirstTurn reports whether a request is a session's first: every input item
// is a user or developer message (nothing the model said or did yet).
func FirstTurn(req *protocol.ResponsesRequest) bool {
	if len(req.Input) == 0 {
		return false
	}
	for _, it := range req.Input {
		m, ok := it.(*protocol.Message)
		if !ok || m == nil || m.Role != protocol.RoleUser && m.Role != protocol.RoleDeveloper {
			return false
		}
	}
	return true
}

// titleSchema is the output format of the title request.
const titleSchema = `{"type":"json_schema","schema":{"type":"object","properties":{"title":{"type":"string"}},"required":["title"],"additionalProperties":false}}`

// titleRequest is the body of the title request: the title model, our
// title instructions, one user text <session>FIRST USER TEXT</session>,
// structured output {title}, temperature 1.
func titleRequest(req *protocol.ResponsesRequest, env *harness.Env, shape *Shape, t *messagesTexts) (json.RawMessage, error) {
	first := claudestyle.FirstUserText(req.Input)
	user, err := t.title(first)
	if err != nil {
		return nil, err
	}
	yes, one := true, 1.0
	body := anthropic.Request{
		Model:        TitleModel,
		Messages:     []anthropic.Message{{Role: anthropic.RoleUser, Content: anthropic.Text(user)}},
		OutputConfig: &anthropic.OutputConfig{Format: json.RawMessage(titleSchema)},
		Metadata:     &anthropic.Metadata{UserID: UserID(env.ConversationKey)},
		Temperature:  &one,
		MaxTokens:    TitleMaxTokens,
		Stream:       &yes,
	}
	msgs, err := json.Marshal(body.Messages)
	if err != nil {
		return nil, err
	}
	body.System = anthropic.Blocks(anthropic.TextBlock(billing(shape, first, "title", TitleModel, msgs, nil)),
		anthropic.TextBlock(t.titleSystem))
	return body.AppendJSON(nil)
}

// messagesEdit adds the first reminders and the environment message
// (withEnvironment) where the shape has an environment text, else the date
// reminder to the first user prompt; the Full profile's task reminders; and
// the billing block before the system blocks.
func messagesEdit(s *request.Shaping, body *anthropic.Request, shape *Shape, t *messagesTexts) error {
	if shape.Environment != "" {
		body.Messages = withEnvironment(body.Messages, shape.Environment, body.OutputConfig, t)
	} else {
		claudestyle.AddDateReminder(body.Messages, t.date, t.heading, t.line)
	}
	if shape.Profile == harness.ProfileFull && !shape.Child {
		for _, i := range staleSteps(body.Messages) {
			if i+1 < len(body.Messages) && body.Messages[i+1].Role == anthropic.RoleUser {
				c := &body.Messages[i+1].Content
				c.Blocks = append(c.Blocks, anthropic.TextBlock(t.todo))
			}
		}
	}
	msgs, err := json.Marshal(body.Messages)
	if err != nil {
		return err
	}
	for i := range body.Tools {
		if body.Tools[i].Name == DeferredPlaceholder { // sent as Claude Code 2.1.332 sends it
			yes := true
			body.Tools[i].DeferLoading = &yes
		}
	}
	tools, err := json.Marshal(body.Tools)
	if err != nil {
		return err
	}
	block := anthropic.TextBlock(billing(shape, claudestyle.FirstUserText(s.Request.Input), "main", body.Model, msgs, tools))
	body.System = anthropic.Blocks(append([]anthropic.Block{block}, body.System.Blocks...)...)
	return nil
}

// withEnvironment lays out the first user prompt as Claude Code 2.1.332
// does: the attribution reminder and, when the request carries project
// instructions, the project-memory reminder before its first text; then,
// right after that message, a role "system" message with the environment
// text, carrying the turn's effort as its own output_config. It is one text
// block when it is the last message (the cache mark then goes on it), a
// plain string otherwise. Without a user prompt nothing changes.
func withEnvironment(msgs []anthropic.Message, environment string, oc *anthropic.OutputConfig, t *messagesTexts) []anthropic.Message {
	i := claudestyle.FirstPrompt(msgs)
	if i < 0 {
		return msgs
	}
	c := &msgs[i].Content
	if c.Kind == anthropic.ContentText {
		*c = anthropic.Blocks(anthropic.TextBlock(c.Text))
	}
	lead := []anthropic.Block{anthropic.TextBlock(t.attribution)}
	if t.memory != "" {
		lead = append(lead, anthropic.TextBlock(t.memory))
	}
	at := slices.IndexFunc(c.Blocks, func(b anthropic.Block) bool { return b.Type == anthropic.BlockText })
	c.Blocks = slices.Insert(slices.Clone(c.Blocks), at, lead...)
	env := anthropic.Message{Role: anthropic.RoleSystem, Content: anthropic.Text(environment)}
	if i+1 == len(msgs) {
		env.Content = anthropic.Blocks(anthropic.TextBlock(environment))
	}
	if oc != nil && oc.Effort != "" {
		raw, err := json.Marshal(map[string]string{"effort": oc.Effort})
		if err == nil {
			env.Extra = anthropic.Extra{"output_config": raw}
		}
	}
	return slices.Insert(msgs, i+1, env)
}

// taskTools are the calls that count as keeping the task list.
var taskTools = []string{"TodoWrite", "TaskCreate", "TaskUpdate"}

// staleSteps returns the indexes of the assistant messages that are the
// RemindEvery-th, 2·RemindEvery-th, … step with tool calls since the last
// task-list call.
func staleSteps(msgs []anthropic.Message) []int {
	var at []int
	steps := 0
	for i := range msgs {
		if msgs[i].Role != anthropic.RoleAssistant {
			continue
		}
		switch claudestyle.StepsSince(msgs[i:i+1], taskTools...) {
		case 0:
			if hasCalls(msgs[i]) { // a task-list call
				steps = 0
			}
		default:
			if steps++; steps%RemindEvery == 0 {
				at = append(at, i)
			}
		}
	}
	return at
}

func hasCalls(m anthropic.Message) bool {
	for _, b := range m.Content.Blocks {
		if b.Type == anthropic.BlockToolUse {
			return true
		}
	}
	return false
}
