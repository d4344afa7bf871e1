package harness

import (
	"errors"
	"strings"
	"testing"
)

const (
	nativeMessagesErr = `wire_api = "messages" requires a harness-native transport;`
	errPrefix         = "ERR "
)

// The routing matrix (docs/routing.md#routing-matrix), one row per harness config name: the route
// on the responses, chat and messages wires, in the matrix's notation, or
// "ERR <exact error text>" (the native error is matched by its prefix).
var routingMatrix = []struct {
	harness             string
	responses, chat     string
	messages            string
	registry, variant   string // Route.Harness on the chat wire, and the variant
	chatWS, responsesWS bool
}{
	{"", "ResponsesApi", "ChatCompletionsCompat", errPrefix + nativeMessagesErr, NativeName, "Native", false, true},
	{"native", "ResponsesApi", "ChatCompletionsCompat", errPrefix + nativeMessagesErr, NativeName, "Native", false, true},
	{"claude-code", "ClaudeCodeResponses(Full)", "ClaudeCodeChat(Full)", "MessagesHarness(ClaudeCode)", "claude-code", "ClaudeCode", false, false},
	{"claude-code-bare", "ClaudeCodeResponses(Bare)", "ClaudeCodeChat(Bare)", "MessagesHarness(ClaudeCode)", "claude-code-bare", "ClaudeCodeBare", false, false},
	{"zcode", "ResponsesApi", "ChatCompletionsCompat", "MessagesHarness(ZCode)", NativeName, "ZCode", false, true},
	{"minimal", "ResponsesApi", "ChatHarness(Minimal)", errPrefix + `wire_api = "messages" is not supported by harness = "minimal"`, "minimal", "Minimal", false, true},
	{"kimi-cli", "ResponsesApi", "ChatHarness(KimiCli)", errPrefix + `wire_api = "messages" is not supported by harness = "kimi-cli"`, "kimi-cli", "KimiCli", false, true},
	{"kimi-code", "ResponsesApi", "ChatHarness(KimiCode)", errPrefix + `wire_api = "messages" is not supported by harness = "kimi-code"`, "kimi-code", "KimiCode", false, true},
	{"qwen-code", "ResponsesApi", "ChatHarness(QwenCode)", errPrefix + `wire_api = "messages" is not supported by harness = "qwen-code"`, "qwen-code", "QwenCode", false, true},
	{"opencode", "ResponsesApi", "ChatHarness(OpenCode)", errPrefix + `wire_api = "messages" is not supported by harness = "opencode"`, "opencode", "OpenCode", false, true},
	{"swe-agent", "ResponsesApi", "ChatHarness(SweAgent)", errPrefix + `wire_api = "messages" is not supported by harness = "swe-agent"`, "swe-agent", "SweAgent", false, true},
	{"mini-swe-agent", "ResponsesApi", "ChatHarness(MiniSweAgent)", errPrefix + `wire_api = "messages" is not supported by harness = "mini-swe-agent"`, "mini-swe-agent", "MiniSweAgent", false, true},
	{"terminus-2", "ResponsesApi", "ChatHarness(Terminus2)", errPrefix + `wire_api = "messages" is not supported by harness = "terminus-2"`, "terminus-2", "Terminus2", false, true},
	{"deepseek-tui", "ResponsesApi", "ChatHarness(DeepSeekTui)", errPrefix + `wire_api = "messages" is not supported by harness = "deepseek-tui"`, "deepseek-tui", "DeepSeekTui", false, true},
	{"little-coder", "ResponsesApi", "ChatHarness(LittleCoder)", errPrefix + `wire_api = "messages" is not supported by harness = "little-coder"`, "little-coder", "LittleCoder", false, true},
	{"pi", "ResponsesApi", "ChatHarness(Pi)", errPrefix + `wire_api = "messages" is not supported by harness = "pi"`, "pi", "Pi", false, true},
	{"x", "ResponsesApi", "ChatCompletionsCompat", errPrefix + `wire_api = "messages" is not supported by harness = "x"`, NativeName, "Other(x)", false, true},
	{"Claude-Code", "ResponsesApi", "ChatCompletionsCompat", errPrefix + `wire_api = "messages" is not supported by harness = "Claude-Code"`, NativeName, "Other(Claude-Code)", false, true},
}

func TestResolveMatrix(t *testing.T) {
	covered := map[string]bool{}
	for _, row := range routingMatrix {
		covered[row.harness] = true
		for _, c := range []struct {
			wire Wire
			want string
			ws   bool
		}{{WireResponses, row.responses, row.responsesWS}, {WireChat, row.chat, row.chatWS}, {WireMessages, row.messages, false}} {
			r, err := Resolve(c.wire, row.harness)
			name := row.harness + " × " + string(c.wire)
			if want, isErr := strings.CutPrefix(c.want, errPrefix); isErr {
				var re *RouteError
				if err == nil || !errors.As(err, &re) {
					t.Errorf("%s: route %v, err %v; want error %q", name, r, err, want)
					continue
				}
				if want == nativeMessagesErr {
					if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), `"claude-code"`) ||
						!strings.Contains(err.Error(), `"claude-code-bare"`) {
						t.Errorf("%s: error %q", name, err)
					}
				} else if err.Error() != want {
					t.Errorf("%s: error %q, want %q", name, err, want)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if r.String() != c.want || r.Wire != c.wire {
				t.Errorf("%s: route %s (wire %s), want %s", name, r, r.Wire, c.want)
			}
			if r.Websocket() != c.ws {
				t.Errorf("%s: websocket %v", name, r.Websocket())
			}
			if r.Variant != row.variant && !(r.Kind == RouteMessagesHarness && r.Variant == "ClaudeCode") {
				t.Errorf("%s: variant %q, want %q", name, r.Variant, row.variant)
			}
			if c.wire == WireChat && r.Harness != row.registry {
				t.Errorf("%s: served by %q, want %q", name, r.Harness, row.registry)
			}
			if c.wire == WireResponses && r.Kind == RouteResponsesAPI && r.Harness != NativeName {
				t.Errorf("%s: the responses wire ignores the harness, served by %q", name, r.Harness)
			}
		}
	}
	for _, n := range KnownNames() {
		if !covered[n] && n != "test-post-harness" { // plan_test.go's spec
			t.Errorf("harness %q is not in the matrix", n)
		}
	}
}

func TestResolveDetails(t *testing.T) {
	r, err := Resolve(WireMessages, "claude-code-bare")
	if err != nil || r.Profile != ProfileBare || r.Harness != "claude-code-bare" {
		t.Errorf("claude-code-bare on messages: %+v %v", r, err)
	}
	r, err = Resolve(WireMessages, "zcode")
	if err != nil || r.Harness != "zcode" || r.Profile != "" {
		t.Errorf("zcode on messages: %+v %v", r, err)
	}
	if _, err := Resolve(Wire("grpc"), ""); err == nil || !strings.Contains(err.Error(), `unknown wire "grpc"`) {
		t.Errorf("unknown wire: %v", err)
	}
}

func TestVariant(t *testing.T) {
	for in, want := range map[string]string{
		"": "Native", "native": "Native", "kimi-cli": "KimiCli", "terminus-2": "Terminus2",
		"other": "Other(other)", "KIMI-CLI": "Other(KIMI-CLI)",
	} {
		if got := Variant(in); got != want {
			t.Errorf("Variant(%q) = %q, want %q", in, got, want)
		}
	}
}
