package redact

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sinks"
	"github.com/harnessflow/harnessflow/sources"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func runStage(t *testing.T, r *Redactor, in []protocol.ResponseEvent) map[pipeline.Mode][]protocol.ResponseEvent {
	t.Helper()
	g := pipeline.Must(pipeline.New("redact-test", Node(r)))
	out := map[pipeline.Mode][]protocol.ResponseEvent{}
	for _, mode := range []pipeline.Mode{pipeline.Fused, pipeline.Async} {
		sink := sinks.Collect[protocol.ResponseEvent]()
		if err := pipeline.Run(context.Background(), g, sources.Slice(in), sink, pipeline.WithMode(mode), pipeline.WithMaxBatch(1)); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		out[mode] = sink.Items()
	}
	if diff := cmp.Diff(out[pipeline.Fused], out[pipeline.Async]); diff != "" {
		t.Fatalf("fused and async differ (-fused +async):\n%s", diff)
	}
	return out
}

func TestResponseStage(t *testing.T) {
	msg := protocol.AssistantMessage("key " + tSK + " ok")
	reasoning := &protocol.Reasoning{Content: []protocol.ReasoningContent{{Type: protocol.ReasoningTypeText, Text: "use " + tAWS}}}
	call := &protocol.FunctionCall{Name: "shell", CallID: "c1", Arguments: `{"cmd": "curl -H 'Authorization: Bearer ` + tJWT + `'", "n": 1}`}
	in := []protocol.ResponseEvent{
		protocol.Created(),
		protocol.Added(&protocol.Reasoning{}),
		protocol.ReasoningDelta("use AKIAIOSF", 0),
		protocol.Added(protocol.AssistantMessage("")),
		protocol.TextDelta("key sk-pro"),
		protocol.ReasoningDelta("ODNN7EXAMPLE", 0), // other channel, interleaved
		protocol.TextDelta(tSK[10:]),
		protocol.TextDelta(" ok"),
		protocol.Done(reasoning),
		protocol.Done(msg),
		protocol.Done(call),
		protocol.Failed(&protocol.StreamError{Kind: protocol.ErrKindUpstream, Message: "Incorrect API key provided: " + tSK}),
	}
	want := []protocol.ResponseEvent{
		protocol.Created(),
		protocol.Added(&protocol.Reasoning{}),
		protocol.ReasoningDelta("use ", 0),
		// The message starting does not cut the reasoning's secret in two.
		protocol.Added(protocol.AssistantMessage("")),
		protocol.TextDelta("key "),
		protocol.TextDelta("[REDACTED:api_key]"),
		protocol.TextDelta(" ok"),
		// An AWS key needs the byte after it (or the end of its text).
		protocol.ReasoningDelta("[REDACTED:aws_access_key]", 0),
		protocol.Done(&protocol.Reasoning{Content: []protocol.ReasoningContent{{Type: protocol.ReasoningTypeText, Text: "use [REDACTED:aws_access_key]"}}}),
		protocol.Done(protocol.AssistantMessage("key [REDACTED:api_key] ok")),
		protocol.Done(&protocol.FunctionCall{Name: "shell", CallID: "c1", Arguments: `{"cmd": "curl -H 'Authorization: Bearer [REDACTED:bearer_token]'", "n": 1}`}),
		protocol.Failed(&protocol.StreamError{Kind: protocol.ErrKindUpstream, Message: "Incorrect API key provided: [REDACTED:api_key]"}),
	}
	got := runStage(t, Default(), in)[pipeline.Fused]
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	// The inputs were not modified.
	if msg.Content[0].Text != "key "+tSK+" ok" || !strings.Contains(call.Arguments, tJWT) {
		t.Errorf("input items were modified")
	}
}

// A delta still held at the end of the stream leaves before Finish returns,
// and no delta follows its item's done event.
func TestResponseStageOrder(t *testing.T) {
	in := []protocol.ResponseEvent{
		protocol.Added(protocol.AssistantMessage("")),
		protocol.TextDelta("see "),
		protocol.TextDelta("Bearer abc"),
		protocol.Done(protocol.AssistantMessage("see Bearer abc")),
		protocol.Added(&protocol.CustomToolCall{ID: "t1", CallID: "c1", Name: "apply_patch"}),
		protocol.ToolInputDelta("t1", "c1", "*** Begin Patch\n+ghp_"),
		protocol.ToolInputDelta("t1", "c1", tGHP[4:]+"\n*** End Patch"),
		protocol.TextDelta("tail sk-"),
	}
	want := []protocol.ResponseEvent{
		protocol.Added(protocol.AssistantMessage("")),
		protocol.TextDelta("see "),
		protocol.TextDelta("Bearer abc"),
		protocol.Done(protocol.AssistantMessage("see Bearer abc")),
		protocol.Added(&protocol.CustomToolCall{ID: "t1", CallID: "c1", Name: "apply_patch"}),
		protocol.ToolInputDelta("t1", "c1", "*** Begin Patch\n+"),
		protocol.ToolInputDelta("t1", "c1", "[REDACTED:github_token]\n*** End Patch"),
		protocol.TextDelta("tail "),
		protocol.TextDelta("sk-"),
	}
	got := runStage(t, Default(), in)[pipeline.Fused]
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestResponseStageNoDetectors(t *testing.T) {
	r, err := New(Config{Builtins: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	in := []protocol.ResponseEvent{protocol.TextDelta(tSK), protocol.Done(protocol.AssistantMessage(tSK))}
	if diff := cmp.Diff(in, runStage(t, r, in)[pipeline.Fused]); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestItems(t *testing.T) {
	out := "token=" + tGHP
	items := []protocol.ResponseItem{
		protocol.UserMessage("my key is " + tSK),
		protocol.UserMessage("nothing here"),
		&protocol.FunctionCallOutput{CallID: "c", Output: protocol.TextPayload(out)},
		&protocol.CustomToolCallOutput{CallID: "d", Output: protocol.FunctionCallOutputPayload{Items: []protocol.FunctionCallOutputContentItem{{Type: protocol.ContentInputText, Text: tPEM}}}},
		&protocol.CustomToolCall{CallID: "e", Name: "apply_patch", Input: "+" + tAWS},
		&protocol.LocalShellCall{Action: protocol.LocalShellAction{Command: []string{"env", "KEY=" + tSK}}},
		&protocol.OtherItem{Type: "x", Raw: []byte(`{"type":"x","v":"` + tSK + `"}`)},
	}
	got := Default().Items(items)
	want := []string{
		"my key is [REDACTED:api_key]",
		"nothing here",
		"token=[REDACTED:github_token]",
		"[REDACTED:private_key]",
		"+[REDACTED:aws_access_key]",
		"KEY=[REDACTED:api_key]",
		`{"type":"x","v":"[REDACTED:api_key]"}`,
	}
	texts := []string{
		got[0].(*protocol.Message).Content[0].Text,
		got[1].(*protocol.Message).Content[0].Text,
		*got[2].(*protocol.FunctionCallOutput).Output.Text,
		got[3].(*protocol.CustomToolCallOutput).Output.Items[0].Text,
		got[4].(*protocol.CustomToolCall).Input,
		got[5].(*protocol.LocalShellCall).Action.Command[1],
		string(got[6].(*protocol.OtherItem).Raw),
	}
	if diff := cmp.Diff(want, texts); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got[1] != items[1] {
		t.Errorf("an unchanged item was copied")
	}
	if items[0].(*protocol.Message).Content[0].Text != "my key is "+tSK || *items[2].(*protocol.FunctionCallOutput).Output.Text != out {
		t.Errorf("input items were modified")
	}
	clean := []protocol.ResponseItem{protocol.UserMessage("hi")}
	if g := Default().Items(clean); &g[0] != &clean[0] {
		t.Errorf("an unchanged slice was copied")
	}
}

func TestJSON(t *testing.T) {
	tests := map[string]struct{ in, want string }{
		"value":       {`{"key": "` + tSK + `", "n": 1}`, `{"key": "[REDACTED:api_key]", "n": 1}`},
		"keys kept":   {`{"` + tSK + `": "x"}`, `{"` + tSK + `": "x"}`},
		"escaped":     {`{"pem":"` + strings.ReplaceAll(tPEM, "\n", `\n`) + `\nafter"}`, `{"pem":"[REDACTED:private_key]\nafter"}`},
		"unicode esc": {`["\u0073k-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z é"]`, `["[REDACTED:api_key] é"]`},
		"nested":      {`{"a":[{"b":"Bearer ` + tJWT + `"}],"c":true}`, `{"a":[{"b":"Bearer [REDACTED:bearer_token]"}],"c":true}`},
		"not json":    {`{"a": "` + tSK, `{"a": "[REDACTED:api_key]`},
		"clean":       {`{"a":"b"}`, `{"a":"b"}`},
		"empty":       {``, ``},
	}
	for name, tc := range tests {
		if got := Default().JSON(tc.in); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", name, got, tc.want)
		}
	}
}

func TestRequest(t *testing.T) {
	req := &protocol.ResponsesRequest{
		Model:        "m",
		Instructions: "you may use " + tAWS,
		Input:        protocol.Items{protocol.UserMessage("here: " + tSK), protocol.UserMessage("plain")},
	}
	got := Default().Request(req)
	if got == req {
		t.Fatal("request not copied")
	}
	if got.Instructions != "you may use [REDACTED:aws_access_key]" || got.Input[0].(*protocol.Message).Content[0].Text != "here: [REDACTED:api_key]" {
		t.Errorf("got %+v", got)
	}
	if req.Instructions != "you may use "+tAWS || req.Input[0].(*protocol.Message).Content[0].Text != "here: "+tSK {
		t.Errorf("input request modified")
	}
	clean := &protocol.ResponsesRequest{Input: protocol.Items{protocol.UserMessage("plain")}}
	if Default().Request(clean) != clean {
		t.Errorf("clean request copied")
	}
	if Default().Request(nil) != nil {
		t.Errorf("nil request")
	}
}

// function_call_arguments deltas are raw JSON: a secret right after an
// escape such as \n must be caught in the deltas, not only in the done item.
func TestResponseStageJSONEscapedArguments(t *testing.T) {
	secrets := []string{
		"sk-proj-abcdefghij1234567890xyz",
		"ghp_abcdefghijabcdefghijabcdefghij123456",
		"AKIAABCDEFGHIJKLMNOP",
	}
	for _, sec := range secrets {
		for _, esc := range []string{`\n`, `\t`, `\r`} {
			args := `{"cmd":"echo x` + esc + sec + `"}`
			for cut := 1; cut < len(args); cut++ {
				in := []protocol.ResponseEvent{
					protocol.ToolInputDelta("fc1", "c1", args[:cut]),
					protocol.ToolInputDelta("fc1", "c1", args[cut:]),
					protocol.Done(&protocol.FunctionCall{ID: "fc1", Name: "shell", CallID: "c1", Arguments: args}),
				}
				s := NewResponseStage(Default())
				var deltas string
				for _, ev := range in {
					_ = s.Push(context.Background(), ev, func(o protocol.ResponseEvent) {
						if o.Type == protocol.EventToolCallInputDelta {
							deltas += o.Delta
						}
					})
				}
				if strings.Contains(deltas, sec[len(sec)-8:]) {
					t.Fatalf("secret leaked through deltas (cut %d): %s", cut, deltas)
				}
			}
		}
	}
}

// Redacted deltas carry no SoFar: the producer's text so far no longer
// describes what the stage emits (held, rewritten), so a consumer must not
// be offered it.
func TestResponseStageClearsSoFar(t *testing.T) {
	soFar := ""
	var in []protocol.ResponseEvent
	for _, d := range []string{"key sk-pro", tSK[10:], " ok"} {
		soFar += d
		ev := protocol.TextDelta(d)
		ev.SoFar = soFar
		in = append(in, ev)
	}
	in = append([]protocol.ResponseEvent{protocol.Added(protocol.AssistantMessage(""))}, in...)
	in = append(in, protocol.Done(protocol.AssistantMessage(soFar)))
	for _, ev := range runStage(t, Default(), in)[pipeline.Fused] {
		if ev.SoFar != "" {
			t.Errorf("%s %q carries SoFar %q", ev.Type, ev.Delta, ev.SoFar)
		}
	}
	for _, ev := range in[1:4] {
		if out := Default().Event(ev); out.SoFar != "" {
			t.Errorf("Redactor.Event kept SoFar %q", out.SoFar)
		}
	}
}
