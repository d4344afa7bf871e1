package harness_test

import (
	"context"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

func chatSpec(name string) harness.Spec {
	return harness.Spec{Name: name, Wires: []harness.Wire{harness.WireChat},
		Request: func(env *harness.Env) (*pipeline.Graph, error) { return request.NewChatGraph(env.RequestOptions()) }}
}

// A registry value: With and Without leave the registry they start from
// as it was, and the routing follows the specs a registry holds.
func TestRegistryValue(t *testing.T) {
	base := harness.Default()
	n := len(base.All())
	r, err := base.With(chatSpec("new-agent"))
	if err != nil {
		t.Fatal(err)
	}
	if len(base.All()) != n || len(r.All()) != n+1 {
		t.Fatalf("With changed its receiver: %d → %d, new %d", n, len(base.All()), len(r.All()))
	}
	if _, ok := base.Lookup("new-agent"); ok {
		t.Error("the default registry got the new spec")
	}
	tests := []struct {
		reg  *harness.Registry
		wire harness.Wire
		name string
		want string // the route, or "ERR" + part of the error
	}{
		{r, harness.WireChat, "new-agent", "ChatHarness(NewAgent)"},
		{r, harness.WireResponses, "new-agent", "ResponsesApi"},
		{r, harness.WireMessages, "new-agent", `ERR is not supported by harness = "new-agent"`},
		{base, harness.WireChat, "new-agent", "ChatCompletionsCompat"},
		{base, harness.WireChat, "kimi-cli", "ChatHarness(KimiCli)"},
		{base.Without("kimi-cli"), harness.WireChat, "kimi-cli", "ChatCompletionsCompat"},
		{base.Without("zcode"), harness.WireMessages, "zcode", `ERR is not supported by harness = "zcode"`},
		{base.Without(harness.NamePi), harness.WireChat, harness.NamePi, "ChatHarness(Pi)"}, // the fork's harness this build may lack
	}
	for _, tt := range tests {
		route, err := tt.reg.Resolve(tt.wire, tt.name)
		if want, isErr := strings.CutPrefix(tt.want, "ERR "); isErr {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s × %s: %v, %v; want an error with %q", tt.name, tt.wire, route, err, want)
			}
			continue
		}
		if err != nil || route.String() != tt.want {
			t.Errorf("%s × %s: %v, %v; want %s", tt.name, tt.wire, route, err, tt.want)
		}
	}
	if v := base.Without("kimi-cli").Variant("kimi-cli"); v != "Other(kimi-cli)" {
		t.Errorf("a name no registry entry or fork rule knows: variant %q", v)
	}
	if _, err := r.With(chatSpec("new-agent")); err == nil || !strings.Contains(err.Error(), "already registered") {
		t.Errorf("a name twice: %v", err)
	}
	if !strings.Contains(strings.Join(r.KnownNames(), " "), "new-agent") || strings.Contains(strings.Join(base.KnownNames(), " "), "new-agent") {
		t.Errorf("KnownNames: %v / %v", r.KnownNames(), base.KnownNames())
	}
}

// Plan uses the configured registry.
func TestPlanRegistry(t *testing.T) {
	r, err := harness.Default().With(chatSpec("new-agent"))
	if err != nil {
		t.Fatal(err)
	}
	req := &protocol.ResponsesRequest{Model: "m", Input: []protocol.ResponseItem{}}
	turn, err := harness.Plan(context.Background(), harness.Config{Registry: r}, "new-agent", req, nil)
	if err != nil || turn.Route.String() != "ChatHarness(NewAgent)" || turn.Spec.Name != "new-agent" {
		t.Fatalf("plan with the registry: %v, %v", turn, err)
	}
	turn, err = harness.Plan(context.Background(), harness.Config{}, "new-agent", req, nil)
	if err != nil || turn.Route.Harness != harness.NativeName {
		t.Fatalf("plan with the default registry: %+v, %v; want native", turn, err)
	}
}

func TestRegistryRouteKinds(t *testing.T) {
	s := chatSpec("responses-agent")
	s.Wires = append(s.Wires, harness.WireResponses)
	if _, err := harness.Default().With(s); err == nil || !strings.Contains(err.Error(), "no route kind for the responses wire") {
		t.Errorf("a responses wire without its route kind: %v", err)
	}
	s.Routes = map[harness.Wire]harness.RouteKind{harness.WireResponses: harness.RouteClaudeCodeResponses}
	r, err := harness.Default().With(s)
	if err != nil {
		t.Fatal(err)
	}
	if route, err := r.Resolve(harness.WireResponses, s.Name); err != nil || route.Kind != harness.RouteClaudeCodeResponses || route.Harness != s.Name {
		t.Errorf("declared route kind: %+v %v", route, err)
	}
}

// Registry.Route is Resolve and CheckRoute in one, and a route it resolved
// is the turn's when handed over in Config.Route (for that wire only, and
// never for auto).
func TestRouteResolvedOnce(t *testing.T) {
	r, err := harness.Default().With(chatSpec("new-agent"))
	if err != nil {
		t.Fatal(err)
	}
	route, err := r.Route(harness.WireChat, "new-agent")
	if err != nil || route.String() != "ChatHarness(NewAgent)" {
		t.Fatalf("Route(chat, new-agent) = %v, %v", route, err)
	}
	if _, err := r.Route(harness.WireResponses, "new-agent"); err == nil || err.Error() != r.CheckRoute(harness.WireResponses, "new-agent").Error() {
		t.Errorf("Route off the harness's wire: %v, want CheckRoute's error", err)
	}
	if _, err := r.Route(harness.WireChat, "no-such-agent"); err == nil || err.Error() != r.CheckName("no-such-agent").Error() {
		t.Errorf("Route of an unknown name: %v, want CheckName's error", err)
	}
	if _, err := r.Route(harness.WireMessages, ""); err == nil || r.CheckRoute(harness.WireMessages, "") != nil {
		t.Errorf("Route(messages, native): %v (the routing table's refusal, which CheckRoute leaves to Resolve)", err)
	}

	req := &protocol.ResponsesRequest{Model: "m", Input: []protocol.ResponseItem{}}
	// A route marked by its variant shows which one the turn took.
	marked := route
	marked.Variant = "handed-over"
	for _, c := range []struct {
		name, harness string
		given         harness.Route
		want          string
	}{
		{"taken", "new-agent", marked, "handed-over"},
		{"another wire", "new-agent", harness.Route{Wire: harness.WireResponses, Variant: "handed-over"}, route.Variant},
	} {
		turn, err := harness.Plan(context.Background(), harness.Config{Registry: r, Route: &c.given}, c.harness, req, nil)
		if err != nil || turn.Route.Variant != c.want || turn.Spec.Name != "new-agent" {
			t.Errorf("%s: turn route %+v, %v; want variant %q", c.name, turn.Route, err, c.want)
		}
	}
}
