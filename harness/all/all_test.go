package all_test

import (
	"slices"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	_ "github.com/harnessflow/harnessflow/harness/all"
)

// The routing matrix (harness.Resolve) and the registered specs agree: a
// registered harness shapes exactly the wires on which its name routes to
// itself, and every route that names a harness of this build finds it.
func TestSpecWiresAgreeWithRouting(t *testing.T) {
	for _, s := range harness.All() {
		var routed []harness.Wire
		for _, w := range harness.Wires() {
			r, err := harness.Resolve(w, s.Name)
			if err == nil && r.Harness == s.Name {
				routed = append(routed, w)
			}
		}
		want := slices.Clone(s.Wires)
		slices.Sort(want)
		slices.Sort(routed)
		if !slices.Equal(want, routed) {
			t.Errorf("%s: spec wires %v, routed to it on %v", s.Name, want, routed)
		}
		for _, w := range s.Wires {
			if !s.Supports(w) {
				t.Errorf("%s: Supports(%s) = false", s.Name, w)
			}
		}
	}
}

// Every harness of the build has a request graph on each of its wires and a
// response graph that ends in engine events.
func TestEveryHarnessPlans(t *testing.T) {
	for _, s := range harness.All() {
		for _, w := range s.Wires {
			turn, err := harness.Prepare(harness.Config{Wire: w}, s.Name, nil, nil)
			if err != nil {
				t.Errorf("%s on %s: %v", s.Name, w, err)
				continue
			}
			if turn.Route.Harness != s.Name {
				t.Errorf("%s on %s: served by %s", s.Name, w, turn.Route.Harness)
			}
			if _, err := turn.ResponseGraph(harness.ResponseOptions{}); err != nil {
				t.Errorf("%s on %s: response graph: %v", s.Name, w, err)
			}
		}
	}
}
