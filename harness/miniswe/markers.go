package miniswe

import (
	"fmt"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/prompts"
)

// ActionFence opens the one command block of a text-mode reply
// ([ActionPattern]); the text-mode prompts show it in their example.
const ActionFence = "```bash"

// Markers are the exact phrases by which a mini-swe-agent request and its
// observations can be told apart from outside the harness (the scripted
// model answers them so). Apart from ActionFence they are the prompt pack's
// markers of mini-swe-agent; the templates that emit them carry the same
// phrases.
type Markers struct {
	// Submit is the submission sentinel, in the instance prompt and in the
	// submit command `echo SUBMIT` (marker "submit").
	Submit string
	// ActionFence opens a text-mode command block ([ActionFence]).
	ActionFence string
	// ReturnCode, Output and OutputHead are the tags of an observation:
	// the exit code, the output, and the head of a cut output (markers
	// "returncode", "output" and "output-head").
	ReturnCode, Output, OutputHead string
}

// SubmitCommand is the command that submits: `echo SUBMIT`.
func (m Markers) SubmitCommand() string { return "echo " + m.Submit }

// ReadMarkers returns the markers of pack (prompts.Default() when nil).
func ReadMarkers(pack *prompts.Pack) (Markers, error) {
	if pack == nil {
		pack = prompts.Default()
	}
	m := Markers{ActionFence: ActionFence}
	for _, f := range []struct {
		name string
		to   *string
	}{{"submit", &m.Submit}, {"returncode", &m.ReturnCode}, {"output", &m.Output}, {"output-head", &m.OutputHead}} {
		s, err := pack.Marker(harness.NameMiniSWEAgent, f.name)
		if err != nil {
			return Markers{}, fmt.Errorf("mini-swe-agent: markers: %w", err)
		}
		*f.to = s
	}
	return m, nil
}
