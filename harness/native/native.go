// Package native registers the no-harness translation under the name
// "native": on the chat wire the engine request is converted with the native
// chat conversion (docs/request-shaping.md#native-chat-conversion, stages/request) — with the provider quirks of
// the upstream, stream_options.include_usage on streaming bodies, so the
// usage comes back, and the request's reasoning effort in the model's
// reasoning form (docs/reasoning-controls.md) — and on the responses wire it
// goes upstream as it is.
//
// On the chat wire the engine's base prompt — the instructions, or when
// there are none the first developer message before any user message
// (Codex 0.171 sends it there) — is the system message. The variant "fork"
// (VariantFork) keeps the fork's rule instead: only instructions are the
// system message, and every developer message goes as a user message
// (docs/request-shaping.md#system-message).
// The messages wire has no native route (docs/routing.md#routing-matrix),
// except for the clients of the inbound wires (harness.Config.InboundClient):
// their requests get the plain Messages conversion (request.NewMessagesGraph).
//
// Import it for its side effect:
//
//	import _ "github.com/harnessflow/harnessflow/harness/native"
package native

import (
	"fmt"

	"github.com/harnessflow/harnessflow/codec"
	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/stages/request"
)

func init() { harness.MustRegister(Spec()) }

// VariantFork is the variant that keeps the fork's system-message rule
// (docs/request-shaping.md#system-message).
const VariantFork = "fork"

// Spec returns the native harness (the value registered as "native").
func Spec() harness.Spec {
	return harness.Spec{
		Name:        harness.NativeName,
		Description: "no emulation: Responses → Chat Completions conversion, or the Responses request as it is",
		Wires:       []harness.Wire{harness.WireResponses, harness.WireChat},
		CodecWires:  true, // and any wire whose codec has a native request graph
		Request: func(env *harness.Env) (*pipeline.Graph, error) {
			opts := env.RequestOptions()
			opts.ReasoningControl, opts.Efforts = ReasoningOf(env.Model)
			opts.IncludeUsage = true
			opts.ClientFields = env.Model.ClientFields() // docs/request-shaping.md#client-fields
			opts.BaseInstructions = env.Model.Variant(harness.NativeName) != VariantFork
			if env.Route.Kind == harness.RouteMessagesCompat { // an inbound client to a Messages upstream
				return request.NewMessagesGraph(opts)
			}
			return RequestGraph(env.Wire, opts)
		},
		Variants: []harness.VariantSpec{{Name: "request", Values: []string{VariantFork},
			Doc: "fork sends the base developer message as a user message (the fork's rule); the default makes it the system message"}},
	}
}

// ReasoningOf returns the reasoning control and accepted efforts the
// native chat route uses for a model (docs/reasoning-controls.md): the
// model table's entry, and for a model no entry matches the plain
// OpenAI-compatible reasoning_effort (low, medium, high), sent only when the
// request has an effort.
func ReasoningOf(m harness.ModelCaps) (request.ReasoningControl, []string) {
	if !m.Matched {
		return request.ReasoningEffortField, nil
	}
	return m.Reasoning, m.Efforts
}

// RequestGraph returns the native request graph of a wire, its stages
// configured by opts (provider quirks, model capabilities).
func RequestGraph(w harness.Wire, opts request.Options) (*pipeline.Graph, error) {
	if c, ok := codec.Lookup(w); ok && c.NativeRequest != nil {
		return c.NativeRequest(opts)
	}
	if _, err := harness.Resolve(w, harness.NativeName); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("native: no request graph for wire %q", w)
}
