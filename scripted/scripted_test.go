package scripted_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/scripted"
	"github.com/harnessflow/harnessflow/sinks"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/chatstream"

	"github.com/harnessflow/harnessflow/pipeline"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func tool(name, params string) string {
	return `{"type":"function","function":{"name":"` + name + `","parameters":` + params + `}}`
}

func chatRequest(stream bool, tools []string, messages ...string) string {
	b, _ := json.Marshal(stream)
	t := ""
	if len(tools) > 0 {
		t = `,"tools":[` + strings.Join(tools, ",") + `]`
	}
	return `{"model":"m","stream":` + string(b) + `,"stream_options":{"include_usage":true},"messages":[` + strings.Join(messages, ",") + `]` + t + `}`
}

const user = `{"role":"user","content":"hi there"}`

func serve(t *testing.T, h http.Handler, method, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(method, path, strings.NewReader(body)))
	return w
}

// events runs a streamed answer through the real chat parser.
func events(t *testing.T, body []byte, kinds protocol.ToolKinds) []protocol.ResponseEvent {
	t.Helper()
	g, err := chatstream.Graph(chatstream.Options{ToolKinds: kinds})
	if err != nil {
		t.Fatal(err)
	}
	sink := sinks.Collect[protocol.ResponseEvent]()
	if err := pipeline.Run(context.Background(), g, sources.Slice([][]byte{body}), sink); err != nil {
		t.Fatalf("chat parser: %v\n%s", err, body)
	}
	return sink.Items()
}

func doneItems(evs []protocol.ResponseEvent) []protocol.ResponseItem {
	var out []protocol.ResponseItem
	for _, e := range evs {
		if e.Type == protocol.EventOutputItemDone {
			out = append(out, e.Item)
		}
	}
	return out
}

func TestDefaultScriptToolThenAnswer(t *testing.T) {
	h := scripted.New(nil)
	tools := []string{tool("exec_command", `{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}`)}
	w := serve(t, h, http.MethodPost, "/v1/chat/completions", chatRequest(true, tools, user))
	if w.Code != 200 || w.Header().Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %v", w.Code, w.Header())
	}
	body := w.Body.Bytes()
	if !strings.HasSuffix(string(body), "data: [DONE]\n\n") || !strings.Contains(string(body), `"choices":[],"usage":{`) {
		t.Errorf("no usage chunk or [DONE]:\n%s", body)
	}
	if n := strings.Count(string(body), "\n\ndata: "); n < 15 {
		t.Errorf("only %d chunks: not streamed in small pieces", n)
	}
	evs := events(t, body, nil)
	items := doneItems(evs)
	if len(items) != 3 {
		t.Fatalf("items %v", items)
	}
	call, ok := items[2].(*protocol.FunctionCall)
	if !ok || call.Name != "exec_command" || call.Arguments != `{"cmd":"echo hello from harnessflow"}` || !strings.HasPrefix(call.CallID, "call_") {
		t.Errorf("call %+v", items[2])
	}
	last := evs[len(evs)-1]
	if last.Type != protocol.EventCompleted || last.FinishReason != "tool_calls" || last.TokenUsage == nil || last.TokenUsage.ReasoningOutputTokens == 0 {
		t.Errorf("last %+v", last)
	}
	// Deterministic: the same request gets the same bytes.
	if again := serve(t, h, http.MethodPost, "/v1/chat/completions", chatRequest(true, tools, user)); again.Body.String() != string(body) {
		t.Error("answers differ")
	}

	// With the tool result: the final answer quotes it.
	msgs := []string{user,
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"exec_command","arguments":"{}"}}]}`,
		`{"role":"tool","tool_call_id":"call_1","content":"Chunk ID: 9\nOutput:\nhello from harnessflow\n"}`}
	w = serve(t, h, http.MethodPost, "/chat/completions", chatRequest(true, tools, msgs...))
	items = doneItems(events(t, w.Body.Bytes(), nil))
	if len(items) != 1 {
		t.Fatalf("items %v", items)
	}
	text := items[0].(*protocol.Message).Content[0].Text
	if !strings.Contains(text, "printed:\n\nhello from harnessflow\n\n") || strings.Contains(text, "Chunk ID") {
		t.Errorf("final text %q", text)
	}
	// A new user message after the tool round: a tool call again.
	w = serve(t, h, http.MethodPost, "/v1/chat/completions", chatRequest(true, tools, append(msgs, user)...))
	if items := doneItems(events(t, w.Body.Bytes(), nil)); len(items) != 3 {
		t.Errorf("new turn items %v", items)
	}
}

func TestDefaultScriptNoTools(t *testing.T) {
	h := scripted.New(nil)
	w := serve(t, h, http.MethodPost, "/v1/chat/completions", chatRequest(true, nil, user))
	items := doneItems(events(t, w.Body.Bytes(), nil))
	if len(items) != 1 || !strings.HasPrefix(items[0].(*protocol.Message).Content[0].Text, "Hello from the harnessflow scripted model!") {
		t.Errorf("items %v", items)
	}
	// Tools but none shell-like: the tool turn cannot be played.
	w = serve(t, h, http.MethodPost, "/v1/chat/completions", chatRequest(true, []string{tool("read_file", `{}`)}, user))
	if items := doneItems(events(t, w.Body.Bytes(), nil)); len(items) != 1 {
		t.Errorf("items %v", items)
	}
}

func TestUnary(t *testing.T) {
	tools := []string{tool("shell", `{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}}}}`)}
	w := serve(t, scripted.New(nil), http.MethodPost, "/v1/chat/completions", chatRequest(false, tools, user))
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("%d", w.Code)
	}
	g, err := chatstream.UnaryGraph(chatstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sink := sinks.Collect[protocol.ResponseEvent]()
	if err := pipeline.Run(context.Background(), g, sources.Slice([][]byte{w.Body.Bytes()}), sink); err != nil {
		t.Fatalf("%v\n%s", err, w.Body.String())
	}
	items := doneItems(sink.Items())
	call := items[len(items)-1].(*protocol.FunctionCall)
	if call.Name != "shell" || call.Arguments != `{"command":["echo","hello","from","harnessflow"]}` {
		t.Errorf("call %+v", call)
	}
}

func TestShellArgumentShapes(t *testing.T) {
	cases := []struct{ params, command, want string }{
		{`{"properties":{"cmd":{"type":"string"}}}`, "ls -l", `{"cmd":"ls -l"}`},
		{`{"properties":{"command":{"type":"string"},"description":{"type":"string"}},"required":["command","description"]}`, "ls",
			`{"command":"ls","description":"harnessflow scripted call"}`},
		{`{"properties":{"command":{"type":["array","null"]}}}`, "echo a | wc", `{"command":["bash","-lc","echo a | wc"]}`},
		{`{}`, "pwd", `{"command":"pwd"}`},
	}
	for _, c := range cases {
		s := &scripted.Script{Turns: []scripted.Turn{{ToolCalls: []scripted.ToolCall{{Command: c.command}}}}}
		w := serve(t, scripted.New(s), http.MethodPost, "/v1/chat/completions", chatRequest(true, []string{tool("bash", c.params)}, user))
		items := doneItems(events(t, w.Body.Bytes(), nil))
		if got := items[0].(*protocol.FunctionCall).Arguments; got != c.want {
			t.Errorf("%s %q: %s, want %s", c.params, c.command, got, c.want)
		}
	}
}

func TestScriptFile(t *testing.T) {
	script := `{"model":"tiny","chunk_size":3,"turns":[
	  {"when":{"user_contains":"fail"},"status":429,"error":"slow down"},
	  {"when":{"assistant_turns":0,"tools":true},"tool_calls":[{"name":"apply_patch","arguments":{"input":"*** Begin Patch\n*** End Patch\n"}}]},
	  {"when":{"tool_result":true},"text":"Result: {{tool_output}} for {{model}}"},
	  {"reasoning":"ü","text":"héllo wörld, you said {{user}}","finish_reason":"length"}
	]}`
	path := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := scripted.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	h := scripted.New(s)

	w := serve(t, h, http.MethodPost, "/v1/chat/completions", chatRequest(true, nil, `{"role":"user","content":"please fail"}`))
	var e struct {
		Error struct{ Message, Type, Code string }
	}
	if json.Unmarshal(w.Body.Bytes(), &e); w.Code != 429 || e.Error.Message != "slow down" || e.Error.Code != "rate_limit_exceeded" {
		t.Errorf("%d %s", w.Code, w.Body)
	}

	kinds := protocol.ToolKinds{"apply_patch": {Kind: protocol.KindCustom}}
	w = serve(t, h, http.MethodPost, "/v1/chat/completions", chatRequest(true, []string{tool("apply_patch", `{}`)}, user))
	items := doneItems(events(t, w.Body.Bytes(), kinds))
	if c, ok := items[0].(*protocol.CustomToolCall); !ok || c.Input != "*** Begin Patch\n*** End Patch\n" {
		t.Errorf("items %v", items)
	}

	w = serve(t, h, http.MethodPost, "/v1/chat/completions", chatRequest(true, nil, user))
	evs := events(t, w.Body.Bytes(), nil)
	items = doneItems(evs)
	if got := items[len(items)-1].(*protocol.Message).Content[0].Text; got != "héllo wörld, you said hi there" {
		t.Errorf("text %q", got)
	}
	if !strings.Contains(w.Body.String(), `"model":"tiny"`) || evs[len(evs)-1].FinishReason != "length" {
		t.Errorf("model or finish reason: %+v", evs[len(evs)-1])
	}

	msgs := []string{user, `{"role":"assistant","content":"x"}`, `{"role":"tool","tool_call_id":"c","content":[{"type":"text","text":"42"}]}`}
	w = serve(t, h, http.MethodPost, "/v1/chat/completions", chatRequest(true, []string{tool("apply_patch", `{}`)}, msgs...))
	items = doneItems(events(t, w.Body.Bytes(), kinds))
	if got := items[0].(*protocol.Message).Content[0].Text; got != "Result: 42 for tiny" {
		t.Errorf("text %q", got)
	}
}

func TestBadScripts(t *testing.T) {
	for _, s := range []string{
		`{"turns":[]}`,
		`{"turns":[{}]}`,
		`{"turns":[{"text":"x","extra":1}]}`,
		`{"turns":[{"status":200}]}`,
		`{"turns":[{"tool_calls":[{"arguments":[1]}]}]}`,
		`{"turns":[{"text":"x"}]} {}`,
		`{"chunk_size":-1,"turns":[{"text":"x"}]}`,
	} {
		if _, err := scripted.Parse([]byte(s)); err == nil || !strings.HasPrefix(err.Error(), "scripted: ") {
			t.Errorf("%s: %v", s, err)
		}
	}
	if _, err := scripted.Load(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("missing file: no error")
	}
	if err := scripted.Default().Check(); err != nil {
		t.Errorf("default script: %v", err)
	}
}

func TestRoutes(t *testing.T) {
	h := scripted.New(nil)
	for _, c := range []struct {
		method, path, body string
		status             int
	}{
		{http.MethodGet, "/v1/chat/completions", "", 405},
		{http.MethodPost, "/v1/responses", "{}", 404},
		{http.MethodPost, "/v1/chat/completions", "{", 400},
		{http.MethodGet, "/v1/models", "", 200},
	} {
		w := serve(t, h, c.method, c.path, c.body)
		if w.Code != c.status {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, w.Code, c.status)
		}
		var v map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
			t.Errorf("%s %s: body is not JSON: %s", c.method, c.path, w.Body)
		}
	}
	w := serve(t, h, http.MethodGet, "/v1/models", "")
	if diff := cmp.Diff(`{"object":"list","data":[{"id":"harnessflow-scripted","object":"model","created":1767225600,"owned_by":"harnessflow"}]}`+"\n", w.Body.String()); diff != "" {
		t.Error(diff)
	}
}

// A nameless call picks the harnesses' own shell tools too: Kimi Code's
// Bash (after tools that are not shells) and deepseek-tui's exec_shell.
func TestNamelessCallFindsHarnessShells(t *testing.T) {
	s := &scripted.Script{Turns: []scripted.Turn{{ToolCalls: []scripted.ToolCall{{Command: "ls"}}}}}
	for _, shell := range []string{"Bash", "exec_shell"} {
		tools := []string{tool("Agent", `{"properties":{"prompt":{"type":"string"}},"required":["prompt"]}`),
			tool(shell, `{"properties":{"command":{"type":"string"},"timeout_ms":{"type":"integer"}},"required":["command"]}`)}
		w := serve(t, scripted.New(s), http.MethodPost, "/v1/chat/completions", chatRequest(true, tools, user))
		items := doneItems(events(t, w.Body.Bytes(), nil))
		c, ok := items[0].(*protocol.FunctionCall)
		if !ok || c.Name != shell || c.Arguments != `{"command":"ls"}` {
			t.Errorf("%s: items %v", shell, items)
		}
	}
}

// {{tool_output}} quotes a Kimi Code result without its wall-time header.
func TestToolOutputWithoutWallTime(t *testing.T) {
	s := &scripted.Script{Turns: []scripted.Turn{{Text: "said: {{tool_output}}"}}}
	msgs := `{"role":"user","content":"go"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"Bash","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"Wall time: 0.012 seconds\nhello"}`
	w := serve(t, scripted.New(s), http.MethodPost, "/v1/chat/completions", chatRequest(false, nil, msgs))
	if !strings.Contains(w.Body.String(), `"said: hello"`) {
		t.Errorf("answer %s", w.Body)
	}
}

// tool_result_contains picks a turn by the last tool result's text: a
// search first, then the tool it found, then the final text.
func TestToolResultContains(t *testing.T) {
	s, err := scripted.Parse([]byte(`{"turns":[
	  {"when":{"tool_result_contains":"echoed"},"text":"done: {{tool_output}}"},
	  {"when":{"tool_result_contains":"loaded"},"tool_calls":[{"name":"echo","arguments":{"text":"x"}}]},
	  {"when":{"tool_result":false},"tool_calls":[{"name":"tool_search","arguments":{"query":"echo"}}]}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	h := scripted.New(s)
	tools := []string{tool("tool_search", `{}`), tool("echo", `{}`)}
	call := `{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"tool_search","arguments":"{}"}}]}`
	for _, c := range []struct {
		msgs []string
		want string
	}{
		{[]string{user}, "call tool_search"},
		{[]string{user, call, `{"role":"tool","tool_call_id":"c","content":"the search loaded echo"}`}, "call echo"},
		{[]string{user, call, `{"role":"tool","tool_call_id":"c","content":"probe echoed x"}`}, "text done: probe echoed x"},
	} {
		w := serve(t, h, http.MethodPost, "/v1/chat/completions", chatRequest(true, tools, c.msgs...))
		items := doneItems(events(t, w.Body.Bytes(), nil))
		var got string
		switch it := items[len(items)-1].(type) {
		case *protocol.FunctionCall:
			got = "call " + it.Name
		case *protocol.Message:
			got = "text " + it.Content[0].Text
		}
		if got != c.want {
			t.Errorf("after %d messages: %s, want %s", len(c.msgs), got, c.want)
		}
	}
}
