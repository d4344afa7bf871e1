package request

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/wire/anthropic"
	"github.com/harnessflow/harnessflow/wire/anthropic/anthropictest"
)

func sp(s string) *string { return &s }

// renderJSON renders msgs and returns {"system":…,"messages":…} as JSON.
func renderJSON(t *testing.T, msgs []Message, style MessagesStyle) string {
	t.Helper()
	system, out, err := RenderMessages(msgs, style)
	if err != nil {
		t.Fatal(err)
	}
	FinishMessages(out, style)
	r := anthropic.Request{Messages: out}
	if len(system) > 0 {
		r.System = anthropic.Blocks(system...)
	}
	data, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	// Drop the fixed parts around system and messages.
	s := strings.TrimPrefix(string(data), `{"model":"",`)
	return strings.TrimSuffix(s, `,"max_tokens":0}`)
}

func TestRenderMessages(t *testing.T) {
	no, yes := false, true
	signed := &protocol.Reasoning{ID: "rs_1", Content: []protocol.ReasoningContent{{Type: protocol.ReasoningTypeText, Text: "think"}},
		EncryptedContent: sp("SIG")}
	summaryOnly := &protocol.Reasoning{Summary: []protocol.SummaryText{{Text: "a"}, {Text: "b"}}, EncryptedContent: sp("S2")}
	unsigned := &protocol.Reasoning{Content: []protocol.ReasoningContent{{Type: protocol.ReasoningTypeText, Text: "lost"}}}
	redacted := &protocol.Reasoning{ID: "anthropic-redacted-thinking-0", EncryptedContent: sp("DATA")}
	tests := []struct {
		name  string
		msgs  []Message
		style MessagesStyle
		want  string
	}{
		{
			name: "system blocks, merged user turns",
			msgs: []Message{
				{Role: RoleSystem, Content: TextParts("one")},
				{Role: RoleSystem, Content: []Part{{Kind: PartText, Text: "two"}, {Kind: PartImage, URL: "x"}}},
				{Role: RoleDeveloper, Content: TextParts("dev")},
				{Role: RoleUser, Content: []Part{{Kind: PartText, Text: "hi"}, {Kind: PartImage, URL: "data:image/png;base64,AAAA"},
					{Kind: PartImage, URL: "https://x/y.png"}, {Kind: PartAudio, URL: "data:audio/wav;base64,AA"}}},
			},
			style: MessagesStyle{SystemCache: true},
			want: `"messages":[{"role":"user","content":[{"type":"text","text":"dev"},{"type":"text","text":"hi"},` +
				`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}},` +
				`{"type":"image","source":{"type":"url","url":"https://x/y.png"}},{"type":"text","text":"[audio content omitted]"}]}],` +
				`"system":[{"type":"text","text":"one","cache_control":{"type":"ephemeral"}},{"type":"text","text":"two","cache_control":{"type":"ephemeral"}}]`,
		},
		{
			name: "assistant turn: signed thinking, text, calls; results in call order, first",
			msgs: []Message{
				{Role: RoleUser, Content: TextParts("go")},
				{Role: RoleAssistant, Content: TextParts("ok"), Reasoning: "thinklost",
					ReasoningItems: []*protocol.Reasoning{signed, unsigned, redacted, summaryOnly},
					Calls:          []Call{{ID: "a", Name: "Bash", Arguments: `{"command":"ls"}`}, {ID: "b", Name: "Read", Arguments: `not json`}, {ID: "c", Name: "X"}}},
				{Role: RoleTool, CallID: "b", Output: &Output{Text: "B", Success: &no}},
				{Role: RoleUser, Content: TextParts("also")},
				{Role: RoleTool, CallID: "a", Output: &Output{Text: "A", Success: &yes}},
				{Role: RoleTool, CallID: "c", Output: &Output{Items: []protocol.FunctionCallOutputContentItem{
					{Type: protocol.ContentInputText, Text: "t"}, {Type: protocol.ContentInputImage, ImageURL: "https://i"}, {Type: "input_video"}}}},
			},
			want: `"messages":[{"role":"user","content":[{"type":"text","text":"go"}]},{"role":"assistant","content":[` +
				`{"type":"thinking","thinking":"think","signature":"SIG"},{"type":"redacted_thinking","data":"DATA"},` +
				`{"type":"thinking","thinking":"a\nb","signature":"S2"},{"type":"text","text":"ok"},` +
				`{"type":"tool_use","id":"a","name":"Bash","input":{"command":"ls"}},{"type":"tool_use","id":"b","name":"Read","input":{"input":"not json"}},` +
				`{"type":"tool_use","id":"c","name":"X","input":{}}]},{"role":"user","content":[` +
				`{"type":"tool_result","tool_use_id":"a","content":"A"},{"type":"tool_result","tool_use_id":"b","content":"B","is_error":true},` +
				`{"type":"tool_result","tool_use_id":"c","content":[{"type":"text","text":"t"},{"type":"image","source":{"type":"url","url":"https://i"}},` +
				`{"type":"text","text":"[video content omitted]"}]},{"type":"text","text":"also"}]}]`,
		},
		{
			name: "late system message, blank assistant, cache last, collapse",
			msgs: []Message{
				{Role: RoleUser, Content: TextParts("q")},
				{Role: RoleSystem, Content: TextParts("note")},
				{Role: RoleAssistant, Blank: true, Reasoning: "r", ReasoningItems: []*protocol.Reasoning{unsigned}},
				{Role: RoleAssistant, Content: TextParts("")},
				{Role: RoleAssistant, Content: TextParts("answer")},
				{Role: RoleUser, Content: TextParts("next")},
				{Role: RoleUser, Content: TextParts("")},
			},
			style: MessagesStyle{CacheLast: true, CollapseText: true},
			want: `"messages":[{"role":"user","content":"q"},{"role":"system","content":[{"type":"text","text":"note"}]},` +
				`{"role":"assistant","content":[{"type":"text","text":"answer"}]},` +
				`{"role":"user","content":[{"type":"text","text":"next","cache_control":{"type":"ephemeral"}},{"type":"text","text":""}]}]`,
		},
		{
			name: "custom tool result renderer sees the tool name",
			msgs: []Message{
				{Role: RoleAssistant, Calls: []Call{{ID: "x", Name: "Bash", Arguments: `{}`}}},
				{Role: RoleTool, CallID: "x", Output: &Output{Text: "  out  "}},
				{Role: RoleTool, CallID: "y", Output: &Output{Text: "orphan"}},
			},
			style: MessagesStyle{ToolResult: func(tool string, o *Output) ToolResult {
				return ToolResult{Content: anthropic.Text(tool + ":" + strings.TrimSpace(o.Text))}
			}},
			want: `"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"x","name":"Bash","input":{}}]},` +
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":"Bash:out"},{"type":"tool_result","tool_use_id":"y","content":":orphan"}]}]`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := renderJSON(t, tc.msgs, tc.style)
			if got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	if _, _, err := RenderMessages([]Message{{Role: RoleTool, CallID: "a"}}, MessagesStyle{}); err == nil {
		t.Error("a tool message without output: no error")
	}
}

// The Messages encoder behind the native flattening: system text, merged
// turns, tools, path, the body fields set ahead, and a body the official
// SDK reads without loss.
func TestMessagesEncode(t *testing.T) {
	req, err := protocol.DecodeRequest([]byte(`{"model":"claude-x","instructions":"be brief","stream":true,
	 "input":[
	  {"type":"message","role":"developer","content":[{"type":"input_text","text":"dev"}]},
	  {"type":"message","role":"user","content":[{"type":"input_text","text":"list"}]},
	  {"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"hm"}],"encrypted_content":"SIG"},
	  {"type":"function_call","call_id":"c1","name":"shell","arguments":"{\"command\":[\"ls\"]}"},
	  {"type":"message","role":"user","content":[{"type":"input_text","text":"hurry"}]},
	  {"type":"function_call_output","call_id":"c1","output":"a.go"},
	  {"type":"function_call","call_id":"c2","name":"shell","arguments":"{}"}
	 ],
	 "tools":[{"type":"function","name":"shell","description":"run","parameters":{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}}}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	g, err := pipeline.New("request.test-messages",
		SystemNode(),
		ToolsNode(Options{}),
		HistoryNode(Options{}, NativePolicy()),
		pipeline.StageNode(NodeOptions, Update(func(s *Shaping) error {
			s.MessagesBody = anthropic.Request{MaxTokens: 100, Stream: &yes,
				System: anthropic.Blocks(anthropic.TextBlock("first"))}
			s.Headers = map[string]string{anthropic.HeaderVersion: anthropic.Version}
			return nil
		})),
		MessagesEncodeNode(MessagesStyle{CacheLast: true}),
	)
	if err != nil {
		t.Fatal(err)
	}
	shaped, err := Shape(context.Background(), g, req)
	if err != nil {
		t.Fatal(err)
	}
	if shaped.Path != anthropic.Path || shaped.Headers[anthropic.HeaderVersion] != anthropic.Version {
		t.Errorf("path %q headers %v", shaped.Path, shaped.Headers)
	}
	want := `{"model":"claude-x","messages":[` +
		`{"role":"user","content":[{"type":"text","text":"dev"},{"type":"text","text":"list"}]},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"SIG"},{"type":"tool_use","id":"c1","name":"shell","input":{"command":["ls"]}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"a.go"},{"type":"text","text":"hurry"}]},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"c2","name":"shell","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"c2","content":"aborted","cache_control":{"type":"ephemeral"}}]}],` +
		`"system":[{"type":"text","text":"first"},{"type":"text","text":"be brief"}],` +
		`"tools":[{"name":"shell","description":"run","input_schema":{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}}}}}],` +
		`"max_tokens":100,"stream":true}`
	if d := cmp.Diff(want, string(shaped.Body)); d != "" {
		t.Errorf("body (-want +got):\n%s", d)
	}
	if d, err := anthropictest.Diff(shaped.Body); err != nil || d != "" {
		t.Errorf("anthropic-sdk-go round trip: %v\n%s", err, d)
	}
	var kinds map[string]json.RawMessage
	b, _ := json.Marshal(shaped.ToolKinds)
	if json.Unmarshal(b, &kinds); len(kinds) != 1 {
		t.Errorf("tool kinds %s", b)
	}
}
