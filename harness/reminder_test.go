package harness_test

import (
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/prompts"
)

// The reminder templates of the harnesses that send system reminders
// start with SystemReminderTag, so a reader that skips reminders by it
// (zcode's cache marks, the scripted model's prompt) skips theirs.
func TestSystemReminderTagStartsTheReminders(t *testing.T) {
	pack := prompts.Default()
	n := 0
	for _, h := range []string{harness.NameClaudeCode, harness.NameQwenCode, harness.NameKimiCode, harness.NameZCode} {
		for _, name := range pack.Names(h) {
			if !strings.HasSuffix(name, "_reminder") || h == harness.NameZCode && name == "todo_reminder" { // zcode sends it as a system message
				continue
			}
			text, err := pack.Text(h, name)
			if err != nil {
				t.Fatal(err)
			}
			n++
			if !strings.HasPrefix(strings.TrimSpace(text), harness.SystemReminderTag) {
				t.Errorf("%s/%s does not start with %s", h, name, harness.SystemReminderTag)
			}
		}
	}
	if n < 8 {
		t.Errorf("only %d reminder templates", n)
	}
}
