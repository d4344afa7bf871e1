package serveconfig

import (
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/stages/request"
)

// An entry may name a harness of Options.Registry; the same file parsed
// with the process registry, which lacks it, is refused on that line.
func TestOptionsRegistry(t *testing.T) {
	spec := harness.Spec{Name: "own-agent", Wires: []harness.Wire{harness.WireChat},
		Request: func(env *harness.Env) (*pipeline.Graph, error) { return request.NewChatGraph(env.RequestOptions()) }}
	reg, err := harness.Default().With(spec)
	if err != nil {
		t.Fatal(err)
	}
	text := "[upstreams.local]\nbase_url = \"http://h\"\n[[models]]\nname = \"m\"\nupstreams = [\"local\"]\nharness = \"own-agent\"\n"
	c, err := Parse([]byte(text), "F", Options{Registry: reg})
	if err != nil {
		t.Fatalf("with the harness in the registry: %v", err)
	}
	if r, err := c.Route("m"); err != nil || r.Entry.Harness != "own-agent" {
		t.Errorf("Route = %+v, %v", r.Entry, err)
	}
	_, err = Parse([]byte(text), "F", Options{})
	if err == nil || !strings.Contains(err.Error(), `F:6: model "m": unknown harness "own-agent"`) {
		t.Errorf("with the process registry: %v; want the unknown harness on line 6", err)
	}
}
