package calibrate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
)

// APIKey is the dummy credential every agent is given: the endpoint is
// on loopback and checks none.
const APIKey = "sk-calibrate-dummy"

// Model is the model name the agents are told to use where they take any
// name (opencode, qwen-code): a name no prompt text contains by chance,
// so that finding it in a text is finding the model field.
const Model = "hf-calibrate-model"

// Agent is how one harness's real agent is pointed at the endpoint: the
// wires it can speak and, for a run, the arguments after the user's
// COMMAND [ARGS…], the environment and the files of its temporary home.
type Agent struct {
	// Harness is the harness name.
	Harness string
	// Wires are the wires the agent speaks, its default first.
	Wires []string
	// Setup prepares a run.
	Setup func(r *Run) error
	// Doc says how the agent is configured (for usage and README).
	Doc string
	// Product and VersionArgs name an agent whose requests do not: the
	// product, and the arguments that make COMMAND print its version.
	Product     string
	VersionArgs []string
}

// Run is one agent run: where it runs and what it is given.
type Run struct {
	// Wire is the run's wire; BaseURL the endpoint's base URL.
	Wire, BaseURL string
	// Root is the run's temporary directory; Work (the agent's cwd,
	// Root/work) and Home (its HOME, Root/home) are inside it.
	Root, Work, Home string
	// Task is the prompt given to the agent.
	Task string
	// Args are appended to the user's COMMAND [ARGS…].
	Args []string
	// Env is added to the environment (KEY=VALUE; it wins over the
	// inherited environment), Unset is removed from it.
	Env   []string
	Unset []string
}

func (r *Run) setenv(kv ...string) {
	for i := 0; i+1 < len(kv); i += 2 {
		r.Env = append(r.Env, kv[i]+"="+kv[i+1])
	}
}

func (r *Run) write(rel, text string) (string, error) {
	p := filepath.Join(r.Root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", fmt.Errorf("agent setup: %w", err)
	}
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		return "", fmt.Errorf("agent setup: %w", err)
	}
	return p, nil
}

// quiet is the environment every run gets: no proxies for loopback, a
// temporary HOME and XDG directories inside it.
func (r *Run) quiet() {
	r.setenv("HOME", r.Home, "PWD", r.Work,
		"XDG_CONFIG_HOME", filepath.Join(r.Home, ".config"), "XDG_DATA_HOME", filepath.Join(r.Home, ".local", "share"),
		"XDG_CACHE_HOME", filepath.Join(r.Home, ".cache"), "XDG_STATE_HOME", filepath.Join(r.Home, ".local", "state"),
		"NO_PROXY", "127.0.0.1,localhost", "no_proxy", "127.0.0.1,localhost")
	r.Unset = append(r.Unset, "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
}

// Agents are the agents calibrate knows how to run, by harness name.
var Agents = map[string]Agent{
	harness.NameClaudeCode: {
		Harness: harness.NameClaudeCode,
		Wires:   []string{WireMessages},
		Doc: "Claude Code (`claude`): ANTHROPIC_BASE_URL=endpoint, ANTHROPIC_API_KEY=dummy, HOME and " +
			"CLAUDE_CONFIG_DIR in the temporary home, telemetry/updates/non-essential traffic off; " +
			"arguments `-p --allowedTools Bash -- TASK`.",
		Setup: func(r *Run) error {
			r.quiet()
			r.setenv("CLAUDE_CONFIG_DIR", filepath.Join(r.Home, ".claude"),
				"ANTHROPIC_BASE_URL", r.BaseURL, "ANTHROPIC_API_KEY", APIKey,
				"DISABLE_TELEMETRY", "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1", "DISABLE_AUTOUPDATER", "1",
				"DISABLE_ERROR_REPORTING", "1", "DISABLE_BUG_COMMAND", "1", "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY", "1")
			r.Unset = append(r.Unset, "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_MODEL")
			r.Args = []string{"-p", "--allowedTools", "Bash", "--", r.Task}
			return nil
		},
	},
	harness.NameOpenCode: {
		Harness: harness.NameOpenCode,
		Wires:   []string{WireChat, WireResponses, WireMessages},
		Doc: "opencode (`opencode`): a temporary opencode.json (OPENCODE_CONFIG) with one provider " +
			"\"calibrate\" whose baseURL is the endpoint's /v1 (chat: @ai-sdk/openai-compatible, responses: " +
			"@ai-sdk/openai, messages: @ai-sdk/anthropic), XDG directories in the temporary home, models fetch, " +
			"updates, sharing, LSP downloads and default plugins off; arguments `run --pure -m calibrate/MODEL TASK`.",
		Setup: func(r *Run) error {
			r.quiet()
			npm := map[string]string{WireChat: "@ai-sdk/openai-compatible", WireResponses: "@ai-sdk/openai",
				WireMessages: "@ai-sdk/anthropic"}[r.Wire]
			conf := fmt.Sprintf(`{
  "$schema": "https://opencode.ai/config.json",
  "autoupdate": false,
  "share": "disabled",
  "model": "calibrate/%[1]s",
  "small_model": "calibrate/%[1]s",
  "permission": {"bash": "allow", "edit": "allow", "webfetch": "deny"},
  "provider": {"calibrate": {"npm": %[2]q, "name": "Calibrate",
    "options": {"baseURL": %[3]q, "apiKey": %[4]q},
    "models": {%[1]q: {"name": %[1]q, "tool_call": true, "reasoning": false,
      "limit": {"context": 128000, "output": 8192}}}}}
}
`, Model, npm, r.BaseURL+"/v1", APIKey)
			p, err := r.write("opencode.json", conf)
			if err != nil {
				return err
			}
			r.setenv("OPENCODE_CONFIG", p, "OPENCODE_DISABLE_MODELS_FETCH", "1", "OPENCODE_DISABLE_AUTOUPDATE", "1",
				"OPENCODE_DISABLE_LSP_DOWNLOAD", "1", "OPENCODE_DISABLE_SHARE", "1",
				"OPENCODE_DISABLE_DEFAULT_PLUGINS", "1", "OPENCODE_DISABLE_CLAUDE_CODE", "1",
				"OPENCODE_DISABLE_EXTERNAL_SKILLS", "1")
			r.Unset = append(r.Unset, "OPENAI_API_KEY", "ANTHROPIC_API_KEY")
			r.Args = []string{"run", "--pure", "-m", "calibrate/" + Model, r.Task}
			return nil
		},
	},
	harness.NameQwenCode: {
		Harness: harness.NameQwenCode,
		Wires:   []string{WireChat, WireResponses, WireMessages},
		Doc: "Qwen Code (`qwen`): a temporary HOME with .qwen/settings.json (auth type, telemetry and " +
			"updates off), OPENAI_BASE_URL=endpoint/v1 (ANTHROPIC_BASE_URL for messages), dummy keys, " +
			"OPENAI_MODEL=MODEL; arguments `--auth-type T --approval-mode yolo -m MODEL TASK`.",
		Setup: func(r *Run) error {
			r.quiet()
			auth := map[string]string{WireChat: "openai", WireResponses: "openai-responses", WireMessages: "anthropic"}[r.Wire]
			settings := fmt.Sprintf(`{
  "security": {"auth": {"selectedType": %q}},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
  "model": {"name": %q}
}
`, auth, Model)
			if _, err := r.write("home/.qwen/settings.json", settings); err != nil {
				return err
			}
			r.setenv("OPENAI_API_KEY", APIKey, "OPENAI_BASE_URL", r.BaseURL+"/v1", "OPENAI_MODEL", Model,
				"ANTHROPIC_API_KEY", APIKey, "ANTHROPIC_BASE_URL", r.BaseURL, "ANTHROPIC_MODEL", Model)
			r.Args = []string{"--auth-type", auth, "--approval-mode", "yolo", "-m", Model, r.Task}
			return nil
		},
	},
	harness.NameKimiCode: {
		Harness: harness.NameKimiCode,
		Wires:   []string{WireChat},
		Doc: "Kimi Code (`kimi`, which needs Node >= 22.19 on PATH): a temporary KIMI_CODE_HOME with config.toml " +
			"(provider \"calibrate\" of type kimi whose base_url is the endpoint's /v1, model MODEL with the " +
			"capabilities tool_use and thinking, telemetry and the model catalog refresh off), " +
			"KIMI_DISABLE_TELEMETRY=1, KIMI_CODE_NO_AUTO_UPDATE=1, KIMI_MODEL_* and OPENAI_* unset; arguments `-p TASK`.",
		Setup: func(r *Run) error {
			r.quiet()
			conf := fmt.Sprintf(`default_model = "calibrate/%[1]s"
telemetry = false

[providers.calibrate]
type = "kimi"
base_url = %[2]q
api_key = %[3]q

[models."calibrate/%[1]s"]
provider = "calibrate"
model = %[1]q
max_context_size = 262144
capabilities = ["tool_use", "thinking"]

[model_catalog]
refresh_on_start = false
`, Model, r.BaseURL+"/v1", APIKey)
			home := filepath.Join(r.Home, ".kimi-code")
			if _, err := r.write("home/.kimi-code/config.toml", conf); err != nil {
				return err
			}
			r.setenv("KIMI_CODE_HOME", home, "KIMI_DISABLE_TELEMETRY", "1", "KIMI_CODE_NO_AUTO_UPDATE", "1")
			r.Unset = append(r.Unset, "KIMI_API_KEY", "KIMI_BASE_URL", "KIMI_MODEL_NAME", "KIMI_MODEL_API_KEY",
				"KIMI_MODEL_BASE_URL", "KIMI_MODEL_PROVIDER_TYPE", "KIMI_MODEL_MAX_CONTEXT_SIZE", "KIMI_MODEL_CAPABILITIES",
				"KIMI_MODEL_TEMPERATURE", "KIMI_MODEL_TOP_P", "KIMI_MODEL_THINKING_EFFORT", "KIMI_MODEL_THINKING_KEEP",
				"KIMI_MODEL_MAX_COMPLETION_TOKENS", "KIMI_CODE_CUSTOM_HEADERS", "OPENAI_API_KEY", "OPENAI_BASE_URL")
			r.Args = []string{"-p", r.Task}
			return nil
		},
	},
}

func init() {
	Agents[harness.NamePi] = Agent{
		Harness:     harness.NamePi,
		Wires:       []string{WireChat},
		Product:     "pi",
		VersionArgs: []string{"--version"},
		Doc: "pi (`pi`): a temporary PI_CODING_AGENT_DIR with models.json (one provider \"calibrate\", api " +
			"openai-completions, baseUrl endpoint/v1, a non-reasoning custom model MODEL) and settings.json, " +
			"offline (PI_OFFLINE, no version check, no telemetry); arguments `-p --no-session --provider calibrate " +
			"--model MODEL TASK`.",
		Setup: func(r *Run) error {
			r.quiet()
			dir := filepath.Join(r.Home, ".pi", "agent")
			models := fmt.Sprintf(`{"providers": {"calibrate": {"baseUrl": %q, "api": "openai-completions", "apiKey": %q,
  "models": [{"id": %q, "name": %q, "reasoning": false, "input": ["text"], "contextWindow": 128000}]}}}
`, r.BaseURL+"/v1", APIKey, Model, Model)
			if _, err := r.write("home/.pi/agent/models.json", models); err != nil {
				return err
			}
			settings := fmt.Sprintf(`{"defaultProvider": "calibrate", "defaultModel": %q, "enableInstallTelemetry": false, "quietStartup": true}
`, Model)
			if _, err := r.write("home/.pi/agent/settings.json", settings); err != nil {
				return err
			}
			r.setenv("PI_CODING_AGENT_DIR", dir, "PI_OFFLINE", "1", "PI_SKIP_VERSION_CHECK", "1", "PI_TELEMETRY", "0")
			r.Unset = append(r.Unset, "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "DEEPSEEK_API_KEY",
				"OPENROUTER_API_KEY", "PI_PACKAGE_DIR")
			r.Args = []string{"-p", "--no-session", "--provider", "calibrate", "--model", Model, r.Task}
			return nil
		},
	}
}

// AgentNames are the harnesses calibrate can run, sorted.
func AgentNames() []string { return sortedKeys(Agents) }

// agentFor returns the agent of a harness and the run's wire (the
// agent's default when wire is "").
func agentFor(harnessName, wire string) (Agent, string, error) {
	a, ok := Agents[harnessName]
	if !ok {
		return Agent{}, "", fmt.Errorf("calibrate: no recipe for harness %q (known: %s)", harnessName,
			strings.Join(AgentNames(), ", "))
	}
	if wire == "" {
		return a, a.Wires[0], nil
	}
	if !slices.Contains(a.Wires, wire) {
		return Agent{}, "", fmt.Errorf("calibrate: %s speaks the wires %s, not %q", harnessName,
			strings.Join(a.Wires, ", "), wire)
	}
	return a, wire, nil
}

// environ is base with r.Unset removed and r.Env added (r.Env wins).
func environ(base []string, r *Run) []string {
	drop := map[string]bool{}
	for _, k := range r.Unset {
		drop[k] = true
	}
	for _, kv := range r.Env {
		k, _, _ := strings.Cut(kv, "=")
		drop[k] = true
	}
	var out []string
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			out = append(out, kv)
		}
	}
	return append(out, r.Env...)
}
