package sweagent

import (
	"fmt"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/prompts"
)

// Markers are the exact phrases by which a swe-agent request and its
// observations can be told apart from outside the harness (the scripted
// model answers them so). They are the prompt pack's markers of swe-agent;
// the templates that emit them carry the same phrases.
type Markers struct {
	// Task is the tag the instance prompt puts around the change request
	// (marker "task").
	Task string
	// Observation heads the observation of a command's output (marker
	// "observation").
	Observation string
	// EmptyOutput is the observation of a command that printed nothing
	// (marker "empty-output").
	EmptyOutput string
	// Timeout is in the observation of a command that timed out (marker
	// "timeout").
	Timeout string
	// Submit is the submit command (marker "submit").
	Submit string
}

// ReadMarkers returns the markers of pack (prompts.Default() when nil).
func ReadMarkers(pack *prompts.Pack) (Markers, error) {
	if pack == nil {
		pack = prompts.Default()
	}
	var m Markers
	for _, f := range []struct {
		name string
		to   *string
	}{{"task", &m.Task}, {"observation", &m.Observation}, {"empty-output", &m.EmptyOutput},
		{"timeout", &m.Timeout}, {"submit", &m.Submit}} {
		s, err := pack.Marker(harness.NameSWEAgent, f.name)
		if err != nil {
			return Markers{}, fmt.Errorf("swe-agent: markers: %w", err)
		}
		*f.to = s
	}
	return m, nil
}
