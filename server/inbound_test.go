package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/harnessflow/harnessflow/scripted"
	"github.com/harnessflow/harnessflow/server"
)

func bashTool() anthropic.ToolUnionParam {
	return anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
		Name:        "Bash",
		Description: anthropic.String("Run a shell command."),
		InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"command": map[string]any{"type": "string"}}, Required: []string{"command"}},
	}}
}

// TestMessagesInboundSDK runs a tool loop from the official Anthropic Go
// SDK through /v1/messages to the scripted chat model, streaming (the
// SDK's accumulator reads every event) and not, and checks count_tokens.
func TestMessagesInboundSDK(t *testing.T) {
	up := newUpstream(t, scripted.New(nil))
	p := newProxy(t, up, server.Config{})
	client := anthropic.NewClient(aoption.WithBaseURL(p.ts.URL), aoption.WithAPIKey("sk-test"), aoption.WithHTTPClient(p.client), aoption.WithMaxRetries(0))
	ctx := context.Background()
	params := anthropic.MessageNewParams{
		Model: "claude-sonnet-4-5", MaxTokens: 1024,
		System:   []anthropic.TextBlockParam{{Text: "You are terse."}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Run a command please."))},
		Tools:    []anthropic.ToolUnionParam{bashTool()},
		Thinking: anthropic.ThinkingConfigParamUnion{OfEnabled: &anthropic.ThinkingConfigEnabledParam{BudgetTokens: 2048}},
	}
	stream := client.Messages.NewStreaming(ctx, params)
	var msg anthropic.Message
	var kinds []string
	for stream.Next() {
		ev := stream.Current()
		kinds = append(kinds, ev.Type)
		if err := msg.Accumulate(ev); err != nil {
			t.Fatalf("the SDK refused event %s: %v", ev.Type, err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if kinds[0] != "message_start" || kinds[len(kinds)-1] != "message_stop" {
		t.Fatalf("events %v", kinds)
	}
	if msg.StopReason != anthropic.StopReasonToolUse {
		t.Fatalf("stop_reason %q", msg.StopReason)
	}
	var use *anthropic.ToolUseBlock
	sawThinking := false
	for _, b := range msg.Content {
		switch v := b.AsAny().(type) {
		case anthropic.ToolUseBlock:
			use = &v
		case anthropic.ThinkingBlock:
			sawThinking = v.Thinking != ""
		}
	}
	if use == nil || use.Name != "Bash" || !strings.Contains(string(use.Input), scripted.DefaultCommand) {
		t.Fatalf("no Bash call in %+v", msg.Content)
	}
	if !sawThinking {
		t.Fatalf("the scripted reasoning did not arrive as thinking: %+v", msg.Content)
	}
	// The follow-up with the tool's result, not streamed.
	params.Messages = append(params.Messages, msg.ToParam(),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock(use.ID, "hello from harnessflow", false)))
	final, err := client.Messages.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if final.StopReason != anthropic.StopReasonEndTurn || len(final.Content) == 0 ||
		!strings.Contains(final.Content[len(final.Content)-1].Text, "hello from harnessflow") {
		t.Fatalf("final message %+v", final)
	}
	count, err := client.Messages.CountTokens(ctx, anthropic.MessageCountTokensParams{
		Model: "claude-sonnet-4-5", Messages: params.Messages,
	})
	if err != nil || count.InputTokens <= 0 {
		t.Fatalf("count_tokens %+v, %v", count, err)
	}
}

// TestMessagesInboundErrors: a bad body, a refused key (sent as x-api-key,
// as Claude Code does) and an upstream's 429 come in the Messages API's
// error shape, the 429 with its retry-after.
func TestMessagesInboundErrors(t *testing.T) {
	up := newUpstream(t, scripted.New(&scripted.Script{Turns: []scripted.Turn{{Status: 429, Error: "slow down"}}}))
	key := strings.Repeat("k", server.MinClientKeyBytes)
	p := newProxy(t, up, server.Config{ClientKeys: []string{key}})
	for _, c := range []struct {
		name, body string
		header     map[string]string
		status     int
		typ, msg   string
	}{
		{"bad body", `{"model":"m","messages":[{"role":"user","content":7}]}`, map[string]string{"x-api-key": key}, 400, "invalid_request_error", "messages[0].content"},
		{"wrong key", `{"model":"m","messages":[]}`, map[string]string{"x-api-key": "nope"}, 401, "authentication_error", "not one this proxy accepts"},
		{"rate limited", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, map[string]string{"x-api-key": key}, 429, "rate_limit_error", "slow down"},
		{"rate limited, streaming", `{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, map[string]string{"x-api-key": key}, 429, "rate_limit_error", "slow down"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := p.post(t, "/v1/messages?beta=true", c.body, c.header)
			data, _ := io.ReadAll(resp.Body)
			var body struct {
				Type  string `json:"type"`
				Error struct {
					Type    string `json:"type"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(data, &body); err != nil {
				t.Fatalf("%s: %v", data, err)
			}
			if resp.StatusCode != c.status || body.Type != "error" || body.Error.Type != c.typ || !strings.Contains(body.Error.Message, c.msg) {
				t.Fatalf("HTTP %d %s", resp.StatusCode, data)
			}
		})
	}
	// The SDK reads the same answer as an *anthropic.Error.
	client := anthropic.NewClient(aoption.WithBaseURL(p.ts.URL), aoption.WithAPIKey(key), aoption.WithHTTPClient(p.client), aoption.WithMaxRetries(0))
	_, err := client.Messages.New(context.Background(), anthropic.MessageNewParams{Model: "m", MaxTokens: 5,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("SDK error %v", err)
	}
}

// TestChatInboundSDK runs a tool loop from the official OpenAI Go SDK
// through /v1/chat/completions to the scripted chat model: streamed with
// include_usage (the SDK's accumulator reads every chunk), then not.
func TestChatInboundSDK(t *testing.T) {
	up := newUpstream(t, scripted.New(nil))
	p := newProxy(t, up, server.Config{})
	client := openai.NewClient(option.WithBaseURL(p.ts.URL+"/v1"), option.WithAPIKey("sk-test"), option.WithHTTPClient(p.client), option.WithMaxRetries(0))
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{
		Model:    "test-model",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("Run a command.")},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
			Name: "bash", Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}}},
		})},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	acc, call := streamBashCall(ctx, t, client, params)
	params.Messages = append(params.Messages, acc.Choices[0].Message.ToParam(), openai.ToolMessage("hello from harnessflow", call.ID))
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{}
	final, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if final.Object != "chat.completion" || final.Choices[0].FinishReason != "stop" || !strings.Contains(final.Choices[0].Message.Content, "hello from harnessflow") {
		t.Fatalf("final %+v", final)
	}
}

// TestChatInboundBadBody: OpenAI's 400 shape with the JSON path as param.
func TestChatInboundBadBody(t *testing.T) {
	up := newUpstream(t, scripted.New(nil))
	p := newProxy(t, up, server.Config{})
	resp := p.post(t, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":[{"type":"video"}]}]}`, nil)
	data, _ := io.ReadAll(resp.Body)
	var body struct {
		Error struct {
			Message, Type, Param string
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &body); err != nil || resp.StatusCode != 400 || body.Error.Param != "messages[0].content[0].type" || body.Error.Type != "invalid_request_error" {
		t.Fatalf("HTTP %d %s", resp.StatusCode, data)
	}
}

// TestMessagesPassThrough: a Messages client in front of a Messages
// upstream, on no harness route, is passed through — the upstream gets the
// client's body as it was sent (cache marks, context_management, beta
// header), and the client gets the upstream's stream with its thinking
// signature, read by the SDK.
func TestMessagesPassThrough(t *testing.T) {
	var mu sync.Mutex
	var bodies [][]byte
	var betas []string
	model := scripted.New(nil)
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies, betas = append(bodies, b), append(betas, r.Header.Get("anthropic-beta"))
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		model.ServeHTTP(w, r)
	}))
	p := newProxy(t, up, server.Config{Wire: "messages", Model: "open-model"})
	client := anthropic.NewClient(aoption.WithBaseURL(p.ts.URL), aoption.WithAPIKey("sk-test"), aoption.WithHTTPClient(p.client), aoption.WithMaxRetries(0),
		aoption.WithHeader("anthropic-beta", "context-management-2025-06-27"))
	params := anthropic.MessageNewParams{
		Model: "claude-sonnet-4-5", MaxTokens: 1024,
		System:   []anthropic.TextBlockParam{{Text: "Be terse.", CacheControl: anthropic.NewCacheControlEphemeralParam()}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Run a command please."))},
		Tools:    []anthropic.ToolUnionParam{bashTool()},
		Thinking: anthropic.ThinkingConfigParamUnion{OfEnabled: &anthropic.ThinkingConfigEnabledParam{BudgetTokens: 2048}},
	}
	stream := client.Messages.NewStreaming(context.Background(), params)
	var msg anthropic.Message
	for stream.Next() {
		if err := msg.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	sig := ""
	for _, b := range msg.Content {
		if v, ok := b.AsAny().(anthropic.ThinkingBlock); ok {
			sig = v.Signature
		}
	}
	if !strings.HasPrefix(sig, "scripted-signature-") || msg.StopReason != anthropic.StopReasonToolUse {
		t.Fatalf("signature %q, stop %q: %+v", sig, msg.StopReason, msg.Content)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 1 || betas[0] != "context-management-2025-06-27" {
		t.Fatalf("%d upstream requests, beta %q", len(bodies), betas)
	}
	var sent struct {
		System []struct {
			CacheControl map[string]any `json:"cache_control"`
		} `json:"system"`
		Thinking map[string]any `json:"thinking"`
		Model    string         `json:"model"`
	}
	if err := json.Unmarshal(bodies[0], &sent); err != nil || len(sent.System) != 1 || sent.System[0].CacheControl["type"] != "ephemeral" || sent.Thinking["type"] != "enabled" || sent.Model != "open-model" {
		t.Fatalf("the upstream got %s", bodies[0])
	}
	if !strings.Contains(p.logs.String(), "route=MessagesPassThrough") {
		t.Fatalf("log: %s", p.logs.String())
	}
	resp, err := p.client.Get(p.ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	metricsText, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(metricsText), `harnessflow_streams_ended_total{outcome="completed"} 1`) {
		t.Errorf("the pass-through stream is not counted:\n%s", metricsText)
	}
}

// TestMessagesInboundOverloaded: a Messages request over --max-streams
// gets the API's 529 overloaded_error with Retry-After, a chat request
// OpenAI's 503.
func TestMessagesInboundOverloaded(t *testing.T) {
	up := newHeldUpstream()
	upSrv := newUpstream(t, up)
	s := startServing(t, server.Config{Upstream: upSrv.URL + "/v1", MaxStreams: 1, QueueTimeout: -1})
	bodies := openStreams(t, s, up, 1)
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	for _, c := range []struct {
		path, body, want string
		status           int
	}{
		{"/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, `"type":"overloaded_error"`, 529},
		{"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, `"code":"server_overloaded"`, 503},
	} {
		resp, err := client.Post("http://"+s.addr+c.path, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || resp.Header.Get("Retry-After") != "1" || !strings.Contains(string(b), c.want) {
			t.Errorf("%s: HTTP %d, Retry-After %q, %s", c.path, resp.StatusCode, resp.Header.Get("Retry-After"), b)
		}
	}
	close(up.release)
	if name, _ := terminalOf(<-bodies); name != "response.completed" {
		t.Errorf("admitted stream ended with %q", name)
	}
}

// TestInboundStreamCutOff: an upstream that stops mid-answer ends a
// Messages stream with an error event (no message_stop) and a chat stream
// with an error payload (no [DONE]), after the text that came.
func TestInboundStreamCutOff(t *testing.T) {
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"partial"}}]}`+"\n\n")
	}))
	p := newProxy(t, up, server.Config{})
	for _, c := range []struct{ path, body, last, notWant string }{
		{"/v1/messages", `{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":", "message_stop"},
		{"/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, "data: {\"error\":{\"message\":", "data: [DONE]"},
	} {
		resp := p.post(t, c.path, c.body, nil)
		b, _ := io.ReadAll(resp.Body)
		s := string(b)
		events := strings.Split(strings.TrimSpace(s), "\n\n")
		if !strings.Contains(s, "partial") || !strings.HasPrefix(events[len(events)-1], c.last) || strings.Contains(s, c.notWant) {
			t.Errorf("%s: stream\n%s", c.path, s)
		}
	}
}

// TestMessagesModels: the Anthropic SDK lists the models (Anthropic's
// shape, the key sent as x-api-key).
func TestMessagesModels(t *testing.T) {
	up := newUpstream(t, scripted.New(nil))
	key := strings.Repeat("k", server.MinClientKeyBytes)
	p := newProxy(t, up, server.Config{ClientKeys: []string{key}, Model: "qwen3-coder"})
	client := anthropic.NewClient(aoption.WithBaseURL(p.ts.URL), aoption.WithAPIKey(key), aoption.WithHTTPClient(p.client), aoption.WithMaxRetries(0))
	page, err := client.Models.List(context.Background(), anthropic.ModelListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) == 0 || page.Data[0].ID == "" || page.Data[0].Type != "model" {
		t.Fatalf("models %+v", page.Data)
	}
	// An OpenAI client still gets OpenAI's shape.
	resp, err := p.client.Do(mustRequest(t, http.MethodGet, p.ts.URL+"/v1/models", "Bearer "+key))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `"object":"list"`) {
		t.Fatalf("OpenAI shape: %s", b)
	}
}

func mustRequest(t *testing.T, method, url, auth string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", auth)
	return req
}

// TestRoutedByRequestKind: with entries under when = "thinking" and
// "long_context", a Messages client's thinking request and a long request
// go to their entries' models, the others to the plain entry; a Codex
// request with a reasoning effort counts as thinking.
func TestRoutedByRequestKind(t *testing.T) {
	up := newUpstream(t, scripted.New(&scripted.Script{Turns: []scripted.Turn{{Text: "model {{model}}"}}}))
	p := newRouted(t, `
[upstreams.local]
base_url = "{{local}}/v1"

[[models]]
name = "claude-*"
upstreams = ["local"]
upstream_model = "small"

[[models]]
name = "claude-*"
when = "thinking"
upstreams = ["local"]
upstream_model = "reasoner"

[[models]]
name = "claude-*"
when = "long_context"
long_context_tokens = 2000
upstreams = ["local"]
upstream_model = "long"
`, map[string]string{"local": up.URL})
	long := strings.Repeat("many words ", 1000)
	for _, c := range []struct{ name, path, body, want string }{
		{"plain", "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":50,"messages":[{"role":"user","content":"hi"}]}`, "small"},
		{"thinking", "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":50,"thinking":{"type":"adaptive"},"messages":[{"role":"user","content":"hi"}]}`, "reasoner"},
		{"long", "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":50,"messages":[{"role":"user","content":"` + long + `"}]}`, "long"},
		{"chat reasoning_effort", "/v1/chat/completions", `{"model":"claude-x","reasoning_effort":"high","messages":[{"role":"user","content":"hi"}]}`, "reasoner"},
		{"chat plain", "/v1/chat/completions", `{"model":"claude-x","messages":[{"role":"user","content":"hi"}]}`, "small"},
		{"responses with an effort", "/v1/responses", `{"model":"claude-x","reasoning":{"effort":"medium"},"input":"hi"}`, "reasoner"},
	} {
		resp := p.post(t, c.path, c.body, nil)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || !strings.Contains(string(b), "model "+c.want) {
			t.Errorf("%s: HTTP %d %s, want the model %s", c.name, resp.StatusCode, b, c.want)
		}
	}
}

// streamBashCall streams params through the openai SDK's accumulator and
// returns what it accumulated and the one bash call it must hold (with
// the scripted model's command, an id and usage).
func streamBashCall(ctx context.Context, t *testing.T, client openai.Client, params openai.ChatCompletionNewParams) (openai.ChatCompletionAccumulator, openai.ChatCompletionMessageToolCallUnion) {
	t.Helper()
	stream := client.Chat.Completions.NewStreaming(ctx, params)
	var acc openai.ChatCompletionAccumulator
	chunks := 0
	for stream.Next() {
		chunks++
		if !acc.AddChunk(stream.Current()) {
			t.Fatalf("the SDK refused chunk %d: %s", chunks, stream.Current().RawJSON())
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(acc.Choices) != 1 || acc.Choices[0].FinishReason != "tool_calls" || len(acc.Choices[0].Message.ToolCalls) != 1 {
		t.Fatalf("accumulated %+v", acc.ChatCompletion)
	}
	call := acc.Choices[0].Message.ToolCalls[0]
	if call.Function.Name != "bash" || !strings.Contains(call.Function.Arguments, scripted.DefaultCommand) || call.ID == "" {
		t.Fatalf("call %+v", call)
	}
	if acc.Usage.TotalTokens == 0 {
		t.Fatalf("no usage: %+v", acc.Usage)
	}
	return acc, call
}
