package harness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/prompts"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

// Config is what a deployment decides for every turn: the upstream, the
// model table, the prompt pack, the clock. The zero value works: chat wire,
// built-in models, embedded prompts, the wall clock.
type Config struct {
	// Wire is the upstream wire; "" means chat.
	Wire Wire
	// BaseURL is the upstream's base URL (provider quirks).
	BaseURL string
	// Provider is the upstream's name, which the auto harness reads as
	// the fork's provider id and name ([DefaultFor]).
	Provider string
	// Models gives model capabilities; nil means the built-in table.
	Models *ModelTable
	// Prompts is the prompt pack; nil means the embedded one.
	Prompts *prompts.Pack
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives debug records; nil means slog.Default().
	Logger *slog.Logger
	// Variants picks harness variants for every model, harness name →
	// variant (e.g. "terminus-2": "plain"); an entry replaces the variant
	// the model table gives that harness.
	Variants map[string]string
	// Workspace says whether harnesses may read the client's working
	// directory from this machine's disk (docs/request-shaping.md#workspace);
	// "" means local, as `shape` and `translate` use it. `serve` decides it
	// from its listen address and client keys.
	Workspace WorkspacePolicy
	// ToolsInPrompt renders the request's tools into the prompt on the
	// chat routes that send the client's function tools, in the turn's
	// tool format (stages/toolprompt); a model-caps entry's
	// tools_in_prompt switches it on for its models.
	ToolsInPrompt bool
	// Unbridged, when set, is told of every call to a harness-native tool
	// that reaches the client without a bridge (for metrics).
	Unbridged func(harness, tool string)
	// ToolFormat is the default text tool-call format of chat answers
	// ("auto", a format, or ""/"off"); a model-caps entry's tool_format
	// overrides it for its models (docs/text-tool-calls.md).
	ToolFormat string
	// TextCalls, when set, is told of every text tool-call outcome.
	TextCalls func(format, outcome string)
	// HostedTool, when set, is told of every hosted tool (web_search,
	// image_generation, …) a chat request leaves out because neither the
	// upstream nor the client runs it (docs/request-shaping.md#hosted-tools).
	HostedTool func(toolType string)
	// Registry holds the harnesses the turn may use; nil means the
	// process registry ([Default]).
	Registry *Registry
	// InboundClient says the turn's client speaks an inbound wire (a
	// Messages or Chat Completions client, docs/inbound.md) and sends its
	// own agent's prompt and tools: the native route then serves the
	// messages wire too, as MessagesCompat (the plain conversion,
	// docs/inbound.md#to-a-messages-upstream), where a Responses client
	// gets the routing error.
	InboundClient bool
	// Route, when set, is the route of (Wire, the harness as the turn names
	// it) its caller resolved already ([Registry.Route]): Prepare takes it
	// instead of resolving the pair again. It is not taken for a route of
	// another wire, nor for the harness auto (the pick depends on the
	// request's model).
	Route *Route
}

// resolve routes the pair (wire, name) in reg, with the inbound clients'
// MessagesCompat route (Config.InboundClient).
func (c Config) resolve(reg *Registry, w Wire, name string) (Route, error) {
	route, err := reg.Resolve(w, name)
	if _, refused := errors.AsType[*RouteError](err); refused && c.InboundClient && w == WireMessages && isNative(name) {
		return Route{Kind: RouteMessagesCompat, Wire: w, Harness: NativeName, Variant: reg.Variant(name)}, nil
	}
	return route, err
}

// routeOf is the turn's route: Config.Route when it was resolved for this
// wire and name, else the pair resolved with the harness picked for model.
func (c Config) routeOf(reg *Registry, w Wire, name, model string) (Route, error) {
	if c.Route != nil && c.Route.Wire == w && name != NameAuto {
		return *c.Route, nil
	}
	return c.resolve(reg, w, c.pick(reg, name, model))
}

func (c Config) registry() *Registry {
	if c.Registry == nil {
		return Default()
	}
	return c.Registry
}

// modelCaps is the model table's entry for model with the configured
// variants applied (on a copy: the table is shared).
func (c Config) modelCaps(model string) ModelCaps {
	caps := c.Models.Lookup(model)
	if len(c.Variants) == 0 {
		return caps
	}
	vs := make(map[string]string, len(caps.Variants)+len(c.Variants))
	for h, v := range caps.Variants {
		vs[h] = v
	}
	for h, v := range c.Variants {
		vs[h] = v
	}
	caps.Variants = vs
	return caps
}

func (c Config) wire() Wire {
	if c.Wire == "" {
		return WireChat
	}
	return c.Wire
}

// Turn is one planned exchange: how it is routed, the env it was shaped in,
// the request graph and — after [Plan] — the shaped upstream request.
type Turn struct {
	// Route is how (wire, harness) is served.
	Route Route
	// Spec is the harness that serves the route.
	Spec Spec
	// Env is the turn's environment.
	Env *Env
	// RequestGraph is the request-direction graph of the turn.
	RequestGraph *pipeline.Graph
	// Shaped is the upstream request (set by Plan).
	Shaped request.Shaped

	unbridged  func(harness, tool string)
	toolFormat string
	textCalls  func(format, outcome string)
}

// Prepare routes the pair (cfg.Wire, harness name), finds the harness that
// serves the route, builds the turn's env from req and the client's headers
// (hdr may be nil) and the request graph — everything but running it.
func Prepare(cfg Config, name string, req *protocol.ResponsesRequest, hdr http.Header) (*Turn, error) {
	if req == nil {
		req = &protocol.ResponsesRequest{}
	}
	wire := cfg.wire()
	reg := cfg.registry()
	route, err := cfg.routeOf(reg, wire, name, req.Model)
	if err != nil {
		return nil, err
	}
	spec, ok := reg.Lookup(route.Harness)
	if !ok {
		return nil, fmt.Errorf("harness %q (route %s) is not available in this build", route.Harness, route)
	}
	if !spec.Supports(wire) && route.Kind != RouteMessagesCompat { // the routing test keeps this from happening; request graphs rely on it
		return nil, fmt.Errorf("harness %s: no request graph for wire %q (it shapes %v)", spec.Name, wire, spec.Wires)
	}
	now := time.Now
	if cfg.Now != nil {
		now = cfg.Now
	}
	pack := cfg.Prompts
	if pack == nil {
		pack = prompts.Default()
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	if spec.Name != NativeName {
		if req, err = HarnessRequest(req); err != nil {
			return nil, fmt.Errorf("harness %s: %w", spec.Name, err)
		}
	}
	loaded, err := request.SearchLoadedTools(req.Input)
	if err != nil {
		return nil, fmt.Errorf("harness %s: %w", spec.Name, err)
	}
	key := conversationKey(req, hdr)
	ws := ParseWorkspace(req.Input, Workspace{})
	t := turnTime(ws, key, now())
	if ws.Date == "" {
		ws.Date = t.Format(time.DateOnly)
	}
	env := &Env{
		Route:           route,
		Wire:            wire,
		BaseURL:         cfg.BaseURL,
		Model:           cfg.modelCaps(req.Model),
		Prompts:         pack,
		Now:             t,
		Workspace:       ws,
		Files:           cfg.Workspace.orLocal(),
		ProjectDocs:     ProjectDocs(req.Input),
		ConversationKey: key,
		Client:          bridge.DetectShell(req.Tools).WithLoaded(loaded),
		Subagent:        hdr.Get("x-openai-subagent"),
		Request:         req,
		Logger:          log,
		HostedTool:      cfg.HostedTool,
	}
	if err := checkShell(spec, env); err != nil {
		return nil, err
	}
	g, err := spec.Request(env)
	if err != nil {
		return nil, fmt.Errorf("harness %s: request graph: %w", spec.Name, err)
	}
	// After the request graph, whose own variant errors are more precise.
	if err := spec.CheckVariant(env.Model.Variant(spec.Name)); err != nil {
		return nil, err
	}
	if g, err = withToolsInPrompt(cfg, env, spec, g); err != nil {
		return nil, err
	}
	return &Turn{Route: route, Spec: spec, Env: env, RequestGraph: g, unbridged: cfg.Unbridged,
		toolFormat: cfg.ToolFormat, textCalls: cfg.TextCalls}, nil
}

// Plan prepares the turn and shapes the upstream request: Turn.Shaped is
// exactly what the proxy sends.
func Plan(ctx context.Context, cfg Config, name string, req *protocol.ResponsesRequest, hdr http.Header) (*Turn, error) {
	t, err := Prepare(cfg, name, req, hdr)
	if err != nil {
		return nil, err
	}
	t.Shaped, err = request.Shape(ctx, t.RequestGraph, t.Env.Request)
	if err != nil {
		return nil, err
	}
	t.Shaped.ToolKinds = toolKinds(t.Shaped.ToolKinds)
	if err := applyCalibrated(t.Env, t.Spec.Name, &t.Shaped); err != nil {
		return nil, fmt.Errorf("harness %s: %w", t.Spec.Name, err)
	}
	return t, nil
}

// ResponseGraph builds the response-direction graph of the turn: the
// protocol layer of the wire (with the turn's ToolKinds and request), then
// the harness's harness.post node, then harness.bridge when the harness has
// a post node or a bridge table.
func (t *Turn) ResponseGraph(opts ResponseOptions) (*pipeline.Graph, error) {
	if opts.ToolKinds == nil {
		opts.ToolKinds = t.Shaped.ToolKinds
	}
	if opts.Request == nil {
		opts.Request = t.Env.Request
	}
	t.textCallOptions(&opts)
	g, err := ProtocolGraph(t.Env.Wire, opts)
	if err != nil {
		return nil, err
	}
	if t.Spec.Post != nil {
		n, err := t.Spec.Post(t.Env)
		if err != nil {
			return nil, fmt.Errorf("harness %s: post node: %w", t.Spec.Name, err)
		}
		if g, err = g.Append(n.Renamed(NodePost)); err != nil {
			return nil, fmt.Errorf("harness %s: %w", t.Spec.Name, err)
		}
	}
	if t.Spec.Post != nil || t.Spec.Bridge != nil {
		name := t.Spec.Name
		opts := bridge.Options{Client: t.Env.Client, Table: t.Spec.Bridge}
		if t.unbridged != nil {
			opts.OnUnbridged = func(tool string) { t.unbridged(name, tool) }
		}
		if g, err = g.Append(bridge.Node(opts)); err != nil {
			return nil, fmt.Errorf("harness %s: %w", t.Spec.Name, err)
		}
	}
	return g.Renamed("response." + t.Spec.Name + "." + string(t.Env.Wire)), nil
}
