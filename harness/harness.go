// Package harness describes the coding agents harnessflow emulates and
// assembles every turn of them (docs/architecture.md#harness-layer).
//
// Each harness package registers a [Spec] into the process registry
// ([Register], [Default]; package harness/all holds every one, and its
// Registry function returns them): the wires the agent shapes itself, its
// variants, its request graph (history + tools → that agent's request,
// built from an [Env]), its optional harness.post node and text parser,
// and its tool bridge. A [Registry] is a set of specs that never changes
// (With and Without return new ones); the routing matrix
// ([Registry.Resolve], docs/routing.md#routing-matrix) is derived from the
// specs it holds and the registered wire codecs (package codec).
//
// A turn is opened in one place, [Open]: it plans the client's Responses
// request ([Plan]: the route, the shaped upstream request, the optional
// title request) and returns an [Exchange], whose [Exchange.Graph] builds
// the response graph — the wire's protocol layer (with the text tool-call
// node on chat), harness.post, harness.bridge, then the caller's edits,
// such as a stage of its own inserted by name. serve, shape, translate,
// bench, graph and the harness test kit all call Open, so what `shape`
// prints is what `serve` sends; package upstream sends an Exchange's
// request to a model server and runs its graph over the answer, as the
// proxy does. The process registry is the only global mutable state of
// the project.
package harness

import (
	"context"
	"fmt"
	"slices"

	"github.com/harnessflow/harnessflow/codec"
	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/wire"
)

// Wire is an upstream wire protocol; the type lives in package wire, below
// the stages, so that code with no harness can name one.
type Wire = wire.Wire

// The upstream wires (package wire's, under the names the harness layer
// has always used).
const (
	WireResponses = wire.Responses
	WireChat      = wire.Chat
	WireMessages  = wire.Messages
)

// Wires lists every registered wire ([codec.All]): responses, chat,
// messages, then any a program registered.
func Wires() []Wire { return codec.All() }

// ParseWire parses the name of a registered wire ([codec.Parse]).
func ParseWire(s string) (Wire, error) { return codec.Parse(s) }

// NativeName is the registry name of the no-harness translation.
const NativeName = "native"

// NodePost is the name of a harness's response-direction node that follows
// the protocol layer: it sees the engine events of one upstream answer and
// may pass them, add a synthesized tool call or a follow-up user message,
// or withhold a rejected turn (see [Followup]).
const NodePost = "harness.post"

// Spec is one registered agent emulation.
type Spec struct {
	// Name is the configuration name (e.g. "kimi-cli").
	Name string
	// Description is one line for `harnessflow harnesses`.
	Description string
	// Wires lists the upstream wires whose requests the harness shapes
	// itself; the routing matrix ([Resolve]) follows from it, and Plan
	// calls Request for these wires only, so a request graph need not
	// check.
	Wires []Wire
	// CodecWires says the harness also shapes every wire whose codec has a
	// native request graph (codec.Codec.NativeRequest), registered now or
	// later: the native translation's rule, so that a program's own wire
	// has a route.
	CodecWires bool
	// Request builds the request-direction graph for env.Wire. Its input is
	// *request.Shaping and its output request.Shaped.
	Request func(env *Env) (*pipeline.Graph, error)
	// Post, when set, builds the harness.post node of the response
	// direction for the turn described by env (the request is env.Request).
	Post func(env *Env) (pipeline.Node, error)
	// Parse, when set, runs one model reply through the harness's
	// text-protocol parser (`harnessflow parse`); the result is encoded as
	// JSON.
	Parse func(reply string, variant string) (any, error)
	// Bridge maps the harness's native tools to the client's tools
	// (harness.bridge); nil when the model calls the client's tools
	// directly.
	Bridge bridge.Table
	// Variants are the harness's variant dimensions; a variant string
	// naming anything else is refused ([Spec.CheckVariant]).
	Variants []VariantSpec
	// RouteName is the harness in the routing matrix's notation
	// (docs/routing.md#harness-names-and-variants), e.g. "KimiCli"; empty
	// means Name in CamelCase ("mini-swe-agent" → "MiniSweAgent").
	RouteName string
	// Routes gives the route kind of a wire of Wires where it is not the
	// usual one (chat: ChatHarness, messages: MessagesHarness); the
	// responses wire must be given. Every other wire is served as native
	// ([Resolve]).
	Routes map[Wire]RouteKind
}

// SystemReminderTag opens a system reminder: the text several harnesses
// (claude-code, qwen-code, zcode, kimi-code) put into a user message
// beside the user's own words. It is a convention of those agents, not of
// one harness, so it lives here; a text block that starts with it is not
// the user's prompt.
const SystemReminderTag = "<system-reminder>"

// Supports reports whether the harness shapes requests for w itself.
func (s Spec) Supports(w Wire) bool {
	if slices.Contains(s.Wires, w) {
		return true
	}
	if !s.CodecWires {
		return false
	}
	c, ok := codec.Lookup(w)
	return ok && c.NativeRequest != nil
}

// Register adds s to the process registry ([Default]). An empty name, a
// missing request graph, a bad variant declaration or a name registered
// twice is an error.
func Register(s Spec) error {
	mu.Lock()
	defer mu.Unlock()
	r, err := Default().With(s)
	if err != nil {
		return err
	}
	current.Store(r)
	return nil
}

// MustRegister is Register for package init functions; a bad spec is a
// programming error.
func MustRegister(s Spec) {
	if err := Register(s); err != nil {
		panic(err)
	}
}

// Lookup returns the harness called name ("" means native) in the process
// registry.
func Lookup(name string) (Spec, bool) { return Default().Lookup(name) }

// All returns every harness of the process registry, sorted by name.
func All() []Spec { return Default().All() }

// RouteWires lists the wires on which a harness config name has a route
// (docs/routing.md#routing-matrix), whichever harness serves it.
func RouteWires(name string) []Wire {
	var ws []Wire
	for _, w := range codec.All() {
		if _, err := Resolve(w, name); err == nil {
			ws = append(ws, w)
		}
	}
	return ws
}

// Parse runs reply through the text parser of the harness called name.
func Parse(_ context.Context, name, reply, variant string) (any, error) {
	s, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("harness: unknown harness %q", name)
	}
	if s.Parse == nil {
		return nil, fmt.Errorf("harness: %s has no text-protocol parser", name)
	}
	return s.Parse(reply, variant)
}

// toolKinds returns kinds, never nil.
func toolKinds(kinds protocol.ToolKinds) protocol.ToolKinds {
	if kinds == nil {
		return protocol.ToolKinds{}
	}
	return kinds
}
