package scripted_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	_ "github.com/harnessflow/harnessflow/harness/all" // the text-protocol parsers the answers are checked with
	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/scripted"
)

// unaryReply is the content and tool calls of a non-streamed chat answer.
type unaryReply struct {
	content string
	calls   []struct{ name, args string }
	finish  string
}

func unaryChat(t *testing.T, h http.Handler, body string) unaryReply {
	t.Helper()
	w := serve(t, h, http.MethodPost, "/v1/chat/completions", body)
	if w.Code != http.StatusOK {
		t.Fatalf("HTTP %d: %s", w.Code, w.Body)
	}
	var out struct {
		Choices []struct {
			Message struct {
				Content   *string `json:"content"`
				ToolCalls []struct {
					Function struct{ Name, Arguments string } `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil || len(out.Choices) != 1 {
		t.Fatalf("answer %s: %v", w.Body, err)
	}
	var r unaryReply
	m := out.Choices[0].Message
	if m.Content != nil {
		r.content = *m.Content
	}
	for _, c := range m.ToolCalls {
		r.calls = append(r.calls, struct{ name, args string }{c.Function.Name, c.Function.Arguments})
	}
	r.finish = out.Choices[0].FinishReason
	return r
}

func msg(role, text string) string {
	b, _ := json.Marshal(map[string]string{"role": role, "content": text})
	return string(b)
}

// TestProtocols: the default script answers each text-protocol harness in
// its own format — the command reply first, the final reply once an
// observation is back — as the harness's own parser reads it.
func TestProtocols(t *testing.T) {
	sweTask := "<uploaded_files>\n.\n</uploaded_files>\n<pr_description>\nhi\n</pr_description>"
	miniText := "Please solve this issue: hi\nSubmit with `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`.\n```bash\nls\n```"
	miniTools := "Please solve this issue: hi\nCall the bash tool; submit with `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`."
	terminusJSON := `You are an AI assistant tasked with command-line work. Answer {"analysis":…,"commands":[{"keystrokes":…}]}`
	terminusXML := "You are an AI assistant tasked with command-line work. Answer <response>… <keystrokes duration=\"0.1\">ls\n</keystrokes>"
	cases := []struct {
		name, harness, variant string
		task                   string
		observation            string
		// wantCommand / wantFinal are found in what the parser returns.
		wantCommand, wantFinal string
	}{
		{"swe-agent", "swe-agent", "", sweTask, "OBSERVATION:\nout-123", `"command":"echo hello from harnessflow"`, `"input":"submit"`},
		{"swe-agent empty output", "swe-agent", "", sweTask, "Your command ran successfully and did not produce any output.", `"command":"echo hello from harnessflow"`, `"input":"submit"`},
		{"mini-swe-agent text", "mini-swe-agent", "text", miniText, "<returncode>0</returncode>\n<output>\nout-123\n</output>", `"command":"echo hello from harnessflow"`, `COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`},
		{"terminus-2 json", "terminus-2", "", terminusJSON, "New Terminal Output:\nroot@host:/app# out-123", `"keystrokes":"echo hello from harnessflow\n"`, `"commands":[],"task_complete":true`},
		{"terminus-2 confirm", "terminus-2", "", terminusJSON, "Current terminal state:\nroot@host:/app# out-123\n\nAre you sure you want to mark the task as complete? …", `"keystrokes":"echo hello from harnessflow\n"`, `"commands":[],"task_complete":true`},
		{"terminus-2 xml", "terminus-2", "xml", terminusXML, "New Terminal Output:\nout-123", `"keystrokes":"echo hello from harnessflow\n"`, `"commands":[],"task_complete":true`},
	}
	h := scripted.New(nil)
	parse := func(t *testing.T, c string, reply, variant string) string {
		t.Helper()
		v, err := harness.Parse(context.Background(), c, reply, variant)
		if err != nil {
			t.Fatalf("%s parser: %v\nreply:\n%s", c, err, reply)
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			first := unaryChat(t, h, chatRequest(false, nil, msg("system", "You work on a computer."), msg("user", c.task)))
			if len(first.calls) != 0 || first.finish != "stop" {
				t.Errorf("first reply has tool calls %v, finish %q", first.calls, first.finish)
			}
			if got := parse(t, c.harness, first.content, c.variant); !strings.Contains(got, c.wantCommand) {
				t.Errorf("first reply parses to %s, want %s\nreply:\n%s", got, c.wantCommand, first.content)
			}
			second := unaryChat(t, h, chatRequest(false, nil, msg("system", "You work on a computer."), msg("user", c.task),
				msg("assistant", first.content), msg("user", c.observation)))
			if got := parse(t, c.harness, second.content, c.variant); !strings.Contains(got, c.wantFinal) {
				t.Errorf("second reply parses to %s, want %s\nreply:\n%s", got, c.wantFinal, second.content)
			}
			if strings.Contains(c.observation, "out-123") && !strings.Contains(second.content, "out-123") {
				t.Errorf("second reply does not quote the observation:\n%s", second.content)
			}
		})
	}

	// mini-swe-agent's tool-call mode: the request's shell tool, or the
	// bash tool the prompt names when the request has none; the final
	// reply is a call of the submit command.
	for _, tools := range [][]string{nil, {tool("exec_command", `{"type":"object","properties":{"cmd":{"type":"string"}}}`)}} {
		wantTool := "bash"
		if tools != nil {
			wantTool = "exec_command"
		}
		t.Run("mini-swe-agent tools/"+wantTool, func(t *testing.T) {
			first := unaryChat(t, h, chatRequest(false, tools, msg("user", miniTools)))
			if len(first.calls) != 1 || first.calls[0].name != wantTool || !strings.Contains(first.calls[0].args, scripted.DefaultCommand) {
				t.Fatalf("first reply calls %v, want %s running %q", first.calls, wantTool, scripted.DefaultCommand)
			}
			second := unaryChat(t, h, chatRequest(false, tools, msg("user", miniTools),
				`{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"`+wantTool+`","arguments":"{}"}}]}`,
				`{"role":"tool","tool_call_id":"c1","content":"<returncode>0</returncode>\n<output>\nout-123\n</output>"}`))
			if len(second.calls) != 1 || !strings.Contains(second.calls[0].args, "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT") || !strings.Contains(second.content, "out-123") {
				t.Errorf("second reply %+v: want the output quoted and a call of the submit command", second)
			}
		})
	}
}

// TestProtocolsOff: a request with tools and no harness markers, and a
// script without "protocols", are answered as before: tool calls, text as
// written.
func TestProtocolsOff(t *testing.T) {
	execTool := tool("exec_command", `{"type":"object","properties":{"cmd":{"type":"string"}}}`)
	r := unaryChat(t, scripted.New(nil), chatRequest(false, []string{execTool}, msg("user", "<pr_description>hi</pr_description>")))
	if len(r.calls) != 1 || r.calls[0].name != "exec_command" || strings.Contains(r.content, "DISCUSSION") {
		t.Errorf("tools and a swe-agent marker: %+v, want a plain exec_command call", r)
	}
	script := scripted.Default()
	script.Protocols = false
	r = unaryChat(t, scripted.New(script), chatRequest(false, nil, msg("user", "<pr_description>hi</pr_description>")))
	if len(r.calls) != 0 || !strings.HasPrefix(r.content, "Hello from the harnessflow scripted model") {
		t.Errorf("protocols off: %+v, want the greeting", r)
	}
}

// TestApplyPatchTrigger: a user message asking for a patch calls the
// client's apply_patch tool (a custom tool: one string "input" on chat)
// with a patch adding the file it names, or hello.txt.
func TestApplyPatchTrigger(t *testing.T) {
	tools := []string{
		tool("exec_command", `{"type":"object","properties":{"cmd":{"type":"string"}}}`),
		tool("apply_patch", `{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}`),
	}
	cases := []struct{ user, file string }{
		{"Please create file notes/todo.md with apply_patch.", "notes/todo.md"},
		{"Apply a patch that adds a greeting.", scripted.DefaultPatchFile},
		{"Use apply_patch to create the file greet.txt", "greet.txt"},
	}
	h := scripted.New(nil)
	for _, c := range cases {
		r := unaryChat(t, h, chatRequest(false, tools, msg("user", c.user)))
		if len(r.calls) != 1 || r.calls[0].name != "apply_patch" {
			t.Errorf("%q: calls %v, want apply_patch", c.user, r.calls)
			continue
		}
		var args struct{ Input string }
		if err := json.Unmarshal([]byte(r.calls[0].args), &args); err != nil {
			t.Fatal(err)
		}
		want := "*** Begin Patch\n*** Add File: " + c.file + "\n+hello from harnessflow\n*** End Patch\n"
		if args.Input != want {
			t.Errorf("%q: patch %q, want %q", c.user, args.Input, want)
		}
	}
	// Without an apply_patch tool the shell runs instead.
	r := unaryChat(t, h, chatRequest(false, tools[:1], msg("user", "Apply a patch please")))
	if len(r.calls) != 1 || r.calls[0].name != "exec_command" {
		t.Errorf("no apply_patch tool: calls %v, want exec_command", r.calls)
	}
}

// TestNamelessCallFindsEveryHarnessShell: a nameless call runs on the
// native shell tool of every registered harness (its bridge's plain
// mapping), and on the client shell tools the bridge knows, when that is
// the request's only tool; a tool of another name gets no call.
func TestNamelessCallFindsEveryHarnessShell(t *testing.T) {
	names := bridge.ClientShellNames()
	for _, s := range harness.All() {
		for _, m := range s.Bridge {
			if m.Plain && !slices.Contains(names, m.Tool) {
				names = append(names, m.Tool)
			}
		}
	}
	if len(names) < 8 {
		t.Fatalf("shell tools %q: the harnesses are not all registered", names)
	}
	h := scripted.New(nil)
	params := `{"type":"object","properties":{"command":{"type":"string"}}}`
	for _, name := range append(names, "read_file") {
		r := unaryChat(t, h, chatRequest(false, []string{tool(name, params)}, msg("user", "hi")))
		called := len(r.calls) == 1 && r.calls[0].name == name && strings.Contains(r.calls[0].args, scripted.DefaultCommand)
		if called != (name != "read_file") {
			t.Errorf("tool %s: reply %+v", name, r)
		}
	}
}
