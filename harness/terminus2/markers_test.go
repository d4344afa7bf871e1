package terminus2_test

import (
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness/terminus2"
	"github.com/harnessflow/harnessflow/prompts"
)

// The markers are the phrases the harness's own prompts emit: the start of
// the initial prompt (and the XML variant's command blocks in its
// example), the observation headings, the confirmation question.
func TestMarkersAreWhatTheTemplatesEmit(t *testing.T) {
	m, err := terminus2.ReadMarkers(nil)
	if err != nil {
		t.Fatal(err)
	}
	pack := prompts.Default()
	render := func(name string, data map[string]any) string {
		t.Helper()
		data["M"] = pack.Markers(terminus2.Name)
		s, err := pack.Render(terminus2.Name, name, data)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	task := map[string]any{"Instruction": "Do it.", "State": "root@h:/w#"}
	for _, c := range []struct {
		name, text string
		ok         bool
	}{
		{"initial starts with Initial", render("initial", task), strings.HasPrefix(render("initial", task), m.Initial)},
		{"initial_xml starts with Initial", render("initial_xml", task), strings.HasPrefix(render("initial_xml", task), m.Initial)},
		{"initial_xml shows Keystrokes", render("initial_xml", task), strings.Contains(render("initial_xml", task), m.Keystrokes+" ")},
		{"initial does not show Keystrokes", render("initial", task), !strings.Contains(render("initial", task), m.Keystrokes)},
		{"output_new starts with OutputNew", render("output_new", map[string]any{"Output": "x"}),
			strings.HasPrefix(render("output_new", map[string]any{"Output": "x"}), m.OutputNew+"\nx")},
		{"output_screen starts with OutputScreen", render("output_screen", map[string]any{"Screen": "s"}),
			strings.HasPrefix(render("output_screen", map[string]any{"Screen": "s"}), m.OutputScreen+"\ns")},
		{"confirm asks Confirm", render("confirm", map[string]any{"State": "s"}),
			strings.Contains(render("confirm", map[string]any{"State": "s"}), m.Confirm)},
	} {
		if !c.ok {
			t.Errorf("%s: %q", c.name, c.text)
		}
	}
}
