package toolprompt

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

var update = flag.Bool("update", false, "rewrite testdata/*.body.json")

func loadRequest(t *testing.T, name string) *protocol.ResponsesRequest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	req := new(protocol.ResponsesRequest)
	if err := json.Unmarshal(data, req); err != nil {
		t.Fatal(err)
	}
	return req
}

// shape runs the native chat graph, with the toolprompt node after
// request.history when format is not "".
func shape(t *testing.T, req *protocol.ResponsesRequest, format string) request.Shaped {
	t.Helper()
	g, err := request.NewChatGraph(request.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if format != "" {
		n, err := Node(Options{Format: format})
		if err != nil {
			t.Fatal(err)
		}
		if g, err = g.InsertAfter(request.NodeHistory, n); err != nil {
			t.Fatal(err)
		}
	}
	out, err := request.Shape(context.Background(), g, req)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type chatBody struct {
	Messages []struct {
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		ToolCalls json.RawMessage `json:"tool_calls"`
	} `json:"messages"`
	Rest map[string]json.RawMessage `json:"-"`
}

// TestGolden shapes a Codex request with tools and a history of calls and
// outputs with the tools in the prompt, in each format, against
// testdata/codex_history.<format>.body.json, and checks what the package
// promises independently of the golden bytes.
func TestGolden(t *testing.T) {
	req := loadRequest(t, "codex_history.json")
	plain := shape(t, req, "")
	for _, format := range Formats() {
		t.Run(format, func(t *testing.T) {
			out := shape(t, req, format)
			var pretty strings.Builder
			var v any
			if err := json.Unmarshal(out.Body, &v); err != nil {
				t.Fatal(err)
			}
			enc := json.NewEncoder(&pretty)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(v); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "codex_history."+format+".body.json")
			if *update {
				if err := os.WriteFile(path, []byte(pretty.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if d := cmp.Diff(string(want), pretty.String()); d != "" {
				t.Errorf("body (-want +got):\n%s", d)
			}

			var top map[string]json.RawMessage
			if err := json.Unmarshal(out.Body, &top); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"tools", "tool_choice", "parallel_tool_calls"} {
				if _, ok := top[k]; ok {
					t.Errorf("body has %q", k)
				}
			}
			if d := cmp.Diff(plain.ToolKinds, out.ToolKinds); d != "" {
				t.Errorf("tool kinds changed (-plain +toolprompt):\n%s", d)
			}
			var b chatBody
			if err := json.Unmarshal(out.Body, &b); err != nil {
				t.Fatal(err)
			}
			if len(b.Messages) == 0 || b.Messages[0].Role != "system" {
				t.Fatalf("no leading system message: %s", out.Body)
			}
			sys := string(b.Messages[0].Content)
			for _, name := range []string{"exec_command", "view_image", "apply_patch", "You are a coding agent."} {
				if !strings.Contains(sys, name) {
					t.Errorf("system message lacks %q", name)
				}
			}
			calls, responses := 0, 0
			for _, m := range b.Messages {
				if m.Role == "tool" || len(m.ToolCalls) > 0 {
					t.Errorf("a %s message with tool calls or a tool role: %s", m.Role, m.Content)
				}
				var text string
				_ = json.Unmarshal(m.Content, &text)
				if m.Role == "assistant" {
					calls += strings.Count(text, "<tool_call>")
				}
				if m.Role == "user" {
					responses += strings.Count(string(m.Content), "<tool_response>")
				}
			}
			if calls != 4 || responses != 4 {
				t.Errorf("%d calls and %d responses in the history as text, want 4 and 4", calls, responses)
			}
		})
	}
}

func TestCallText(t *testing.T) {
	for _, tt := range []struct {
		format string
		call   request.Call
		want   string
	}{
		{FormatHermes, request.Call{Name: "exec_command", Arguments: `{"cmd": "ls",  "n": 2}`},
			"<tool_call>\n{\"name\": \"exec_command\", \"arguments\": {\"cmd\":\"ls\",\"n\":2}}\n</tool_call>"},
		{FormatHermes, request.Call{Name: "f", Arguments: ""}, "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>"},
		{FormatHermes, request.Call{Name: "f", Arguments: "not json"}, "<tool_call>\n{\"name\": \"f\", \"arguments\": \"not json\"}\n</tool_call>"},
		{FormatHermes, request.Call{Name: "f", Arguments: `{"html":"<a>&"}`}, "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"html\":\"<a>&\"}}\n</tool_call>"},
		{FormatQwen3Coder, request.Call{Name: "exec_command", Arguments: `{"cmd":"echo \"hi\"\nls","timeout":5,"login":true,"env":{"A":"1"},"args":["a", "b"],"none":null}`},
			"<tool_call>\n<function=exec_command>\n<parameter=cmd>\necho \"hi\"\nls\n</parameter>\n<parameter=timeout>\n5\n</parameter>\n" +
				"<parameter=login>\ntrue\n</parameter>\n<parameter=env>\n{\"A\":\"1\"}\n</parameter>\n<parameter=args>\n[\"a\",\"b\"]\n</parameter>\n" +
				"<parameter=none>\nnull\n</parameter>\n</function>\n</tool_call>"},
		{FormatQwen3Coder, request.Call{Name: "f", Arguments: "{}"}, "<tool_call>\n<function=f>\n</function>\n</tool_call>"},
		{FormatQwen3Coder, request.Call{Name: "f", Arguments: "[1]"}, "<tool_call>\n<function=f>\n<parameter=input>\n[1]\n</parameter>\n</function>\n</tool_call>"},
	} {
		if got := CallText(tt.format, tt.call); got != tt.want {
			t.Errorf("%s %s:\n got %q\nwant %q", tt.format, tt.call.Arguments, got, tt.want)
		}
	}
}

func TestResolve(t *testing.T) {
	for _, tt := range []struct{ format, model, want, err string }{
		{"", "Qwen/Qwen3-Coder-30B-A3B-Instruct", FormatQwen3Coder, ""},
		{"auto", "qwen3_coder_local", FormatQwen3Coder, ""},
		{"AUTO", "llama-3.1-8b", FormatHermes, ""},
		{"hermes", "Qwen/Qwen3-Coder-30B", FormatHermes, ""},
		{"qwen3_coder", "x", FormatQwen3Coder, ""},
		{"off", "x", "", `tool format "off" cannot carry tools in the prompt (have hermes, qwen3_coder, or auto)`},
		{"kimi_k2", "x", "", `"kimi_k2" cannot carry`},
	} {
		got, err := Resolve(tt.format, tt.model)
		if got != tt.want || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("Resolve(%q, %q) = %q, %v; want %q, %q", tt.format, tt.model, got, err, tt.want, tt.err)
		}
	}
}

func TestChoice(t *testing.T) {
	tools := []request.Tool{{Name: "f", Description: "d", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}}
	for _, tt := range []struct{ choice, want, not string }{
		{`"auto"`, "", "In this reply"},
		{`"required"`, "must call at least one function", ""},
		{`"none"`, "do not call any function", ""},
		{`{"type":"function","name":"f"}`, "call the function f.", ""},
		{`{"type":"allowed_tools","mode":"required","tools":[]}`, "must call at least one", ""},
	} {
		for _, format := range Formats() {
			s := request.NewShaping(&protocol.ResponsesRequest{ToolChoice: json.RawMessage(tt.choice)})
			s.Tools = tools
			if err := Apply(s, Options{Format: format}); err != nil {
				t.Fatal(err)
			}
			sys := request.JoinText(s.Transcript[0].Content, "")
			if tt.want != "" && !strings.Contains(sys, tt.want) || tt.not != "" && strings.Contains(sys, tt.not) {
				t.Errorf("%s choice %s: system\n%s", format, tt.choice, sys)
			}
		}
	}
}

func TestNoToolsKeepsSystem(t *testing.T) {
	s := request.NewShaping(&protocol.ResponsesRequest{})
	s.Transcript = []request.Message{{Role: request.RoleSystem, Content: request.TextParts("sys")}, {Role: request.RoleUser, Content: request.TextParts("hi")}}
	if err := Apply(s, Options{Format: FormatHermes}); err != nil {
		t.Fatal(err)
	}
	if got := request.JoinText(s.Transcript[0].Content, ""); got != "sys" || len(s.Transcript) != 2 {
		t.Errorf("without tools: %+v", s.Transcript)
	}
	// Without a system message, one is added first.
	s = request.NewShaping(&protocol.ResponsesRequest{})
	s.Tools = []request.Tool{{Name: "f"}}
	s.Transcript = []request.Message{{Role: request.RoleUser, Content: request.TextParts("hi")}}
	if err := Apply(s, Options{Format: FormatQwen3Coder}); err != nil {
		t.Fatal(err)
	}
	if len(s.Transcript) != 2 || s.Transcript[0].Role != request.RoleSystem || !strings.Contains(request.JoinText(s.Transcript[0].Content, ""), "<name>f</name>") {
		t.Errorf("added system: %+v", s.Transcript)
	}
}

func TestStageErrors(t *testing.T) {
	if _, err := Stage(Options{Format: "kimi_k2"}); err == nil || !strings.Contains(err.Error(), `no renderer for tool format "kimi_k2"`) {
		t.Errorf("unsupported format: %v", err)
	}
	if err := Apply(nil, Options{Format: FormatHermes}); err == nil {
		t.Error("nil state: no error")
	}
	st, err := Stage(Options{Format: FormatHermes})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Push(context.Background(), nil, func(*request.Shaping) {}); err == nil {
		t.Error("stage on nil: no error")
	}
}

// A run of results, one written as content by a harness, becomes one user
// message; a call with text before it keeps the text.
func TestRewriteHistory(t *testing.T) {
	s := request.NewShaping(&protocol.ResponsesRequest{})
	s.Transcript = []request.Message{
		{Role: request.RoleAssistant, Content: request.TextParts("Looking."), Reasoning: "think", Calls: []request.Call{{ID: "a", Name: "f", Arguments: `{"x":1}`}, {ID: "b", Name: "g"}}},
		{Role: request.RoleTool, CallID: "a", Output: &request.Output{Text: "one"}},
		{Role: request.RoleTool, CallID: "b", Content: request.TextParts("aborted")},
		{Role: request.RoleUser, Content: request.TextParts("next")},
	}
	if err := Apply(s, Options{Format: FormatHermes}); err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(s.Transcript))
	for i, m := range s.Transcript {
		got[i] = m.Role + ": " + request.JoinText(m.Content, "|")
		if len(m.Calls) > 0 || m.CallID != "" || m.Output != nil {
			t.Errorf("message %d keeps call data: %+v", i, m)
		}
	}
	want := []string{
		"assistant: Looking.\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\":1}}\n</tool_call>\n<tool_call>\n{\"name\": \"g\", \"arguments\": {}}\n</tool_call>",
		"user: <tool_response>\none\n</tool_response>\n<tool_response>\naborted\n</tool_response>",
		"user: next",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("transcript (-want +got):\n%s", d)
	}
	if s.Transcript[0].Reasoning != "think" {
		t.Error("reasoning dropped")
	}
}
