package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/scripted"
)

// codeModeRoute is a route the real Codex is driven through with its
// default model.
type codeModeRoute struct {
	name string // "native" or a harness name
	// checkBody checks the first upstream request (nil: only the tool
	// check every route gets).
	checkBody func(body codeModeBody) error
}

// codeModeBody is the part of a chat request the default-model checks read.
type codeModeBody struct {
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

// toolNames returns the names of the body's tools, in order.
func (b codeModeBody) toolNames() []string {
	names := make([]string, 0, len(b.Tools))
	for _, t := range b.Tools {
		names = append(names, t.Function.Name)
	}
	return names
}

// codeModeScript calls the code-mode exec tool with a JavaScript body that
// runs command through the code-mode API's exec_command and returns its
// output, then quotes the tool's answer.
func codeModeScript(command string) *scripted.Script {
	yes, no := true, false
	js := fmt.Sprintf("const r = await tools.exec_command({cmd: %q});\ntext(r.output);\n", command)
	args, _ := json.Marshal(map[string]string{"input": js}) // a custom tool is a function of one string "input" on chat
	return &scripted.Script{Turns: []scripted.Turn{
		{When: &scripted.Match{Tools: &yes, ToolResult: &no, HasTool: "exec"}, Text: "Running it.",
			ToolCalls: []scripted.ToolCall{{Name: "exec", Arguments: args}}},
		{When: &scripted.Match{ToolResult: &yes}, Text: "The shell said: {{tool_output}}"},
	}}
}

// defaultModelTests drive the real Codex with no model in its config: Codex
// then uses its default model, whose request carries its tools in an
// additional_tools input item (no tools field) and offers a code-mode
// surface (a custom exec tool running JavaScript, wait, …) instead of
// exec_command. Through native and minimal the upstream gets the exec tool
// and its call runs the command on the client.
func defaultModelTests(t *testing.T, bin string) {
	routes := []codeModeRoute{
		{name: "native"},
		{name: "minimal", checkBody: func(b codeModeBody) error {
			var system int
			for _, m := range b.Messages {
				if m.Role == "system" {
					system++
				}
			}
			if len(b.Messages) == 0 || b.Messages[0].Role != "system" || !strings.Contains(string(b.Messages[0].Content), "software engineer") {
				return fmt.Errorf("the first message is not minimal's system prompt")
			}
			if system != 1 {
				return fmt.Errorf("%d system messages, want minimal's one (Codex's base prompt is dropped)", system)
			}
			return nil
		}},
	}
	for _, r := range routes {
		t.Run("DefaultModel/"+r.name, func(t *testing.T) {
			t.Parallel()
			command := "printf '%s default model ok\\n' " + r.name + " | tee proof.txt"
			output := r.name + " default model ok"
			p := startProxy(t, codeModeScript(command))
			run := runCodexModel(t, bin, p.url+"/h/"+r.name+"/v1", "", true)
			checkCodeModeRun(t, run, output)
			p.stop(t)
			p.checkCompleted(t, "/h/"+r.name+"/v1/responses", r.name, 2)

			bodies := p.upstreamBodies()
			if len(bodies) == 0 {
				t.Fatal("the upstream got no request")
			}
			var first codeModeBody
			if err := json.Unmarshal(bodies[0], &first); err != nil {
				t.Fatalf("first upstream request: %v", err)
			}
			names := first.toolNames()
			if !slices.Contains(names, "exec") || slices.Contains(names, "exec_command") {
				t.Errorf("first upstream request offers tools %q, want the code-mode exec and no exec_command (Codex's default model)", names)
			}
			if strings.Contains(string(bodies[0]), `"additional_tools"`) {
				t.Errorf("first upstream request carries the additional_tools item as such")
			}
			if r.checkBody != nil {
				if err := r.checkBody(first); err != nil {
					t.Errorf("first upstream request: %v", err)
				}
			}
		})
	}
}

// checkCodeModeRun checks a Codex run whose one code-mode exec call ran a
// shell command printing output into proof.txt: Codex exited 0, reported
// the command as run and succeeded, proof.txt in the work directory holds
// output, and the final message quotes it.
func checkCodeModeRun(t *testing.T, run codexRun, output string) {
	t.Helper()
	if run.exitCode != 0 {
		t.Fatalf("codex exited with %d, want 0\n%s", run.exitCode, run)
	}
	ev := parseEvents(t, run)
	ev.command(t, "proof.txt")
	if data, err := os.ReadFile(filepath.Join(run.workDir, "proof.txt")); err != nil || strings.TrimSpace(string(data)) != output {
		t.Errorf("work dir proof.txt = %q, %v; want %q", data, err, output)
	}
	if final := ev.finalMessage(t); !strings.Contains(final, "The shell said: ") || !strings.Contains(final, output) {
		t.Errorf("final message does not quote the command's output %q:\n%s", output, final)
	}
}
