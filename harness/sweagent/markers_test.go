package sweagent_test

import (
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/sweagent"
	"github.com/harnessflow/harnessflow/prompts"
)

// The markers are the phrases the harness's own templates emit: the task
// tag around the change request, the observation heading before the
// output.
func TestMarkersAreWhatTheTemplatesEmit(t *testing.T) {
	m, err := sweagent.ReadMarkers(nil)
	if err != nil {
		t.Fatal(err)
	}
	pack := prompts.Default()
	instance, err := pack.Render(harness.NameSWEAgent, "instance", map[string]any{"Repo": "/r", "PR": "Fix it."})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(instance, m.Task+"\nFix it.\n") {
		t.Errorf("the instance prompt does not hold the request after %q:\n%s", m.Task, instance)
	}
	obs, err := pack.Render(harness.NameSWEAgent, "observation", map[string]any{"Output": "out"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(obs, m.Observation+"\nout") {
		t.Errorf("observation %q does not start with %q and the output", obs, m.Observation)
	}
	p, err := sweagent.NewParser(pack, "")
	if err != nil {
		t.Fatal(err)
	}
	if m.Submit != p.Submit || m.EmptyOutput == "" || m.Timeout == "" {
		t.Errorf("markers %+v, parser's submit %q", m, p.Submit)
	}
}
