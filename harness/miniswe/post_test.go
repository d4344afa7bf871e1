package miniswe

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/prompts"
	"github.com/harnessflow/harnessflow/protocol"
)

var execTool = protocol.ToolSpec{Type: protocol.ToolTypeFunction, Name: "exec_command",
	Parameters: json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"},"workdir":{"type":"string"},"yield_time_ms":{"type":"number"}}}`)}

func testEnv(variant string, input ...protocol.ResponseItem) *harness.Env {
	tools := []protocol.ToolSpec{execTool}
	env := &harness.Env{Wire: harness.WireChat, Prompts: prompts.Default(), Client: bridge.DetectShell(tools),
		Workspace: harness.Workspace{Cwd: "/w", OS: "linux"},
		Request:   &protocol.ResponsesRequest{Model: "m", Input: input, Tools: tools}}
	if variant != "" {
		env.Model.Variants = map[string]string{harness.NameMiniSWEAgent: variant}
	}
	return env
}

// run feeds events through the post stage of env (a one-node pipeline,
// fused) and returns its output.
func run(t testing.TB, env *harness.Env, in []protocol.ResponseEvent) []protocol.ResponseEvent {
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
	src := pipeline.SourceFunc[protocol.ResponseEvent](func(_ context.Context, emit func(protocol.ResponseEvent) error) error {
		for _, ev := range in {
			if err := emit(ev); err != nil {
				return err
			}
		}
		return nil
	})
	sink := pipeline.SinkFunc[protocol.ResponseEvent](func(e protocol.ResponseEvent) error { out = append(out, e); return nil })
	if err := pipeline.Run(context.Background(), g, src, sink); err != nil {
		t.Fatal(err)
	}
	return out
}

func msgEvents(id, text string) []protocol.ResponseEvent {
	empty := &protocol.Message{ID: id, Role: protocol.RoleAssistant, Content: []protocol.ContentItem{{Type: protocol.ContentOutputText}}}
	full := &protocol.Message{ID: id, Role: protocol.RoleAssistant, Content: []protocol.ContentItem{{Type: protocol.ContentOutputText, Text: text}}}
	evs := []protocol.ResponseEvent{protocol.Added(empty)}
	if text != "" {
		evs = append(evs, protocol.TextDelta(text))
	}
	return append(evs, protocol.Done(full))
}

func execCall(id, cmd string) protocol.ResponseEvent {
	args, _ := json.Marshal(map[string]string{"cmd": cmd})
	return protocol.Done(&protocol.FunctionCall{Name: "exec_command", CallID: id, Arguments: string(args)})
}

func done(finish string) protocol.ResponseEvent {
	return protocol.ResponseEvent{Type: protocol.EventCompleted, ResponseID: "r", FinishReason: finish}
}

func types(evs []protocol.ResponseEvent) string {
	var s []string
	for _, e := range evs {
		t := string(e.Type)
		switch it := e.Item.(type) {
		case *protocol.Message:
			t += ":" + it.Role
		case *protocol.FunctionCall:
			t += ":" + it.Name
		case *protocol.LocalShellCall:
			t += ":local_shell"
		}
		if harness.WantsFollowup(e) {
			t += ":continue"
		}
		s = append(s, t)
	}
	return strings.Join(s, " ")
}

func cat(parts ...[]protocol.ResponseEvent) []protocol.ResponseEvent {
	var out []protocol.ResponseEvent
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func one(e protocol.ResponseEvent) []protocol.ResponseEvent { return []protocol.ResponseEvent{e} }

func TestToolPost(t *testing.T) {
	created := one(protocol.Created())
	for _, c := range []struct {
		name string
		in   []protocol.ResponseEvent
		want string
	}{
		{"text without a call is replaced", cat(created, msgEvents("m", "I think so."), one(done("stop"))),
			"created output_item.added:user output_item.done:user completed:continue"},
		{"a call passes", cat(created, msgEvents("m", "Run it."), one(execCall("c1", "ls")), one(done("tool_calls"))),
			"created output_item.added:assistant output_text.delta output_item.done:assistant output_item.done:exec_command completed"},
		{"several calls pass", cat(created, one(execCall("c1", "ls")), one(execCall("c2", "pwd")), one(done("tool_calls"))),
			"created output_item.done:exec_command output_item.done:exec_command completed"},
		{"nothing at all passes", cat(created, one(done("stop"))), "created completed"},
		{"only reasoning passes", cat(created, one(protocol.Done(&protocol.Reasoning{ID: "r"})), one(done("stop"))),
			"created output_item.done completed"},
		{"submit alone is not run; the text is the answer", cat(created, msgEvents("m", "All done."), one(execCall("c1", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")), one(done("tool_calls"))),
			"created output_item.added:assistant output_text.delta output_item.done:assistant completed"},
		{"submit alone without text gets a final message", cat(created, one(execCall("c1", " echo 'COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT' ")), one(done("tool_calls"))),
			"created output_item.added:assistant output_text.delta output_item.done:assistant completed"},
		{"submit with another call runs both", cat(created, one(execCall("c1", "git diff > p.txt")), one(execCall("c2", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")), one(done("tool_calls"))),
			"created output_item.done:exec_command output_item.done:exec_command completed"},
		{"failed drops what was held", cat(created, msgEvents("m", "x"), one(protocol.ResponseEvent{Type: protocol.EventFailed, Error: &protocol.StreamError{Kind: protocol.ErrKindUpstream}})),
			"created failed"},
		{"no end releases what was held", cat(created, msgEvents("m", "x")), "created output_item.added:assistant output_text.delta output_item.done:assistant"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := types(run(t, testEnv(""), c.in)); got != c.want {
				t.Errorf("events\n got %s\nwant %s", got, c.want)
			}
		})
	}
	out := run(t, testEnv(""), cat(msgEvents("m", "x"), one(done("stop"))))
	text := out[0].Item.(*protocol.Message).Content[0].Text
	for _, want := range []string{"Tool call error:\n\n<error>\n", "</error>", "- Tool: exec_command", `{"cmd": "your_command_here"}`, "`echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`"} {
		if !strings.Contains(text, want) {
			t.Errorf("no-tool-call text lacks %q:\n%s", want, text)
		}
	}
}

func TestTextPost(t *testing.T) {
	for _, c := range []struct {
		name, reply, finish string
		want, follow        string
	}{
		{"one action", "THOUGHT\n```bash\nls -l\n```", "stop", "created output_item.added:assistant output_text.delta output_item.done:assistant output_item.done:local_shell completed", ""},
		{"two actions", "```bash\nls\n```\n```bash\npwd\n```", "stop", "created output_item.added:assistant output_text.delta output_item.done:assistant output_item.added:user output_item.done:user completed:continue", "found 2."},
		{"no action", "hmm", "stop", "created output_item.added:assistant output_text.delta output_item.done:assistant output_item.added:user output_item.done:user completed:continue", "found 0."},
		{"cut off", "```bash\nls", "length", "created output_item.added:assistant output_text.delta output_item.done:assistant output_item.added:user output_item.done:user completed:continue", "finish_reason=length"},
		{"submit", "```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```", "stop", "created output_item.added:assistant output_text.delta output_item.done:assistant completed", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := run(t, testEnv(VariantText, make([]protocol.ResponseItem, 4)...), cat(one(protocol.Created()), msgEvents("m", c.reply), one(done(c.finish))))
			if got := types(out); got != c.want {
				t.Errorf("events\n got %s\nwant %s", got, c.want)
			}
			for _, e := range out {
				if harness.IsFollowup(e) && !strings.Contains(e.Item.(*protocol.Message).Content[0].Text, c.follow) {
					t.Errorf("follow-up %q lacks %q", e.Item.(*protocol.Message).Content[0].Text, c.follow)
				}
				if sc, ok := e.Item.(*protocol.LocalShellCall); ok {
					if *sc.CallID != "mini-swe-agent-bash-5" || sc.Action.Command[2] != "ls -l" || *sc.Action.WorkingDirectory != "/w" || *sc.Action.TimeoutMS != Timeout {
						t.Errorf("shell call %+v %+v", sc, sc.Action)
					}
				}
			}
		})
	}
	out := run(t, testEnv(VariantText), []protocol.ResponseEvent{protocol.Created(), done("stop")})
	if types(out) != "created output_item.added:user output_item.done:user completed:continue" {
		t.Errorf("a turn without a message: %s", types(out))
	}
}

func framedOut(id, text string, code int) *protocol.FunctionCallOutput {
	s := fmt.Sprintf("Chunk ID: a\nWall time: 0.1 seconds\nProcess exited with code %d\nOriginal token count: 1\nOutput:\n%s", code, text)
	return &protocol.FunctionCallOutput{CallID: id, Output: protocol.FunctionCallOutputPayload{Text: &s}}
}

func TestFinished(t *testing.T) {
	user := &protocol.Message{Role: protocol.RoleUser, Content: []protocol.ContentItem{{Type: protocol.ContentInputText, Text: "t"}}}
	call := &protocol.FunctionCall{Name: "exec_command", CallID: "c", Arguments: `{"cmd":"echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff"}`}
	upstream := cat(one(protocol.Created()), msgEvents("m", "more?"), one(execCall("c9", "ls")), one(done("stop")))
	for _, c := range []struct {
		name  string
		input []protocol.ResponseItem
		final string // "" when the turn goes on as usual
	}{
		{"submission with output", []protocol.ResponseItem{user, call, framedOut("c", "  COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\ndiff --git a b\n", 0)}, "The task is complete. Submitted output:\n\ndiff --git a b\n"},
		{"legacy sentinel", []protocol.ResponseItem{user, call, framedOut("c", "MINI_SWE_AGENT_FINAL_OUTPUT\n", 0)}, "The task is complete."},
		{"failed command", []protocol.ResponseItem{user, call, framedOut("c", "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n", 1)}, ""},
		{"sentinel not on the first line", []protocol.ResponseItem{user, call, framedOut("c", "x\nCOMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n", 0)}, ""},
		{"a later user message", []protocol.ResponseItem{call, framedOut("c", "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n", 0), user}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := run(t, testEnv("", c.input...), upstream)
			if c.final == "" {
				if types(out) != types(upstream) {
					t.Errorf("events %s, want the upstream's", types(out))
				}
				return
			}
			if types(out) != "created output_item.added:assistant output_text.delta output_item.done:assistant completed" {
				t.Fatalf("events %s", types(out))
			}
			if got := out[3].Item.(*protocol.Message).Content[0].Text; got != c.final {
				t.Errorf("final %q, want %q", got, c.final)
			}
		})
	}
}

// TestRejecterNeverLeaks: over random streams, a withheld turn leaks none
// of its events, a turn that is not withheld passes unchanged (but for the
// submit call), and the stream ends with exactly one terminal event.
func TestRejecterNeverLeaks(t *testing.T) {
	env := testEnv("")
	for seed := range uint64(3000) {
		rng := rand.New(rand.NewPCG(seed, 7))
		in, assistant, calls, submitOnly, hasText := randomStream(rng)
		out := run(t, env, in)
		term := in[len(in)-1].Type
		switch {
		case term == protocol.EventFailed:
			if types(out) != "created failed" {
				t.Fatalf("seed %d: failed stream gave %s", seed, types(out))
			}
		case term != protocol.EventCompleted:
			if types(out) != types(in) {
				t.Fatalf("seed %d: unterminated stream changed: %s", seed, types(out))
			}
		case assistant && calls == 0:
			if types(out) != "created output_item.added:user output_item.done:user completed:continue" {
				t.Fatalf("seed %d: withheld turn gave %s\nfrom %s", seed, types(out), types(in))
			}
			for _, e := range out {
				if e.Type == protocol.EventOutputTextDelta || e.Type == protocol.EventReasoningContentDelta || e.Type == protocol.EventServerModel {
					t.Fatalf("seed %d: leaked %v", seed, e)
				}
			}
		case submitOnly:
			want := 0
			for _, e := range in {
				if _, ok := e.Item.(*protocol.FunctionCall); !ok {
					want++
				}
			}
			if !hasText {
				want += 3
			}
			if len(out) != want || out[len(out)-1].Type != protocol.EventCompleted || harness.WantsFollowup(out[len(out)-1]) {
				t.Fatalf("seed %d: submit turn gave %s from %s", seed, types(out), types(in))
			}
		default:
			if types(out) != types(in) || len(out) != len(in) {
				t.Fatalf("seed %d: passing turn changed:\n got %s\nwant %s", seed, types(out), types(in))
			}
		}
		terminals := 0
		for i, e := range out {
			if e.Type == protocol.EventCompleted || e.Type == protocol.EventFailed {
				terminals++
				if i != len(out)-1 {
					t.Fatalf("seed %d: terminal event not last: %s", seed, types(out))
				}
			}
		}
		if (term == protocol.EventCompleted || term == protocol.EventFailed) && terminals != 1 {
			t.Fatalf("seed %d: %d terminal events", seed, terminals)
		}
	}
}

// randomStream makes one upstream answer as events: created, maybe a
// server model, reasoning, an assistant message, calls (sometimes the
// submit command), in a plausible order, and an end that is completed,
// failed or missing.
func randomStream(rng *rand.Rand) (evs []protocol.ResponseEvent, assistant bool, calls int, submitOnly, hasText bool) {
	evs = one(protocol.Created())
	if rng.IntN(2) == 0 {
		evs = append(evs, protocol.ServerModel("m"))
	}
	if rng.IntN(3) == 0 {
		r := &protocol.Reasoning{ID: "chat-reasoning-1"}
		evs = append(evs, protocol.Added(r), protocol.ReasoningDelta("hmm", 0), protocol.Done(r))
	}
	if rng.IntN(4) != 0 {
		text := []string{"", "Let me look.", "  ", "```bash\nls\n```"}[rng.IntN(4)]
		evs = append(evs, msgEvents("chat-message-1", text)...)
		assistant, hasText = true, strings.TrimSpace(text) != ""
	}
	calls = rng.IntN(3)
	submitOnly = calls == 1 && rng.IntN(2) == 0
	for i := range calls {
		cmd := "ls -" + string(rune('a'+i))
		if submitOnly {
			cmd = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
		}
		evs = append(evs, execCall(fmt.Sprintf("call_%d", i), cmd))
	}
	switch rng.IntN(6) {
	case 0:
		evs = append(evs, protocol.ResponseEvent{Type: protocol.EventFailed, Error: &protocol.StreamError{Kind: protocol.ErrKindTruncated}})
	case 1:
	default:
		evs = append(evs, done("stop"))
	}
	return evs, assistant, calls, submitOnly, hasText
}
