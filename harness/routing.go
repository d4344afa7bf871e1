package harness

import "fmt"

// RouteKind is how a (wire, harness) pair is served (docs/routing.md#routing-matrix).
type RouteKind string

// Route kinds, named as in the routing matrix (docs/routing.md#routing-matrix).
const (
	// RouteResponsesAPI sends the plain native Responses request; the only
	// route that may use the Responses websocket transport.
	RouteResponsesAPI RouteKind = "ResponsesApi"
	// RouteChatCompletionsCompat converts the Responses request to a chat
	// body with the native conversion (docs/request-shaping.md#native-chat-conversion).
	RouteChatCompletionsCompat RouteKind = "ChatCompletionsCompat"
	// RouteClaudeCodeResponses sends a claude-code shaped Responses request.
	RouteClaudeCodeResponses RouteKind = "ClaudeCodeResponses"
	// RouteClaudeCodeChat sends a claude-code shaped request through the
	// chat conversion.
	RouteClaudeCodeChat RouteKind = "ClaudeCodeChat"
	// RouteMessagesHarness sends a harness-native Anthropic Messages request.
	RouteMessagesHarness RouteKind = "MessagesHarness"
	// RouteChatHarness sends a harness-shaped chat request.
	RouteChatHarness RouteKind = "ChatHarness"
)

// Claude-code profiles.
const (
	ProfileFull = "Full"
	ProfileBare = "Bare"
)

// Route says how one (wire, harness) pair is served.
type Route struct {
	// Kind is the route kind.
	Kind RouteKind
	// Wire is the upstream wire.
	Wire Wire
	// Harness is the registry name of the harness whose graphs serve the
	// route: NativeName for ResponsesApi and ChatCompletionsCompat, the
	// harness's config name otherwise.
	Harness string
	// Variant is the harness variant the route names (docs/routing.md#harness-names-and-variants): "KimiCli",
	// "ClaudeCode", "ZCode", "Other(x)", …
	Variant string
	// Profile is ProfileFull or ProfileBare for the claude-code routes, ""
	// otherwise.
	Profile string
}

// String gives the route in the notation of docs/routing.md#route-notation: "ResponsesApi",
// "ChatCompletionsCompat", "ClaudeCodeResponses(Full)", "ClaudeCodeChat(Bare)",
// "MessagesHarness(ClaudeCode)", "ChatHarness(KimiCli)".
func (r Route) String() string {
	switch r.Kind {
	case RouteClaudeCodeResponses, RouteClaudeCodeChat:
		return string(r.Kind) + "(" + r.Profile + ")"
	case RouteMessagesHarness, RouteChatHarness:
		return string(r.Kind) + "(" + r.Variant + ")"
	}
	return string(r.Kind)
}

// Websocket reports whether the route may use the Responses websocket
// transport (only ResponsesApi may).
func (r Route) Websocket() bool { return r.Kind == RouteResponsesAPI }

// RouteError is the error of a (wire, harness) pair no route serves. Its text
// is kept byte for byte (docs/routing.md#routing-errors) for named harnesses; for the native route on
// the messages wire it is our wording of the same content.
type RouteError struct {
	Wire    Wire
	Harness string // the config name; "" for native
}

// Error implements error.
func (e *RouteError) Error() string {
	if isNative(e.Harness) {
		return `wire_api = "messages" requires a harness-native transport; configure harness = "claude-code" ` +
			`or harness = "claude-code-bare" to talk to an Anthropic-style Messages API`
	}
	return `wire_api = "` + string(e.Wire) + `" is not supported by harness = "` + e.Harness + `"`
}

// The harness config names (docs/routing.md#harness-names-and-variants).
const (
	NameClaudeCode     = "claude-code"
	NameClaudeCodeBare = "claude-code-bare"
	NameDeepSeekTUI    = "deepseek-tui"
	NameKimiCode       = "kimi-code"
	NameKimiCLI        = "kimi-cli"
	NameZCode          = "zcode"
	NameMinimal        = "minimal"
	NameLittleCoder    = "little-coder"
	NameMiniSWEAgent   = "mini-swe-agent"
	NameOpenCode       = "opencode"
	NamePi             = "pi"
	NameQwenCode       = "qwen-code"
	NameSWEAgent       = "swe-agent"
	NameTerminus2      = "terminus-2"
)

// variants maps the config names to their variant names (docs/routing.md#harness-names-and-variants).
var variants = map[string]string{
	NameClaudeCode:     "ClaudeCode",
	NameClaudeCodeBare: "ClaudeCodeBare",
	NameDeepSeekTUI:    "DeepSeekTui",
	NameKimiCode:       "KimiCode",
	NameKimiCLI:        "KimiCli",
	NameZCode:          "ZCode",
	NameMinimal:        "Minimal",
	NameLittleCoder:    "LittleCoder",
	NameMiniSWEAgent:   "MiniSweAgent",
	NameOpenCode:       "OpenCode",
	NamePi:             "Pi",
	NameQwenCode:       "QwenCode",
	NameSWEAgent:       "SweAgent",
	NameTerminus2:      "Terminus2",
}

// KnownNames lists the harness config names of docs/routing.md#harness-names-and-variants (without native).
func KnownNames() []string {
	return []string{NameClaudeCode, NameClaudeCodeBare, NameDeepSeekTUI, NameKimiCode, NameKimiCLI, NameZCode,
		NameMinimal, NameLittleCoder, NameMiniSWEAgent, NameOpenCode, NamePi, NameQwenCode, NameSWEAgent, NameTerminus2}
}

// isNative reports whether a config name selects the native translation: ""
// (no harness configured) or our registry name "native".
func isNative(name string) bool { return name == "" || name == NativeName }

// Variant returns the variant (docs/routing.md#harness-names-and-variants) of a harness config name: "Native"
// for "" and "native", "ClaudeCode", "KimiCli", … for the known names, and
// "Other(name)" for any other string. Names are matched exactly.
func Variant(name string) string {
	if isNative(name) {
		return "Native"
	}
	if v, ok := variants[name]; ok {
		return v
	}
	return "Other(" + name + ")"
}

// Resolve returns how the pair (wire, harness config name) is served
// (docs/routing.md#routing-matrix). harness "" or "native" is the native translation; a known name
// gets its row of the matrix; any other name is Other(name) and is served
// like native, except that the messages wire is refused. On the responses
// wire only claude-code and claude-code-bare change anything.
func Resolve(wire Wire, harness string) (Route, error) {
	if _, err := ParseWire(string(wire)); err != nil {
		return Route{}, fmt.Errorf("harness: resolve: %w", err)
	}
	r := Route{Wire: wire, Variant: Variant(harness)}
	native := func(kind RouteKind) (Route, error) {
		r.Kind, r.Harness = kind, NativeName
		return r, nil
	}
	switch harness {
	case NameClaudeCode, NameClaudeCodeBare:
		r.Harness, r.Profile = harness, ProfileFull
		if harness == NameClaudeCodeBare {
			r.Profile = ProfileBare
		}
		switch wire {
		case WireResponses:
			r.Kind = RouteClaudeCodeResponses
		case WireChat:
			r.Kind = RouteClaudeCodeChat
		default:
			r.Kind, r.Variant = RouteMessagesHarness, variants[NameClaudeCode]
		}
		return r, nil
	case NameZCode:
		switch wire {
		case WireResponses:
			return native(RouteResponsesAPI)
		case WireChat:
			return native(RouteChatCompletionsCompat)
		}
		r.Kind, r.Harness = RouteMessagesHarness, harness
		return r, nil
	}
	if _, named := variants[harness]; named {
		switch wire {
		case WireResponses:
			return native(RouteResponsesAPI)
		case WireChat:
			r.Kind, r.Harness = RouteChatHarness, harness
			return r, nil
		}
		return Route{}, &RouteError{Wire: wire, Harness: harness}
	}
	// Native, or Other(x).
	switch wire {
	case WireResponses:
		return native(RouteResponsesAPI)
	case WireChat:
		return native(RouteChatCompletionsCompat)
	}
	return Route{}, &RouteError{Wire: wire, Harness: harness}
}
