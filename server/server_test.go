package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"go.uber.org/goleak"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/scripted"
	"github.com/harnessflow/harnessflow/server"
)

// codexTools are the tools of a Codex-like request: the exec_command
// function and the freeform apply_patch.
const codexTools = `[{"type":"function","name":"exec_command","description":"Runs a command in a PTY.","strict":false,` +
	`"parameters":{"type":"object","properties":{"cmd":{"type":"string"},"workdir":{"type":"string"}},"required":["cmd"]}},` +
	`{"type":"custom","name":"apply_patch","description":"Edit files.","format":{"type":"grammar","syntax":"lark","definition":"start: /.+/"}}]`

func codexRequest(input string, tools bool) string {
	t := ""
	if tools {
		t = `"tools":` + codexTools + `,`
	}
	return `{"model":"gpt-5.5","input":[` + input + `],` + t + `"tool_choice":"auto","parallel_tool_calls":true,` +
		`"reasoning":{"effort":"medium"},"store":false,"stream":true,"include":["reasoning.encrypted_content"],"prompt_cache_key":"k"}`
}

const (
	devMsg  = `{"type":"message","role":"developer","content":[{"type":"input_text","text":"You are a coding agent."}]}`
	userMsg = `{"type":"message","role":"user","content":[{"type":"input_text","text":"Say hello with the shell."}]}`
)

func toolRound(callID string) string {
	return `,{"type":"function_call","id":"fc_1","call_id":"` + callID + `","name":"exec_command","arguments":"{\"cmd\":\"echo hello from harnessflow\"}","status":"completed"}` +
		`,{"type":"function_call_output","call_id":"` + callID + `","output":"Chunk ID: 1\nWall time: 0.01 seconds\nProcess exited with code 0\nOutput:\nhello from harnessflow\n"}`
}

// A full agent turn through the native route with the scripted model: a
// tool call, then (with its result) the final answer; in both modes.
func TestNativeTurnScripted(t *testing.T) {
	for _, mode := range []pipeline.Mode{pipeline.Fused, pipeline.Async} {
		t.Run(mode.String(), func(t *testing.T) {
			rec := &recorder{h: scripted.New(nil)}
			up := newUpstream(t, rec)
			p := newProxy(t, up, server.Config{Mode: mode})

			// Turn 1: tools, no result yet → reasoning, a sentence, exec_command.
			resp := p.post(t, "/v1/responses", codexRequest(devMsg+","+userMsg, true), nil)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" ||
				resp.Header.Get("Cache-Control") != "no-cache" || resp.Header.Get("X-Accel-Buffering") != "no" {
				t.Fatalf("status %d, headers %v", resp.StatusCode, resp.Header)
			}
			evs := readSSE(t, resp.Body)
			last := terminal(t, evs)
			if last.Name != "response.completed" {
				t.Fatalf("turn 1 ended with %s: %s", last.Name, last.Raw)
			}
			if evs[0].Name != "response.created" || evs[0].Data["response"].(map[string]any)["model"] != "gpt-5.5" {
				t.Errorf("first event %s", evs[0].Raw)
			}
			items := doneItems(evs)
			var kinds []string
			var call map[string]any
			for _, it := range items {
				kinds = append(kinds, it["type"].(string))
				if it["type"] == "function_call" {
					call = it
				}
			}
			if diff := cmp.Diff([]string{"reasoning", "message", "function_call"}, kinds); diff != "" {
				t.Fatalf("turn 1 items (-want +got):\n%s", diff)
			}
			if call["name"] != "exec_command" || call["arguments"] != `{"cmd":"echo hello from harnessflow"}` || call["call_id"] == "" {
				t.Errorf("call %v", call)
			}
			if count(evs, "response.output_text.delta") < 2 || count(evs, "response.reasoning_text.delta") < 2 {
				t.Errorf("text was not streamed in pieces: %v", names(evs))
			}
			out := last.Data["response"].(map[string]any)["output"].([]any)
			if len(out) != 3 || out[2].(map[string]any)["id"] != call["id"] {
				t.Errorf("completed output %v", out)
			}
			usage := last.Data["response"].(map[string]any)["usage"].(map[string]any)
			if usage["input_tokens"].(float64) <= 0 || usage["total_tokens"].(float64) <= 0 {
				t.Errorf("usage %v", usage)
			}
			// The upstream got a streaming chat request asking for usage.
			path, body, _ := rec.last(t)
			var chatBody struct {
				Stream        bool            `json:"stream"`
				StreamOptions json.RawMessage `json:"stream_options"`
				Tools         []any           `json:"tools"`
			}
			if err := json.Unmarshal([]byte(body), &chatBody); err != nil {
				t.Fatal(err)
			}
			if path != "/v1/chat/completions" || !chatBody.Stream || string(chatBody.StreamOptions) != `{"include_usage":true}` || len(chatBody.Tools) != 2 {
				t.Errorf("upstream request %s %s", path, body)
			}

			// Turn 2: the tool result is in → the final answer quotes it.
			resp = p.post(t, "/v1/responses", codexRequest(devMsg+","+userMsg+toolRound(call["call_id"].(string)), true), nil)
			evs = readSSE(t, resp.Body)
			if last := terminal(t, evs); last.Name != "response.completed" {
				t.Fatalf("turn 2 ended with %s", last.Raw)
			}
			items = doneItems(evs)
			if len(items) != 1 || items[0]["type"] != "message" {
				t.Fatalf("turn 2 items %v", items)
			}
			text := items[0]["content"].([]any)[0].(map[string]any)["text"].(string)
			if !strings.Contains(text, "hello from harnessflow") {
				t.Errorf("final text %q does not quote the tool output", text)
			}
			var streamed strings.Builder
			for _, e := range evs {
				if e.Name == "response.output_text.delta" {
					streamed.WriteString(e.Data["delta"].(string))
				}
			}
			if streamed.String() != text {
				t.Errorf("deltas %q, done text %q", streamed.String(), text)
			}

			// No tools → the greeting.
			resp = p.post(t, "/v1/responses", codexRequest(userMsg, false), nil)
			evs = readSSE(t, resp.Body)
			items = doneItems(evs)
			if terminal(t, evs).Name != "response.completed" || len(items) != 1 ||
				!strings.Contains(items[0]["content"].([]any)[0].(map[string]any)["text"].(string), "scripted model") {
				t.Errorf("greeting turn: %v", names(evs))
			}

			// The request log names everything but content and secrets.
			logs := p.logs.String()
			for _, want := range []string{"method=POST", "path=/v1/responses", "wire=chat", "route=ChatCompletionsCompat", "status=200", "upstream_status=200", "outcome=completed", "events="} {
				if !strings.Contains(logs, want) {
					t.Errorf("logs lack %q:\n%s", want, logs)
				}
			}
			if strings.Contains(logs, "hello from harnessflow") || strings.Contains(logs, "Say hello") {
				t.Errorf("logs hold content:\n%s", logs)
			}
		})
	}
}

// The official openai-go v3 Responses streaming client, pointed at the
// proxy, parses the stream: an oracle of our SSE.
func TestOpenAIGoClient(t *testing.T) {
	up := newUpstream(t, scripted.New(nil))
	p := newProxy(t, up, server.Config{})
	client := openai.NewClient(option.WithBaseURL(p.ts.URL+"/v1/"), option.WithAPIKey("sk-test"),
		option.WithHTTPClient(p.client), option.WithMaxRetries(0))
	tool := responses.ToolParamOfFunction("exec_command", map[string]any{
		"type": "object", "properties": map[string]any{"cmd": map[string]any{"type": "string"}}, "required": []string{"cmd"},
	}, false)
	ctx := context.Background()

	run := func(params responses.ResponseNewParams) (types []string, final responses.Response) {
		t.Helper()
		stream := client.Responses.NewStreaming(ctx, params)
		defer stream.Close()
		var deltas strings.Builder
		for stream.Next() {
			ev := stream.Current()
			types = append(types, ev.Type)
			switch ev.Type {
			case "response.output_text.delta":
				deltas.WriteString(ev.AsResponseOutputTextDelta().Delta)
			case "response.completed":
				final = ev.AsResponseCompleted().Response
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatalf("openai-go stream: %v\nlogs: %s", err, p.logs.String())
		}
		if got := final.OutputText(); got != deltas.String() {
			t.Errorf("OutputText %q, deltas %q", got, deltas.String())
		}
		return types, final
	}

	params := responses.ResponseNewParams{
		Model: "gpt-5.5",
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage("Say hello with the shell.", responses.EasyInputMessageRoleUser),
		}},
		Tools: []responses.ToolUnionParam{tool},
	}
	types, final := run(params)
	if final.ID == "" || final.Status != "completed" || types[0] != "response.created" || types[len(types)-1] != "response.completed" {
		t.Fatalf("response %q %q, events %v", final.ID, final.Status, types)
	}
	var call responses.ResponseFunctionToolCall
	for _, item := range final.Output {
		if item.Type == "function_call" {
			call = item.AsFunctionCall()
		}
	}
	if call.Name != "exec_command" || call.Arguments != `{"cmd":"echo hello from harnessflow"}` || call.CallID == "" || call.ID == "" {
		t.Fatalf("function call %+v", call)
	}
	if final.Usage.TotalTokens == 0 {
		t.Errorf("usage %+v", final.Usage)
	}

	output := responses.ResponseInputItemParamOfFunctionCallOutput("Output:\nhello from harnessflow\n")
	output.OfFunctionCallOutput.CallID = openai.String(call.CallID)
	params.Input.OfInputItemList = append(params.Input.OfInputItemList,
		responses.ResponseInputItemParamOfFunctionCall(call.Arguments, call.CallID, call.Name), output)
	_, final = run(params)
	if text := final.OutputText(); !strings.Contains(text, "hello from harnessflow") {
		t.Errorf("final text %q", text)
	}
}

// An upstream that dies mid-stream (connection dropped, or a clean end
// without [DONE]) gives response.failed and never response.completed.
func TestUpstreamDiesMidStream(t *testing.T) {
	for _, abort := range []bool{true, false} {
		t.Run(fmt.Sprintf("abort=%v", abort), func(t *testing.T) {
			up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}`+"\n\n")
				io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":null}]}`+"\n\n")
				io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","mod`)
				http.NewResponseController(w).Flush()
				if abort {
					panic(http.ErrAbortHandler)
				}
			}))
			p := newProxy(t, up, server.Config{})
			resp := p.post(t, "/v1/responses", codexRequest(userMsg, false), nil)
			evs := readSSE(t, resp.Body)
			last := terminal(t, evs)
			if last.Name != "response.failed" || count(evs, "response.completed") != 0 {
				t.Fatalf("events %v", names(evs))
			}
			if count(evs, "response.output_text.delta") != 2 {
				t.Errorf("the streamed text was not passed on: %v", names(evs))
			}
			e := last.Data["response"].(map[string]any)["error"].(map[string]any)
			if e["code"] == "" || e["message"] == "" {
				t.Errorf("error %v", e)
			}
			if !strings.Contains(p.logs.String(), "outcome=failed") {
				t.Errorf("logs: %s", p.logs.String())
			}
		})
	}
}

// An in-band upstream error event becomes response.failed with its code.
func TestUpstreamErrorEvent(t *testing.T) {
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"error":{"message":"Rate limit reached, please try again in 250ms","type":"requests","code":"rate_limit_exceeded"}}`+"\n\n")
	}))
	p := newProxy(t, up, server.Config{})
	evs := readSSE(t, p.post(t, "/v1/responses", codexRequest(userMsg, false), nil).Body)
	last := terminal(t, evs)
	e := last.Data["response"].(map[string]any)["error"].(map[string]any)
	if last.Name != "response.failed" || e["code"] != "rate_limit_exceeded" || !strings.Contains(e["message"].(string), "try again in 250ms") {
		t.Errorf("got %s", last.Raw)
	}
}

// An upstream non-2xx before streaming: the same status, an OpenAI-style
// body with the upstream's message, Retry-After passed on.
func TestUpstreamHTTPErrors(t *testing.T) {
	cases := []struct {
		status   int
		body     string
		wantMsg  string
		wantType string
	}{
		{429, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`, "Rate limit reached", "requests"},
		{500, `internal meltdown`, "upstream returned HTTP 500: internal meltdown", "server_error"},
		{400, `{"error":{"message":"bad field","type":"invalid_request_error","code":"invalid_value"}}`, "bad field", "invalid_request_error"},
		{401, `{"error":"bad key"}`, "bad key", "authentication_error"},
		{503, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "Overloaded", "overloaded_error"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.status), func(t *testing.T) {
			up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "7")
				w.WriteHeader(c.status)
				io.WriteString(w, c.body)
			}))
			p := newProxy(t, up, server.Config{})
			resp := p.post(t, "/v1/responses", codexRequest(userMsg, false), nil)
			if resp.StatusCode != c.status || resp.Header.Get("Retry-After") != "7" {
				t.Errorf("status %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
			}
			msg, typ := errorBody(t, resp)
			if msg != c.wantMsg || typ != c.wantType {
				t.Errorf("error %q (%s), want %q (%s)", msg, typ, c.wantMsg, c.wantType)
			}
			if logs := p.logs.String(); !strings.Contains(logs, fmt.Sprintf("upstream_status=%d", c.status)) || !strings.Contains(logs, "outcome=upstream_error") {
				t.Errorf("logs: %s", logs)
			}
		})
	}
}

func TestUpstreamUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	p := newProxy(t, nil, server.Config{Upstream: "http://" + addr + "/v1"})
	resp := p.post(t, "/v1/responses", codexRequest(userMsg, false), nil)
	msg, typ := errorBody(t, resp)
	if resp.StatusCode != http.StatusBadGateway || typ != "server_error" || !strings.Contains(msg, "upstream unreachable") {
		t.Errorf("%d %q %q", resp.StatusCode, typ, msg)
	}
}

// A client that goes away cancels the upstream request, and nothing leaks.
func TestClientDisconnectCancelsUpstream(t *testing.T) {
	upstreamDone := make(chan struct{})
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"thinking..."},"finish_reason":null}]}`+"\n\n")
		http.NewResponseController(w).Flush()
		select {
		case <-r.Context().Done():
			close(upstreamDone)
		case <-time.After(10 * time.Second):
		}
	}))
	p := newProxy(t, up, server.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.ts.URL+"/v1/responses", strings.NewReader(codexRequest(userMsg, false)))
	resp, err := p.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	if _, err := io.ReadFull(resp.Body, buf); err != nil { // the stream has started
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	select {
	case <-upstreamDone:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream request was not cancelled after the client left")
	}
	// The proxy's handler finishes and logs the stream as client_closed.
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(p.logs.String(), "outcome=client_closed") {
		if time.Now().After(deadline) {
			t.Fatalf("no client_closed log:\n%s", p.logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.client.CloseIdleConnections()
	p.ts.Close()
	p.srv.CloseIdleConnections()
	up.Close()
	goleak.VerifyNone(t, goleak.IgnoreCurrent())
}

// A client that disconnects before the upstream answers at all (the time
// to first byte) cancels the upstream request too.
func TestClientDisconnectBeforeFirstByte(t *testing.T) {
	upstreamDone := make(chan struct{})
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // net/http watches for a disconnect once the body is read
		select {
		case <-r.Context().Done():
			close(upstreamDone)
		case <-time.After(10 * time.Second):
		}
	}))
	p := newProxy(t, up, server.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.ts.URL+"/v1/responses", strings.NewReader(codexRequest(userMsg, false)))
	if resp, err := p.client.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("the request should have timed out")
	}
	select {
	case <-upstreamDone:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream request was not cancelled")
	}
}

// A chat upstream that ignores "stream" and answers with one JSON body is
// still translated.
func TestUnaryChatUpstream(t *testing.T) {
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(strings.Replace(string(body), `"stream":true`, `"stream":false`, 1)))
		scripted.New(nil).ServeHTTP(w, r)
	}))
	p := newProxy(t, up, server.Config{})
	evs := readSSE(t, p.post(t, "/v1/responses", codexRequest(userMsg, true), nil).Body)
	if terminal(t, evs).Name != "response.completed" || len(doneItems(evs)) != 3 {
		t.Errorf("events %v", names(evs))
	}
}

// Routing errors are HTTP 400 with the routing error's exact text, then
// harnessflow's fix (routehint_test.go checks it); the upstream is never
// called.
func TestRoutingErrors(t *testing.T) {
	rec := &recorder{h: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) })}
	up := newUpstream(t, rec)
	cases := []struct {
		wire harness.Wire
		path string
		want string
	}{
		{harness.WireMessages, "/v1/responses", (&harness.RouteError{Wire: harness.WireMessages}).Error()},
		{harness.WireMessages, "/h/minimal/v1/responses", `wire_api = "messages" is not supported by harness = "minimal"`},
	}
	for _, c := range cases {
		p := newProxy(t, up, server.Config{Wire: c.wire})
		resp := p.post(t, c.path, codexRequest(userMsg, true), nil)
		msg, typ := errorBody(t, resp)
		if resp.StatusCode != 400 || !strings.HasPrefix(msg, c.want+" — harnessflow: ") || typ != "invalid_request_error" {
			t.Errorf("%s %s: %d %q %q", c.wire, c.path, resp.StatusCode, typ, msg)
		}
	}
	if !strings.HasPrefix(cases[0].want, `wire_api = "messages" requires a harness-native transport;`) {
		t.Errorf("native messages error %q", cases[0].want)
	}
	// The /h/NAME/ namespace is ours: a name this build does not serve (a
	// typo, any other name, a name of the routing table whose package is
	// not built) is a 404 naming the nearest and the available names, on
	// every wire; a harness on a wire it does not shape is a 400 with the
	// fix, not served as native.
	refused := []struct {
		wire   harness.Wire
		path   string
		status int
		code   string
		want   string // a part of the message
	}{
		{harness.WireChat, "/h/kimi_cli/v1/responses", 404, "unknown_harness", `unknown harness "kimi_cli" (did you mean "kimi-cli"? available: `},
		{harness.WireChat, "/h/nosuch/v1/responses", 404, "unknown_harness", `unknown harness "nosuch" (available: claude-code, `},
		{harness.WireMessages, "/h/nosuch/v1/responses", 404, "unknown_harness", `unknown harness "nosuch" (available: claude-code, `},
		{harness.WireResponses, "/h/nosuch/responses", 404, "unknown_harness", `unknown harness "nosuch" (available: claude-code, `},
		{harness.WireChat, "/h/zcode/v1/responses", 400, "unsupported_route", `harness "zcode" does not shape chat requests (it shapes messages); use --upstream-wire messages`},
		{harness.WireResponses, "/h/kimi-cli/v1/responses", 400, "unsupported_route", `harness "kimi-cli" does not shape responses requests (it shapes chat); use --upstream-wire chat`},
	}
	if missingName != "" {
		refused = append(refused, struct {
			wire   harness.Wire
			path   string
			status int
			code   string
			want   string
		}{harness.WireChat, "/h/" + missingName + "/v1/responses", 404, "unknown_harness", `unknown harness "` + missingName + `" (not in this build; available: `})
	}
	for _, c := range refused {
		p := newProxy(t, up, server.Config{Wire: c.wire})
		resp := p.post(t, c.path, codexRequest(userMsg, true), nil)
		body, _ := io.ReadAll(resp.Body)
		var e struct {
			Error struct{ Message, Type, Code string }
		}
		if err := json.Unmarshal(body, &e); err != nil {
			t.Errorf("%s %s: body %q: %v", c.wire, c.path, body, err)
			continue
		}
		if resp.StatusCode != c.status || e.Error.Code != c.code || e.Error.Type != "invalid_request_error" || !strings.Contains(e.Error.Message, c.want) {
			t.Errorf("%s %s: %d %s", c.wire, c.path, resp.StatusCode, body)
		}
		if !strings.Contains(p.logs.String(), "outcome=route_error") {
			t.Errorf("%s %s: logs: %s", c.wire, c.path, p.logs.String())
		}
	}
	if n := rec.requests(); n != 0 {
		t.Errorf("the upstream was called %d times", n)
	}
}

// A harness route is served and logged with its name.
func TestHarnessRoute(t *testing.T) {
	up := newUpstream(t, scripted.New(nil))
	p := newProxy(t, up, server.Config{})
	evs := readSSE(t, p.post(t, "/h/minimal/v1/responses", codexRequest(userMsg, false), nil).Body)
	if terminal(t, evs).Name != "response.completed" {
		t.Errorf("events %v", names(evs))
	}
	if logs := p.logs.String(); !strings.Contains(logs, "harness=minimal") {
		t.Errorf("logs: %s", logs)
	}
}

// The shorthand inputs SDK clients send (a plain string, a message without
// "type", a string content) are accepted.
func TestShorthandInput(t *testing.T) {
	up := newUpstream(t, scripted.New(nil))
	p := newProxy(t, up, server.Config{})
	for _, body := range []string{
		`{"model":"m","input":"hello","stream":true}`,
		`{"model":"m","input":[{"role":"user","content":"hello"},{"role":"assistant","content":"hi"},{"role":"user","content":"again"}],"stream":true}`,
	} {
		evs := readSSE(t, p.post(t, "/v1/responses", body, nil).Body)
		if terminal(t, evs).Name != "response.completed" {
			t.Errorf("%s: %v", body, names(evs))
		}
	}
}

func TestBadRequests(t *testing.T) {
	rec := &recorder{h: scripted.New(nil)}
	up := newUpstream(t, rec)
	p := newProxy(t, up, server.Config{})
	for _, body := range []string{`{"model":`, `not json`, `{"model":"m","input":[{"type":"message","role":"user","content":"x"}],"stream":true}`[:40], `{"model":"m","input":{"bad":1},"stream":true}`} {
		resp := p.post(t, "/v1/responses", body, nil)
		msg, typ := errorBody(t, resp)
		if resp.StatusCode != 400 || typ != "invalid_request_error" || !strings.HasPrefix(msg, "invalid Responses request") {
			t.Errorf("%q: %d %q %q", body, resp.StatusCode, typ, msg)
		}
	}
	// (A request with "stream": false is answered: see unary_test.go.)
	resp := p.post(t, "/v1/nothing", "{}", nil)
	if _, typ := errorBody(t, resp); resp.StatusCode != 404 || typ != "invalid_request_error" {
		t.Errorf("unknown path: %d", resp.StatusCode)
	}
	if n := rec.requests(); n != 0 {
		t.Errorf("the upstream was called %d times", n)
	}
}

// Authorization goes upstream (from the client, or Config.APIKey) and
// never into the logs, even at debug level.
func TestAuthorization(t *testing.T) {
	const secret = "sk-very-secret-key-123"
	for _, apiKey := range []string{"", "sk-configured-key-456"} {
		rec := &recorder{h: scripted.New(nil)}
		up := newUpstream(t, rec)
		p := newProxy(t, up, server.Config{APIKey: apiKey})
		evs := readSSE(t, p.post(t, "/v1/responses", codexRequest(userMsg, true), map[string]string{"Authorization": "Bearer " + secret}).Body)
		terminal(t, evs)
		_, _, hdr := rec.last(t)
		want := "Bearer " + secret
		if apiKey != "" {
			want = "Bearer " + apiKey
		}
		if got := hdr.Get("Authorization"); got != want {
			t.Errorf("upstream Authorization %q, want %q", got, want)
		}
		logs := p.logs.String()
		if strings.Contains(logs, secret) || strings.Contains(logs, "sk-configured") || strings.Contains(strings.ToLower(logs), "authorization") {
			t.Errorf("logs hold the credentials:\n%s", logs)
		}
		if logs == "" {
			t.Error("no logs captured")
		}
	}
}

// The responses wire: the request goes upstream as it is, and the
// upstream's Responses stream comes back re-sequenced with stable ids.
func TestResponsesWire(t *testing.T) {
	stream, err := os.ReadFile("testdata/responses_tools.sse")
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{h: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(stream)
	})}
	up := newUpstream(t, rec)
	p := newProxy(t, up, server.Config{Wire: harness.WireResponses})
	reqBody := codexRequest(userMsg, true)
	evs := readSSE(t, p.post(t, "/v1/responses", reqBody, nil).Body)
	if terminal(t, evs).Name != "response.completed" {
		t.Fatalf("events %v", names(evs))
	}
	path, body, _ := rec.last(t)
	var sent, orig map[string]any
	json.Unmarshal([]byte(body), &sent)
	json.Unmarshal([]byte(reqBody), &orig)
	if path != "/v1/responses" || !cmp.Equal(orig, sent) {
		t.Errorf("upstream got %s %s", path, body)
	}
	items := doneItems(evs)
	if len(items) != 2 || items[0]["id"] != "fc_1b2c3d4e5f607182930000000000cccc" || items[1]["type"] != "custom_tool_call" {
		t.Errorf("items %v", items)
	}
	if count(evs, "response.function_call_arguments.delta") != 4 || count(evs, "response.custom_tool_call_input.delta") != 3 {
		t.Errorf("tool deltas not passed on: %v", names(evs))
	}
}

func TestMetricsAndHealth(t *testing.T) {
	up := newUpstream(t, scripted.New(nil))
	p := newProxy(t, up, server.Config{})
	terminal(t, readSSE(t, p.post(t, "/v1/responses", codexRequest(userMsg, false), nil).Body))
	get := func(path string) string {
		resp, err := p.client.Get(p.ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
		return string(b)
	}
	if got := get("/healthz"); got != "ok\n" {
		t.Errorf("healthz %q", got)
	}
	m := get("/metrics")
	for _, want := range []string{`harnessflow_streams_ended_total{outcome="completed"} 1`, `node="chat.decode"`, `harnessflow_stream_events_total{type="output_text.delta"}`} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q:\n%s", want, m)
		}
	}
}

// Extend's edits apply to every response graph, and a stage they add that
// is a pipeline.Resource is opened and closed by the run; a failing edit is
// a 500.
func TestExtend(t *testing.T) {
	up := newUpstream(t, scripted.New(nil))
	var infos []server.StreamInfo
	var opened, closed atomic.Int64
	p := newProxy(t, up, server.Config{Extend: func(info server.StreamInfo) []pipeline.Edit {
		infos = append(infos, info)
		if info.Harness == "minimal" { // stands for a harness whose extension fails
			return []pipeline.Edit{func(*pipeline.Graph) (*pipeline.Graph, error) { return nil, errors.New("no such extension") }}
		}
		return []pipeline.Edit{func(g *pipeline.Graph) (*pipeline.Graph, error) {
			return g.Append(pipeline.NewNode("test.resource", func() pipeline.Stage[protocol.ResponseEvent, protocol.ResponseEvent] {
				return &resourceStage{opened: &opened, closed: &closed}
			}))
		}}
	}})
	terminal(t, readSSE(t, p.post(t, "/v1/responses", codexRequest(userMsg, false), nil).Body))
	if len(infos) != 1 || infos[0].Wire != harness.WireChat || infos[0].Route.String() != "ChatCompletionsCompat" || !strings.HasPrefix(infos[0].ResponseID, "resp_") {
		t.Errorf("infos %+v", infos)
	}
	if opened.Load() != 1 || closed.Load() != 1 {
		t.Errorf("opened %d closed %d, want 1 and 1", opened.Load(), closed.Load())
	}
	resp := p.post(t, "/h/minimal/v1/responses", codexRequest(userMsg, false), nil)
	if msg, _ := errorBody(t, resp); resp.StatusCode != 500 || !strings.Contains(msg, "no such extension") {
		t.Errorf("%d %q", resp.StatusCode, msg)
	}
}

// resourceStage passes events through and counts its runs' Open and Close.
type resourceStage struct{ opened, closed *atomic.Int64 }

func (r *resourceStage) Push(_ context.Context, ev protocol.ResponseEvent, emit func(protocol.ResponseEvent)) error {
	emit(ev)
	return nil
}
func (r *resourceStage) Open(context.Context) error { r.opened.Add(1); return nil }
func (r *resourceStage) Close() error               { r.closed.Add(1); return nil }

// Serve stops cleanly when its context is cancelled, ending the streams in
// flight with response.failed.
func TestServeShutdown(t *testing.T) {
	release := make(chan struct{})
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}`+"\n\n")
		http.NewResponseController(w).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer close(release)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(server.Config{Upstream: up.URL + "/v1", Logger: slog.New(slog.DiscardHandler), ShutdownGrace: 100 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()

	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Post("http://"+ln.Addr().String()+"/v1/responses", "application/json", strings.NewReader(codexRequest(userMsg, false)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := make([]byte, 1)
	if _, err := io.ReadFull(resp.Body, br); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	rest, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(rest), "event: response.failed") || strings.Contains(string(rest), "response.completed") ||
		!strings.Contains(string(rest), `"code":"server_shutdown"`) {
		t.Errorf("stream after shutdown:\n%s", rest)
	}
}

func TestConfigCheck(t *testing.T) {
	for _, c := range []server.Config{{}, {Upstream: "ftp://x"}, {Upstream: "http://127.0.0.1:1", Wire: "grpc"},
		{Upstream: "http://127.0.0.1:1", Followups: "both"}, {Upstream: "http://127.0.0.1:1", MaxFollowupRounds: -1}} {
		if c.Check() == nil {
			t.Errorf("%+v: no error", c)
		}
		if err := server.New(c).ListenAndServe(context.Background(), "127.0.0.1:0"); err == nil {
			t.Errorf("%+v: ListenAndServe started", c)
		}
	}
	p := newProxy(t, nil, server.Config{})
	resp := p.post(t, "/v1/responses", codexRequest(userMsg, false), nil)
	if msg, _ := errorBody(t, resp); resp.StatusCode != 500 || !strings.Contains(msg, "no upstream") {
		t.Errorf("%d %q", resp.StatusCode, msg)
	}
}

// An upstream answering a status that is neither 2xx nor an error (a 3xx
// the client did not follow) is a bad gateway, not a status passed on.
func TestUpstreamNonErrorStatus(t *testing.T) {
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusFound) // no Location: the client returns it as is
		io.WriteString(w, "moved somewhere")
	}))
	p := newProxy(t, up, server.Config{})
	resp := p.post(t, "/v1/responses", codexRequest(userMsg, false), nil)
	msg, typ := errorBody(t, resp)
	if resp.StatusCode != http.StatusBadGateway || typ != "server_error" || !strings.Contains(msg, "HTTP 302") {
		t.Errorf("%d %q %q", resp.StatusCode, typ, msg)
	}
}

// A shutdown while the upstream has not answered yet gives the client an
// error status, not an empty HTTP 200.
func TestShutdownBeforeUpstreamAnswers(t *testing.T) {
	arrived := make(chan struct{})
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		close(arrived)
		<-r.Context().Done()
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(server.Config{Upstream: up.URL + "/v1", Logger: slog.New(slog.DiscardHandler), ShutdownGrace: 100 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	go func() { <-arrived; cancel() }()
	resp, err := client.Post("http://"+ln.Addr().String()+"/v1/responses", "application/json", strings.NewReader(codexRequest(userMsg, false)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 500 {
		b, _ := io.ReadAll(resp.Body)
		t.Errorf("status %d, body %q", resp.StatusCode, b)
	}
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// failingListener hands out its first connection, then fails.
type failingListener struct {
	net.Listener
	accepted chan struct{}
	n        int
}

func (l *failingListener) Accept() (net.Conn, error) {
	if l.n++; l.n == 1 {
		c, err := l.Listener.Accept()
		close(l.accepted)
		return c, err
	}
	<-time.After(50 * time.Millisecond) // let the first connection be served
	return nil, errors.New("listener broke")
}

// When the listener fails, Serve returns its error and closes the
// connections it still holds instead of leaving them to the idle timeout.
func TestServeListenerFailureClosesConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fl := &failingListener{Listener: ln, accepted: make(chan struct{})}
	srv := server.New(server.Config{Upstream: "http://127.0.0.1:1/v1", Logger: slog.New(slog.DiscardHandler)})
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), fl) }()

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	<-fl.accepted
	if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "listener broke") {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	// The kept-alive connection must now be closed by the server.
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(conn); err != nil {
		t.Fatalf("connection left open after Serve returned: %v", err)
	}
}
