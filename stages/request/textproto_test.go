package request

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/protocol"
)

// The items of a Codex-like history, short.
func tpUser(text string) *protocol.Message {
	return &protocol.Message{Role: protocol.RoleUser, Content: []protocol.ContentItem{{Type: protocol.ContentInputText, Text: text}}}
}

func tpDev(texts ...string) *protocol.Message {
	m := &protocol.Message{Role: protocol.RoleDeveloper}
	for _, t := range texts {
		m.Content = append(m.Content, protocol.ContentItem{Type: protocol.ContentInputText, Text: t})
	}
	return m
}

func tpAssistant(text string) *protocol.Message {
	return &protocol.Message{Role: protocol.RoleAssistant, Content: []protocol.ContentItem{{Type: protocol.ContentOutputText, Text: text}}}
}

func tpCall(id, cmd string) *protocol.FunctionCall {
	return &protocol.FunctionCall{Name: "exec_command", CallID: id, Arguments: `{"cmd":` + fmt.Sprintf("%q", cmd) + `}`}
}

func tpOut(id, text string) *protocol.FunctionCallOutput {
	return &protocol.FunctionCallOutput{CallID: id, Output: protocol.FunctionCallOutputPayload{Text: &text}}
}

// tpLines renders a transcript as "role: text" lines.
func tpLines(msgs []Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Role + ": " + JoinText(m.Content, "|")
	}
	return out
}

// fakeUnwrap stands in for the client's framing: "[exit N]\n" before the
// output.
func fakeUnwrap(text string) (string, int, bool, bool) {
	var code int
	if _, err := fmt.Sscanf(text, "[exit %d]\n", &code); err != nil {
		return text, 0, false, false
	}
	_, rest, _ := strings.Cut(text, "\n")
	return rest, code, true, true
}

func TestFlattenText(t *testing.T) {
	env := "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"
	perm := "<permissions instructions>\nno sandbox\n</permissions instructions>"
	wrap := func(task string) (string, error) { return "TASK[" + task + "]", nil }
	observe := func(o *Observation) (string, bool, error) {
		return fmt.Sprintf("OBS(turn=%q exit=%d/%t framed=%t call=%t) %s", o.Turn, o.ExitCode, o.HasExit, o.Framed, o.Call != nil, o.Text), true, nil
	}
	collect := TextProtocol{Task: TaskCollect, Candidate: IsTaskCandidate, RenderTask: wrap, Developer: DeveloperDrop,
		Unwrap: fakeUnwrap, Observation: observe}
	first := TextProtocol{Task: TaskFirst, RenderTask: wrap, SkipContextual: true, SkipContextualDeveloper: true}
	retry := collect
	retry.Retry = func(text string) bool { return text == "FIX IT" }

	cases := []struct {
		name  string
		tp    TextProtocol
		items []protocol.ResponseItem
		want  []string
	}{
		{
			name:  "collect: the last candidate wins, emitted before the first assistant turn",
			tp:    collect,
			items: []protocol.ResponseItem{tpDev("base prompt"), tpDev(perm), tpUser("first ask"), tpUser(env), tpUser("real task"), tpAssistant("thinking\n```ls```"), tpCall("c1", "ls"), tpOut("c1", "[exit 0]\na.txt\n")},
			want: []string{"user: TASK[real task]", "assistant: thinking\n```ls```",
				`user: OBS(turn="thinking\n` + "```ls```" + `" exit=0/true framed=true call=true) a.txt` + "\n"},
		},
		{
			name:  "collect: no candidate gives the task prompt of an empty task, at the end",
			tp:    collect,
			items: []protocol.ResponseItem{tpUser(env), tpUser(perm)},
			want:  []string{"user: TASK[]"},
		},
		{
			name:  "collect: an output before any assistant turn also starts the transcript",
			tp:    collect,
			items: []protocol.ResponseItem{tpUser("task"), tpCall("c1", "ls"), tpOut("c1", "plain text")},
			want:  []string{"user: TASK[task]", `user: OBS(turn="" exit=0/false framed=false call=true) plain text`},
		},
		{
			name: "collect: later user messages go as they are and forget the turn",
			tp:   collect,
			items: []protocol.ResponseItem{tpUser("task"), tpAssistant("a1"), tpUser(env), tpOut("orphan", "[exit 2]\nboom"),
				tpAssistant("a2"), tpOut("orphan2", "x")},
			want: []string{"user: TASK[task]", "assistant: a1", "user: " + env,
				`user: OBS(turn="" exit=2/true framed=true call=false) boom`, "assistant: a2",
				`user: OBS(turn="a2" exit=0/false framed=false call=false) x`},
		},
		{
			name: "reasoning, calls and empty assistant texts are dropped",
			tp:   collect,
			items: []protocol.ResponseItem{tpUser("task"), &protocol.Reasoning{Content: []protocol.ReasoningContent{{Type: protocol.ReasoningTypeText, Text: "hmm"}}},
				tpAssistant(""), tpAssistant("go"), &protocol.CustomToolCall{CallID: "c2", Name: "swe_agent_command", Input: "submit"}},
			want: []string{"user: TASK[task]", "assistant: go"},
		},
		{
			name:  "first: contextual users and developers skipped, the first user message rendered",
			tp:    first,
			items: []protocol.ResponseItem{tpDev("base prompt"), tpDev(perm), tpUser(env), &protocol.Message{Role: protocol.RoleUser, Content: []protocol.ContentItem{{Type: protocol.ContentInputText, Text: "mixed"}, {Type: protocol.ContentInputText, Text: perm}}}, tpUser("do it"), tpAssistant("ok"), tpUser("more")},
			want:  []string{"user: base prompt", "user: TASK[do it]", "assistant: ok", "user: more"},
		},
		{
			name:  "developer kept as developer",
			tp:    TextProtocol{Developer: DeveloperKeep},
			items: []protocol.ResponseItem{tpDev("d"), tpUser("u")},
			want:  []string{"developer: d", "user: u"},
		},
		{
			name:  "a developer message with one non-contextual text is kept",
			tp:    TextProtocol{SkipContextualDeveloper: true},
			items: []protocol.ResponseItem{tpDev(perm, "extra"), tpDev(perm)},
			want:  []string{"user: " + perm + "|extra"},
		},
		{
			name: "content-item outputs: their texts joined",
			tp:   TextProtocol{},
			items: []protocol.ResponseItem{tpUser("t"), &protocol.FunctionCallOutput{CallID: "c", Output: protocol.FunctionCallOutputPayload{
				Items: []protocol.FunctionCallOutputContentItem{{Type: protocol.ContentInputText, Text: "one"}, {Type: protocol.ContentInputImage, ImageURL: "data:x"}, {Type: protocol.ContentInputText, Text: "two"}}}}},
			want: []string{"user: t", "user: one\ntwo"},
		},
		{
			name: "retry: a corrected attempt is pruned once a later assistant turn exists",
			tp:   retry,
			items: []protocol.ResponseItem{tpUser("task"), tpAssistant("bad 1"), tpUser("FIX IT"), tpAssistant("bad 2"), tpUser("FIX IT"),
				tpAssistant("good"), tpCall("c", "ls"), tpOut("c", "out"), tpAssistant("bad 3"), tpUser("FIX IT")},
			want: []string{"user: TASK[task]", "assistant: good", `user: OBS(turn="good" exit=0/false framed=false call=true) out`,
				"assistant: bad 3", "user: FIX IT"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sys := []Message{{Role: RoleSystem, Content: TextParts("sys")}}
			got, err := FlattenText(sys, c.items, &c.tp)
			if err != nil {
				t.Fatal(err)
			}
			want := append([]string{"system: sys"}, c.want...)
			if d := cmp.Diff(want, tpLines(got)); d != "" {
				t.Errorf("transcript (-want +got):\n%s", d)
			}
			for _, m := range got {
				if len(m.Calls) > 0 || m.Output != nil || m.Reasoning != "" || m.Role == RoleTool {
					t.Errorf("message %+v carries a call, a tool output or reasoning", m)
				}
			}
		})
	}
}

func TestFlattenTextObservationSkipAndErrors(t *testing.T) {
	items := []protocol.ResponseItem{tpUser("t"), tpAssistant("a"), tpCall("c", "x"), tpOut("c", "o")}
	skip := TextProtocol{Observation: func(*Observation) (string, bool, error) { return "", false, nil }}
	got, err := FlattenText(nil, items, &skip)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"user: t", "assistant: a"}, tpLines(got)); d != "" {
		t.Errorf("keep=false (-want +got):\n%s", d)
	}

	boom := errors.New("boom")
	bad := TextProtocol{Observation: func(*Observation) (string, bool, error) { return "", false, boom }}
	if _, err := FlattenText(nil, items, &bad); !errors.Is(err, boom) || !strings.Contains(err.Error(), "input[3]") {
		t.Errorf("observation error = %v, want boom at input[3]", err)
	}
	badTask := TextProtocol{Task: TaskCollect, RenderTask: func(string) (string, error) { return "", boom }}
	if _, err := FlattenText(nil, items, &badTask); !errors.Is(err, boom) {
		t.Errorf("task error = %v, want boom", err)
	}
	if _, err := FlattenText(nil, []protocol.ResponseItem{nil}, nil); err == nil {
		t.Error("a nil item is not an error")
	}
	var nilMsg *protocol.Message
	if _, err := FlattenText(nil, []protocol.ResponseItem{nilMsg}, nil); err == nil {
		t.Error("a nil message is not an error")
	}
}

func TestIsTaskCandidate(t *testing.T) {
	for text, want := range map[string]bool{
		"Fix the bug.":                         true,
		"  \n<environment_context>x":           false,
		"<permissions instructions>":           false,
		"<skills_instructions>…":               false,
		"<plugins_instructions>":               false,
		"<collaboration_mode>":                 false,
		"# AGENTS.md instructions for /w\n...": true,
		"<ENVIRONMENT_CONTEXT>":                true, // exact, not case-folded
		"":                                     true,
	} {
		if got := IsTaskCandidate(text); got != want {
			t.Errorf("IsTaskCandidate(%q) = %t, want %t", text, got, want)
		}
	}
}

// The FlattenPolicy knobs of mini-swe-agent's tool-call mode: FirstUser
// wraps the first kept user message only (developer messages carried as
// user messages do not count), and SkipContextualDeveloper leaves out
// developer messages made only of contextual fragments.
func TestFlattenFirstUserAndContextualDeveloper(t *testing.T) {
	perm := "<permissions instructions>\nno sandbox\n</permissions instructions>"
	p := FlattenPolicy{
		Developer: DeveloperAsUser, SkipContextual: true, SkipContextualDeveloper: true,
		FirstUser: func(parts []Part) []Part { return TextParts("TASK[" + JoinText(parts, "|") + "]") },
	}
	items := []protocol.ResponseItem{tpDev("base prompt"), tpDev(perm), tpDev(perm, "extra"),
		tpUser("<environment_context>\n</environment_context>"), tpUser("do it"), tpAssistant("ok"), tpUser("more")}
	got, err := Flatten(nil, items, &p, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"user: base prompt", "user: " + perm + "|extra", "user: TASK[do it]", "assistant: ok", "user: more"}
	if d := cmp.Diff(want, tpLines(got)); d != "" {
		t.Errorf("transcript (-want +got):\n%s", d)
	}
	p.FirstUser, p.SkipContextualDeveloper = nil, false
	got, err = Flatten(nil, items, &p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 6 || JoinText(got[3].Content, "") != "do it" {
		t.Errorf("without the knobs: %q", tpLines(got))
	}
}
