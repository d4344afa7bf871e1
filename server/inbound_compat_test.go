package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/scripted"
	"github.com/harnessflow/harnessflow/server"
)

// TestChatInboundToMessages runs a tool loop from the official openai Go
// SDK through /v1/chat/completions to the scripted model speaking the
// Messages wire, on no harness route: the chat request reaches the
// upstream as a plain Messages body (its system prompt, tools and tool
// round as Messages blocks), and the Messages stream comes back as chat
// chunks the SDK accumulates, then as one chat.completion.
func TestChatInboundToMessages(t *testing.T) {
	rec := &recorder{h: scripted.New(nil)}
	up := newUpstream(t, rec)
	p := newProxy(t, up, server.Config{Wire: harness.WireMessages})
	client := openai.NewClient(option.WithBaseURL(p.ts.URL+"/v1"), option.WithAPIKey("sk-test"), option.WithHTTPClient(p.client), option.WithMaxRetries(0))
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{
		Model:    "test-model",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("Run a command.")},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
			Name: "bash", Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}}},
		})},
		ToolChoice:    openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")},
		MaxTokens:     openai.Int(777),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	acc, call := streamBashCall(ctx, t, client, params)
	path, body, hdr := rec.last(t)
	var first struct {
		Model     string `json:"model"`
		MaxTokens int    `json:"max_tokens"`
		Stream    bool   `json:"stream"`
		System    []struct {
			Text string `json:"text"`
		} `json:"system"`
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
		ToolChoice map[string]any `json:"tool_choice"`
	}
	if err := json.Unmarshal([]byte(body), &first); err != nil {
		t.Fatal(err)
	}
	if path != "/v1/messages" || first.Model != "test-model" || first.MaxTokens != 777 || !first.Stream ||
		len(first.System) != 1 || first.System[0].Text != "Be brief." || len(first.Messages) != 1 || first.Messages[0].Role != "user" ||
		len(first.Tools) != 1 || first.Tools[0].Name != "bash" || !strings.Contains(string(first.Tools[0].InputSchema), "command") ||
		first.ToolChoice["type"] != "any" || hdr.Get("x-api-key") != "sk-test" || hdr.Get("anthropic-version") == "" {
		t.Fatalf("POST %s %s (x-api-key %q)", path, body, hdr.Get("x-api-key"))
	}

	params.Messages = append(params.Messages, acc.Choices[0].Message.ToParam(), openai.ToolMessage("hello from harnessflow", call.ID))
	params.StreamOptions, params.ToolChoice = openai.ChatCompletionStreamOptionsParam{}, openai.ChatCompletionToolChoiceOptionUnionParam{}
	final, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if final.Object != "chat.completion" || final.Choices[0].FinishReason != "stop" || !strings.Contains(final.Choices[0].Message.Content, "hello from harnessflow") {
		t.Fatalf("final %+v", final)
	}
	_, body, _ = rec.last(t)
	var second struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string `json:"type"`
				ID        string `json:"id"`
				ToolUseID string `json:"tool_use_id"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(body), &second); err != nil {
		t.Fatal(err)
	}
	var use, result string
	for _, m := range second.Messages {
		for _, b := range m.Content {
			switch {
			case m.Role == "assistant" && b.Type == "tool_use":
				use = b.ID
			case m.Role == "user" && b.Type == "tool_result":
				result = b.ToolUseID
			}
		}
	}
	if use != call.ID || result != call.ID {
		t.Fatalf("the tool round is not tool_use %s + tool_result: %s", call.ID, body)
	}
	if !strings.Contains(p.logs.String(), "route=MessagesCompat") {
		t.Errorf("log: %s", p.logs.String())
	}
}

// TestResponsesToMessagesStillRefused: the plain Messages conversion is
// the inbound clients' only; a Responses client on no harness route to a
// Messages upstream still gets the routing error.
func TestResponsesToMessagesStillRefused(t *testing.T) {
	up := newUpstream(t, scripted.New(nil))
	p := newProxy(t, up, server.Config{Wire: harness.WireMessages})
	resp := p.post(t, "/v1/responses", `{"model":"m","input":"hi","stream":true}`, nil)
	msg, _ := errorBody(t, resp)
	if resp.StatusCode != 400 || !strings.Contains(msg, "requires a harness-native transport") {
		t.Fatalf("HTTP %d: %s", resp.StatusCode, msg)
	}
}

// TestInboundFollowups: a harness's follow-up (mini-swe-agent's, for an
// answer with no tool call) is served to a Messages or Chat Completions
// client as the proxy's own round, in the default (client) follow-up mode
// too — such a client cannot record the follow-up user message and sample
// again. The upstream is asked again with the follow-up appended; the
// client's stream holds the final round only: the tool call.
func TestInboundFollowups(t *testing.T) {
	const task = "PLEASE-LIST-FILES"
	shell := `"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]`
	for _, c := range []struct {
		name, path, body, done string
	}{
		{"chat", "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"` + task + `"}],` +
			`"tools":[{"type":"function","function":{"name":"exec_command","parameters":{` + shell + `}}}]}`, "[DONE]"},
		{"messages", "/v1/messages", `{"model":"m","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"` + task + `"}],` +
			`"tools":[{"name":"exec_command","input_schema":{` + shell + `}}]}`, "message_stop"},
	} {
		for _, mode := range []string{"", server.FollowupsProxy} {
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				rec := &recorder{h: scripted.New(&scripted.Script{Turns: []scripted.Turn{
					{When: &scripted.Match{UserContains: task}, Text: "WITHHELD: I would rather talk."},
					{Text: "Listing.", ToolCalls: []scripted.ToolCall{{Name: "exec_command", Command: "ls"}}},
				}})}
				p := newProxy(t, newUpstream(t, rec), server.Config{Followups: mode})
				resp := p.post(t, "/h/"+harness.NameMiniSWEAgent+c.path, c.body, nil)
				data, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				out := string(data)
				if resp.StatusCode != 200 || !strings.Contains(out, "exec_command") || !strings.Contains(out, c.done) {
					t.Fatalf("HTTP %d:\n%s", resp.StatusCode, out)
				}
				if strings.Contains(out, "WITHHELD") {
					t.Errorf("the first round leaked:\n%s", out)
				}
				bodies, _, _ := rec.all()
				if len(bodies) != 2 {
					t.Fatalf("upstream asked %d times, want 2", len(bodies))
				}
				one, two := chatMessages(t, bodies[0]), chatMessages(t, bodies[1])
				if len(two) <= len(one) || two[len(two)-1].Role != "user" || strings.Contains(two[len(two)-1].Text, task) {
					t.Errorf("second upstream request %v, want the first's messages and the follow-up", two)
				}
			})
		}
	}
}

// TestInboundNoPostStreams: a chat client's turn on no harness route has
// no post node: its answer streams as the upstream sends it (the first
// chunk before the upstream finished), never buffered as a round.
func TestInboundNoPostStreams(t *testing.T) {
	release := make(chan struct{})
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"early"}}]}`+"\n\n")
		w.(http.Flusher).Flush()
		<-release
		_, _ = io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	p := newProxy(t, up, server.Config{})
	resp := p.post(t, "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, nil)
	defer resp.Body.Close()
	got := make(chan string, 1)
	go func() {
		buf := make([]byte, 4096)
		var seen strings.Builder
		for !strings.Contains(seen.String(), "early") {
			n, err := resp.Body.Read(buf)
			seen.Write(buf[:n])
			if err != nil {
				break
			}
		}
		got <- seen.String()
	}()
	select {
	case s := <-got:
		if !strings.Contains(s, "early") {
			t.Errorf("stream %q", s)
		}
	case <-time.After(10 * time.Second):
		t.Error("the first chunk did not arrive before the upstream finished")
		close(release)
		<-got
		return
	}
	close(release)
	_, _ = io.Copy(io.Discard, resp.Body)
}

// TestInboundHarnessBridge: on a harness route (pi), a Messages client offering
// Claude Code's tools gets pi's bash call, bridged, as a tool_use of its
// own Bash; a client with no shell tool gets HTTP 400 in the Messages
// shape naming the shell tools looked for.
func TestInboundHarnessBridge(t *testing.T) {
	up := newUpstream(t, scripted.New(&scripted.Script{Turns: []scripted.Turn{
		{Text: "Listing.", ToolCalls: []scripted.ToolCall{{Name: "bash", Command: "ls"}}},
	}}))
	p := newProxy(t, up, server.Config{})
	bash := `{"name":"Bash","input_schema":{"type":"object","properties":{"command":{"type":"string"},` +
		`"timeout":{"type":"number","description":"timeout in milliseconds"}},"required":["command"]}}`
	read := `{"name":"Read","input_schema":{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}}`
	body := func(tools string) string {
		return `{"model":"m","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"list the files"}],"tools":[` + tools + `]}`
	}
	resp := p.post(t, "/h/"+harness.NamePi+"/v1/messages", body(read+","+bash), nil)
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	out := string(data)
	if resp.StatusCode != 200 || !strings.Contains(out, `"type":"tool_use"`) || !strings.Contains(out, `"name":"Bash"`) ||
		!strings.Contains(out, `ls`) || !strings.Contains(out, `"stop_reason":"tool_use"`) {
		t.Fatalf("HTTP %d:\n%s", resp.StatusCode, out)
	}
	resp = p.post(t, "/h/"+harness.NamePi+"/v1/messages", body(read), nil)
	data, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(data), `"type":"error"`) || !strings.Contains(string(data), "Bash") ||
		!strings.Contains(string(data), "no shell tool") {
		t.Fatalf("HTTP %d: %s", resp.StatusCode, data)
	}
}
