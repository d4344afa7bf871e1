package terminus2

import (
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/prompts"
	"github.com/harnessflow/harnessflow/protocol"
)

func testTexts(t testing.TB) *texts {
	t.Helper()
	tx, err := newTexts(prompts.Default(), VariantJSON)
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

func uMsg(text string) protocol.ResponseItem {
	return &protocol.Message{Role: protocol.RoleUser, Content: []protocol.ContentItem{{Type: protocol.ContentInputText, Text: text}}}
}

func aMsg(text string) protocol.ResponseItem {
	return &protocol.Message{Role: protocol.RoleAssistant, Content: []protocol.ContentItem{{Type: protocol.ContentOutputText, Text: text}}}
}

func devMsg(text string) protocol.ResponseItem {
	return &protocol.Message{Role: protocol.RoleDeveloper, Content: []protocol.ContentItem{{Type: protocol.ContentInputText, Text: text}}}
}

// callOut is an exec_command call and its output in Codex's framing.
func callOut(id, output string) []protocol.ResponseItem {
	return []protocol.ResponseItem{
		&protocol.FunctionCall{Name: "exec_command", CallID: id, Arguments: `{"cmd":"tmux"}`},
		&protocol.FunctionCallOutput{CallID: id, Output: protocol.FunctionCallOutputPayload{Text: ptr(
			"Chunk ID: 1\nWall time: 0.5 seconds\nProcess exited with code 0\nOriginal token count: 9\nOutput:\n" + output)}},
	}
}

func ptr[T any](v T) *T { return &v }

// sections is a tmux script output: an empty previous buffer, the screen
// and the new part of the buffer.
func sections(screen, current string) string {
	return "__OPEN_INTERPRETER_TERMINUS_2_PREVIOUS_BUFFER_START__\n__OPEN_INTERPRETER_TERMINUS_2_PREVIOUS_BUFFER_END__\n" +
		"__OPEN_INTERPRETER_TERMINUS_2_CURRENT_SCREEN_START__\n" + screen + "__OPEN_INTERPRETER_TERMINUS_2_CURRENT_SCREEN_END__\n" +
		"__OPEN_INTERPRETER_TERMINUS_2_CURRENT_BUFFER_START__\n" + current + "__OPEN_INTERPRETER_TERMINUS_2_CURRENT_BUFFER_END__\n"
}

func items(parts ...any) []protocol.ResponseItem {
	var out []protocol.ResponseItem
	for _, p := range parts {
		switch v := p.(type) {
		case protocol.ResponseItem:
			out = append(out, v)
		case []protocol.ResponseItem:
			out = append(out, v...)
		}
	}
	return out
}

const (
	envCtx   = "<environment_context>\n  <cwd>/work/project</cwd>\n</environment_context>"
	ls       = `{"analysis":"a","plan":"p","commands":[{"keystrokes":"ls\n","duration":0.1}]}`
	cdSub    = `{"analysis":"a","plan":"p","commands":[{"keystrokes":"cd sub\n","duration":0.1},{"keystrokes":"cd /opt/x\n","duration":0.1}]}`
	cdBack   = `{"analysis":"a","plan":"p","commands":[{"keystrokes":"cd -\n","duration":0.1}]}`
	done     = `{"analysis":"a","plan":"p","commands":[],"task_complete":true}`
	doneLs   = `{"analysis":"a","plan":"p","commands":[{"keystrokes":"ls\n","duration":0.1}],"task_complete":true}`
	notDone  = `{"analysis":"a","plan":"p","commands":[],"task_complete":false}`
	summaryQ = "You are about to hand off your work to another AI agent. Summarize.\n\nOriginal Task: Fix the repo\n\n\nCover everything."
	// The Codex fork's own wording of the relay prompts, which must be read too.
	forkQuestions = "You are picking up work from a previous AI agent on this task:\n\n**Original Task:** \nFix the repo\n\n" +
		"**Summary from Previous Agent:**\nS\n\n**Current Terminal Screen:**\nroot@<docker-host>:/app#\n\nPlease begin by asking several questions.\n"
	forkAnswerReq = "The next agent has a few questions for you, please answer each of them one by one in detail:\n\n1. Which file?\n2. Why?"
	forkHandoff   = "Here are the answers the other agent provided.\n\nA1\n\nContinue working on this task from where the previous agent left off."
)

func TestDetect(t *testing.T) {
	screen := "root@<docker-host>:/work/project# cd /srv/app\nroot@<docker-host>:/srv/app# \n\n"
	cases := []struct {
		name  string
		in    []protocol.ResponseItem
		want  RequestKind
		instr string // Summary: the instruction
	}{
		{"first turn", items(devMsg("<permissions instructions>x</permissions instructions>"), uMsg(envCtx), uMsg("Fix the repo")),
			RequestKind{Kind: KindAction, Workdir: "/work/project"}, ""},
		{"environment after the task is not the last user text", items(uMsg("You are picking up work now"), uMsg(envCtx)),
			RequestKind{Kind: KindQuestions}, ""},
		{"questions prompt (ours and the fork's)", items(uMsg("Fix the repo"), aMsg(ls), uMsg(forkQuestions)),
			RequestKind{Kind: KindQuestions}, ""},
		{"answer request strips its first line", items(uMsg("Fix"), uMsg(forkAnswerReq)),
			RequestKind{Kind: KindAnswerQuestions, Questions: "1. Which file?\n2. Why?"}, ""},
		{"answer request without a blank line keeps everything", items(uMsg("The next agent has a few questions: 1. why?")),
			RequestKind{Kind: KindAnswerQuestions, Questions: "The next agent has a few questions: 1. why?"}, ""},
		{"handoff prompt not answered yet", items(uMsg("Fix"), uMsg(forkQuestions), aMsg("Q?"), uMsg(forkHandoff)),
			RequestKind{Kind: KindHandoff, Workdir: "/work/project"}, ""},
		{"handoff prompt answered: the working loop", items(uMsg("Fix"), uMsg(forkHandoff), aMsg(ls), callOut("terminus-2-shell-4", sections(screen, screen))),
			RequestKind{Kind: KindAction, Workdir: "/srv/app"}, ""},
		{"summary request", items(uMsg("Fix the repo"), aMsg(ls), uMsg(summaryQ)),
			RequestKind{Kind: KindSummary, Instruction: "Fix the repo", Screen: testTexts(t).initialState("/work/project")}, "Fix the repo"},
		{"summary request stops at a bold heading", items(uMsg("x"), uMsg("You are about to hand off your work to another AI agent.\nOriginal Task: Ship it\n\n**Next**")),
			RequestKind{Kind: KindSummary, Instruction: "Ship it", Screen: testTexts(t).initialState("/work/project")}, ""},
		{"summary request without a task names the first user text", items(uMsg("Build the thing"), uMsg("You are about to hand off your work to another AI agent.")),
			RequestKind{Kind: KindSummary, Instruction: "Build the thing", Screen: testTexts(t).initialState("/work/project")}, ""},
		{"summary request answered", items(uMsg("Fix"), uMsg(summaryQ), aMsg("I did X.")),
			RequestKind{Kind: KindQuestions}, ""},
		{"summary screen is the last screen", items(uMsg("Fix"), aMsg(ls), callOut("c", sections("SCREEN\n", "x\n")), uMsg(summaryQ)),
			RequestKind{Kind: KindSummary, Instruction: "Fix the repo", Screen: "SCREEN\n"}, ""},
		{"a marker must start the text", items(uMsg(" You are picking up work")),
			RequestKind{Kind: KindAction, Workdir: "/work/project"}, ""},
		{"workdir from the prompt line", items(uMsg("Fix"), aMsg(ls), callOut("c", sections(screen, screen))),
			RequestKind{Kind: KindAction, Workdir: "/srv/app"}, ""},
		{"workdir from cd commands", items(uMsg("Fix"), aMsg(cdSub), callOut("c", "no sections\n")),
			RequestKind{Kind: KindAction, Workdir: "/opt/x"}, ""},
		{"workdir back with cd -", items(uMsg("Fix"), aMsg(cdSub), callOut("c", "plain\n"), aMsg(cdBack), callOut("d", "plain\n")),
			RequestKind{Kind: KindAction, Workdir: "/work/project/sub"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := analyze(testTexts(t), c.in, "/work/project").kind
			if got != c.want {
				t.Errorf("kind\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestNextCall(t *testing.T) {
	c := analyze(testTexts(t), items(uMsg("x"), callOut("terminus-2-shell-7", "a"), callOut("call_9", "b")), "")
	if c.nextCall != 8 {
		t.Errorf("nextCall = %d, want 8", c.nextCall)
	}
	if c.home != defaultDir {
		t.Errorf("home = %q, want %q", c.home, defaultDir)
	}
}

// The completion state and what becomes of each output.
func TestSteps(t *testing.T) {
	tx := testTexts(t)
	confirm := "Current terminal state:\nx\n\nAre you sure you want to mark the task as complete? Say so again."
	cases := []struct {
		name    string
		in      []protocol.ResponseItem
		steps   []step
		pending bool
	}{
		{"a first completion without commands waits for the question", items(uMsg("t"), aMsg(done)), nil, false},
		{"the question makes it pending", items(uMsg("t"), aMsg(done), uMsg(confirm)), nil, true},
		{"a reply that does not parse keeps it pending", items(uMsg("t"), aMsg(done), uMsg(confirm), aMsg("oops"), uMsg("Previous response had parsing errors:\nERROR: x")), nil, true},
		{"a reply without task_complete ends it", items(uMsg("t"), aMsg(done), uMsg(confirm), aMsg(notDone)), nil, false},
		{"the confirming reply ends it", items(uMsg("t"), aMsg(done), uMsg(confirm), aMsg(done)), nil, false},
		{"a completion with commands: its output is the question", items(uMsg("t"), aMsg(doneLs), callOut("c", "out")),
			[]step{{confirm: true}}, true},
		{"warnings come with the output", items(uMsg("t"), aMsg("Here:\n"+ls), callOut("c", "out")),
			[]step{{warning: "- Extra text detected before JSON object"}}, false},
		{"an output right after a parse-error prompt is left out", items(uMsg("t"), aMsg("bad"), uMsg("Previous response had parsing errors:\nERROR: e"), callOut("c", "x")),
			[]step{{skip: true}}, false},
		{"not when a reply came between", items(uMsg("t"), aMsg("bad"), uMsg("Previous response had parsing errors:\nERROR: e"), aMsg(ls), callOut("c", "x")),
			[]step{{}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conv := analyze(tx, c.in, "")
			steps, pending := conv.steps(conv.entries, false)
			if pending != c.pending || len(steps) != len(c.steps) {
				t.Fatalf("steps %+v pending %v; want %+v %v", steps, pending, c.steps, c.pending)
			}
			for i := range steps {
				if steps[i] != c.steps[i] {
					t.Errorf("step %d = %+v, want %+v", i, steps[i], c.steps[i])
				}
			}
		})
	}
}

func TestObservation(t *testing.T) {
	tx := testTexts(t)
	cases := []struct{ name, in, want string }{
		{"new output", sections("S\n", "\nroot@h:/# ls\na\n"), "New Terminal Output:\n\nroot@h:/# ls\na\n"},
		{"nothing new shows the screen", sections("S\n", "\n  \n"), "Current Terminal Screen:\nS\n"},
		{"full buffers, the original's diff", strings.Replace(sections("S\n", "one\ntwo\nthree\n"),
			"BUFFER_START__\n__OPEN", "BUFFER_START__\none\ntwo\n__OPEN", 1), "New Terminal Output:\n\ntwo\nthree\n"},
		{"previous buffer no longer there", strings.Replace(sections("S\n", "other\n"),
			"BUFFER_START__\n__OPEN", "BUFFER_START__\ngone\n__OPEN", 1), "Current Terminal Screen:\nS\n"},
		{"no sections: the last 40 lines", "a  \nb\n", "a\nb\n" + strings.Repeat("\n", 38)},
		{"json output", `{"output":"x\n"}`, "x\n" + strings.Repeat("\n", 39)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := tx.observation(unwrapOutput(c.in))
			if err != nil || got != c.want {
				t.Errorf("observation = %q, %v\nwant %q", got, err, c.want)
			}
		})
	}
	long := strings.Repeat("日", 4000) // 12000 bytes
	got := limitOutput(long)
	if !strings.Contains(got, "\n[... output limited to 10000 bytes; 2004 interior bytes omitted ...]\n") || len(got) > 10000+80 {
		t.Errorf("limitOutput: %d bytes, %q…", len(got), got[4990:5080])
	}
}

func TestCdTarget(t *testing.T) {
	cases := []struct{ keys, dir, prev, want string }{
		{"cd /tmp\n", "/a", "", "/tmp"},
		{"cd 'my dir'\n", "/a", "", "/a/my dir"},
		{"cd ../b", "/a/c", "", "/a/b"},
		{"cd -", "/a", "/p", "/p"},
		{"cd", "/a", "", ""},
		{"cd ~/x", "/a", "", ""},
		{"cd /tmp && ls", "/a", "", ""},
		{"ls", "/a", "", ""},
		{`cd "un`, "/a", "", ""},
	}
	for _, c := range cases {
		got, ok := cdTarget(c.keys, c.dir, c.prev)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("cdTarget(%q) = %q, %v; want %q", c.keys, got, ok, c.want)
		}
	}
}

// The messages of requests whose conversation is short or odd.
func TestMessages(t *testing.T) {
	tx := testTexts(t)
	cases := []struct {
		name  string
		in    []protocol.ResponseItem
		roles string // the roles of the messages, u and a
		first string // the start of the first message
		last  string // the start of the last message
	}{
		{"a summary request alone", items(uMsg(summaryQ)), "u", "You are about to hand off", "You are about to hand off"},
		{"the task alone", items(uMsg(envCtx), uMsg("Fix it")), "u", "You are an AI assistant tasked", "You are an AI assistant tasked"},
		{"the last of several task texts wins", items(uMsg("first"), uMsg("second"), aMsg(ls)), "ua", "You are an AI assistant tasked", "{"},
		{"an answer request without a summary", items(uMsg("Fix"), uMsg(forkAnswerReq)), "uu", "You are an AI assistant tasked", "The next agent"},
		{"a handoff without questions", items(uMsg("Fix"), uMsg(forkHandoff)), "uu", "You are an AI assistant tasked", "Here are the answers"},
		{"questions made from an answered summary request", items(uMsg("Fix"), uMsg(summaryQ), aMsg("I did X.")), "u", "You are picking up work", "You are picking up work"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msgs, _, err := analyze(tx, c.in, "/w").messages()
			if err != nil {
				t.Fatal(err)
			}
			roles := ""
			for _, m := range msgs {
				roles += m.Role[:1]
			}
			if roles != c.roles {
				t.Fatalf("roles %q, want %q: %+v", roles, c.roles, msgs)
			}
			first, last := msgs[0].Content[0].Text, msgs[len(msgs)-1].Content[0].Text
			if !strings.HasPrefix(first, c.first) || !strings.HasPrefix(last, c.last) {
				t.Errorf("first %.40q… last %.40q…", first, last)
			}
		})
	}
	msgs, _, _ := analyze(tx, items(uMsg("first"), uMsg("second"), aMsg(ls)), "/w").messages()
	if text := msgs[0].Content[0].Text; !strings.Contains(text, "Task Description:\nsecond\n") || strings.Contains(text, "first") {
		t.Errorf("the initial prompt does not hold the last task text:\n%s", text)
	}
	msgs, _, _ = analyze(tx, items(uMsg("Fix"), uMsg(summaryQ), aMsg("I did X.")), "/w").messages()
	if text := msgs[0].Content[0].Text; !strings.Contains(text, "**Original Task:** \nFix the repo\n\n**Summary from Previous Agent:**\nI did X.\n\n") {
		t.Errorf("questions prompt:\n%s", text)
	}
}
