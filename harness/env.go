package harness

import (
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/prompts"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

// Env is what shaping one turn depends on besides the request itself: the
// route, the upstream, the model's capabilities, the prompt pack, the clock
// and the client's workspace. [Plan] builds it; request graphs and post
// nodes read it and never change it.
type Env struct {
	// Route is how the turn is served; Route.Profile is the claude-code
	// profile.
	Route Route
	// Wire is the upstream wire.
	Wire Wire
	// BaseURL is the upstream's base URL; the provider body quirks of every
	// chat route are chosen from it.
	BaseURL string
	// Model is what the model supports.
	Model ModelCaps
	// Prompts is the prompt pack.
	Prompts *prompts.Pack
	// Now is the turn's time: a function of the request (its current_date,
	// else the conversation's start), never the proxy's clock per turn
	// (see turnTime).
	Now time.Time
	// Workspace is the client's working environment, from the request's
	// <environment_context> block when it has one.
	Workspace Workspace
	// Files says whether the working directory may be read from this
	// machine's disk ([Env.ReadWorkDir]); "" means local.
	Files WorkspacePolicy
	// ProjectDocs are the project instructions (AGENTS.md) the client sent
	// in the request; each harness puts them where its agent puts its
	// own (docs/request-shaping.md#project-instructions).
	ProjectDocs []ProjectDoc
	// ConversationKey identifies the conversation: the request's
	// prompt_cache_key, else the client's session header, else "".
	ConversationKey string
	// Client is the shell tool the client advertised.
	Client bridge.ClientShell
	// Subagent is the client's sub-agent label, from its x-openai-subagent
	// header ("collab_spawn" for a spawned child agent, "review",
	// "compact", …); "" for the main agent.
	Subagent string
	// Request is the engine request of the turn.
	Request *protocol.ResponsesRequest
	// Logger receives debug records of the stages.
	Logger *slog.Logger
	// HostedTool, when set, is told of every hosted tool the request
	// leaves out (Config.HostedTool).
	HostedTool func(toolType string)
}

// RequestOptions returns the request-stage options of the env: provider
// quirks from the base URL, the model's reasoning control and the logger.
func (e *Env) RequestOptions() request.Options {
	return request.Options{BaseURL: e.BaseURL, ReasoningControl: harnessReasoning(e), Logger: e.Logger, OnHostedTool: e.HostedTool}
}

// Workspace is the client's working environment.
type Workspace struct {
	// Cwd is the working directory.
	Cwd string
	// Shell is the shell's name ("bash", "zsh", …).
	Shell string
	// Date is the client's date, YYYY-MM-DD, when it said.
	Date string
	// Timezone is the client's IANA time zone, when it said.
	Timezone string
	// OS is "linux", "darwin" or "windows". Codex does not say; the
	// default is "linux".
	OS string
}

var envTag = regexp.MustCompile(`(?s)<(cwd|shell|current_date|timezone)>(.*?)</(?:cwd|shell|current_date|timezone)>`)

// ParseWorkspace reads the last <environment_context> block of the history's
// user messages (Codex sends one at the start and again when it changes).
// Fields it does not find keep the values of def.
func ParseWorkspace(items []protocol.ResponseItem, def Workspace) Workspace {
	w := def
	if w.OS == "" {
		w.OS = "linux"
	}
	for i := len(items) - 1; i >= 0; i-- {
		m, ok := items[i].(*protocol.Message)
		if !ok || m == nil || m.Role != protocol.RoleUser {
			continue
		}
		for _, c := range m.Content {
			t := strings.TrimSpace(c.Text)
			if !strings.HasPrefix(t, "<environment_context>") {
				continue
			}
			for _, sm := range envTag.FindAllStringSubmatch(t, -1) {
				v := strings.TrimSpace(sm[2])
				switch sm[1] {
				case "cwd":
					w.Cwd = v
				case "shell":
					w.Shell = v
				case "current_date":
					w.Date = v
				case "timezone":
					w.Timezone = v
				}
			}
			return w
		}
	}
	return w
}

// conversationKey is the request's prompt_cache_key, else the client's
// session header.
func conversationKey(req *protocol.ResponsesRequest, hdr http.Header) string {
	if req.PromptCacheKey != "" {
		return req.PromptCacheKey
	}
	for _, h := range []string{"session-id", "session_id", "x-session-id"} {
		if v := hdr.Get(h); v != "" {
			return v
		}
	}
	return ""
}
