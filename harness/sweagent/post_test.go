package sweagent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/prompts"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

var execTool = protocol.ToolSpec{Type: protocol.ToolTypeFunction, Name: "exec_command",
	Parameters: json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"},"workdir":{"type":"string"},"yield_time_ms":{"type":"number"}}}`)}

func testEnv(t *testing.T, tools []protocol.ToolSpec, input []protocol.ResponseItem) *harness.Env {
	t.Helper()
	return &harness.Env{Prompts: prompts.Default(), Client: bridge.DetectShell(tools), Workspace: harness.Workspace{Cwd: "/w"},
		Request: &protocol.ResponsesRequest{Model: "m", Input: input, Tools: tools}}
}

func assistant(text string) protocol.ResponseEvent {
	return protocol.Done(&protocol.Message{ID: "chat-message-1", Role: protocol.RoleAssistant,
		Content: []protocol.ContentItem{{Type: protocol.ContentOutputText, Text: text}}})
}

func runPost(t *testing.T, env *harness.Env, in ...protocol.ResponseEvent) []protocol.ResponseEvent {
	t.Helper()
	n, err := PostNode(env)
	if err != nil {
		t.Fatal(err)
	}
	g, err := pipeline.New("test", n)
	if err != nil {
		t.Fatal(err)
	}
	var out []protocol.ResponseEvent
	if err := pipeline.Run(context.Background(), g, pipeline.SourceFunc[protocol.ResponseEvent](func(_ context.Context, emit func(protocol.ResponseEvent) error) error {
		for _, ev := range in {
			if err := emit(ev); err != nil {
				return err
			}
		}
		return nil
	}),
		pipeline.SinkFunc[protocol.ResponseEvent](func(e protocol.ResponseEvent) error { out = append(out, e); return nil })); err != nil {
		t.Fatal(err)
	}
	return out
}

func completed() protocol.ResponseEvent {
	return protocol.ResponseEvent{Type: protocol.EventCompleted, ResponseID: "r"}
}

func TestPostShellCall(t *testing.T) {
	env := testEnv(t, []protocol.ToolSpec{execTool}, make([]protocol.ResponseItem, 7))
	out := runPost(t, env, protocol.Created(), assistant("```\nls -l\n```"), completed())
	if len(out) != 4 {
		t.Fatalf("events %v", out)
	}
	c, ok := out[2].Item.(*protocol.LocalShellCall)
	if !ok || out[2].Type != protocol.EventOutputItemDone {
		t.Fatalf("event 3 = %+v, want the done of a local_shell_call", out[2])
	}
	if *c.CallID != "swe-agent-bash-8" || strings.Join(c.Action.Command, "|") != "bash|-lc|ls -l" ||
		*c.Action.TimeoutMS != Timeout || *c.Action.WorkingDirectory != "/w" || c.Status != "in_progress" {
		t.Errorf("call = %+v %+v", c, c.Action)
	}
	if harness.WantsFollowup(out[3]) {
		t.Error("a shell call asks for a follow-up")
	}
}

func TestPostNoCommand(t *testing.T) {
	env := testEnv(t, []protocol.ToolSpec{execTool}, nil)
	out := runPost(t, env, protocol.Created(), assistant("no idea"), completed())
	if len(out) != 5 || !harness.IsFollowup(out[3]) || !harness.WantsFollowup(out[4]) {
		t.Fatalf("events %v, want created, the message, a follow-up (added, done), completed end_turn:false", out)
	}
	want, err := prompts.Default().Render(harness.NameSWEAgent, "format_error", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := out[3].Item.(*protocol.Message).Content[0].Text; got != want || strings.HasSuffix(got, "\n") {
		t.Errorf("follow-up text %q, want the format correction without a final newline", got)
	}
	// The correction ends with a fenced block that is itself a valid reply
	// shape, and it is what the request side prunes.
	tp, err := TextProtocol(env)
	if err != nil {
		t.Fatal(err)
	}
	if !tp.Retry(want) || tp.Retry(want+" ") {
		t.Error("Retry does not match the correction exactly")
	}
}

func TestPostEmptyTextAndOtherEvents(t *testing.T) {
	env := testEnv(t, []protocol.ToolSpec{execTool}, nil)
	reasoning := protocol.Done(&protocol.Reasoning{ID: "r1"})
	user := protocol.Done(&protocol.Message{Role: protocol.RoleUser, Content: []protocol.ContentItem{{Type: protocol.ContentInputText, Text: "```\nls\n```"}}})
	in := []protocol.ResponseEvent{protocol.Created(), reasoning, assistant(""), user, completed()}
	out := runPost(t, env, in...)
	if len(out) != len(in) {
		t.Fatalf("events %v, want them unchanged", out)
	}
	failed := protocol.ResponseEvent{Type: protocol.EventFailed, Error: &protocol.StreamError{Kind: protocol.ErrKindUpstream, Message: "x"}}
	out = runPost(t, env, assistant("hm"), failed)
	if len(out) != 4 || out[3].Type != protocol.EventFailed {
		t.Errorf("a failed stream: %v", out)
	}
}

func TestPostSubmitAndEditor(t *testing.T) {
	review := &protocol.FunctionCallOutput{CallID: "c", Output: protocol.FunctionCallOutputPayload{Text: ptr("Chunk ID: x\nOutput:\n... 4. Run the submit command again to confirm.\n")}}
	for _, c := range []struct {
		name  string
		tools []protocol.ToolSpec
		input []protocol.ResponseItem
		reply string
		want  string // the added item's type, "" for none
	}{
		{"submit with a client shell ends", []protocol.ToolSpec{execTool}, nil, "```\nsubmit\n```", ""},
		{"submit without a shell is the custom call", nil, nil, "```\nsubmit\n```", "custom_tool_call"},
		{"submit after the review ends", nil, []protocol.ResponseItem{review}, "```\nsubmit\n```", ""},
		{"editor with a client shell is a shell call", []protocol.ToolSpec{execTool}, nil, "```\nstr_replace_editor view /w/a\n```", "local_shell_call"},
		{"editor without a shell is the custom call", nil, nil, "```\nstr_replace_editor view /w/a\n```", "custom_tool_call"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := runPost(t, testEnv(t, c.tools, c.input), assistant(c.reply), completed())
			got := ""
			if len(out) == 3 {
				b, err := json.Marshal(out[1].Item)
				if err != nil {
					t.Fatal(err)
				}
				var v struct{ Type string }
				_ = json.Unmarshal(b, &v)
				got = v.Type
			}
			if got != c.want || harness.WantsFollowup(out[len(out)-1]) {
				t.Errorf("events %v; want an added %q", out, c.want)
			}
			if cc, ok := out[1].Item.(*protocol.CustomToolCall); ok && (cc.Name != ToolName || cc.CallID != "swe-agent-command-1") {
				t.Errorf("custom call %+v", cc)
			}
			if sc, ok := out[1].Item.(*protocol.LocalShellCall); ok && !strings.Contains(sc.Action.Command[2], "awk") {
				t.Errorf("editor shell call %q is not the generated command", sc.Action.Command)
			}
		})
	}
}

func TestObserve(t *testing.T) {
	o, err := newObserver(prompts.Default(), &Parser{Fence: FenceLast, EditorPrefix: "str_replace_editor ", Submit: "submit"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		obs  request.Observation
		want string
	}{
		{"empty", request.Observation{Turn: "```\ntrue\n```", Text: "", Framed: true, HasExit: true}, "Your command ran successfully and did not produce any output."},
		{"empty JSON output", request.Observation{Turn: "```\ntrue\n```", Text: `{"output":"","metadata":{"exit_code":0}}`}, "Your command ran successfully and did not produce any output."},
		{"JSON exit 124", request.Observation{Turn: "```\nsleep 9\n```", Text: `{"output":"x","metadata":{"exit_code":124}}`}, "The command 'sleep 9' was stopped"},
		{"JSON without a string output", request.Observation{Turn: "```\nx\n```", Text: `{"output":1}`}, "OBSERVATION:\n{\"output\":1}"},
		{"R install", request.Observation{Turn: "```\n" + rBaseInstall + "\n```", Text: ""}, "The command '" + rBaseInstall + "' was stopped"},
		{"still running, no command", request.Observation{Turn: "", Text: "partial", Framed: true}, "OBSERVATION:\npartial"},
		{"ls -la /app/ dates", request.Observation{Turn: "```\nls -la /app/\n```", Text: "drwx 2 r r 4096 May 25  2026 .\n-rw 1 r r 1 May 25  2026 a\n"},
			"OBSERVATION:\ndrwx 2 r r 4096 May 24  2026 .\n-rw 1 r r 1 May 25  2026 a\n"},
		{"bash line numbers only at line start", request.Observation{Turn: "```\nx\n```", Text: "say bash: line 3: x\nbash: line 12: y: not found\nbash: line z: w"},
			"OBSERVATION:\nsay bash: line 3: x\nbash: y: not found\nbash: line z: w"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, keep, err := o.observe(&c.obs)
			if err != nil || !keep || !strings.HasPrefix(got, c.want) {
				t.Errorf("observe = %q, %t, %v; want %q…", got, keep, err, c.want)
			}
		})
	}
}

// FuzzShellWords: the word splitter of editor commands never panics, and
// EditorCommand always gives a non-empty command.
func FuzzShellWords(f *testing.F) {
	for _, s := range []string{"str_replace_editor view /a", `str_replace_editor create 'a b' --file_text $'x\n'`, `"unterminated`, "a\\", "$'\\x", "$'\\u12"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = shellWords(s)
		if EditorCommand(s) == "" {
			t.Fatal("empty command")
		}
	})
}
