// Package kimicode registers the "kimi-code" harness: the request Kimi Code
// CLI 2.1.0 (@moonshot-ai/kimi-code, the TypeScript successor of Kimi CLI)
// sends to a Moonshot-style chat endpoint, as captured on loopback
// (docs/request-shaping.md#kimi-code); the variant "fork" (VariantFork)
// sends the Codex fork's kimi-code request where the two differ.
//
// # Body
//
// {"model","messages","stream":true,"stream_options":{"include_usage":
// true},"max_completion_tokens","tools","thinking","prompt_cache_key"}
// (the wire encoder's key order; Kimi Code writes tools before stream and
// max_completion_tokens last). max_completion_tokens is the model's known
// output cap (the model table), else 262144, Kimi Code's default context
// size (the variant fork: 32768). thinking is {"type":"enabled","keep":
// "all"}, or {"type":"disabled"} when the request's reasoning effort is
// "none" (the fork always enables it). prompt_cache_key is "session_" and
// the conversation key (the request's prompt_cache_key, else the client's
// session header), else a UUID-shaped hash of the model and the first
// user prompt: one key for every turn of a conversation, from the request
// alone. Kimi Code's user agent and SDK headers go with it; its per-device
// headers (device name, model, OS release and id) do not, since a proxy
// has no device of its own (the variant fork sends none).
//
// # Messages
//
//  1. The system prompt (system.tmpl, our wording in Kimi Code 2.1.0's
//     section order; the variant fork: fork_system.tmpl, the fork's
//     section order with the date inside): the OS and shell, the working
//     directory and its listing, the client's AGENTS.md text (the fork
//     leaves it out, a bug we do not keep: docs/request-shaping.md#kimi-code) and the skills —
//     Kimi Code's three built-in ones and the session's.
//  2. The history, flattened by the kimi family's policy (package
//     harness/internal/kimistyle) with Kimi Code's options: user text as it
//     is, call arguments compacted with their key order kept, tool-call ids
//     made of [A-Za-z0-9_-] only (Kimi Code's rule; the fork only turns ':'
//     into '_'), reasoning_content on every assistant message while
//     thinking is on.
//  3. After the first user prompt, the date reminder (date_reminder.tmpl,
//     the request's date; not in the variant fork, whose prompt holds the
//     date); after every user prompt, the auto-permission reminder
//     (auto_reminder.tmpl) unless that prompt already is it.
//
// # Tools and bridge
//
// Kimi Code 2.1.0's 25 tools (tools.json; the variant fork: the fork's 25,
// fork_tools.json), names and parameters as captured, descriptions ours.
// Table bridges Bash (timeout in seconds), Read (negative offsets count from
// the end), Write (overwrite or append), Edit, Glob and Grep onto the
// client's shell; every other tool is answered with a clear tool error
// (bridge.UnavailableSpec). In the history the client's shell calls are
// shown again as the Kimi Code calls they came from (any other shell call
// as Bash) and their outputs are rendered the way Kimi Code renders a tool
// result: "Wall time: S seconds", then the output, "Command executed
// successfully." for an empty success, and for a failure
// "<system>ERROR: Tool execution failed.</system>", the output and
// "Command failed with exit code: N." (the variant fork: the output alone,
// failures wrapped by the kimi family's rule).
package kimicode

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/internal/kimistyle"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

func init() { harness.MustRegister(Spec()) }

// VariantFork is the variant that sends the Codex fork's kimi-code request
// where it differs from Kimi Code 2.1.0's.
const VariantFork = "fork"

// Version is the Kimi Code release whose requests the harness sends.
const Version = "2.1.0"

// Output limits: Kimi Code's default context size (sent as
// max_completion_tokens when the model's output cap is not known) and the
// fork's fixed limit.
const (
	DefaultMaxTokens = 262144
	ForkMaxTokens    = 32768
)

// CacheKeyPrefix starts every prompt_cache_key.
const CacheKeyPrefix = "session_"

// NodeReminders is the node that adds the date and auto-permission
// reminders and makes the tool-call ids Kimi Code's.
const NodeReminders = "request.reminders"

// Spec returns the kimi-code harness.
func Spec() harness.Spec {
	return harness.Spec{
		Name:        harness.NameKimiCode,
		Description: "Kimi Code 2.1.0: its system prompt, date and auto-permission reminders, its 25 tools bridged to the client's shell, kimi flattening",
		Wires:       []harness.Wire{harness.WireChat},
		RouteName:   "KimiCode",
		Request:     RequestGraph,
		Bridge:      Table(),
		Variants: []harness.VariantSpec{{Name: "request", Values: []string{VariantFork},
			Doc: "fork sends the request of the Codex fork (its prompt layout, tool list, 32768 tokens, thinking always on); the default sends Kimi Code 2.1.0's"}},
	}
}

// forked reports whether the turn sends the fork's request.
func forked(env *harness.Env) bool { return env.Model.Variant(harness.NameKimiCode) == VariantFork }

// RequestGraph returns the kimi-code request graph (chat only):
// request.system → request.tools → request.history → request.reminders →
// request.options → request.provider → request.encode.
func RequestGraph(env *harness.Env) (*pipeline.Graph, error) {
	fork := forked(env)
	system, err := SystemPrompt(env, fork)
	if err != nil {
		return nil, fmt.Errorf("kimi-code: system prompt: %w", err)
	}
	tools, err := Tools(env.Prompts, fork)
	if err != nil {
		return nil, fmt.Errorf("kimi-code: %w", err)
	}
	reminders, err := reminderTexts(env, fork)
	if err != nil {
		return nil, fmt.Errorf("kimi-code: %w", err)
	}
	opts := env.RequestOptions()
	thinking := Thinking(env.Request, fork)
	maxTokens := int64(DefaultMaxTokens)
	if fork {
		maxTokens = ForkMaxTokens
	} else if env.Model.MaxOutputTokens > 0 {
		maxTokens = env.Model.MaxOutputTokens
	}
	key := CacheKey(env)
	style := kimistyle.Style()
	style.AssistantReasoning = string(thinking) != string(thinkingDisabled)
	return pipeline.New("request.kimi-code",
		request.FixedSystemNode(system),
		pipeline.StageNode(request.NodeTools, request.Update(func(s *request.Shaping) error {
			s.Tools = append(s.Tools[:0], tools...)
			s.ToolKinds = make(protocol.ToolKinds, len(tools))
			for _, t := range tools {
				s.ToolKinds[t.Name] = protocol.ToolOutputKind{Kind: protocol.KindFunction}
			}
			return nil
		}), pipeline.Describe("Kimi Code's own tools, bridged to the client's shell")),
		historyNode(env, fork),
		pipeline.StageNode(NodeReminders, request.Update(func(s *request.Shaping) error {
			s.Transcript = withReminders(s.Transcript, reminders)
			if fork {
				forkIDs(s.Transcript)
			} else {
				kimiIDs(s.Transcript)
			}
			return nil
		}), pipeline.Describe("date reminder after the first prompt, auto-permission reminder after each; Kimi Code's tool-call ids")),
		request.ChatBodyNode(request.ChatBody{Stream: true, Edit: func(s *request.Shaping) error {
			s.Body.MaxCompletionTokens = &maxTokens
			s.Body.Thinking = thinking
			s.Body.PromptCacheKey = key
			if !fork {
				s.Headers = Headers(env.Workspace.OS)
			}
			return nil
		}}, "model, stream with usage, max_completion_tokens, thinking, prompt_cache_key session_<conversation>; Kimi Code's headers"),
		request.ProviderNode(opts),
		request.ChatEncodeNode(style),
	)
}

var (
	thinkingEnabled  = json.RawMessage(`{"type":"enabled","keep":"all"}`)
	thinkingDisabled = json.RawMessage(`{"type":"disabled"}`)
)

// Thinking is the body's thinking field: enabled with every turn's
// reasoning kept, or disabled when the request's effort is "none" (the
// fork: always enabled).
func Thinking(req *protocol.ResponsesRequest, fork bool) json.RawMessage {
	if !fork && req.Reasoning != nil && strings.EqualFold(strings.TrimSpace(req.Reasoning.Effort), "none") {
		return thinkingDisabled
	}
	return thinkingEnabled
}

// CacheKey is the turn's prompt_cache_key: "session_" and the conversation
// key, else a UUID-shaped SHA-256 of the model and the first user prompt of
// the history (so every turn of one conversation gets the same key).
func CacheKey(env *harness.Env) string {
	if k := strings.TrimSpace(env.ConversationKey); k != "" {
		return CacheKeyPrefix + k
	}
	h := sha256.New()
	h.Write([]byte(env.Request.Model))
	h.Write([]byte{0})
	h.Write([]byte(firstPrompt(env.Request.Input)))
	x := hex.EncodeToString(h.Sum(nil))
	return CacheKeyPrefix + x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// firstPrompt is the text of the first user message of the history that
// is not one of the engine's context fragments.
func firstPrompt(items []protocol.ResponseItem) string {
	for _, it := range items {
		m, ok := it.(*protocol.Message)
		if !ok || m == nil || m.Role != protocol.RoleUser {
			continue
		}
		var texts []string
		for _, c := range m.Content {
			if c.Type == protocol.ContentInputText && !request.IsContextualUserText(c.Text) {
				texts = append(texts, c.Text)
			}
		}
		if len(texts) > 0 {
			return strings.Join(texts, "\n")
		}
	}
	return ""
}

// Headers are the identifying headers of Kimi Code 2.1.0's requests on the
// kimi provider type: its user agent, the Moonshot platform and version,
// and those of the OpenAI SDK and the fetch implementation it sends with (captured on Linux x64 under
// Node 22.23.5), the OS taken from the client's.
func Headers(clientOS string) map[string]string {
	sdkOS := "Linux"
	switch strings.ToLower(clientOS) {
	case "darwin", "macos":
		sdkOS = "MacOS"
	case "windows":
		sdkOS = "Windows"
	}
	return map[string]string{
		"User-Agent":                  "kimi-code-cli/" + Version,
		"Accept-Language":             "*",
		"Sec-Fetch-Mode":              "cors",
		"X-Msh-Platform":              "kimi_code_cli",
		"X-Msh-Version":               Version,
		"X-Stainless-Arch":            "x64",
		"X-Stainless-Lang":            "js",
		"X-Stainless-OS":              sdkOS,
		"X-Stainless-Package-Version": "6.34.0",
		"X-Stainless-Retry-Count":     "0",
		"X-Stainless-Runtime":         "node",
		"X-Stainless-Runtime-Version": "v22.23.5",
	}
}

// reminders are the texts that follow user prompts.
type reminders struct {
	date string // after the first prompt; "" for none
	auto string // after every prompt
}

// DateData is what date_reminder.tmpl is rendered with.
type DateData struct {
	// Date is the turn's date, YYYY-MM-DD.
	Date string
}

func reminderTexts(env *harness.Env, fork bool) (reminders, error) {
	auto, err := env.Prompts.Render(harness.NameKimiCode, "auto_reminder", nil)
	if err != nil {
		return reminders{}, err
	}
	r := reminders{auto: strings.TrimRight(auto, "\n")}
	if !fork {
		d, err := env.Prompts.Render(harness.NameKimiCode, "date_reminder", DateData{Date: turnDate(env)})
		if err != nil {
			return reminders{}, err
		}
		r.date = strings.TrimRight(d, "\n")
	}
	return r, nil
}

// turnDate is the client's date, else the turn's.
func turnDate(env *harness.Env) string {
	if d, err := time.Parse(time.DateOnly, env.Workspace.Date); err == nil {
		return d.Format(time.DateOnly)
	}
	return env.Now.Format(time.DateOnly)
}

// withReminders puts the date reminder after the first user message and
// the auto-permission reminder after every user message that is not the
// reminder itself.
func withReminders(ts []request.Message, r reminders) []request.Message {
	out := make([]request.Message, 0, len(ts)+4)
	first := true
	for _, m := range ts {
		out = append(out, m)
		if m.Role != request.RoleUser || m.Output != nil || textOf(m) == r.auto {
			continue
		}
		if first && r.date != "" {
			out = append(out, request.Message{Role: request.RoleUser, Content: request.TextParts(r.date)})
		}
		first = false
		out = append(out, request.Message{Role: request.RoleUser, Content: request.TextParts(r.auto)})
	}
	return out
}

func textOf(m request.Message) string {
	if len(m.Content) != 1 || m.Content[0].Kind != request.PartText {
		return ""
	}
	return m.Content[0].Text
}

// maxIDLen is the longest tool-call id Kimi Code sends.
const maxIDLen = 64

// kimiIDs rewrites the tool-call ids the way Kimi Code does: an id made of
// [A-Za-z0-9_-], 1 to 64 characters, is kept; in any other every other
// character becomes '_', it is cut to 64 and "_2", "_3", … are added when
// it collides with an id already given. Calls and their results stay
// paired.
func kimiIDs(ts []request.Message) {
	given := map[string]string{}
	used := map[string]bool{}
	for i := range ts {
		for j := range ts[i].Calls {
			if _, ok := given[ts[i].Calls[j].ID]; !ok {
				used[ts[i].Calls[j].ID] = validID(ts[i].Calls[j].ID)
			}
		}
	}
	id := func(old string) string {
		if v, ok := given[old]; ok {
			return v
		}
		v := old
		if !validID(old) {
			b := []byte(old)
			for k, c := range b {
				if !idByte(c) {
					b[k] = '_'
				}
			}
			v = string(b)
			if v == "" {
				v = "_"
			}
			if len(v) > maxIDLen {
				v = v[:maxIDLen]
			}
			for n := 2; used[v]; n++ {
				suffix := fmt.Sprintf("_%d", n)
				base := v
				if len(base)+len(suffix) > maxIDLen {
					base = base[:maxIDLen-len(suffix)]
				}
				if !used[base+suffix] {
					v = base + suffix
					break
				}
			}
			used[v] = true
		}
		given[old] = v
		return v
	}
	for i := range ts {
		for j := range ts[i].Calls {
			ts[i].Calls[j].ID = id(ts[i].Calls[j].ID)
		}
		if ts[i].CallID != "" {
			ts[i].CallID = id(ts[i].CallID)
		}
	}
}

func validID(s string) bool {
	if s == "" || len(s) > maxIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !idByte(s[i]) {
			return false
		}
	}
	return true
}

func idByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// forkIDs is the fork's id rule: ':' becomes '_'.
func forkIDs(ts []request.Message) {
	for i := range ts {
		for j := range ts[i].Calls {
			ts[i].Calls[j].ID = strings.ReplaceAll(ts[i].Calls[j].ID, ":", "_")
		}
		ts[i].CallID = strings.ReplaceAll(ts[i].CallID, ":", "_")
	}
}
