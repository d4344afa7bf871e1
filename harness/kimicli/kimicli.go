// Package kimicli registers the "kimi-cli" harness: the request Kimi CLI
// sends to a Moonshot-style chat endpoint.
//
// The system prompt (prompts/pack/kimi-cli/system.tmpl, our wording) is
// rendered for each turn from the env: the operating system and shell, the
// time (Env.Now, RFC 3339 with microseconds), the working directory, a tree
// listing of it, the AGENTS.md files that apply to it and the session's
// skills. Then, when there is any, an "Additional Developer Instructions"
// section follows: the guidance block (guidance.tmpl, starting with
// <extra_instruction>; the fork prepends it to the base instructions,
// which kimi-cli does not send, so the guidance leads this section), then the text of
// every developer item that is not one of the engine's contextual
// fragments, trimmed, joined by blank lines. An empty guidance template in
// a --prompts overlay turns the guidance off. A request without tools whose
// instructions are our compaction prompt (compaction.tmpl) gets those
// instructions as its system prompt instead.
//
// The listing is read from this machine's disk only under the workspace
// policy local (harness.Env.ReadWorkDir: the cwd the request names and
// nothing outside it, symbolic links not followed, a bounded number of
// entries); under none, or when the cwd is not given, not absolute or
// cannot be read, there is no listing. Nothing is cached (the fork caches
// the listing per conversation; a proxy keeps no state), so a listing that
// changes between turns changes the system prompt. The listing shows at
// most 30 entries of the directory and 10 of each subdirectory,
// directories first, then by name, drawn with "├── " and "└── ". The
// project instructions are the AGENTS.md text the client sent in the
// request (harness.Env.ProjectDocs), each under a "<!-- From: PATH -->"
// line, within 32 KiB in all (the deepest kept first when the budget runs
// out); nothing is read from disk for them. The time is the request's
// (harness.Env.Now: its current_date, else the conversation's start), so
// every turn of a conversation has the same system prompt.
//
// Tools are the client's function tools (the model calls exec_command
// directly when that is the client's shell); every tool name of the
// request maps to the function kind. The history is flattened by the kimi
// family's shared policy (package harness/internal/kimistyle).
//
// The body is {"model","messages","max_tokens":32000,"prompt_cache_key":
// <conversation key>,"stream":true,"stream_options":{"include_usage":true},
// "tools", + reasoning fields}: for a model with a thinking toggle and the
// effort "thinking", thinking is enabled and no effort is sent; otherwise a
// set effort other than "none" is sent mapped (minimal/low → low, medium,
// high/xhigh/max/ultra → high, others as they are) with thinking enabled;
// finally a thinking-toggle model without a thinking field gets it
// disabled. Provider quirks of the upstream apply. The response direction
// is the protocol layer alone.
//
// Not emulated: the subagent sentence the fork adds for spawned threads
// (the proxy cannot tell a spawned thread), skills found on disk (only the
// session's skills, from the engine's skills block, are listed), and the
// fork's environment override of the clock.
package kimicli

import (
	"fmt"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/internal/kimistyle"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

func init() { harness.MustRegister(Spec()) }

// MaxTokens is the output limit every kimi-cli body asks for.
const MaxTokens = 32000

// Spec returns the kimi-cli harness.
func Spec() harness.Spec {
	return harness.Spec{
		Name:        harness.NameKimiCLI,
		Description: "Kimi CLI: its system prompt rendered from the workspace, the client's function tools, kimi flattening, thinking/effort table",
		Wires:       []harness.Wire{harness.WireChat},
		Request:     RequestGraph,
	}
}

// RequestGraph returns the kimi-cli request graph (chat only):
// request.system → request.tools → request.history → request.options →
// request.provider → request.encode.
func RequestGraph(env *harness.Env) (*pipeline.Graph, error) {
	system, err := SystemPrompt(env)
	if err != nil {
		return nil, fmt.Errorf("kimi-cli: system prompt: %w", err)
	}
	opts := env.RequestOptions()
	policy := kimistyle.Policy()
	toggle := opts.ReasoningControl == request.ReasoningThinkingToggle
	key := env.ConversationKey
	return pipeline.New("request.kimi-cli",
		request.FixedSystemNode(system),
		request.FunctionToolsNode(),
		request.HistoryNode(opts, &policy),
		request.ChatBodyNode(request.ChatBody{Stream: true, MaxTokens: MaxTokens, Edit: func(s *request.Shaping) error {
			s.Body.PromptCacheKey = key
			s.Body.ReasoningEffort, s.Body.Thinking = Reasoning(s.Request, toggle)
			return nil
		}}, "model, max_tokens 32000, prompt_cache_key, stream with usage, thinking/effort table"),
		request.ProviderNode(opts),
		request.ChatEncodeNode(kimistyle.Style()),
	)
}

var (
	thinkingEnabled  = []byte(`{"type":"enabled"}`)
	thinkingDisabled = []byte(`{"type":"disabled"}`)
)

// Reasoning returns the reasoning_effort and thinking fields of a kimi-cli
// body for the request's effort; toggle says the model has a thinking
// toggle. An empty effort or thinking means the field is not sent.
func Reasoning(req *protocol.ResponsesRequest, toggle bool) (effort string, thinking []byte) {
	raw := ""
	if req.Reasoning != nil {
		raw = strings.TrimSpace(req.Reasoning.Effort)
	}
	switch e := strings.ToLower(raw); {
	case toggle && e == "thinking":
		thinking = thinkingEnabled
	case e == "" || e == "none":
	default:
		effort, thinking = request.ChatEffort(raw), thinkingEnabled
	}
	if toggle && thinking == nil {
		thinking = thinkingDisabled
	}
	return effort, thinking
}
