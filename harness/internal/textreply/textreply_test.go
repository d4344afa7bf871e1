package textreply

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
)

// fake decides from the reply text: "shell X", "custom X", "call X",
// "follow X", "fail", or nothing; at completed, end (when set).
type fake struct {
	end  Decision
	seen []string
}

func (f *fake) Message(text string) (Decision, error) {
	f.seen = append(f.seen, text)
	verb, arg, _ := strings.Cut(text, " ")
	switch verb {
	case "shell":
		return Decision{Action: Shell, ID: "s1", Script: arg}, nil
	case "custom":
		return Decision{Action: Custom, ID: "c1", Tool: "t", Input: arg}, nil
	case "call":
		id := "k1"
		return Decision{Action: Call, Item: &protocol.LocalShellCall{CallID: &id, Action: protocol.LocalShellAction{Command: []string{arg}}}}, nil
	case "follow":
		return Decision{Action: Followup, ID: "f1", Text: arg}, nil
	case "fail":
		return Decision{}, errors.New("bad reply")
	case "nocall":
		return Decision{Action: Call}, nil
	}
	return Decision{}, nil
}

func (f *fake) Completed(protocol.ResponseEvent) (Decision, error) { return f.end, nil }

func assistant(text string) protocol.ResponseEvent {
	return protocol.Done(&protocol.Message{Role: protocol.RoleAssistant,
		Content: []protocol.ContentItem{{Type: protocol.ContentOutputText, Text: text}}})
}

func run(t *testing.T, o Options, in ...protocol.ResponseEvent) ([]protocol.ResponseEvent, error) {
	t.Helper()
	g, err := pipeline.New("test", Node(o))
	if err != nil {
		t.Fatal(err)
	}
	var out []protocol.ResponseEvent
	err = pipeline.Run(context.Background(), g, pipeline.SourceFunc[protocol.ResponseEvent](func(_ context.Context, emit func(protocol.ResponseEvent) error) error {
		for _, ev := range in {
			if err := emit(ev); err != nil {
				return err
			}
		}
		return nil
	}), pipeline.SinkFunc[protocol.ResponseEvent](func(e protocol.ResponseEvent) error { out = append(out, e); return nil }))
	return out, err
}

// kinds names the events: type, then the item's type, then ":continue"
// for a completed that asks for a follow-up.
func kinds(evs []protocol.ResponseEvent) string {
	var s []string
	for _, ev := range evs {
		k := string(ev.Type)
		switch it := ev.Item.(type) {
		case *protocol.Message:
			k += ":" + string(it.Role)
		case *protocol.LocalShellCall:
			k += ":shell"
		case *protocol.CustomToolCall:
			k += ":custom"
		}
		if harness.WantsFollowup(ev) {
			k += ":continue"
		}
		s = append(s, k)
	}
	return strings.Join(s, " ")
}

func TestStage(t *testing.T) {
	completed := protocol.ResponseEvent{Type: protocol.EventCompleted}
	tests := []struct {
		name     string
		reply    string
		end      Decision
		announce bool
		want     string
		err      string
	}{
		{"final", "all done", Decision{}, false, "created output_item.done:assistant completed", ""},
		{"shell", "shell ls", Decision{}, false, "created output_item.done:assistant output_item.done:shell completed", ""},
		{"shell announced", "shell ls", Decision{}, true, "created output_item.done:assistant output_item.added:shell output_item.done:shell completed", ""},
		{"custom", "custom x", Decision{}, false, "created output_item.done:assistant output_item.done:custom completed", ""},
		{"call", "call x", Decision{}, true, "created output_item.done:assistant output_item.added:shell output_item.done:shell completed", ""},
		{"follow-up at the message", "follow again", Decision{}, false, "created output_item.done:assistant output_item.added:user output_item.done:user completed:continue", ""},
		{"follow-up at completed", "", Decision{Action: Followup, ID: "f", Text: "x"}, false, "created output_item.done:assistant output_item.added:user output_item.done:user completed:continue", ""},
		{"call at completed", "", Decision{Action: Shell, ID: "s", Script: "pwd"}, false, "created output_item.done:assistant output_item.done:shell completed", ""},
		{"protocol error", "fail", Decision{}, false, "", "bad reply"},
		{"call without item", "nocall", Decision{}, false, "", "without its call"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{end: tt.end}
			out, err := run(t, Options{New: func() Protocol { return f }, TimeoutMS: 5000, Workdir: "/w", Announce: tt.announce},
				protocol.Created(), assistant(tt.reply), completed)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := kinds(out); got != tt.want {
				t.Errorf("events\n got %s\nwant %s", got, tt.want)
			}
			if len(f.seen) != 1 || f.seen[0] != tt.reply {
				t.Errorf("protocol saw %q, want [%q]", f.seen, tt.reply)
			}
		})
	}
}

func TestShellCall(t *testing.T) {
	c := ShellCall("id", "ls -l", 30000, "/w")
	if *c.CallID != "id" || strings.Join(c.Action.Command, "|") != "bash|-lc|ls -l" || *c.Action.TimeoutMS != 30000 ||
		*c.Action.WorkingDirectory != "/w" || c.Status != "in_progress" || c.Action.Type != "exec" {
		t.Errorf("call %+v %+v", c, c.Action)
	}
	if c := ShellCall("id", "x", 0, ""); c.Action.TimeoutMS != nil || c.Action.WorkingDirectory != nil {
		t.Errorf("zero timeout and workdir are sent: %+v", c.Action)
	}
}

func TestText(t *testing.T) {
	got := MessageText(&protocol.Message{Content: []protocol.ContentItem{
		{Type: protocol.ContentOutputText, Text: "a"}, {Type: protocol.ContentInputImage}, {Type: protocol.ContentInputText, Text: "b"}}})
	if got != "a\nb" {
		t.Errorf("text %q, want the text parts joined with a newline", got)
	}
}
