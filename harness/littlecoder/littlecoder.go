// Package littlecoder registers the "little-coder" harness: the requests of
// little-coder (itayinbarr/little-coder), a coding agent for small local
// models built on pi, as the Codex fork's little-coder harness sends them
// — little-coder itself is in no registry reachable here — with the fork's
// plain bugs fixed (docs/harness-pi.md#little-coder lists each open
// question of the fork and what we decided).
//
// # Body
//
// {"model","messages","stream":true,"stream_options":{"include_usage":
// true},"store":false,"max_completion_tokens":32000,"tools":[20],
// "thinking":{"type":"enabled"},"reasoning_effort":"high",
// "temperature":0.3}: the fork's fixed body, with the token limit capped
// as pi caps it (the fork asks for 384000, which servers of small models
// refuse) and lowered to the model table's output cap when it knows one.
//
// # System prompt
//
// system.tmpl (our words for little-coder's prompt, naming the tools as
// they are sent: lowercase read, write, edit with edits[].oldText, offsets
// from 1, timeouts in seconds), then the request's AGENTS.md instructions
// (context.tmpl, where pi puts them; the fork sends none), the date and
// working directory (env.tmpl), and one guidance block: the browser
// research block (guidance_browser.tmpl) when the text of the user's
// messages — the engine's context messages left out — has one of the
// words of the "guidance_browser" marker (whole words, so "curl" is not
// "url"), the read/write block (guidance_readwrite.tmpl) otherwise, none
// when there is no user text.
//
// # History, tools and bridge
//
// pi's history (harness/pi History, not the fork's variant: earlier
// answers kept, unanswered calls answered, exit codes shown). The twenty
// tools of the fork in its order (tools.go: schemas as the fork sends
// them, descriptions ours). pi's bridge runs read, bash, edit and write;
// glob and ShellSession (a shell command, timeout in seconds) and
// ShellSessionCwd (pwd) run on the client's shell too. The browser,
// evidence, web and session-reset tools cannot run through the client:
// their calls are answered with a tool error that says so.
package littlecoder

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/harness/pi"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

func init() { harness.MustRegister(Spec()) }

// MaxTokens is the output limit little-coder's body asks for.
const MaxTokens = pi.MaxTokensCap

// Temperature is the fork's temperature for little-coder.
const Temperature = "0.3"

// MarkerBrowser lists (comma-separated) the words that pick the browser
// research guidance.
const MarkerBrowser = "guidance_browser"

// Spec returns the little-coder harness.
func Spec() harness.Spec {
	return harness.Spec{
		Name:        harness.NameLittleCoder,
		Description: "little-coder: pi for small local models, its prompt and guidance cards, twenty tools (those that cannot run answered with a tool error)",
		Wires:       []harness.Wire{harness.WireChat},
		RouteName:   "LittleCoder",
		Request:     RequestGraph,
		Bridge:      Table(),
	}
}

// unavailable are the tools that cannot run through the client's tools,
// and why.
var unavailable = []struct{ tool, why string }{
	{"BrowserNavigate", "there is no browser behind this proxy"},
	{"BrowserClick", "there is no browser behind this proxy"},
	{"BrowserType", "there is no browser behind this proxy"},
	{"BrowserScroll", "there is no browser behind this proxy"},
	{"BrowserExtract", "there is no browser behind this proxy"},
	{"BrowserBack", "there is no browser behind this proxy"},
	{"BrowserHistory", "there is no browser behind this proxy"},
	{"EvidenceAdd", "there is no evidence store behind this proxy; keep notes in a file with write"},
	{"EvidenceGet", "there is no evidence store behind this proxy"},
	{"EvidenceList", "there is no evidence store behind this proxy"},
	{"webfetch", "cannot run through the client; fetch the page with curl in bash"},
	{"websearch", "there is no search engine behind this proxy"},
	{"ShellSessionReset", "there is no persistent session to reset: every ShellSession command starts afresh in the working directory"},
}

// Table returns little-coder's bridge (see the package doc).
func Table() bridge.Table {
	t := pi.Table()
	t = append(t,
		bridge.GlobSpec{Tool: "glob", Pattern: "pattern", Path: "path"}.Mapping(),
		bridge.ShellSpec{Tool: "ShellSession", Command: "command", Workdir: bridge.NoKey, Timeout: "timeout",
			TimeoutUnit: 1e9}.Mapping(),
		bridge.Mapping{Tool: "ShellSessionCwd", Shell: func(json.RawMessage) (bridge.ShellCall, error) {
			return bridge.ShellCall{Script: "pwd"}, nil
		}},
	)
	for _, u := range unavailable {
		t = append(t, bridge.UnavailableSpec{Tool: u.tool, Why: u.why}.Mapping())
	}
	return t
}

// RequestGraph returns the little-coder request graph (chat only).
func RequestGraph(env *harness.Env) (*pipeline.Graph, error) {
	system, err := SystemPrompt(env)
	if err != nil {
		return nil, fmt.Errorf("little-coder: system prompt: %w", err)
	}
	tools, err := Tools(env)
	if err != nil {
		return nil, fmt.Errorf("little-coder: %w", err)
	}
	h := &pi.History{Harness: harness.NameLittleCoder, Pack: env.Prompts, Table: Table(), Own: IsTool}
	if err := h.Init(); err != nil {
		return nil, fmt.Errorf("little-coder: history: %w", err)
	}
	body := pi.BodyFields{Store: true, MaxTokens: MaxTokens, Thinking: `{"type":"enabled"}`, Effort: "high", Temperature: Temperature}
	if c := env.Model.MaxOutputTokens; c > 0 {
		body.MaxTokens = min(c, MaxTokens)
	}
	opts := env.RequestOptions()
	return pipeline.New("request.little-coder",
		pi.SystemNode(request.RoleSystem, system),
		pi.ToolsNode(tools, "little-coder's twenty tools, bridged onto the client's shell or answered with a tool error"),
		pipeline.StageNode(request.NodeHistory, request.Update(h.Flatten),
			pipeline.Describe("history → transcript as pi replays a session, client shell calls shown as little-coder calls")),
		request.ChatBodyNode(request.ChatBody{Stream: true, Edit: body.Apply},
			"model, stream with usage, store false, max_completion_tokens, thinking enabled, reasoning_effort high, temperature 0.3"),
		request.ProviderNode(opts),
		request.ChatEncodeNode(request.ChatStyle{NullCallContent: true}),
	)
}

// SystemPrompt renders the system message: pi's layout (system,
// project instructions, date and cwd), then the guidance block.
func SystemPrompt(env *harness.Env) (string, error) {
	out, err := pi.SystemPrompt(env, harness.NameLittleCoder, false)
	if err != nil {
		return "", err
	}
	g, err := Guidance(env)
	if err != nil {
		return "", err
	}
	if g == "" {
		return out, nil
	}
	text, err := env.Prompts.Render(harness.NameLittleCoder, g, nil)
	if err != nil {
		return "", err
	}
	return out + "\n\n" + strings.TrimRight(text, "\n"), nil
}

// Guidance names the guidance template of a turn: "guidance_browser",
// "guidance_readwrite" or "" (see the package doc).
func Guidance(env *harness.Env) (string, error) {
	words, err := env.Prompts.Marker(harness.NameLittleCoder, MarkerBrowser)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, it := range env.Request.Input {
		m, ok := it.(*protocol.Message)
		if !ok || m.Role != protocol.RoleUser || request.IsContextualUser(m) {
			continue
		}
		for _, c := range m.Content {
			b.WriteString(c.Text)
			b.WriteByte('\n')
		}
	}
	text := strings.ToLower(b.String())
	if strings.TrimSpace(text) == "" {
		return "", nil
	}
	for _, w := range strings.Split(words, ",") {
		if w = strings.TrimSpace(w); w != "" && hasWord(text, w) {
			return "guidance_browser", nil
		}
	}
	return "guidance_readwrite", nil
}

// hasWord reports whether w occurs in text with no letter or digit right
// before it, and none right after it but a plural "s".
func hasWord(text, w string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], w)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(w)
		before := j == 0 || !isWordByte(text[j-1])
		rest := text[end:]
		rest = strings.TrimPrefix(rest, "s")
		after := rest == "" || !isWordByte(rest[0])
		if before && after {
			return true
		}
		i = j + 1
	}
}

func isWordByte(c byte) bool {
	return c >= 0x80 || unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c))
}
