package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/scripted"
	"github.com/harnessflow/harnessflow/server"
)

// The text-protocol harnesses through the real Codex: swe-agent (the model
// writes a fenced command; the observation comes back as a user message)
// and mini-swe-agent (a reply without a tool call is sent back). Their
// plain exchange runs in TestCodex's harness routes (sweAgentScript,
// miniSWEScript); TestCodexTextProtocolFollowups adds a rejection round,
// in the client and the proxy follow-up modes.

// submitSentinel is mini-swe-agent's submit command.
const submitSentinel = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"

// sweAgentScript plays swe-agent: a DISCUSSION and one fenced command,
// then, once the observation is back, the final text and submit.
func sweAgentScript(command string) *scripted.Script {
	return &scripted.Script{Turns: []scripted.Turn{
		{When: &scripted.Match{UserContains: "OBSERVATION:"}, Capture: `(?s)OBSERVATION:\n(.*)`,
			Text: "The shell said: {{capture}}\n\nDISCUSSION\nThe file is written, so I submit.\n\n```\nsubmit\n```"},
		{Text: "DISCUSSION\nI will write the proof file with one command.\n\n```bash\n" + command + "\n```"},
	}}
}

// miniSWEScript plays mini-swe-agent: a call of the client's shell tool,
// then the final text with the submit command, which the harness does not
// run.
func miniSWEScript(command string) *scripted.Script {
	yes, no := true, false
	return &scripted.Script{Turns: []scripted.Turn{
		{When: &scripted.Match{ToolResult: &yes}, Capture: `(?s)<output>\n(.*?)</output>`,
			Text: "The shell said: {{capture}}", ToolCalls: []scripted.ToolCall{{Command: submitSentinel}}},
		{When: &scripted.Match{ToolResult: &no}, Text: "THOUGHT: I will write the proof file.",
			ToolCalls: []scripted.ToolCall{{Command: command}}},
	}}
}

// checkSWEAgentBody: no tools, no stream key, SWE-agent's sampling, our
// system line, and Codex's prompt inside the instance prompt.
func checkSWEAgentBody(body []byte) error {
	var b map[string]json.RawMessage
	if err := json.Unmarshal(body, &b); err != nil {
		return err
	}
	for _, k := range []string{"tools", "stream", "tool_choice"} {
		if _, ok := b[k]; ok {
			return fmt.Errorf("the body has %q", k)
		}
	}
	if string(b["temperature"]) != "1.0" || string(b["top_p"]) != "0.95" {
		return fmt.Errorf("temperature %s, top_p %s; want 1.0 and 0.95", b["temperature"], b["top_p"])
	}
	c, err := decodeChat(body)
	if err != nil {
		return err
	}
	if len(c.Messages) != 2 || c.Messages[0].Role != "system" || c.Messages[1].Role != "user" {
		return fmt.Errorf("want a system and a user message, got %d messages", len(c.Messages))
	}
	var task string
	if err := json.Unmarshal(c.Messages[1].Content, &task); err != nil {
		return err
	}
	if !strings.HasPrefix(task, "<uploaded_files>\n") || !strings.Contains(task, "<pr_description>\n"+prompt+"\n</pr_description>") {
		return fmt.Errorf("the user message is not the instance prompt around Codex's prompt:\n%s", task)
	}
	return nil
}

// checkMiniSWEBody: no stream key, Codex's exec_command among the tools,
// and Codex's prompt as the issue of the instance prompt.
func checkMiniSWEBody(body []byte) error {
	var b map[string]json.RawMessage
	if err := json.Unmarshal(body, &b); err != nil {
		return err
	}
	if _, ok := b["stream"]; ok {
		return errors.New(`the body has "stream"`)
	}
	c, err := decodeChat(body)
	if err != nil {
		return err
	}
	if !bytes.Contains(body, []byte(`"name":"exec_command"`)) || len(c.Tools) == 0 {
		return fmt.Errorf("exec_command is not among the tools %q", c.toolNames())
	}
	if !bytes.Contains(body, []byte("Please solve this issue: "+prompt)) {
		return errors.New("no user message starts the instance prompt with Codex's prompt")
	}
	return nil
}

// TestCodexTextProtocolFollowups: the first reply has no command, the
// harness sends it back with its follow-up message, the model then runs
// the command, and the task ends — with the follow-up handled by Codex
// (client mode: it records the message and asks again) and by the proxy
// (proxy mode: it asks the upstream again itself).
func TestCodexTextProtocolFollowups(t *testing.T) {
	bin := os.Getenv(codexEnv)
	if bin == "" {
		t.Skipf("set %s to a Codex CLI binary to run (scripts/e2e-codex.sh does)", codexEnv)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s: %v", codexEnv, err)
	}
	yes, no := true, false
	routes := []struct {
		name   string
		script func(command string) *scripted.Script
		// check looks at the upstream bodies: the follow-up went back to
		// the model, and what the harness does with it later.
		check func(bodies [][]byte) error
	}{
		{name: "swe-agent", script: func(command string) *scripted.Script {
			s := sweAgentScript(command)
			first := scripted.Turn{When: &scripted.Match{UserContains: "<uploaded_files>"}, Text: "I am not sure yet what to do."}
			s.Turns = append([]scripted.Turn{s.Turns[0], first}, s.Turns[1:]...)
			return s
		}, check: func(bodies [][]byte) error {
			if !bytes.Contains(bodies[1], []byte("I am not sure yet")) || !bytes.Contains(bodies[1], []byte("did not follow the required format")) {
				return errors.New("the second request lacks the first reply and the format correction")
			}
			if bytes.Contains(bodies[2], []byte("I am not sure yet")) || bytes.Contains(bodies[2], []byte("did not follow the required format")) {
				return errors.New("the third request still holds the corrected attempt")
			}
			return nil
		}},
		{name: "mini-swe-agent", script: func(command string) *scripted.Script {
			return &scripted.Script{Turns: []scripted.Turn{
				{When: &scripted.Match{ToolResult: &yes}, Capture: `(?s)<output>\n(.*?)</output>`,
					Text: "The shell said: {{capture}}", ToolCalls: []scripted.ToolCall{{Command: submitSentinel}}},
				{When: &scripted.Match{ToolResult: &no, UserContains: "Tool call error:"}, Text: "THOUGHT: right, a tool call.",
					ToolCalls: []scripted.ToolCall{{Command: command}}},
				{When: &scripted.Match{ToolResult: &no}, Text: "Let me think about this first."},
			}}
		}, check: func(bodies [][]byte) error {
			if bytes.Contains(bodies[1], []byte("Let me think about this first")) {
				return errors.New("the withheld reply reached the model's history")
			}
			if !bytes.Contains(bodies[1], []byte("Tool call error:")) {
				return errors.New("the second request lacks the no-tool-call message")
			}
			return nil
		}},
	}
	for _, r := range routes {
		for _, mode := range []string{server.FollowupsClient, server.FollowupsProxy} {
			t.Run(r.name+"/"+mode, func(t *testing.T) {
				t.Parallel()
				command := "printf '%s followup ok\\n' " + r.name + " | tee proof.txt"
				output := r.name + " followup ok"
				p := startProxy(t, r.script(command), func(c *server.Config) { c.Followups = mode })
				run := runCodex(t, bin, p.url+"/h/"+r.name+"/v1", true)
				final := checkProofRun(t, run, output)
				p.stop(t)
				// Client mode: Codex makes the three requests. Proxy mode:
				// the proxy asks twice for Codex's first request.
				clientRequests := 3
				if mode == server.FollowupsProxy {
					clientRequests = 2
				}
				p.checkUpstream(t, "/h/"+r.name+"/v1/responses", r.name, clientRequests, 3)
				if bodies := p.upstreamBodies(); len(bodies) == 3 {
					if err := r.check(bodies); err != nil {
						t.Error(err)
					}
				}
				t.Logf("%s, %s follow-ups: %d client requests, 3 upstream; codex final message: %q", r.name, mode, clientRequests, final)
			})
		}
	}
}

// TestCodexMiniSWETextMode: mini-swe-agent's text mode, chosen for Codex's
// model by the proxy's model table: no tools go upstream, the model's one
// ```bash block runs through Codex's exec_command, the observation comes
// back as a user message, and the bare submit command ends the task.
func TestCodexMiniSWETextMode(t *testing.T) {
	bin := os.Getenv(codexEnv)
	if bin == "" {
		t.Skipf("set %s to a Codex CLI binary to run (scripts/e2e-codex.sh does)", codexEnv)
	}
	models := codexModelVariant(t, "mini-swe-agent", "text")
	const (
		command = "printf 'mini text mode ok\\n' | tee proof.txt"
		output  = "mini text mode ok"
	)
	script := &scripted.Script{Turns: []scripted.Turn{
		{When: &scripted.Match{UserContains: "<returncode>0</returncode>"}, Capture: `(?s)<output>\n(.*?)</output>`,
			Text: "THOUGHT: The shell said: {{capture}}\n\n```bash\n" + submitSentinel + "\n```"},
		{Text: "THOUGHT: I will write the proof file.\n\n```bash\n" + command + "\n```"},
	}}
	p := startProxy(t, script, func(c *server.Config) { c.Models = models })
	run := runCodex(t, bin, p.url+"/h/mini-swe-agent/v1", true)
	final := checkProofRun(t, run, output)
	p.stop(t)
	p.checkCompleted(t, "/h/mini-swe-agent/v1/responses", "mini-swe-agent", 2)
	for i, b := range p.upstreamBodies() {
		if bytes.Contains(b, []byte(`"tools"`)) || bytes.Contains(b, []byte(`"tool_calls"`)) {
			t.Errorf("upstream request %d carries tools or tool calls in text mode:\n%s", i+1, b)
		}
	}
	t.Logf("codex final message: %q", final)
}
