package request

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/wire/chat"
)

// flattenRender flattens the input items (a JSON array) with p and renders
// them in st; it returns the chat messages as a JSON value.
func flattenRender(t *testing.T, items string, p FlattenPolicy, st ChatStyle) any {
	t.Helper()
	req, err := protocol.DecodeRequest([]byte(`{"model":"m","input":` + items + `}`))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	msgs, err := Flatten(nil, req.Input, &p, nil)
	if err != nil {
		t.Fatalf("flatten: %v", err)
	}
	cms, err := RenderChat(nil, msgs, st)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	data, err := (&chat.Request{Messages: cms}).AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Messages any }
	if err := json.Unmarshal(data, &body); err != nil {
		t.Fatal(err)
	}
	return body.Messages
}

// Items of the knob tests.
const (
	kUser      = `{"type":"message","role":"user","content":[{"type":"input_text","text":"go\n"}]}`
	kDev       = `{"type":"message","role":"developer","content":[{"type":"input_text","text":"be brief"}]}`
	kText      = `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"T1"}]}`
	kText2     = `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"T2"}]}`
	kReason    = `{"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"R\n"}]}`
	kCall1     = `{"type":"function_call","call_id":"c1","name":"sh","arguments":"{}"}`
	kCall2     = `{"type":"function_call","call_id":"c2","name":"sh","arguments":"{}"}`
	kOut1      = `{"type":"function_call_output","call_id":"c1","output":"o1"}`
	kOut2      = `{"type":"function_call_output","call_id":"c2","output":"o2"}`
	kOutOrphan = `{"type":"function_call_output","call_id":"zz","output":"orphan"}`
)

func items(xs ...string) string { return "[" + strings.Join(xs, ",") + "]" }

// Each knob of FlattenPolicy and ChatStyle changes what it says, and only
// that: the same history under the zero policy plus one knob.
func TestFlattenKnobs(t *testing.T) {
	name := func(_, n string) string { return n }
	tests := []struct {
		name  string
		items string
		p     FlattenPolicy
		st    ChatStyle
		want  string
	}{
		{"TextReplace/merge", items(kText, kText2, kCall1, kOut1), FlattenPolicy{TextReplace: true, CallName: name}, ChatStyle{},
			`[{"role":"assistant","content":"T2","tool_calls":[{"id":"c1","type":"function","function":{"name":"sh","arguments":"{}"}}]},{"role":"tool","content":"o1","tool_call_id":"c1"}]`},
		{"TextReplace/immediate while pending", items(kCall1, kText, kText2, kOut1), FlattenPolicy{Text: TextImmediate, TextJoin: "\n", TextReplace: true, CallName: name}, ChatStyle{},
			`[{"role":"assistant","content":"T2","tool_calls":[{"id":"c1","type":"function","function":{"name":"sh","arguments":"{}"}}]},{"role":"tool","content":"o1","tool_call_id":"c1"}]`},
		{"ContentText", `[{"type":"message","role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_image","image_url":"u"},{"type":"input_text","text":"b"}]}]`,
			FlattenPolicy{ContentText: true}, ChatStyle{}, `[{"role":"user","content":"ab"}]`},
		{"ContentText/no text", `[{"type":"message","role":"user","content":[{"type":"input_image","image_url":"u"}]}]`,
			FlattenPolicy{ContentText: true}, ChatStyle{}, `[{"role":"user"}]`},
		{"SkipEmpty", `[{"type":"message","role":"user","content":[{"type":"input_image","image_url":"u"}]},` + kDev + `]`,
			FlattenPolicy{ContentText: true, SkipEmpty: true}, ChatStyle{}, `[{"role":"user","content":"be brief"}]`},
		{"DropReasoning", items(kReason, kText), FlattenPolicy{DropReasoning: true}, ChatStyle{}, `[{"role":"assistant","content":"T1"}]`},
		{"DiscardUnanswered/user keeps text", items(kUser, kCall1, kText, kUser), FlattenPolicy{Text: TextImmediate, TextReplace: true, DiscardUnanswered: true, Unanswered: UnansweredKeep, CallName: name}, ChatStyle{},
			`[{"role":"user","content":"go\n"},{"role":"assistant","content":"T1"},{"role":"user","content":"go\n"}]`},
		{"DiscardText", items(kCall1, kText, kUser), FlattenPolicy{Text: TextMerge, TextReplace: true, DiscardUnanswered: true, DiscardText: true, CallName: name}, ChatStyle{},
			`[{"role":"user","content":"go\n"}]`},
		{"DiscardUnanswered/immediate text clears reasoning", items(kReason, kText), FlattenPolicy{Text: TextImmediate, DiscardUnanswered: true}, ChatStyle{},
			`[{"role":"assistant","content":"T1"}]`},
		{"DropOrphans", items(kCall1, kOutOrphan, kOut1, kOut1), FlattenPolicy{DropOrphans: true, CallName: name}, ChatStyle{},
			`[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"sh","arguments":"{}"}}]},{"role":"tool","content":"o1","tool_call_id":"c1"}]`},
		{"CallEndsWait", items(kCall1, kOut1, kCall1, kCall2, kOut2, kOut1), FlattenPolicy{CallEndsWait: true, DropOrphans: true, CallName: name}, ChatStyle{},
			`[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"sh","arguments":"{}"}}]},{"role":"tool","content":"o1","tool_call_id":"c1"},` +
				`{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"sh","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"sh","arguments":"{}"}}]},{"role":"tool","content":"o2","tool_call_id":"c2"},{"role":"tool","content":"o1","tool_call_id":"c1"}]`},
		{"CallEndsWait/sent calls stop waiting", items(kCall1, kCall2, kOut1, kCall1, kOut2), FlattenPolicy{CallEndsWait: true, DropOrphans: true, Unanswered: UnansweredKeep, CallName: name}, ChatStyle{},
			`[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"sh","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"sh","arguments":"{}"}}]},{"role":"tool","content":"o1","tool_call_id":"c1"},` +
				`{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"sh","arguments":"{}"}}]}]`},
		{"CallSendsText", items(kCall1, kReason, kText, kCall2, kOut1), FlattenPolicy{Text: TextImmediate, TextReplace: true, CallSendsText: true, CallName: name}, ChatStyle{},
			`[{"role":"assistant","content":"T1","reasoning_content":"R\n"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"sh","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"sh","arguments":"{}"}}]},{"role":"tool","content":"o1","tool_call_id":"c1"},{"role":"tool","content":"aborted","tool_call_id":"c2"}]`},
		{"UnansweredDrop", items(kCall1, kText), FlattenPolicy{Text: TextImmediate, TextReplace: true, Unanswered: UnansweredDrop, CallName: name}, ChatStyle{},
			`[{"role":"assistant","content":"T1"}]`},
		{"DeveloperFlush", items(kCall1, kText, kDev, kOut1), FlattenPolicy{Text: TextImmediate, TextReplace: true, Developer: DeveloperFlush, DiscardUnanswered: true, DropOrphans: true, CallName: name}, ChatStyle{},
			`[{"role":"assistant","content":"T1"}]`},
		{"SkipDeveloperFragments", `[{"type":"message","role":"user","content":[{"type":"input_text","text":"<permissions instructions>x</permissions instructions>"}]},` + kUser + `]`,
			FlattenPolicy{SkipContextual: true, SkipDeveloperFragments: true}, ChatStyle{}, `[{"role":"user","content":"go\n"}]`},
		{"MapUserContent", items(kDev, kUser), FlattenPolicy{MapUserContent: func(p []Part) []Part { return TextParts(strings.ToUpper(JoinText(p, ""))) }}, ChatStyle{},
			`[{"role":"user","content":"be brief"},{"role":"user","content":"GO\n"}]`},
		{"ImageNullID+AudioURL", `[{"type":"message","role":"user","content":[{"type":"input_image","image_url":"u","detail":"high"},{"type":"input_audio","audio_url":"data:audio/wav;base64,AAAA"}]}]`,
			FlattenPolicy{}, ChatStyle{ImageNullID: true, AudioURL: true},
			`[{"role":"user","content":[{"type":"image_url","image_url":{"url":"u","id":null}},{"type":"input_audio","audio_url":"data:audio/wav;base64,AAAA"}]}]`},
		{"OutputMedia+EmptyOutputParts", items(kCall1, `{"type":"function_call_output","call_id":"c1","output":[{"type":"input_video","video_url":"v","id":"i"},{"type":"input_audio","audio_url":"a"}]}`,
			kCall2, `{"type":"function_call_output","call_id":"c2","output":[]}`),
			FlattenPolicy{CallName: name}, ChatStyle{OutputParts: true, OutputMedia: true, EmptyOutputParts: true},
			`[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"sh","arguments":"{}"}}]},{"role":"tool","content":[{"type":"video_url","video_url":{"url":"v","id":"i"}},{"type":"input_audio","audio_url":"a"}],"tool_call_id":"c1"},` +
				`{"role":"assistant","tool_calls":[{"id":"c2","type":"function","function":{"name":"sh","arguments":"{}"}}]},{"role":"tool","content":[],"tool_call_id":"c2"}]`},
		{"OutputTextParts+TrimReasoning", items(kReason, kCall1, kOut1), FlattenPolicy{CallName: name}, ChatStyle{OutputTextParts: true, TrimReasoning: "\n"},
			`[{"role":"assistant","reasoning_content":"R","tool_calls":[{"id":"c1","type":"function","function":{"name":"sh","arguments":"{}"}}]},{"role":"tool","content":[{"type":"text","text":"o1"}],"tool_call_id":"c1"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := flattenRender(t, tt.items, tt.p, tt.st)
			var want any
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatalf("want: %v", err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("messages (-want +got):\n%s", d)
			}
		})
	}
}

// A message marked AsParts sends one text as an array of one text part.
func TestRenderAsParts(t *testing.T) {
	cms, err := RenderChat(nil, []Message{{Role: RoleUser, Content: TextParts("x"), AsParts: true}}, ChatStyle{})
	if err != nil {
		t.Fatal(err)
	}
	if c := cms[0].Content; c.Kind != chat.ContentParts || len(c.Parts) != 1 || c.Parts[0].Text != "x" {
		t.Errorf("content = %+v, want one text part", c)
	}
}

// NullCallContent writes "content": null on an assistant message with
// calls and no content, and nowhere else.
func TestRenderNullCallContent(t *testing.T) {
	msgs := []Message{
		{Role: RoleAssistant, Calls: []Call{{ID: "c1", Name: "bash", Arguments: "{}"}}},
		{Role: RoleAssistant, Content: TextParts("x"), Calls: []Call{{ID: "c2", Name: "bash", Arguments: "{}"}}},
		{Role: RoleAssistant},
	}
	for _, null := range []bool{false, true} {
		cms, err := RenderChat(nil, msgs, ChatStyle{NullCallContent: null})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, cm := range cms {
			b, err := cm.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(b))
		}
		first := `{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{}"}}]}`
		if null {
			first = `{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{}"}}]}`
		}
		want := []string{first, `{"role":"assistant","content":"x","tool_calls":[{"id":"c2","type":"function","function":{"name":"bash","arguments":"{}"}}]}`, `{"role":"assistant"}`}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("null=%v message %d: %s, want %s", null, i, got[i], want[i])
			}
		}
	}
}
