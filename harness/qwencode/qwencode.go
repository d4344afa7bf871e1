// Package qwencode registers the "qwen-code" harness: the request Qwen Code
// sends to a chat endpoint.
//
// The request is Qwen Code 0.24.4's as captured (docs/request-shaping.md
// #qwen-code): the system prompt, then the history, whose first user
// message starts with four text parts of our own, each inside
// <system-reminder> tags — the skills the skill tool loads
// (skills_reminder.tmpl), the context setup (setup.tmpl, below), the tools
// reachable through tool_search and tool_call (tools_reminder.tmpl) and
// the date (date_reminder.tmpl) — before the task; max_tokens 32000; Qwen Code's
// user agent and SDK headers. The variant "fork" (VariantFork) sends the
// fork's request instead, whose messages start with three of our own
// (prompts/pack/qwen-code):
//
//  1. the system prompt (system.tmpl, trailing newlines trimmed), followed,
//     when there is any, by an "Additional Developer Instructions" section
//     holding all developer text of the history — no contextual filter;
//     the texts of one message are joined by a newline, messages by a blank
//     line, blank messages left out — then, in the variant "fork" only,
//     by a "Session Instructions" section holding the request's
//     instructions (the engine's base prompt), trimmed, when they are not
//     blank — and by the client's AGENTS.md text (memory.tmpl), when the
//     request carries any;
//  2. a context-setup user message sent as one text part (setup.tmpl): the
//     date (the client's date, else the turn's, as "Weekday, Month D,
//     YYYY"), the OS ("linux", "darwin", …), the working directory (with
//     symbolic links resolved when it exists here) and its folder
//     structure: "CWD/" and then at most 20 entries, one per line, sorted
//     by name with "/" after directories, dot-files hidden, "├───" before
//     each and "└───" before the last. The directory is read from this
//     machine's disk only under the workspace policy local
//     (harness.Env.ReadWorkDir); otherwise, or when it cannot be read,
//     only the "CWD/" line is shown;
//  3. an assistant acknowledgement (ack.tmpl).
//
// Then the history, flattened by the kimi family's shared policy (package
// harness/internal/kimistyle, the same value kimi-cli uses) and
// normalised: a tool result given as a string is sent as one text part,
// reasoning_content loses its trailing newlines, and every call's
// arguments are compacted — for read_file, edit and run_shell_command only
// their known keys are kept, in a fixed order (read_file: file_path,
// offset, limit, pages; edit: file_path, old_string, new_string,
// replace_all; run_shell_command: command, description, directory,
// is_background, timeout).
//
// Tools are Qwen Code 0.24.4's fourteen (tools.go: names, parameter names
// and types as captured, descriptions ours), each of the function kind;
// run_shell_command, read_file, write_file, edit, glob and grep_search
// are bridged to the client's shell (Table), and the client's shell calls
// in the history are shown as the Qwen Code calls they came from, their
// outputs taken out of the client's framing (output.tmpl). The variant
// fork sends the client's function tools instead (when the client's shell
// is exec_command the model calls it directly). The body is
// {"model","messages","max_tokens":32000 (8000 in the variant fork),
// "stream":true,"stream_options":{"include_usage":true},"tools"}, with no
// thinking or effort field. Provider quirks of the upstream apply. The
// response direction is the protocol layer, then the bridge.
//
// Not emulated: the fork's environment switch that turns the developer and
// session sections off (a proxy takes no per-process switches; a prompt
// overlay can change the templates).
package qwencode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/internal/kimistyle"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/wire/chat"
)

func init() { harness.MustRegister(Spec()) }

// MaxTokens is the output limit every qwen-code body asks for, as Qwen
// Code 0.24 does; ForkMaxTokens is the fork's (variant fork).
const (
	MaxTokens     = 32000
	ForkMaxTokens = 8000
)

// VariantFork is the variant that keeps the fork's request where it
// differs from Qwen Code 0.24's: the engine's base instructions as a
// "Session Instructions" section of the system prompt (by default they are
// left out — Qwen Code sends no other agent's prompt,
// docs/request-shaping.md#the-engines-base-instructions) and max_tokens
// 8000.
const VariantFork = "fork"

// MaxListing is how many entries of the working directory the setup
// message shows.
const MaxListing = 20

// Spec returns the qwen-code harness.
func Spec() harness.Spec {
	return harness.Spec{
		Name:        harness.NameQwenCode,
		Description: "Qwen Code: its system prompt and setup exchange, the client's function tools, kimi flattening normalised the qwen way",
		Wires:       []harness.Wire{harness.WireChat},
		Request:     RequestGraph,
		Bridge:      Table(),
		Variants: []harness.VariantSpec{{Name: "request", Values: []string{VariantFork},
			Doc: "fork sends the request of the Codex fork (the client's tools, its max_tokens); the default sends Qwen Code's own"}},
	}
}

// Style returns qwen-code's chat rendering: the kimi family's, with string tool
// results sent as one text part and reasoning without trailing newlines.
func Style() request.ChatStyle {
	st := kimistyle.Style()
	st.OutputTextParts = true
	st.TrimReasoning = "\n"
	return st
}

// Policy returns qwen-code's flatten policy: the kimi family's, with the
// call arguments normalised by NormalizeArguments.
func Policy() request.FlattenPolicy {
	p := kimistyle.Policy()
	p.MapCall = func(c *request.Call) { c.Arguments = NormalizeArguments(c.Name, c.Arguments) }
	return p
}

// RequestGraph returns the qwen-code request graph (chat only):
// request.system → request.tools → request.history → request.options →
// request.provider → request.encode.
func RequestGraph(env *harness.Env) (*pipeline.Graph, error) {
	intro, err := Intro(env)
	if err != nil {
		return nil, fmt.Errorf("qwen-code: %w", err)
	}
	opts := env.RequestOptions()
	policy := Policy()
	maxTokens := MaxTokens
	if env.Model.Variant(harness.NameQwenCode) == VariantFork {
		maxTokens = ForkMaxTokens
	}
	forked := env.Model.Variant(harness.NameQwenCode) == VariantFork
	lead := intro[:1] // the system prompt; the setup goes into the first user message
	if forked {
		lead = intro // the fork: the setup as a user message and an acknowledgement
	}
	reminders, err := Reminders(env)
	if err != nil {
		return nil, fmt.Errorf("qwen-code: %w", err)
	}
	return pipeline.New("request.qwen-code",
		pipeline.StageNode(request.NodeSystem, request.Update(func(s *request.Shaping) error {
			s.Transcript = append(s.Transcript, lead...)
			return nil
		}), pipeline.Describe("system prompt (variant fork: then the context-setup user message and an assistant acknowledgement)")),
		toolsNode(forked),
		historyNode(env, opts, policy, forked),
		pipeline.StageNode(NodeReminders, request.Update(func(s *request.Shaping) error {
			if !forked {
				s.Transcript = withReminders(s.Transcript, reminders)
			}
			return nil
		}), pipeline.Describe("the skills, context-setup, deferred-tools and date reminders lead the first user message")),
		request.ChatBodyNode(request.ChatBody{Stream: true, MaxTokens: int64(maxTokens), Edit: func(s *request.Shaping) error {
			if !forked {
				s.Headers = Headers(env.Workspace.OS)
			}
			return nil
		}}, "model, max_tokens (32000; 8000 in the variant fork), stream with usage; Qwen Code's headers"),
		request.ProviderNode(opts),
		request.ChatEncodeNode(Style()),
	)
}

// toolsNode is request.tools: Qwen Code's own tools (the variant fork: the
// client's function tools).
func toolsNode(forked bool) pipeline.Node {
	if forked {
		return request.FunctionToolsNode()
	}
	tools := Tools()
	return pipeline.StageNode(request.NodeTools, request.Update(func(s *request.Shaping) error {
		s.Tools = append(s.Tools[:0], tools...)
		s.ToolKinds = make(protocol.ToolKinds, len(tools))
		for _, t := range tools {
			s.ToolKinds[t.Name] = protocol.ToolOutputKind{Kind: protocol.KindFunction}
		}
		return searchKinds(s)
	}), pipeline.Describe("Qwen Code's own tools, bridged to the client's shell; its tool_search and tool_call run the client's search and the tools it loaded"))
}

// searchKinds makes Qwen Code's tool_search and tool_call run the client's
// tool search when the client has one (docs/request-shaping.md#tool-search):
// tool_search's call goes back as a tool_search_call, and tool_call's as
// the call of the tool it names — one of those the history's
// tool_search_output items loaded, named as the native conversion names
// them (their kinds are added, the tools are not offered: Qwen Code
// reaches them through tool_call).
func searchKinds(s *request.Shaping) error {
	if !slices.ContainsFunc(s.Request.Tools, func(t protocol.ToolSpec) bool { return t.Type == protocol.ToolTypeToolSearch }) {
		return nil
	}
	s.ToolKinds["tool_search"] = protocol.ToolOutputKind{Kind: protocol.KindToolSearch}
	s.ToolKinds["tool_call"] = protocol.ToolOutputKind{Kind: protocol.KindToolCall}
	loaded, err := request.SearchLoadedTools(s.Request.Input)
	if err != nil || len(loaded) == 0 {
		return err
	}
	_, kinds, err := request.ConvertTools(loaded, nil)
	if err != nil {
		return err
	}
	for name, k := range kinds {
		if _, own := s.ToolKinds[name]; !own {
			s.ToolKinds[name] = k
		}
	}
	return nil
}

// loadedRefs lists the namespaced functions the history's
// tool_search_output items loaded, when the client has a tool search (nil
// otherwise).
func loadedRefs(req *protocol.ResponsesRequest) (map[request.ToolRef]bool, error) {
	if !slices.ContainsFunc(req.Tools, func(t protocol.ToolSpec) bool { return t.Type == protocol.ToolTypeToolSearch }) {
		return nil, nil
	}
	loaded, err := request.SearchLoadedTools(req.Input)
	if err != nil {
		return nil, err
	}
	refs := map[request.ToolRef]bool{}
	for _, t := range loaded {
		if t.Type == protocol.ToolTypeNamespace {
			for _, in := range t.Tools {
				refs[request.ToolRef{Namespace: t.Name, Name: in.Name}] = true
			}
		}
	}
	return refs, nil
}

// dispatchCall shows a call of a tool a search loaded (a namespaced
// function of loaded) as the tool_call Qwen Code makes to run it:
// {"name": <its wire name>, "arguments": <its arguments>}. It reports
// whether it did.
func dispatchCall(c *request.Call, loaded map[request.ToolRef]bool) bool {
	v, ok := c.Item.(*protocol.FunctionCall)
	if !ok || v.Namespace == "" || !loaded[request.ToolRef{Namespace: v.Namespace, Name: v.Name}] {
		return false
	}
	args := json.RawMessage(c.Arguments)
	if !json.Valid(args) {
		b, _ := json.Marshal(c.Arguments)
		args = b
	}
	b, err := json.Marshal(struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}{request.ChatToolName(v.Namespace, v.Name), args})
	if err != nil {
		return false
	}
	c.Name, c.Arguments = "tool_call", string(b)
	return true
}

// historyNode is request.history: the kimi-family flattening with qwen's
// normalisation; by default the client's shell calls are first shown as
// the Qwen Code calls they came from, their outputs taken out of the
// client's framing. The policy is made per run, so the calls it reversed
// belong to that run alone.
func historyNode(env *harness.Env, opts request.Options, policy request.FlattenPolicy, forked bool) pipeline.Node {
	if forked {
		return request.HistoryNode(opts, &policy)
	}
	table := Table()
	return pipeline.StageNode(request.NodeHistory, request.Update(func(s *request.Shaping) error {
		p := policy
		bridged := map[string]bool{}
		loaded, err := loadedRefs(s.Request)
		if err != nil {
			return err
		}
		p.MapCall = func(c *request.Call) {
			if dispatchCall(c, loaded) {
				return
			}
			if reverse(table, c) {
				bridged[c.ID] = true
			}
			c.Arguments = NormalizeArguments(c.Name, c.Arguments)
		}
		base := policy.MapOutput
		p.MapOutput = func(o *request.Output) {
			if bridged[o.CallID()] {
				unwrap(env, o)
			}
			if base != nil {
				base(o)
			}
		}
		out, err := request.Flatten(s.Transcript, s.Request.Input, &p, s.ToolNames)
		if err != nil {
			return err
		}
		s.Transcript = out
		return nil
	}), pipeline.Describe("history → transcript, client shell calls shown as Qwen Code calls"))
}

// Version is the Qwen Code release whose requests the harness sends.
const Version = "0.24.4"

// Headers are the identifying headers of Qwen Code 0.24.4's requests: its
// user agent and those of the OpenAI SDK it sends with (as captured on
// Linux x64 under Node 20), the OS taken from the client's.
func Headers(clientOS string) map[string]string {
	platform, sdkOS := "linux", "Linux"
	switch strings.ToLower(clientOS) {
	case "darwin", "macos":
		platform, sdkOS = "darwin", "MacOS"
	case "windows":
		platform, sdkOS = "win32", "Windows"
	}
	return map[string]string{
		"User-Agent":                  "QwenCode/" + Version + " (" + platform + "; x64)",
		"x-stainless-arch":            "x64",
		"x-stainless-lang":            "js",
		"x-stainless-os":              sdkOS,
		"x-stainless-package-version": "5.11.0",
		"x-stainless-retry-count":     "0",
		"x-stainless-runtime":         "node",
		"x-stainless-runtime-version": "v20.20.2",
	}
}

// NodeReminders is the node that puts the setup reminders into the first
// user message.
const NodeReminders = "request.reminders"

// Reminders are the text parts that lead the first user message, in the
// order Qwen Code 0.24.4 sends them: the skills reminder
// (skills_reminder.tmpl), the context setup (setup.tmpl, wrapped in
// <system-reminder> tags here), the reminder of the tools reachable
// through tool_search and tool_call (tools_reminder.tmpl) and the date
// (date_reminder.tmpl). The three reminder templates carry their own tags;
// each text loses its trailing newlines.
func Reminders(env *harness.Env) ([]request.Part, error) {
	name := harness.NameQwenCode
	data := setupData(env)
	var texts [4]string
	for i, t := range []string{"skills_reminder", "setup", "tools_reminder", "date_reminder"} {
		s, err := env.Prompts.Render(name, t, data)
		if err != nil {
			return nil, err
		}
		texts[i] = strings.TrimRight(s, "\n")
	}
	texts[1] = "<system-reminder>\n" + texts[1] + "\n</system-reminder>"
	parts := make([]request.Part, 0, len(texts))
	for _, t := range texts {
		parts = append(parts, request.Part{Kind: request.PartText, Text: t})
	}
	return parts, nil
}

// withReminders puts parts before the content of the first user message
// (sent as an array of parts); without a user message they go as one.
func withReminders(ts []request.Message, parts []request.Part) []request.Message {
	for i := range ts {
		if ts[i].Role != request.RoleUser {
			continue
		}
		m := ts[i]
		m.Content = append(append([]request.Part(nil), parts...), m.Content...)
		m.AsParts = true
		out := append([]request.Message(nil), ts...)
		out[i] = m
		return out
	}
	return append(ts, request.Message{Role: request.RoleUser, Content: parts, AsParts: true})
}

// SetupData is what setup.tmpl is rendered with.
type SetupData struct {
	// Date is "Weekday, Month D, YYYY".
	Date string
	// OS is "linux", "darwin", "windows", ….
	OS string
	// Cwd is the working directory.
	Cwd string
	// MaxItems is how many entries the listing shows at most.
	MaxItems int
	// Listing is "CWD/" and one line per entry.
	Listing string
}

// SectionData is what developer.tmpl and session.tmpl are rendered with.
type SectionData struct {
	// Text is the section's body.
	Text string
}

// MemoryData is what memory.tmpl is rendered with: the project
// instructions of the request.
type MemoryData struct {
	// Docs are the project docs, in the request's order.
	Docs []MemoryDoc
}

// MemoryDoc is one project doc of the memory section.
type MemoryDoc struct {
	// Source names the file: DIR/AGENTS.md, or AGENTS.md when the client
	// named no directory.
	Source string
	// Text is the instructions, trimmed.
	Text string
}

func memoryDocs(env *harness.Env) []MemoryDoc {
	docs := make([]MemoryDoc, 0, len(env.ProjectDocs))
	for _, d := range env.ProjectDocs {
		docs = append(docs, MemoryDoc{Source: d.Source(), Text: d.Text})
	}
	return docs
}

// Intro returns the three messages that start every qwen-code request: the
// system prompt, the setup user message and the acknowledgement.
func Intro(env *harness.Env) ([]request.Message, error) {
	name := harness.NameQwenCode
	system, err := env.Prompts.Render(name, "system", nil)
	if err != nil {
		return nil, err
	}
	system = strings.TrimRight(system, "\n")
	if dev := developerText(env.Request.Input); dev != "" {
		sec, err := env.Prompts.Render(name, "developer", SectionData{Text: dev})
		if err != nil {
			return nil, err
		}
		system += "\n\n" + strings.TrimRight(sec, "\n")
	}
	if base := strings.TrimSpace(env.Request.Instructions); base != "" && env.Model.Variant(name) == VariantFork {
		sec, err := env.Prompts.Render(name, "session", SectionData{Text: base})
		if err != nil {
			return nil, err
		}
		system += "\n\n" + strings.TrimRight(sec, "\n")
	}
	if docs := memoryDocs(env); len(docs) > 0 {
		sec, err := env.Prompts.Render(name, "memory", MemoryData{Docs: docs})
		if err != nil {
			return nil, err
		}
		system += "\n\n" + strings.TrimRight(sec, "\n")
	}
	setup, err := env.Prompts.Render(name, "setup", setupData(env))
	if err != nil {
		return nil, err
	}
	ack, err := env.Prompts.Render(name, "ack", nil)
	if err != nil {
		return nil, err
	}
	return []request.Message{
		{Role: request.RoleSystem, Content: request.TextParts(system)},
		{Role: request.RoleUser, Content: request.TextParts(strings.TrimRight(setup, "\n")), AsParts: true},
		{Role: request.RoleAssistant, Content: request.TextParts(strings.TrimRight(ack, "\n"))},
	}, nil
}

// developerText is all developer text of the history: a message's texts
// joined by "\n", messages by "\n\n", blank messages left out.
func developerText(items []protocol.ResponseItem) string {
	var msgs []string
	for _, it := range items {
		m, ok := it.(*protocol.Message)
		if !ok || m == nil || m.Role != protocol.RoleDeveloper {
			continue
		}
		var texts []string
		for _, c := range m.Content {
			if c.Type == protocol.ContentInputText || c.Type == protocol.ContentOutputText {
				texts = append(texts, c.Text)
			}
		}
		if t := strings.Join(texts, "\n"); strings.TrimSpace(t) != "" {
			msgs = append(msgs, t)
		}
	}
	return strings.Join(msgs, "\n\n")
}

func setupData(env *harness.Env) SetupData {
	ws := env.Workspace
	day := env.Now
	if d, err := time.Parse(time.DateOnly, ws.Date); err == nil {
		day = d
	}
	cwd := ws.Cwd
	if cwd == "" {
		cwd = "."
	}
	if filepath.IsAbs(cwd) && env.Files != harness.WorkspaceNone {
		if real, err := filepath.EvalSymlinks(cwd); err == nil {
			cwd = real
		}
	}
	osName := strings.ToLower(ws.OS)
	switch osName {
	case "":
		osName = "linux"
	case "macos":
		osName = "darwin"
	}
	return SetupData{
		Date:     day.Format("Monday, January 2, 2006"),
		OS:       osName,
		Cwd:      cwd,
		MaxItems: MaxListing,
		Listing:  FolderListing(cwd, env.ReadWorkDir),
	}
}

// DirReader lists the working directory ("." for itself): its entries and
// whether there were more. [harness.Env.ReadWorkDir] is the one the harness
// uses.
type DirReader func(sub string) ([]fs.DirEntry, bool, error)

// FolderListing is the setup message's folder structure of dir as read
// reads it: "DIR/", then at most MaxListing entries (see the package
// doc). When read refuses (the workspace policy none, a cwd that is not
// absolute) or fails, only the "DIR/" line is shown.
func FolderListing(dir string, read DirReader) string {
	lines := []string{strings.TrimSuffix(dir, "/") + "/"}
	if dir == "/" {
		lines[0] = "/"
	}
	ents, _, err := read(".")
	if err != nil {
		return lines[0]
	}
	var names []string
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, ".") {
			continue
		}
		if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	sort.Strings(names)
	names = names[:min(len(names), MaxListing)]
	for i, n := range names {
		prefix := "├───"
		if i == len(names)-1 {
			prefix = "└───"
		}
		lines = append(lines, prefix+n)
	}
	return strings.Join(lines, "\n")
}

// argumentOrder lists, per tool, the argument keys kept and their order.
var argumentOrder = map[string][]string{
	"read_file":         {"file_path", "offset", "limit", "pages"},
	"edit":              {"file_path", "old_string", "new_string", "replace_all"},
	"run_shell_command": {"command", "description", "directory", "is_background", "timeout"},
}

// NormalizeArguments is a call's arguments as qwen-code sends them: for
// read_file, edit and run_shell_command given as an object only their
// known keys, in their fixed order; for anything else the JSON compacted
// with its keys in their order. Arguments that are not JSON stay as they
// are.
func NormalizeArguments(tool, args string) string {
	if !json.Valid([]byte(args)) {
		return args
	}
	if keys, ok := argumentOrder[tool]; ok {
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(args), &obj) == nil && obj != nil {
			b := []byte{'{'}
			for _, k := range keys {
				v, ok := obj[k]
				if !ok {
					continue
				}
				if len(b) > 1 {
					b = append(b, ',')
				}
				b = chat.AppendString(b, k)
				b = append(b, ':')
				b = appendCompact(b, v)
			}
			return string(append(b, '}'))
		}
	}
	return string(appendCompact(nil, json.RawMessage(args)))
}

func appendCompact(dst []byte, raw json.RawMessage) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return append(dst, raw...)
	}
	return append(dst, buf.Bytes()...)
}
