package scripted

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/harnessflow/harnessflow/harness"
	_ "github.com/harnessflow/harnessflow/harness/all" // the native shell tools of every harness
	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/harness/kimicode"
	"github.com/harnessflow/harnessflow/wire"
	"github.com/harnessflow/harnessflow/wire/anthropic"
	"github.com/harnessflow/harnessflow/wire/chat"
)

// Created is the fixed "created" time of every answer (Unix seconds).
const Created = 1767225600

// DefaultModel is the model name used when neither the script nor the
// request names one.
const DefaultModel = "harnessflow-scripted"

// maxBody caps a request body.
const maxBody = 32 << 20

// isShellTool reports whether a nameless scripted call may run its command
// with the tool name: a client shell tool the harnesses' bridge knows, or
// the native shell tool (the plain mapping of its bridge) of a registered
// harness.
func isShellTool(name string) bool {
	if slices.Contains(bridge.ClientShellNames(), name) {
		return true
	}
	for _, s := range harness.All() {
		if m, ok := s.Bridge.Lookup(name); ok && m.Plain {
			return true
		}
	}
	return false
}

// Handler serves a Script as a Chat Completions endpoint. It is safe for
// concurrent use; it keeps no state between requests.
type Handler struct {
	script *Script
	opts   Options
}

// New returns a handler answering with s (nil: Default()). s must not be
// modified afterwards.
func New(s *Script) *Handler {
	if s == nil {
		s = Default()
	}
	return &Handler{script: s}
}

// NewWithOptions returns a handler answering with s (nil: Default()) the
// way opts says (see Options); it reports options that fail Options.Check.
func NewWithOptions(s *Script, opts Options) (*Handler, error) {
	if err := opts.Check(); err != nil {
		return nil, err
	}
	h := New(s)
	h.opts = opts
	return h, nil
}

// Wires returns the wires the scripted model answers, chat first: Chat
// Completions (POST /v1/chat/completions) and Anthropic Messages (POST
// /v1/messages).
func Wires() []wire.Wire { return []wire.Wire{wire.Chat, wire.Messages} }

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case path == "/v1"+chat.Path || path == chat.Path:
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeError(w, http.StatusMethodNotAllowed, "use POST for "+path)
			return
		}
		h.completions(w, r)
	case path == "/v1"+anthropic.Path || path == anthropic.Path:
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeMessagesError(w, http.StatusMethodNotAllowed, "use POST for "+path)
			return
		}
		h.messages(w, r) // the Messages mode (messages.go)
	case (path == "/v1/models" || path == "/models") && r.Method == http.MethodGet:
		w.Header().Set("Content-Type", "application/json")
		model := h.script.Model
		if model == "" {
			model = DefaultModel
		}
		if r.Header.Get("anthropic-version") != "" { // an Anthropic client: its list's shape
			fmt.Fprintf(w, `{"data":[{"type":"model","id":%s,"display_name":%[1]s,"created_at":%s}],"has_more":false,"first_id":%[1]s,"last_id":%[1]s}`+"\n",
				marshal(model), marshal(time.Unix(Created, 0).UTC().Format(time.RFC3339)))
			return
		}
		fmt.Fprintf(w, `{"object":"list","data":[{"id":%s,"object":"model","created":%d,"owned_by":"harnessflow"}]}`+"\n", marshal(model), Created)
	default:
		writeError(w, http.StatusNotFound, "no route for "+r.Method+" "+r.URL.Path+" (the scripted model serves POST /v1/chat/completions and /v1/messages)")
	}
}

// request is what a turn is chosen and played from.
type request struct {
	body           []byte
	model          string
	stream         bool
	includeUsage   bool
	tools          []chat.Tool
	lastUser       string
	toolOutput     string
	hasToolResult  bool
	assistantTurns int

	messages    []message    // role and text of every message (chat), for recognising protocols
	proto       textProtocol // the harness protocol recognised (Script.Protocols)
	promptTools bool         // tools were read from the prompt (Options.TextToolFormat)
}

// message is a chat message's role and text.
type message struct{ role, text string }

// prepare applies the handler's readings to a parsed request: the tools a
// prompt lists (answering calls as text, a request without tools) and the
// text protocol (Script.Protocols), whose observations count as tool
// results.
func (h *Handler) prepare(r *request) {
	if h.opts.textTools() != "" && len(r.tools) == 0 {
		if r.tools = promptTools(r.messages); len(r.tools) > 0 {
			r.promptTools = true
			if out, ok := promptToolResult(r.lastUser); ok && !r.hasToolResult {
				r.hasToolResult, r.toolOutput = true, out
			}
		}
	}
	if !h.script.Protocols {
		return
	}
	r.proto = detectProtocol(r)
	if r.proto.textual() && !r.hasToolResult && r.assistantTurns == 0 {
		if out, ok := r.proto.observation(r.lastUser); ok {
			r.hasToolResult, r.toolOutput = true, out
		}
	}
}

// offersTools reports whether the model can call anything: the request
// has tools, or speaks a text protocol recognised.
func (r *request) offersTools() bool {
	return len(r.tools) > 0 || r.proto != protoNone
}

// hasTool reports whether the request offers a tool of this name.
func (r *request) hasTool(name string) bool {
	for _, t := range r.tools {
		if t.Function.Name == name {
			return true
		}
	}
	return false
}

// shellTool is the tool a nameless call runs its command with.
type shellTool struct {
	name   string
	schema json.RawMessage
}

// shell returns the first shell-like tool of the request; for
// mini-swe-agent's tool-call mode without one, the "bash" tool its prompt
// names.
func (r *request) shell() (shellTool, bool) {
	for _, tool := range r.tools {
		if isShellTool(tool.Function.Name) {
			return shellTool{tool.Function.Name, tool.Function.Parameters}, true
		}
	}
	if r.proto == protoMiniTools {
		return shellTool{name: "bash"}, true
	}
	return shellTool{}, false
}

func parseRequest(body []byte) (*request, error) {
	var cr chat.Request
	if err := json.Unmarshal(body, &cr); err != nil {
		return nil, err
	}
	req := &request{body: body, model: cr.Model, stream: cr.Stream != nil && *cr.Stream, tools: cr.Tools}
	if len(cr.StreamOptions) > 0 {
		var so struct {
			IncludeUsage bool `json:"include_usage"`
		}
		if err := json.Unmarshal(cr.StreamOptions, &so); err == nil {
			req.includeUsage = so.IncludeUsage
		}
	}
	last := -1
	for i, m := range cr.Messages {
		if m.Role == chat.RoleUser {
			last = i
		}
		req.messages = append(req.messages, message{role: string(m.Role), text: contentText(m.Content)})
	}
	if last >= 0 {
		req.lastUser = contentText(cr.Messages[last].Content)
	}
	for _, m := range cr.Messages[last+1:] {
		switch m.Role {
		case chat.RoleTool:
			req.hasToolResult = true
			req.toolOutput = contentText(m.Content)
		case chat.RoleAssistant:
			req.assistantTurns++
		}
	}
	return req, nil
}

func contentText(c chat.Content) string {
	switch c.Kind {
	case chat.ContentText:
		return c.Text
	case chat.ContentParts:
		var parts []string
		for _, p := range c.Parts {
			if p.Text != "" {
				parts = append(parts, p.Text)
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

func (m *Match) matches(r *request) bool {
	if m == nil {
		return true
	}
	if m.Tools != nil && *m.Tools != r.offersTools() {
		return false
	}
	if m.ToolResult != nil && *m.ToolResult != r.hasToolResult {
		return false
	}
	if m.UserContains != "" && !strings.Contains(r.lastUser, m.UserContains) {
		return false
	}
	if m.AssistantTurns != nil && *m.AssistantTurns != r.assistantTurns {
		return false
	}
	if m.HasTool != "" && !r.hasTool(m.HasTool) {
		return false
	}
	if m.ToolResultContains != "" && (!r.hasToolResult || !strings.Contains(r.toolOutput, m.ToolResultContains)) {
		return false
	}
	if m.UserMatches != "" {
		re, err := regexp.Compile(m.UserMatches)
		if err != nil || !re.MatchString(r.lastUser) { // Check rejects a bad pattern; a hand-built script may not have been checked
			return false
		}
	}
	return len(m.Body) == 0 || bodyHas(r.body, m.Body)
}

// bodyHas reports whether the JSON object body has each field of want
// with an equal JSON value (a null wanted: absent or null).
func bodyHas(body []byte, want map[string]json.RawMessage) bool {
	var got map[string]any
	if json.Unmarshal(body, &got) != nil {
		return false
	}
	for k, raw := range want {
		var w any
		if json.Unmarshal(raw, &w) != nil || !reflect.DeepEqual(got[k], w) {
			return false
		}
	}
	return true
}

// answer is a played turn.
type answer struct {
	reasoning, text string
	calls           []call
	commands        []string // nameless calls of a text protocol, rendered into the text (protocols.go)
	toolText        string   // the calls written as text after the text (Options.TextToolFormat)
	thinkText       string   // reasoning and </think> written before the text (qwen3_thinking)
	finish          string
}

type call struct{ id, name, args string }

// play chooses the turn for r and renders it; ok is false when no turn
// applies. A status turn is returned as is.
func (h *Handler) play(r *request, id string) (t Turn, a answer, ok bool) {
	for _, t := range h.script.Turns {
		if !t.When.matches(r) {
			continue
		}
		if t.Status != 0 {
			return t, answer{}, true
		}
		a, playable := h.render(t, r, id)
		if playable {
			return t, a, true
		}
	}
	return Turn{}, answer{text: "The harnessflow scripted model has no scripted answer for this request.", finish: "stop"}, false
}

func (h *Handler) render(t Turn, r *request, id string) (answer, bool) {
	a := answer{reasoning: h.expand(t.Reasoning, r, t.Capture), text: h.expand(t.Text, r, t.Capture), finish: t.FinishReason}
	for i, c := range t.ToolCalls {
		name, schema := c.Name, json.RawMessage(nil)
		if name == "" {
			sh, ok := r.shell()
			switch {
			case ok:
				name, schema = sh.name, sh.schema
			case r.proto.textual() && c.Command != "":
				a.commands = append(a.commands, c.Command)
				continue
			default:
				return answer{}, false
			}
		} else {
			for _, tool := range r.tools {
				if tool.Function.Name == name {
					schema = tool.Function.Parameters
					break
				}
			}
		}
		args := "{}"
		if len(c.Arguments) > 0 {
			var err error
			if args, err = argumentsObject(c.Arguments); err != nil {
				return answer{}, false // Check rejects this; a hand-built script may not have been checked
			}
			args = h.expandArguments(args, r, t.Capture)
		} else if c.Command != "" {
			args = shellArguments(schema, c.Command)
		}
		a.calls = append(a.calls, call{id: fmt.Sprintf("call_%s_%d", id, i), name: name, args: args})
	}
	if a.finish == "" {
		a.finish = "stop"
		if len(a.calls) > 0 {
			a.finish = "tool_calls"
		}
	}
	if h.script.Protocols && r.proto != protoNone {
		sh, _ := r.shell()
		a = protocolReply(r.proto, a, sh, id)
	}
	return a, true
}

// expandArguments expands the placeholders in the string values of an
// arguments object (compact JSON text of an object).
func (h *Handler) expandArguments(args string, r *request, capture string) string {
	if !strings.Contains(args, "{{") {
		return args
	}
	var v map[string]any
	if json.Unmarshal([]byte(args), &v) != nil {
		return args
	}
	var walk func(x any) any
	walk = func(x any) any {
		switch x := x.(type) {
		case string:
			return h.expand(x, r, capture)
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		}
		return x
	}
	return marshal(walk(v))
}

func (h *Handler) model(r *request) string {
	switch {
	case h.script.Model != "":
		return h.script.Model
	case r.model != "":
		return r.model
	}
	return DefaultModel
}

func (h *Handler) expand(s string, r *request, capture string) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	return strings.NewReplacer(
		"{{tool_output}}", quoteOutput(r.toolOutput),
		"{{user}}", r.lastUser,
		"{{model}}", h.model(r),
		"{{capture}}", captured(capture, r),
	).Replace(s)
}

// captured is what a turn's Capture pattern finds in what the model saw
// last — the last tool result when one follows the last user message, else
// the last user message: its first group (the whole match without a
// group), trimmed; "" when the pattern is empty, invalid or does not match.
func captured(pattern string, r *request) string {
	if pattern == "" {
		return ""
	}
	re, err := regexp.Compile(pattern)
	if err != nil { // Check rejects this; a hand-built script may not have been checked
		return ""
	}
	seen := r.lastUser
	if r.hasToolResult {
		seen = r.toolOutput
	}
	m := re.FindStringSubmatch(seen)
	switch {
	case m == nil:
		return ""
	case len(m) > 1:
		return strings.TrimSpace(m[1])
	}
	return strings.TrimSpace(m[0])
}

// quoteOutput returns the part of a tool result worth quoting: the section
// after an "Output:" line when there is one (Codex's exec_command result),
// else the text after a leading "Wall time: … seconds" line (Kimi Code's
// result header, as the kimi-code harness renders results), trimmed, at
// most 500 bytes.
func quoteOutput(s string) string {
	if i := strings.LastIndex(s, "Output:\n"); i >= 0 {
		s = s[i+len("Output:\n"):]
	} else if first, rest, ok := strings.Cut(s, "\n"); ok && strings.HasPrefix(first, kimicode.WallTimePrefix) && strings.HasSuffix(first, kimicode.WallTimeSuffix) {
		s = rest
	}
	s = strings.TrimSpace(s)
	if len(s) > 500 {
		cut := 500
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	if s == "" {
		return "(no output)"
	}
	return s
}

// shellArguments shapes a shell command to a tool's parameter schema.
func shellArguments(schema json.RawMessage, command string) string {
	var sch struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(schema, &sch) // no usable schema: the plain {"command": ...} form
	isArray := func(name string) bool {
		p, ok := sch.Properties[name]
		if !ok {
			return false
		}
		switch t := p.Type.(type) {
		case string:
			return t == "array"
		case []any:
			for _, x := range t {
				if x == "array" {
					return true
				}
			}
		}
		return false
	}
	argv := func() []string {
		if strings.ContainsAny(command, "|&;<>()$`\\\"'*?[]#~=%") {
			return []string{"bash", "-lc", command}
		}
		return strings.Fields(command)
	}
	args := map[string]any{}
	key := "command"
	if _, ok := sch.Properties["cmd"]; ok {
		key = "cmd"
	}
	if isArray(key) {
		args[key] = argv()
	} else {
		args[key] = command
	}
	for _, name := range sch.Required {
		if _, set := args[name]; set {
			continue
		}
		if p, ok := sch.Properties[name]; ok && p.Type == "string" {
			args[name] = "harnessflow scripted call"
		}
	}
	return marshal(args)
}

func (h *Handler) completions(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r, writeError)
	if !ok {
		return
	}
	req, err := parseRequest(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid chat completions request: "+err.Error())
		return
	}
	if h.opts.RejectTools && len(req.tools) > 0 {
		writeError(w, http.StatusBadRequest, ErrToolsRejected)
		return
	}
	h.prepare(req)
	id := requestHash(body)
	turn, a, _ := h.play(req, id)
	if turn.Status != 0 {
		writeError(w, turn.Status, turn.Error)
		return
	}
	if f := h.opts.textTools(); f != "" {
		textAnswer(f, &a)
	}
	if !req.stream {
		h.unary(w, req, id, a)
		return
	}
	h.streamAnswer(w, r, req, id, a)
}

func requestHash(body []byte) string {
	f := fnv.New64a()
	_, _ = f.Write(body) // hash.Hash writes never fail
	return fmt.Sprintf("%016x", f.Sum64())
}

// usage of an answer, computed from sizes (about 4 bytes per token).
func usage(req *request, a answer) *usageJSON {
	tok := func(n int) int64 { return int64((n + 3) / 4) }
	out := len(a.thinkText) + len(a.text) + len(a.toolText)
	for _, c := range a.calls {
		out += len(c.name) + len(c.args)
	}
	u := &usageJSON{PromptTokens: tok(len(req.body)), CompletionTokens: tok(out) + tok(len(a.reasoning))}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	if a.reasoning != "" {
		u.CompletionTokensDetails = &struct {
			ReasoningTokens int64 `json:"reasoning_tokens"`
		}{tok(len(a.reasoning))}
	}
	return u
}

type usageJSON struct {
	PromptTokens            int64 `json:"prompt_tokens"`
	CompletionTokens        int64 `json:"completion_tokens"`
	TotalTokens             int64 `json:"total_tokens"`
	CompletionTokensDetails *struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details,omitempty"`
}

type chunkJSON struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []choiceJSON `json:"choices"`
	Usage   *usageJSON   `json:"usage,omitempty"`
}

type choiceJSON struct {
	Index        int       `json:"index"`
	Delta        deltaJSON `json:"delta"`
	FinishReason *string   `json:"finish_reason"`
}

type deltaJSON struct {
	Role             string          `json:"role,omitempty"`
	Content          *string         `json:"content,omitempty"`
	ReasoningContent string          `json:"reasoning_content,omitempty"`
	ToolCalls        []toolCallDelta `json:"tool_calls,omitempty"`
}

type toolCallDelta struct {
	Index    int     `json:"index"`
	ID       string  `json:"id,omitempty"`
	Type     string  `json:"type,omitempty"`
	Function fnDelta `json:"function"`
}

type fnDelta struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// fragments cuts s into pieces of at most n bytes, on rune boundaries.
func fragments(s string, n int) []string {
	if n <= 0 {
		n = 8
	}
	var out []string
	for len(s) > 0 {
		cut := min(n, len(s))
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}

func (h *Handler) streamAnswer(w http.ResponseWriter, r *http.Request, req *request, id string, a answer) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	model := h.model(req)
	delay := time.Duration(h.script.DelayMS) * time.Millisecond
	first := true
	send := func(data string) bool {
		if !first && delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-r.Context().Done():
				t.Stop()
				return false
			case <-t.C:
			}
		}
		first = false
		if _, err := io.WriteString(w, "data: "+data+"\n\n"); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	chunk := func(d deltaJSON, finish *string) bool {
		return send(marshal(chunkJSON{ID: "chatcmpl-" + id, Object: "chat.completion.chunk", Created: Created, Model: model,
			Choices: []choiceJSON{{Delta: d, FinishReason: finish}}}))
	}
	empty := ""
	if !chunk(deltaJSON{Role: "assistant", Content: &empty}, nil) {
		return
	}
	size := h.script.ChunkSize
	for _, f := range fragments(a.reasoning, size) {
		if !chunk(deltaJSON{ReasoningContent: f}, nil) {
			return
		}
	}
	for _, f := range awkwardFragments(a.thinkText) {
		if !chunk(deltaJSON{Content: &f}, nil) {
			return
		}
	}
	for _, f := range fragments(a.text, size) {
		if !chunk(deltaJSON{Content: &f}, nil) {
			return
		}
	}
	if a.toolText != "" {
		lead := a.toolText
		if a.text != "" {
			lead = "\n\n" + lead
		}
		for _, f := range awkwardFragments(lead) {
			if !chunk(deltaJSON{Content: &f}, nil) {
				return
			}
		}
	}
	for i, c := range a.calls {
		if !chunk(deltaJSON{ToolCalls: []toolCallDelta{{Index: i, ID: c.id, Type: "function", Function: fnDelta{Name: c.name}}}}, nil) {
			return
		}
		for _, f := range fragments(c.args, size) {
			if !chunk(deltaJSON{ToolCalls: []toolCallDelta{{Index: i, Function: fnDelta{Arguments: f}}}}, nil) {
				return
			}
		}
	}
	finish := a.finish
	if !chunk(deltaJSON{}, &finish) {
		return
	}
	if req.includeUsage {
		if !send(marshal(chunkJSON{ID: "chatcmpl-" + id, Object: "chat.completion.chunk", Created: Created, Model: model,
			Choices: []choiceJSON{}, Usage: usage(req, a)})) {
			return
		}
	}
	send("[DONE]")
}

func (h *Handler) unary(w http.ResponseWriter, req *request, id string, a answer) {
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type toolCall struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	type chatMessage struct {
		Role             string     `json:"role"`
		Content          *string    `json:"content"`
		ReasoningContent string     `json:"reasoning_content,omitempty"`
		ToolCalls        []toolCall `json:"tool_calls,omitempty"`
	}
	type choice struct {
		Index        int         `json:"index"`
		Message      chatMessage `json:"message"`
		FinishReason string      `json:"finish_reason"`
	}
	msg := chatMessage{Role: "assistant", ReasoningContent: a.reasoning}
	if a.text != "" || a.toolText != "" || len(a.calls) == 0 {
		text := a.text
		if a.toolText != "" {
			if text != "" {
				text += "\n\n"
			}
			text += a.toolText
		}
		text = a.thinkText + text
		msg.Content = &text
	}
	for _, c := range a.calls {
		msg.ToolCalls = append(msg.ToolCalls, toolCall{ID: c.id, Type: "function", Function: fn{Name: c.name, Arguments: c.args}})
	}
	out := struct {
		ID      string     `json:"id"`
		Object  string     `json:"object"`
		Created int64      `json:"created"`
		Model   string     `json:"model"`
		Choices []choice   `json:"choices"`
		Usage   *usageJSON `json:"usage"`
	}{"chatcmpl-" + id, "chat.completion", Created, h.model(req), []choice{{Message: msg, FinishReason: a.finish}}, usage(req, a)}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, marshal(out)+"\n") // a failed write means the client went away
}

// readBody reads a request body of at most maxBody bytes. On failure it
// writes the error (413 over the limit, 400 otherwise) with writeErr, in the
// endpoint's own error format, and returns false.
func readBody(w http.ResponseWriter, r *http.Request, writeErr func(http.ResponseWriter, int, string)) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err == nil {
		return body, true
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		writeErr(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes", tooBig.Limit))
		return nil, false
	}
	writeErr(w, http.StatusBadRequest, "read request body: "+err.Error())
	return nil, false
}

// writeError writes an OpenAI-style error body.
func writeError(w http.ResponseWriter, status int, msg string) {
	typ, code := "invalid_request_error", ""
	switch {
	case status == http.StatusUnauthorized:
		typ, code = "authentication_error", "invalid_api_key"
	case status == http.StatusNotFound:
		typ, code = "invalid_request_error", "not_found"
	case status == http.StatusTooManyRequests:
		typ, code = "rate_limit_error", "rate_limit_exceeded"
	case status >= 500:
		typ, code = "server_error", "server_error"
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	body := map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nilIfEmpty(code)}}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, marshal(body)+"\n") // a failed write means the client went away
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
