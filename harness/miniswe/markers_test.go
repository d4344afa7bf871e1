package miniswe_test

import (
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/miniswe"
	"github.com/harnessflow/harnessflow/prompts"
)

// The markers are the phrases the harness's own prompts emit: the submit
// command in the instance prompts, the ```bash fence in the text mode's
// example, the tags of the observations.
func TestMarkersAreWhatTheTemplatesEmit(t *testing.T) {
	m, err := miniswe.ReadMarkers(nil)
	if err != nil {
		t.Fatal(err)
	}
	pack := prompts.Default()
	text, err := pack.Render(harness.NameMiniSWEAgent, "instance_text",
		map[string]any{"Submit": m.Submit, "System": "Linux", "Task": "Fix it.", "Darwin": false})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, m.ActionFence+"\n") || !strings.Contains(text, m.SubmitCommand()) {
		t.Errorf("the text-mode instance prompt lacks %q or %q", m.ActionFence, m.SubmitCommand())
	}
	if got := miniswe.Actions("THOUGHT: x\n\n" + m.ActionFence + "\nls\n```"); len(got) != 1 || got[0] != "ls" {
		t.Errorf("a block opened by %q reads as %q", m.ActionFence, got)
	}
	for _, c := range []struct {
		data map[string]any
		want []string
	}{
		{map[string]any{"HasExit": true, "ReturnCode": 0, "Running": false, "Truncated": false, "Output": "hi\n"},
			[]string{m.ReturnCode, m.Output + "\nhi\n"}},
		{map[string]any{"HasExit": false, "Running": false, "Truncated": true, "Head": "a", "Tail": "z", "Elided": 9},
			[]string{m.OutputHead + "\na\n"}},
	} {
		obs, err := pack.Render(harness.NameMiniSWEAgent, "observation", c.data)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(obs, w) {
				t.Errorf("observation %q lacks %q", obs, w)
			}
		}
	}
}
