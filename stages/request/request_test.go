package request

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/wire/chat"
)

func TestChatGraphNames(t *testing.T) {
	g, err := NewChatGraph(Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"request.system", "request.tools", "request.history", "request.options", "request.provider", "request.encode"}
	if d := cmp.Diff(want, g.Names()); d != "" {
		t.Errorf("node names (-want +got):\n%s", d)
	}
	rg, err := NewResponsesGraph()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"request.encode"}, rg.Names()); d != "" {
		t.Errorf("responses graph names (-want +got):\n%s", d)
	}
}

func TestSanitizeToolName(t *testing.T) {
	for in, want := range map[string]string{
		"":            "tool",
		"ok_name-1":   "ok_name-1",
		"mcp.demo":    "mcp_demo",
		"a b/c":       "a_b_c",
		"ünï":         "_n_",
		"\xff\xfe":    "__",
		"tab\tand\nl": "tab_and_l",
	} {
		if got := sanitizeToolName(in); got != want {
			t.Errorf("sanitizeToolName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestChatToolName(t *testing.T) {
	for _, c := range []struct{ ns, name, want string }{
		{"", "plain", "plain"},
		{"", "not.sanitised", "not.sanitised"},
		{"ns", "f", "ns_f"},
		{"ns_", "f", "ns_f"},
		{"ns", "_f", "ns_f"},
		{"ns_", "_f", "ns__f"},
		{"mcp.demo", "lookup.order", "mcp_demo_lookup_order"},
		{strings.Repeat("n", 70), "f", strings.Repeat("n", 70) + "_f"}, // not cut: no tool registered
	} {
		if got := ChatToolName(c.ns, c.name); got != c.want {
			t.Errorf("ChatToolName(%q, %q) = %q, want %q", c.ns, c.name, got, c.want)
		}
	}
}

func TestUniqueToolName(t *testing.T) {
	long := strings.Repeat("x", 70)
	reserved := map[string]bool{"a": true, "a_2": true}
	for _, c := range []struct{ base, want string }{
		{"a", "a_3"},
		{"b", "b"},
		{"b", "b_2"},
		{long, strings.Repeat("x", 64)},
		{long, strings.Repeat("x", 62) + "_2"},
		{long, strings.Repeat("x", 62) + "_3"},
	} {
		if got := uniqueToolName(c.base, reserved); got != c.want {
			t.Errorf("uniqueToolName(%.10q…) = %q, want %q", c.base, got, c.want)
		}
		if len(c.want) > MaxToolNameLen {
			t.Errorf("%q is longer than %d", c.want, MaxToolNameLen)
		}
	}
	// Ten and more suffixes cut the prefix further.
	r := map[string]bool{}
	for range 10 {
		uniqueToolName(long, r)
	}
	if got := uniqueToolName(long, r); got != strings.Repeat("x", 61)+"_11" {
		t.Errorf("11th name = %q", got)
	}
}

// Malformed tools that cannot be written as request JSON (the decoder
// already refuses them) are errors; well-formed tools of unknown types are
// dropped.
func TestConvertToolsMalformed(t *testing.T) {
	for name, c := range map[string]struct {
		tools []protocol.ToolSpec
		err   string
	}{
		"no type": {
			tools: []protocol.ToolSpec{{Name: "x", Raw: json.RawMessage(`{"name":"x"}`)}},
			err:   `tools[0]: unsupported chat wire tool type: "" (the tool has no type)`,
		},
		"namespace entry without type": {
			tools: []protocol.ToolSpec{{Type: "namespace", Name: "ns", Tools: []protocol.ToolSpec{{Name: "f"}}}},
			err:   `tools[0].tools[0]: unsupported chat wire namespace tool type: "" (the tool has no type)`,
		},
		"namespace function without name": {
			tools: []protocol.ToolSpec{{Type: "namespace", Name: "ns", Tools: []protocol.ToolSpec{{Type: "function"}}}},
			err:   `tools[0].tools[0]: function tool without a name`,
		},
		"custom without name": {
			tools: []protocol.ToolSpec{{Type: "custom"}},
			err:   `tools[0]: custom tool without a name`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := ConvertTools(c.tools, slog.New(slog.DiscardHandler))
			if err == nil || err.Error() != c.err {
				t.Errorf("err = %v, want %s", err, c.err)
			}
		})
	}
	// Go-built tools without parameters get the empty object schema.
	tools, kinds, err := ConvertTools([]protocol.ToolSpec{{Type: "function", Name: "f"}, {Type: "mcp", Name: "m"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || string(tools[0].Parameters) != emptyObjectSchema || tools[0].Description != "f" {
		t.Errorf("tools = %+v", tools)
	}
	if d := cmp.Diff(protocol.ToolKinds{"f": {Kind: protocol.KindFunction}}, kinds); d != "" {
		t.Errorf("kinds (-want +got):\n%s", d)
	}
}

func TestChatToolChoice(t *testing.T) {
	req := &protocol.ResponsesRequest{Tools: []protocol.ToolSpec{
		{Type: "namespace", Name: "mcp.x", Tools: []protocol.ToolSpec{{Type: "function", Name: "get"}}},
	}}
	s := NewShaping(req)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	for in, want := range map[string]string{
		``:                               `"auto"`,
		`null`:                           `"auto"`,
		`"none"`:                         `"none"`,
		`"required"`:                     `"required"`,
		`{"type":"function","name":"f"}`: `{"type":"function","function":{"name":"f"}}`,
		`{"type":"function","name":"get","namespace":"mcp.x"}`:  `{"type":"function","function":{"name":"mcp_x_get"}}`,
		`{"type":"custom","name":"apply_patch"}`:                `{"type":"function","function":{"name":"apply_patch"}}`,
		`{"type":"function","function":{"name":"f"}}`:           `{"type":"function","function":{"name":"f"}}`,
		`{"type":"allowed_tools","mode":"required","tools":[]}`: `"required"`,
		`{"type":"web_search_preview"}`:                         `"auto"`,
		`{"type":"function"}`:                                   `"auto"`,
		`[1]`:                                                   `"auto"`,
	} {
		if got := chatToolChoice(s, json.RawMessage(in), log); string(got) != want {
			t.Errorf("chatToolChoice(%s) = %s, want %s", in, got, want)
		}
	}
	if n := strings.Count(logs.String(), "tool_choice has no chat form"); n != 3 {
		t.Errorf("%d debug records for choices without a chat form, want 3:\n%s", n, logs.String())
	}
}

func TestChatEffort(t *testing.T) {
	for in, want := range map[string]string{
		"": "", "none": "", "None": "", "minimal": "low", "low": "low", "medium": "medium",
		"high": "high", "xhigh": "high", "max": "high", "ultra": "high", "Thinking": "Thinking",
	} {
		if got := ChatEffort(in); got != want {
			t.Errorf("ChatEffort(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDetectProvider(t *testing.T) {
	for in, want := range map[string]Provider{
		"https://api.deepseek.com":             ProviderDeepSeek,
		"HTTPS://API.DEEPSEEK.COM/v1":          ProviderDeepSeek,
		"https://openrouter.ai/api/v1":         ProviderOpenRouter,
		"https://api.groq.com/openai/v1":       ProviderGroq,
		"https://api.openai.com/v1":            ProviderNone,
		"":                                     ProviderNone,
		"http://127.0.0.1:8080/deepseek-proxy": ProviderNone,
	} {
		if got := DetectProvider(in); got != want {
			t.Errorf("DetectProvider(%q) = %q, want %q", in, got, want)
		}
	}
	if p := (Options{BaseURL: "https://api.groq.com", Provider: ProviderNone}).provider(); p != ProviderNone {
		t.Errorf("explicit provider ignored: %q", p)
	}
}

func TestApplyProviderQuirks(t *testing.T) {
	decode := func(s string) chat.Request {
		var r chat.Request
		if err := json.Unmarshal([]byte(s), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	for name, c := range map[string]struct {
		p        Provider
		in, want string
	}{
		"deepseek developer": {ProviderDeepSeek,
			`{"model":"m","messages":[{"role":"developer","content":"d"},{"role":"system","content":"s"}]}`,
			`{"model":"m","messages":[{"role":"user","content":"d"},{"role":"system","content":"s"}]}`},
		"openrouter caps": {ProviderOpenRouter,
			`{"model":"m","messages":[],"max_tokens":4096,"max_completion_tokens":100}`,
			`{"model":"m","messages":[],"max_tokens":1024,"max_completion_tokens":100}`},
		"openrouter only completion limit": {ProviderOpenRouter,
			`{"model":"m","messages":[],"max_completion_tokens":5000}`,
			`{"model":"m","messages":[],"max_completion_tokens":1024}`},
		"groq": {ProviderGroq,
			`{"model":"m","messages":[{"role":"assistant","content":"a","reasoning_content":"r"}],"max_tokens":50000,
			  "max_completion_tokens":10,"prompt_cache_key":"k","thinking":{"type":"enabled"},"parallel_tool_calls":true,
			  "response_format":{"type":"json_object"},"reasoning_effort":"low","service_tier":"auto","store":true,
			  "verbosity":"low","seed":7}`,
			`{"model":"m","messages":[{"role":"assistant","content":"a"}],"max_tokens":32768,"max_completion_tokens":10,"seed":7}`},
		"none": {ProviderNone,
			`{"model":"m","messages":[{"role":"developer","content":"d"}],"max_tokens":99999}`,
			`{"model":"m","messages":[{"role":"developer","content":"d"}],"max_tokens":99999}`},
	} {
		t.Run(name, func(t *testing.T) {
			r := decode(c.in)
			shared := r.MaxTokens
			before := int64(0)
			if shared != nil {
				before = *shared
			}
			ApplyProviderQuirks(c.p, &r)
			got, err := r.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(jsonValue(t, "want", []byte(c.want)), jsonValue(t, "got", got)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if shared != nil && *shared != before {
				t.Errorf("the caller's max_tokens was written through: %d", *shared)
			}
		})
	}
}

func TestShapeErrors(t *testing.T) {
	ctx := context.Background()
	g, err := NewChatGraph(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Shape(ctx, nil, &protocol.ResponsesRequest{}); err == nil {
		t.Error("nil graph: no error")
	}
	if _, err := Shape(ctx, g, nil); err == nil {
		t.Error("nil request: no error")
	}
	other := pipeline.Must(pipeline.New("ints", pipeline.StageNode("id", pipeline.Map(func(i int) Shaped { return Shaped{} }))))
	if _, err := Shape(ctx, other, &protocol.ResponsesRequest{}); err == nil || !strings.Contains(err.Error(), "takes int") {
		t.Errorf("wrong input type: %v", err)
	}
	none := pipeline.Must(pipeline.New("none", pipeline.StageNode("drop",
		pipeline.Filter(func(*Shaping) bool { return false })), EncodeNode()))
	if _, err := Shape(ctx, none, &protocol.ResponsesRequest{}); err == nil || !strings.Contains(err.Error(), "produced 0 results") {
		t.Errorf("no result: %v", err)
	}
	nilItem := &protocol.ResponsesRequest{Input: protocol.Items{protocol.UserMessage("hi"), (*protocol.FunctionCall)(nil)}}
	_, err = Shape(ctx, g, nilItem)
	var se *pipeline.StageError
	if !errors.As(err, &se) || se.Stage != NodeHistory || !strings.Contains(err.Error(), "input[1]: nil item") {
		t.Errorf("nil item: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Shape(cancelled, g, &protocol.ResponsesRequest{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// The graph is a blueprint: editing it by node name works, and the request
// itself is never modified.
func TestGraphEditAndRequestUntouched(t *testing.T) {
	g, err := NewChatGraph(Options{})
	if err != nil {
		t.Fatal(err)
	}
	mark := pipeline.StageNode("test.mark", pipeline.Map(func(s *Shaping) *Shaping {
		s.Transcript = append(s.Transcript, Message{Role: RoleUser, Content: TextParts("inserted")})
		return s
	}))
	g2, err := g.InsertAfter(NodeHistory, mark)
	if err != nil {
		t.Fatal(err)
	}
	req := &protocol.ResponsesRequest{Model: "m", Instructions: "sys", Input: protocol.Items{
		protocol.UserMessage("hi"),
		&protocol.FunctionCall{Name: "f", Namespace: "ns", Arguments: "{}", CallID: "c"},
	}, Tools: []protocol.ToolSpec{{Type: "namespace", Name: "ns", Tools: []protocol.ToolSpec{{Type: "function", Name: "f"}}}}}
	before, err := req.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	out, err := Shape(context.Background(), g2, req)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out.Body, []byte(`"content":"inserted"`)) || !bytes.Contains(out.Body, []byte(`"name":"ns_f"`)) {
		t.Errorf("body: %s", out.Body)
	}
	after, err := req.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Errorf("the request was modified:\n%s\n%s", before, after)
	}
}

func TestResponsesGraph(t *testing.T) {
	g, err := NewResponsesGraph()
	if err != nil {
		t.Fatal(err)
	}
	req := &protocol.ResponsesRequest{Model: "m", Input: protocol.Items{protocol.UserMessage("hi")}, Stream: true}
	out, err := Shape(context.Background(), g, req)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := req.MarshalJSON()
	if out.Path != "/responses" || !bytes.Equal(out.Body, want) || out.ToolKinds == nil || len(out.ToolKinds) != 0 {
		t.Errorf("got %+v", out)
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"title_request":null,"tool_kinds":{}`)) {
		t.Errorf("shape JSON: %s", b)
	}
}

func TestMessageContent(t *testing.T) {
	for name, c := range map[string]struct {
		in   []protocol.ContentItem
		want chat.Content
	}{
		"none":         {nil, chat.Content{}},
		"only unknown": {[]protocol.ContentItem{{Type: "input_file"}}, chat.Content{}},
		"one text":     {[]protocol.ContentItem{{Type: "output_text", Text: ""}}, chat.Text("")},
		"one text among unknown": {[]protocol.ContentItem{{Type: "input_file"}, protocol.InputText("t")},
			chat.Text("t")},
		"bad data url": {[]protocol.ContentItem{{Type: "input_audio", AudioURL: "data:audio/wav,notbase64"}},
			chat.Parts(chat.Part{Type: "input_audio", AudioURL: "data:audio/wav,notbase64"})},
		"ogg data url": {[]protocol.ContentItem{{Type: "input_audio", AudioURL: "data:audio/OGG;codecs=opus;base64,T2dn"}},
			chat.Parts(chat.Part{Type: "input_audio", InputAudio: &chat.InputAudio{Data: "T2dn", Format: "ogg"}})},
	} {
		if d := cmp.Diff(c.want, MessageContent(c.in)); d != "" {
			t.Errorf("%s (-want +got):\n%s", name, d)
		}
	}
}

// The fast writer of output item arrays matches protocol's encoder.
func TestAppendOutputItems(t *testing.T) {
	for _, items := range [][]protocol.FunctionCallOutputContentItem{
		{},
		{{Type: "input_text", Text: "a\n<b> \"c\" ü \u2028"}},
		{{Type: "input_image", ImageURL: "data:x"}, {Type: "input_image", ImageURL: "u", Detail: "high"}, {Type: "input_audio", AudioURL: "a"}},
		{{Type: "input_text", Text: ""}, {Type: "input_text", Text: "\xff"}},
	} {
		p := protocol.FunctionCallOutputPayload{Items: items}
		want, err := p.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendOutputItems(nil, items)
		if !ok || string(got) != string(want) {
			t.Errorf("got %s (%v)\nwant %s", got, ok, want)
		}
	}
	for _, items := range [][]protocol.FunctionCallOutputContentItem{
		{{Type: "input_video", VideoURL: "v"}},
		{{Type: "encrypted_content", EncryptedContent: "e"}},
		{{Type: "input_text", Text: "t", Extra: protocol.Extra{"x": json.RawMessage(`1`)}}},
	} {
		if _, ok := appendOutputItems(nil, items); ok {
			t.Errorf("%+v: not left to protocol", items)
		}
		p := protocol.FunctionCallOutputPayload{Items: items}
		want, _ := p.MarshalJSON()
		if got, err := outputText(&p); err != nil || got != string(want) {
			t.Errorf("outputText = %s, %v; want %s", got, err, want)
		}
	}
}
