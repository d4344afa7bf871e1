package scripted

import (
	"strings"
)

// The text protocols: with Script.Protocols (the default script sets it),
// the model recognises the chat requests of the harnesses that read
// commands out of the reply text, and answers each in its own format, so
// that every harness route of `harnessflow serve` shows a shell call
// offline. A request is recognised by the exact markers those harnesses
// send (their instance prompts and submit sentinels), read in the system
// and user messages before the first assistant message:
//
//   - swe-agent: no tools and a <pr_description> block. A nameless call
//     is answered "DISCUSSION\n{text}\n\n```\n{command}\n```", a turn
//     without calls the same with the submit command;
//   - mini-swe-agent, text variant: no tools, the submit sentinel
//     COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT and a ```bash example.
//     "THOUGHT: {text}" then one ```bash block; the final reply's command
//     is `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`;
//   - mini-swe-agent, tool-call variant: the submit sentinel without the
//     ```bash example. A nameless call uses the request's shell tool, or
//     the "bash" tool its prompt names when the request has no tools; a
//     turn without calls ends with a call of that tool running the submit
//     command (the harness sends a reply without a call back);
//   - terminus-2: no tools and a first user message starting "You are an
//     AI assistant tasked". A JSON reply {"analysis","plan","commands",
//     "task_complete"}, or the <response> block of the XML variant when
//     the prompt shows <keystrokes> blocks. The command reply types the
//     command and claims completion at once (the harness runs the
//     keystrokes, then asks for confirmation with the screen); the final
//     reply has no commands and task_complete true.
//
// For these requests the "tools" condition of a turn holds (the protocol
// is the model's way to run commands) and "tool_result" holds when the
// last user message is an observation: SWE-agent's "OBSERVATION:" (or its
// empty-output and timeout texts), mini-swe-agent's <returncode>/<output>
// rendering, terminus-2's "New Terminal Output:", "Current Terminal
// Screen:" or confirmation question. {{tool_output}} is then the
// observation without its heading.

// textProtocol is the protocol a request was recognised as speaking.
type textProtocol int

const (
	protoNone         textProtocol = iota
	protoSWEAgent                  // fenced command after DISCUSSION
	protoMiniText                  // THOUGHT and one ```bash block
	protoMiniTools                 // mini-swe-agent's tool-call mode
	protoTerminusJSON              // terminus-2's JSON keystrokes
	protoTerminusXML               // terminus-2's <response> block
)

// Markers of the harnesses' requests and observations (exact strings the
// harnesses send; see prompts/pack/*/markers.json).
const (
	markerSWETask       = "<pr_description>"
	markerSWEObs        = "OBSERVATION:"
	markerSWEEmpty      = "Your command ran successfully and did not produce any output."
	markerSWETimeout    = "command timed out after"
	markerMiniSubmit    = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
	markerMiniBash      = "```bash"
	markerMiniReturn    = "<returncode>"
	markerMiniOutput    = "<output>"
	markerMiniHead      = "<output_head>"
	markerTerminusStart = "You are an AI assistant tasked"
	markerTerminusXML   = "<keystrokes"
	markerTerminusNew   = "New Terminal Output:"
	markerTerminusShow  = "Current Terminal Screen:"
	markerTerminusOK    = "Are you sure you want to mark the task as complete?"
)

// textual reports whether the protocol carries commands in the reply text.
func (p textProtocol) textual() bool {
	return p == protoSWEAgent || p == protoMiniText || p == protoTerminusJSON || p == protoTerminusXML
}

// detectProtocol recognises a request's harness protocol from what it
// shows before the first assistant message.
func detectProtocol(r *request) textProtocol {
	var prompt strings.Builder
	firstUser := ""
	for _, m := range r.messages {
		if m.role == "assistant" {
			break
		}
		if m.role == "user" && firstUser == "" {
			firstUser = m.text
		}
		prompt.WriteString(m.text)
		prompt.WriteByte('\n')
	}
	text := prompt.String()
	switch {
	case strings.Contains(text, markerMiniSubmit):
		if len(r.tools) == 0 && strings.Contains(text, markerMiniBash) {
			return protoMiniText
		}
		return protoMiniTools
	case len(r.tools) > 0:
		return protoNone
	case strings.HasPrefix(strings.TrimSpace(firstUser), markerTerminusStart):
		if strings.Contains(firstUser, markerTerminusXML) {
			return protoTerminusXML
		}
		return protoTerminusJSON
	case strings.Contains(text, markerSWETask):
		return protoSWEAgent
	}
	return protoNone
}

// observation reports whether the last user message of a text-protocol
// request is the result of a command, and returns that result without its
// heading.
func (p textProtocol) observation(last string) (string, bool) {
	t := strings.TrimSpace(last)
	switch p {
	case protoSWEAgent:
		if rest, ok := strings.CutPrefix(t, markerSWEObs); ok {
			return strings.TrimSpace(rest), true
		}
		if t == markerSWEEmpty || strings.Contains(t, markerSWETimeout) {
			return t, true
		}
	case protoMiniText:
		if strings.HasPrefix(t, markerMiniReturn) || strings.HasPrefix(t, markerMiniOutput) || strings.Contains(t, markerMiniHead) {
			if _, out, ok := strings.Cut(t, markerMiniOutput); ok {
				out, _, _ = strings.Cut(out, "</output>")
				return strings.TrimSpace(out), true
			}
			return t, true
		}
	case protoTerminusJSON, protoTerminusXML:
		for _, h := range []string{markerTerminusNew, markerTerminusShow} {
			if rest, ok := strings.CutPrefix(t, h); ok {
				return strings.TrimSpace(rest), true
			}
		}
		if i := strings.Index(t, markerTerminusOK); i >= 0 {
			state := strings.TrimSpace(t[:i])
			_, screen, _ := strings.Cut(state, "\n")
			return strings.TrimSpace(screen), true
		}
	}
	return "", false
}

// miniSubmit is mini-swe-agent's submit command.
const miniSubmit = "echo " + markerMiniSubmit

// protocolReply renders a played answer in the request's text protocol:
// commands (the nameless calls, held in a.commands) in the reply text, or,
// without any, the protocol's final reply.
func protocolReply(p textProtocol, a answer, shell shellTool, id string) answer {
	text := strings.TrimSpace(a.text)
	if text == "" {
		text = "Next step."
	}
	command := ""
	if len(a.commands) > 0 {
		command = strings.Join(a.commands, " && ")
	}
	a.commands = nil
	switch p {
	case protoSWEAgent:
		if command == "" {
			command = "submit"
		}
		a.text = "DISCUSSION\n" + text + "\n\n```\n" + command + "\n```"
	case protoMiniText:
		if command == "" {
			command = miniSubmit
		}
		a.text = "THOUGHT: " + text + "\n\n```bash\n" + command + "\n```"
	case protoTerminusJSON:
		type keys struct {
			Keystrokes string  `json:"keystrokes"`
			Duration   float64 `json:"duration"`
		}
		reply := struct {
			Analysis     string `json:"analysis"`
			Plan         string `json:"plan"`
			Commands     []keys `json:"commands"`
			TaskComplete bool   `json:"task_complete"`
		}{Analysis: text, Plan: "Nothing more to do: the task is complete.", Commands: []keys{}, TaskComplete: true}
		if command != "" {
			reply.Plan = "Type the command, then check the screen."
			reply.Commands = append(reply.Commands, keys{Keystrokes: command + "\n", Duration: 0.5})
		}
		a.text = marshal(reply)
	case protoTerminusXML:
		var b strings.Builder
		b.WriteString("<response>\n<analysis>\n" + text + "\n</analysis>\n")
		if command != "" {
			b.WriteString("<plan>\nType the command, then check the screen.\n</plan>\n<commands>\n")
			b.WriteString(`<keystrokes duration="0.5">` + command + "\n</keystrokes>\n</commands>\n")
		} else {
			b.WriteString("<plan>\nNothing more to do: the task is complete.\n</plan>\n<commands>\n</commands>\n")
		}
		b.WriteString("<task_complete>true</task_complete>\n</response>")
		a.text = b.String()
	case protoMiniTools:
		if len(a.calls) == 0 {
			a.calls = append(a.calls, call{id: "call_" + id + "_submit", name: shell.name, args: shellArguments(shell.schema, miniSubmit)})
		}
	}
	if len(a.calls) > 0 {
		a.finish = "tool_calls"
	} else if a.finish == "tool_calls" {
		a.finish = "stop"
	}
	return a
}
