package harness

import (
	"fmt"
	"slices"
	"strings"
)

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

// UnknownHarnessError is the error for a harness name this build does not
// serve: a typo, a name of another project, or a name of the routing table
// (docs/routing.md#harness-names-and-variants) whose package is not in the
// build. The library's routing table serves such a name like native
// ([Resolve]); the CLI and the proxy's /h/NAME/ routes refuse it
// ([CheckName]).
type UnknownHarnessError struct {
	// Name is the name as given.
	Name string
	// Nearest is the registered name closest to Name by edit distance, ""
	// when none is close.
	Nearest string
	// Available lists the registered names, sorted.
	Available []string
	// Unbuilt is set when Name is in the routing table but no package of
	// this build registers it.
	Unbuilt bool
}

// Error implements error: one line naming the problem, the nearest name and
// every available one.
func (e *UnknownHarnessError) Error() string {
	var hint string
	switch {
	case e.Unbuilt:
		hint = "not in this build; "
	case e.Nearest != "":
		hint = `did you mean "` + e.Nearest + `"? `
	}
	return fmt.Sprintf("unknown harness %q (%savailable: %s)", e.Name, hint, strings.Join(e.Available, ", "))
}

// WireError is the error for a registered harness named on an upstream wire
// whose requests it does not shape: the routing table would serve the pair
// as native, which is not what the name asks for.
type WireError struct {
	// Harness is the harness name.
	Harness string
	// Wire is the upstream wire asked for.
	Wire Wire
	// Shapes lists the wires the harness shapes.
	Shapes []Wire
	// Flag is the flag that selects the wire, for the fix ("--upstream-wire"
	// when empty).
	Flag string
}

// Error implements error: the problem and the fix.
func (e *WireError) Error() string {
	flag := e.Flag
	if flag == "" {
		flag = "--upstream-wire"
	}
	ws := make([]string, len(e.Shapes))
	for i, w := range e.Shapes {
		ws[i] = string(w)
	}
	fix := ""
	if len(ws) > 0 {
		fix = "; use " + flag + " " + ws[0]
	}
	return fmt.Sprintf("harness %q does not shape %s requests (it shapes %s)%s", e.Harness, e.Wire, strings.Join(ws, ", "), fix)
}

// CheckName returns nil for "" (native), "native" and every registered
// harness name, and an [*UnknownHarnessError] for any other name.
func CheckName(name string) error {
	if _, ok := Lookup(name); ok {
		return nil
	}
	all := All()
	e := &UnknownHarnessError{Name: name, Available: make([]string, 0, len(all))}
	for _, s := range all {
		e.Available = append(e.Available, s.Name)
	}
	_, e.Unbuilt = variants[name]
	if !e.Unbuilt {
		e.Nearest = nearest(name, e.Available)
	}
	return e
}

// CheckRoute checks that the harness called name is in this build
// ([CheckName]) and, when the routing table routes (wire, name) to another
// harness (native), that it shapes wire itself: a [*WireError] otherwise.
// A pair the routing table refuses is left to [Resolve]'s [*RouteError].
func CheckRoute(wire Wire, name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if isNative(name) {
		return nil
	}
	route, err := Resolve(wire, name)
	if err != nil || route.Harness == name {
		return nil
	}
	s, _ := Lookup(name)
	return &WireError{Harness: name, Wire: wire, Shapes: slices.Clone(s.Wires)}
}

// nearest returns the name of names closest to name (case-insensitive edit
// distance), or "" when the closest is more than a third of the name away.
func nearest(name string, names []string) string {
	best, bestD := "", -1
	low := strings.ToLower(name)
	for _, n := range names {
		d := editDistance(low, strings.ToLower(n))
		if bestD < 0 || d < bestD {
			best, bestD = n, d
		}
	}
	if bestD < 0 || bestD > max(1, len([]rune(name))/3) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
