package calibrate

import (
	"testing"

	"github.com/harnessflow/harnessflow/codec"
	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/wire"
)

// Every agent recipe is filed under its harness, a registered one, and
// speaks wires the endpoint answers; each wire the endpoint answers is
// recognised by its codec's request path, with or without /v1 and a query.
func TestAgentsAreRegisteredHarnesses(t *testing.T) {
	for name, a := range Agents {
		if a.Harness != name {
			t.Errorf("Agents[%q] is the recipe of %q", name, a.Harness)
		}
		if _, ok := harness.Lookup(name); !ok {
			t.Errorf("Agents[%q]: no registered harness of that name", name)
		}
		if len(a.Wires) == 0 {
			t.Errorf("Agents[%q] speaks no wire", name)
		}
		for _, w := range a.Wires {
			if wireOf("/v1"+mustCodec(t, w).Path) != w {
				t.Errorf("Agents[%q]: the endpoint does not answer its wire %q", name, w)
			}
		}
	}
	for _, w := range endpointWires {
		path := mustCodec(t, w).Path
		for _, p := range []string{path, "/v1" + path, "/v1" + path + "/?beta=true"} {
			if got := wireOf(p); got != w {
				t.Errorf("wireOf(%q) = %q, want %q", p, got, w)
			}
		}
	}
	if got := wireOf("/v1/models"); got != "" {
		t.Errorf("wireOf(/v1/models) = %q", got)
	}
}

func mustCodec(t *testing.T, w string) *codec.Codec {
	t.Helper()
	c, ok := codec.Lookup(wire.Wire(w))
	if !ok {
		t.Fatalf("wire %q has no codec", w)
	}
	return c
}
