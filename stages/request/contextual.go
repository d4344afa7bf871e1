package request

import (
	"strings"

	"github.com/harnessflow/harnessflow/protocol"
)

// contextualUserPairs are the start and end markers of the fragments the
// engine adds to user messages for the model's context (not the user's
// words): the environment block, AGENTS.md instructions, a shell command
// the user ran, an aborted-turn notice and sub-agent notices. They are
// matched exactly, ASCII case-insensitively, around the trimmed text.
var contextualUserPairs = [][2]string{
	{"# AGENTS.md instructions", "</INSTRUCTIONS>"},
	{"<environment_context>", "</environment_context>"},
	{"<user_shell_command>", "</user_shell_command>"},
	{"<turn_aborted>", "</turn_aborted>"},
	{"<subagent_notification>", "</subagent_notification>"},
	{"<skill>", "</skill>"},
	{"<hook_prompt>", "</hook_prompt>"},
	{"<codex_internal_context>", "</codex_internal_context>"},
}

// contextualDeveloperPrefixes start the engine's own developer fragments
// (permissions, skills, tool and mode notices), matched ASCII
// case-insensitively at the start of the text after leading space.
var contextualDeveloperPrefixes = []string{
	"<permissions instructions>", "Approved command prefix saved:", "<model_switch>", "<apps_instructions>",
	"<collaboration_mode>", "<multi_agent_role>", "<multi_agent_mode>", "<environments_instructions>",
	"<git_attribution>", "<plugins_instructions>", "<realtime_conversation>", "<skills_instructions>", "<tools>",
	"<personality_spec>", "<token_budget>", "<context_window>", "<context_window_guidance>", "<rollout_budget>",
}

// IsContextualUserText reports whether a text is one of the engine's
// contextual user fragments.
func IsContextualUserText(text string) bool {
	t := strings.TrimSpace(text)
	for _, p := range contextualUserPairs {
		if len(t) >= len(p[0])+len(p[1]) && strings.EqualFold(t[:len(p[0])], p[0]) && strings.EqualFold(t[len(t)-len(p[1]):], p[1]) {
			return true
		}
	}
	return false
}

// IsContextualDeveloperText reports whether a text is one of the engine's
// contextual developer fragments.
func IsContextualDeveloperText(text string) bool {
	t := strings.TrimLeft(text, " \t\r\n")
	for _, p := range contextualDeveloperPrefixes {
		if len(t) >= len(p) && strings.EqualFold(t[:len(p)], p) {
			return true
		}
	}
	return false
}

// IsContextualUser reports whether any text item of a message is a
// contextual user fragment: such a message is the engine's context, not the
// user's words.
func IsContextualUser(m *protocol.Message) bool {
	for i := range m.Content {
		c := &m.Content[i]
		if (c.Type == protocol.ContentInputText || c.Type == protocol.ContentOutputText) && IsContextualUserText(c.Text) {
			return true
		}
	}
	return false
}
