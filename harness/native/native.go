// Package native registers the no-harness translation under the name
// "native": on the chat wire the engine request is converted with the native
// chat conversion (docs/request-shaping.md#native-chat-conversion, stages/request) — with the provider quirks of
// the upstream and stream_options.include_usage on streaming bodies, so the
// usage comes back — and on the responses wire it goes upstream as it is.
// The messages wire has no native route (docs/routing.md#routing-matrix).
//
// Import it for its side effect:
//
//	import _ "github.com/harnessflow/harnessflow/harness/native"
package native

import (
	"fmt"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/stages/request"
)

func init() { harness.MustRegister(Spec()) }

// Spec returns the native harness (the value registered as "native").
func Spec() harness.Spec {
	return harness.Spec{
		Name:        harness.NativeName,
		Description: "no emulation: Responses → Chat Completions conversion, or the Responses request as it is",
		Wires:       []harness.Wire{harness.WireResponses, harness.WireChat},
		Request: func(env *harness.Env) (*pipeline.Graph, error) {
			opts := env.RequestOptions()
			opts.ReasoningControl = request.ReasoningDefault // no reasoning switch: docs/request-shaping.md#body-fields
			opts.IncludeUsage = true
			return RequestGraph(env.Wire, opts)
		},
	}
}

// RequestGraph returns the native request graph of a wire, its stages
// configured by opts (provider quirks, model capabilities).
func RequestGraph(w harness.Wire, opts request.Options) (*pipeline.Graph, error) {
	switch w {
	case harness.WireChat:
		return request.NewChatGraph(opts)
	case harness.WireResponses:
		return request.NewResponsesGraph()
	}
	if _, err := harness.Resolve(w, harness.NativeName); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("native: no request graph for wire %q", w)
}
