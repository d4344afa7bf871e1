package scripted

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/harnessflow/harnessflow/harness/miniswe"
	"github.com/harnessflow/harnessflow/harness/sweagent"
	"github.com/harnessflow/harnessflow/harness/terminus2"
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

// harnessMarkers are the markers of the harnesses' requests and
// observations: the exact phrases the harnesses send, read from the
// harnesses that own them (their prompt pack's markers).
type harnessMarkers struct {
	swe      sweagent.Markers
	mini     miniswe.Markers
	terminus terminus2.Markers
}

// markers reads the harnesses' markers from the embedded prompt pack once.
// The embedded pack is checked by the harnesses' tests, so a marker
// missing from it is a build defect.
var markers = sync.OnceValue(func() *harnessMarkers {
	var m harnessMarkers
	var errs [3]error
	m.swe, errs[0] = sweagent.ReadMarkers(nil)
	m.mini, errs[1] = miniswe.ReadMarkers(nil)
	m.terminus, errs[2] = terminus2.ReadMarkers(nil)
	if err := errors.Join(errs[:]...); err != nil {
		panic(fmt.Sprintf("scripted: the embedded prompt pack lacks a harness marker: %v", err))
	}
	return &m
})

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
	text, m := prompt.String(), markers()
	switch {
	case strings.Contains(text, m.mini.Submit):
		if len(r.tools) == 0 && strings.Contains(text, m.mini.ActionFence) {
			return protoMiniText
		}
		return protoMiniTools
	case len(r.tools) > 0:
		return protoNone
	case strings.HasPrefix(strings.TrimSpace(firstUser), m.terminus.Initial):
		if strings.Contains(firstUser, m.terminus.Keystrokes) {
			return protoTerminusXML
		}
		return protoTerminusJSON
	case strings.Contains(text, m.swe.Task):
		return protoSWEAgent
	}
	return protoNone
}

// observation reports whether the last user message of a text-protocol
// request is the result of a command, and returns that result without its
// heading.
func (p textProtocol) observation(last string) (string, bool) {
	t, m := strings.TrimSpace(last), markers()
	switch p {
	case protoSWEAgent:
		if rest, ok := strings.CutPrefix(t, m.swe.Observation); ok {
			return strings.TrimSpace(rest), true
		}
		if t == m.swe.EmptyOutput || strings.Contains(t, m.swe.Timeout) {
			return t, true
		}
	case protoMiniText:
		if strings.HasPrefix(t, m.mini.ReturnCode) || strings.HasPrefix(t, m.mini.Output) || strings.Contains(t, m.mini.OutputHead) {
			if _, out, ok := strings.Cut(t, m.mini.Output); ok {
				out, _, _ = strings.Cut(out, "</output>")
				return strings.TrimSpace(out), true
			}
			return t, true
		}
	case protoTerminusJSON, protoTerminusXML:
		for _, h := range []string{m.terminus.OutputNew, m.terminus.OutputScreen} {
			if rest, ok := strings.CutPrefix(t, h); ok {
				return strings.TrimSpace(rest), true
			}
		}
		if i := strings.Index(t, m.terminus.Confirm); i >= 0 {
			state := strings.TrimSpace(t[:i])
			_, screen, _ := strings.Cut(state, "\n")
			return strings.TrimSpace(screen), true
		}
	}
	return "", false
}

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
	m := markers()
	switch p {
	case protoSWEAgent:
		if command == "" {
			command = m.swe.Submit
		}
		a.text = "DISCUSSION\n" + text + "\n\n```\n" + command + "\n```"
	case protoMiniText:
		if command == "" {
			command = m.mini.SubmitCommand()
		}
		a.text = "THOUGHT: " + text + "\n\n" + m.mini.ActionFence + "\n" + command + "\n```"
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
			b.WriteString(m.terminus.Keystrokes + ` duration="0.5">` + command + "\n</keystrokes>\n</commands>\n")
		} else {
			b.WriteString("<plan>\nNothing more to do: the task is complete.\n</plan>\n<commands>\n</commands>\n")
		}
		b.WriteString("<task_complete>true</task_complete>\n</response>")
		a.text = b.String()
	case protoMiniTools:
		if len(a.calls) == 0 {
			a.calls = append(a.calls, call{id: "call_" + id + "_submit", name: shell.name, args: shellArguments(shell.schema, m.mini.SubmitCommand())})
		}
	}
	if len(a.calls) > 0 {
		a.finish = "tool_calls"
	} else if a.finish == "tool_calls" {
		a.finish = "stop"
	}
	return a
}
