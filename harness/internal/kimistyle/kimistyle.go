// Package kimistyle is the history flattening that the kimi-cli harness
// uses and the qwen-code harness reuses: a flatten policy value and a chat
// rendering style on the shared machinery of stages/request, plus the hooks
// they need. It lives here, not in either harness, so that both take the
// same value and neither imports the other.
//
// The rules, in words:
//
//   - An assistant text is sent at once when no calls are pending; it first
//     discards the calls not answered yet and the pending reasoning, so a
//     plain text never carries reasoning. While calls are pending a text
//     replaces the text held for them (it becomes the content of their
//     message).
//   - A call first sends the text held so far as a message of its own (with
//     the pending reasoning) and makes the calls sent before it stop
//     waiting for their outputs.
//   - A tool output sends the pending calls as one assistant message (with
//     the held text as content, or no content key at all, and the pending
//     reasoning); the output itself is sent only when its call is still
//     waiting for it. Other outputs (orphans) are dropped.
//   - User messages that are the engine's context (the environment block,
//     AGENTS.md instructions, permissions and skills fragments, …) are left
//     out; others discard the unanswered calls and the reasoning, send the
//     held text, and follow with their trailing newlines trimmed. Developer
//     messages never appear among the messages (the harness puts their text
//     into its system prompt) but end the pending turn the same way.
//   - At the end the held text is sent and the pending calls are dropped.
//   - Tool outputs: a failed output becomes "<system>ERROR: …</system>"
//     unless it already is such a system text; a blank one says the output
//     was empty, one with a NUL byte that the content was not text;
//     encrypted items say so. Images carry "id": null; audio and video are
//     kept as URL parts.
//   - A local_shell_call is shown as a call of "Shell" with
//     {"command":[…],"timeout":seconds|null}.
package kimistyle

import (
	"strings"

	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

// The system texts of tool outputs. They are protocol sentinels of the
// kimi family (the model learns them as tool-status lines), used verbatim.
const (
	// ErrorMarker starts every error text.
	ErrorMarker = "<system>ERROR:"
	// ErrorPrefix starts a failed output's text; the text is closed by
	// SystemSuffix.
	ErrorPrefix = ErrorMarker + " "
	// SystemSuffix closes a system text.
	SystemSuffix = "</system>"
	// SuccessPrefix starts a success notice that is kept as it is.
	SuccessPrefix = "<system>Command executed successfully."
	// EmptyOutput replaces a blank output.
	EmptyOutput = "<system>Tool output is empty.</system>"
	// NonTextOutput replaces an output holding a NUL byte.
	NonTextOutput = "<system>Tool returned non-text content.</system>"
	// EncryptedOutput replaces an encrypted output item.
	EncryptedOutput = "<system>Tool returned encrypted content.</system>"
)

// LocalShellTool is the tool name a local_shell_call is shown as.
const LocalShellTool = "Shell"

// Policy returns the kimi family's flatten policy (see the package doc).
// Each call returns a fresh value, so a harness may set its own hooks
// (MapCall) on it.
func Policy() request.FlattenPolicy {
	return request.FlattenPolicy{
		Text:                   request.TextImmediate,
		TextReplace:            true,
		Unanswered:             request.UnansweredDrop,
		Developer:              request.DeveloperFlush,
		SkipContextual:         true,
		SkipDeveloperFragments: true,
		SkipEmpty:              true,
		DiscardUnanswered:      true,
		DropOrphans:            true,
		CallEndsWait:           true,
		CallSendsText:          true,
		DropTrailingReasoning:  true,
		CallName:               func(_, name string) string { return name },
		LocalShellName:         LocalShellTool,
		LocalShellArguments:    ShellArguments,
		MapUserContent:         TrimUserNewlines,
		MapOutput:              SystemTexts,
	}
}

// Style returns the kimi family's chat rendering: images with "id": null,
// audio and video as URL parts, tool outputs of content items as parts
// (none as []).
func Style() request.ChatStyle {
	return request.ChatStyle{
		ImageNullID:      true,
		AudioURL:         true,
		OutputParts:      true,
		OutputMedia:      true,
		EmptyOutputParts: true,
	}
}

// TrimUserNewlines trims the trailing newlines of a user message's text
// parts.
func TrimUserNewlines(parts []request.Part) []request.Part {
	trim := false
	for _, p := range parts {
		if p.Kind == request.PartText && strings.HasSuffix(p.Text, "\n") {
			trim = true
			break
		}
	}
	if !trim {
		return parts
	}
	out := make([]request.Part, len(parts))
	copy(out, parts)
	for i := range out {
		if out[i].Kind == request.PartText {
			out[i].Text = strings.TrimRight(out[i].Text, "\n")
		}
	}
	return out
}

// IsSystemText reports whether a tool output text is already one of the
// family's system texts (kept as it is when the output failed).
func IsSystemText(text string) bool {
	return strings.HasPrefix(text, ErrorMarker) || strings.HasPrefix(text, SuccessPrefix) ||
		text == EmptyOutput || text == NonTextOutput
}

// SafeText is the text of a successful output or text item: a blank text
// says the output was empty and a text with a NUL byte that it was not
// text; any other text is kept.
func SafeText(text string) string {
	switch {
	case strings.TrimSpace(text) == "":
		return EmptyOutput
	case strings.IndexByte(text, 0) >= 0:
		return NonTextOutput
	}
	return text
}

// SystemTexts rewrites a tool output the kimi way (a MapOutput hook): a
// failed text output is wrapped as "<system>ERROR: …</system>" unless it
// is already a system text, a successful one goes through SafeText; of
// content items, texts go through SafeText (system texts kept) and
// encrypted items become EncryptedOutput.
func SystemTexts(o *request.Output) {
	if o.IsText() {
		if o.Success != nil && !*o.Success {
			if !IsSystemText(o.Text) {
				o.Text = ErrorPrefix + o.Text + SystemSuffix
			}
			return
		}
		o.Text = SafeText(o.Text)
		return
	}
	items := make([]protocol.FunctionCallOutputContentItem, 0, len(o.Items))
	for _, it := range o.Items {
		switch it.Type {
		case protocol.ContentInputText:
			if !IsSystemText(it.Text) {
				it.Text = SafeText(it.Text)
			}
			it.Extra = nil
		case "encrypted_content":
			it = protocol.FunctionCallOutputContentItem{Type: protocol.ContentInputText, Text: EncryptedOutput}
		}
		items = append(items, it)
	}
	o.Items = items
}

// ShellArguments renders a local_shell_call's action as the arguments of a
// Shell call: {"command":[…],"timeout":seconds|null}.
func ShellArguments(a *protocol.LocalShellAction) string {
	return request.ShellCallArguments(a, request.ShellTimeoutSeconds)
}
