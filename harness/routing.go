package harness

import (
	"fmt"

	"github.com/harnessflow/harnessflow/codec"
	"slices"
	"sort"
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
	// RouteMessagesCompat converts the request of a client of an inbound
	// wire (Config.InboundClient) to a plain Messages body
	// (request.NewMessagesGraph): the native route on the messages wire,
	// which the matrix refuses the Responses clients.
	RouteMessagesCompat RouteKind = "MessagesCompat"
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
// A harness package registers its spec under its name; the names of the
// fork's harnesses this build has no package for are routed by
// [forkRules].
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

// forkRule is a routing rule of the fork (docs/routing.md#routing-matrix)
// that does not follow from the registered specs.
type forkRule struct {
	// Name is the harness config name.
	Name string
	// RouteName is its name in the matrix, for a name no package of this
	// build registers.
	RouteName string
	// Unbuilt marks a harness of the fork this build has no package for:
	// the matrix still routes the chat wire to it (Prepare then says it
	// is not in this build).
	Unbuilt bool
	// Profile is the claude-code profile the name selects, on every wire.
	Profile string
	// MessagesRouteName replaces the route name on the messages wire.
	MessagesRouteName string
}

// forkRules is the table of exceptions: the routing rules of the fork the
// specs do not give.
func forkRules() []forkRule {
	return []forkRule{
		{Name: NameClaudeCode, Profile: ProfileFull, MessagesRouteName: "ClaudeCode"},
		{Name: NameClaudeCodeBare, Profile: ProfileBare, MessagesRouteName: "ClaudeCode"},
		{Name: NameLittleCoder, RouteName: "LittleCoder", Unbuilt: true},
		{Name: NamePi, RouteName: "Pi", Unbuilt: true},
	}
}

// rule returns the fork rule of a config name.
func rule(name string) (forkRule, bool) {
	for _, r := range forkRules() {
		if r.Name == name {
			return r, true
		}
	}
	return forkRule{}, false
}

// camel writes a config name in the matrix's notation: "kimi-cli" →
// "KimiCli".
func camel(name string) string {
	b := make([]byte, 0, len(name))
	up := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '-' || c == '_' {
			up = true
			continue
		}
		if up && 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		up = false
		b = append(b, c)
	}
	return string(b)
}

// KnownNames lists the harness config names of the routing matrix
// (docs/routing.md#harness-names-and-variants) without native: the
// registered harnesses and the fork's harnesses this build lacks, sorted.
func KnownNames() []string { return Default().KnownNames() }

// KnownNames lists the config names r routes to a harness (without
// native), sorted.
func (r *Registry) KnownNames() []string {
	var names []string
	for _, s := range r.All() {
		if !isNative(s.Name) {
			names = append(names, s.Name)
		}
	}
	for _, f := range forkRules() {
		if _, ok := r.Lookup(f.Name); !ok && f.Unbuilt {
			names = append(names, f.Name)
		}
	}
	sort.Strings(names)
	return names
}

// isNative reports whether a config name selects the native translation: ""
// (no harness configured) or our registry name "native".
func isNative(name string) bool { return name == "" || name == NativeName }

// Variant returns the variant (docs/routing.md#harness-names-and-variants) of a harness config name: "Native"
// for "" and "native", "ClaudeCode", "KimiCli", … for the known names, and
// "Other(name)" for any other string. Names are matched exactly.
func Variant(name string) string { return Default().Variant(name) }

// Variant is [Variant] for the harnesses of r.
func (r *Registry) Variant(name string) string {
	if isNative(name) {
		return "Native"
	}
	if s, ok := r.Lookup(name); ok {
		if s.RouteName != "" {
			return s.RouteName
		}
		if f, ok := rule(name); ok && f.RouteName != "" {
			return f.RouteName
		}
		return camel(name)
	}
	if f, ok := rule(name); ok && f.Unbuilt {
		return f.RouteName
	}
	return "Other(" + name + ")"
}

// Resolve returns how the pair (wire, harness config name) is served
// (docs/routing.md#routing-matrix) by the process registry.
func Resolve(wire Wire, harness string) (Route, error) { return Default().Resolve(wire, harness) }

// Resolve returns how the pair (wire, harness config name) is served
// (docs/routing.md#routing-matrix). A registered harness serves the wires
// of its spec (route kind: Spec.Routes, else ChatHarness on chat and
// MessagesHarness on messages); a harness of the fork this build lacks is
// routed to on the chat wire; everything else — "" and "native", a
// harness on a wire it does not shape, and any other name, Other(name) —
// is served as native on the responses and chat wires and refused on the
// messages wire. The claude-code names keep their profile on every wire
// and are MessagesHarness(ClaudeCode) on messages ([forkRules]).
func (r *Registry) Resolve(w Wire, harness string) (Route, error) {
	if _, err := ParseWire(string(w)); err != nil {
		return Route{}, fmt.Errorf("harness: resolve: %w", err)
	}
	if harness == NameAuto {
		// Without a request: the rule on the wire alone (a turn picks by
		// its model too, Prepare).
		return r.Resolve(w, Config{Wire: w}.pick(r, harness, ""))
	}
	route := Route{Wire: w, Variant: r.Variant(harness)}
	if !isNative(harness) {
		f, hasRule := rule(harness)
		if s, ok := r.Lookup(harness); ok && s.Supports(w) {
			route.Kind, route.Harness = s.routeKind(w), harness
			if hasRule {
				route.Profile = f.Profile
				if w == WireMessages && f.MessagesRouteName != "" {
					route.Variant = f.MessagesRouteName
				}
			}
			return route, nil
		}
		if _, ok := r.Lookup(harness); !ok && hasRule && f.Unbuilt && w == WireChat {
			route.Kind, route.Harness = RouteChatHarness, harness
			return route, nil
		}
	}
	if c, ok := codec.Lookup(w); ok && c.NativeRequest != nil {
		route.Kind, route.Harness = RouteKind(c.NativeRoute), NativeName
		return route, nil
	}
	return Route{}, &RouteError{Wire: w, Harness: harness}
}

// routeKind is the route kind of a wire the spec shapes.
func (s Spec) routeKind(w Wire) RouteKind {
	if k, ok := s.Routes[w]; ok {
		return k
	}
	switch w {
	case WireChat:
		return RouteChatHarness
	case WireMessages:
		return RouteMessagesHarness
	}
	return ""
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

// CheckName returns nil for "" (native), "native" and every harness name
// of the process registry, and an [*UnknownHarnessError] for any other name.
func CheckName(name string) error { return Default().CheckName(name) }

// CheckName is [CheckName] for the harnesses of r.
func (r *Registry) CheckName(name string) error {
	if _, ok := r.Lookup(name); ok || name == NameAuto {
		return nil
	}
	all := r.All()
	e := &UnknownHarnessError{Name: name, Available: make([]string, 0, len(all))}
	for _, s := range all {
		e.Available = append(e.Available, s.Name)
	}
	f, _ := rule(name)
	e.Unbuilt = f.Unbuilt
	if !e.Unbuilt {
		e.Nearest = nearest(name, e.Available)
	}
	return e
}

// CheckRoute checks that the harness called name is in this build
// ([CheckName]) and, when the routing table routes (wire, name) to another
// harness (native), that it shapes wire itself: a [*WireError] otherwise.
// A pair the routing table refuses is left to [Resolve]'s [*RouteError].
func CheckRoute(wire Wire, name string) error { return Default().CheckRoute(wire, name) }

// CheckRoute is [CheckRoute] for the harnesses of r.
func (r *Registry) CheckRoute(wire Wire, name string) error {
	_, resolved, err := r.route(wire, name)
	if err != nil && !resolved {
		return nil // the routing table's refusal: Resolve's to report
	}
	return err
}

// Route is [Registry.Resolve] and [Registry.CheckRoute] in one: the route
// of (wire, name) when name is in this build and the route is its own (or
// native's, for native and auto); else the error of either. A caller that
// resolved the route hands it to the turn's planning (Config.Route), so a
// request is routed once.
func (r *Registry) Route(wire Wire, name string) (Route, error) {
	route, _, err := r.route(wire, name)
	return route, err
}

// route resolves (wire, name) and checks it; resolved is false when the
// error is Resolve's own.
func (r *Registry) route(wire Wire, name string) (route Route, resolved bool, err error) {
	if err := r.CheckName(name); err != nil {
		return Route{}, true, err
	}
	route, err = r.Resolve(wire, name)
	if err != nil {
		return Route{}, false, err
	}
	if isNative(name) || name == NameAuto || route.Harness == name {
		return route, true, nil
	}
	s, _ := r.Lookup(name)
	return Route{}, true, &WireError{Harness: name, Wire: wire, Shapes: slices.Clone(s.Wires)}
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
