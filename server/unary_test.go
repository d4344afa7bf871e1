package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/harnessflow/harnessflow/scripted"
	"github.com/harnessflow/harnessflow/server"
)

// unaryBody posts body and decodes the JSON Response object it gets.
func unaryBody(t *testing.T, p *proxy, body string, header map[string]string) (int, map[string]any) {
	t.Helper()
	resp := p.post(t, "/v1/responses", body, header)
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q: %s", ct, data)
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil {
		t.Fatalf("not JSON: %s (%v)", data, err)
	}
	return resp.StatusCode, obj
}

func outputTypes(obj map[string]any) []string {
	var out []string
	for _, it := range obj["output"].([]any) {
		out = append(out, it.(map[string]any)["type"].(string))
	}
	return out
}

func outputText(obj map[string]any) string {
	var b strings.Builder
	for _, it := range obj["output"].([]any) {
		m := it.(map[string]any)
		if m["type"] != "message" {
			continue
		}
		for _, c := range m["content"].([]any) {
			if c.(map[string]any)["type"] == "output_text" {
				b.WriteString(c.(map[string]any)["text"].(string))
			}
		}
	}
	return b.String()
}

// A request without "stream": true (false or absent) runs the same turn —
// the upstream is asked for a stream — and gets the Response object as its
// JSON body.
func TestUnaryResponse(t *testing.T) {
	rec := &recorder{h: scripted.New(nil)}
	p := newProxy(t, newUpstream(t, rec), server.Config{})
	for name, body := range map[string]string{
		"stream false":  `{"model":"m","input":"hi there","stream":false}`,
		"stream absent": `{"model":"m","input":"hi there"}`,
	} {
		t.Run(name, func(t *testing.T) {
			status, obj := unaryBody(t, p, body, nil)
			if status != 200 || obj["object"] != "response" || obj["status"] != "completed" || obj["error"] != nil {
				t.Fatalf("%d %v", status, obj)
			}
			if got := outputText(obj); !strings.Contains(got, "Hello from the harnessflow scripted model") {
				t.Errorf("text %q", got)
			}
			if u, _ := obj["usage"].(map[string]any); u == nil || u["output_tokens"].(float64) == 0 {
				t.Errorf("usage %v", obj["usage"])
			}
			id, _ := obj["id"].(string)
			if !strings.HasPrefix(id, "resp_") || obj["store"] != true {
				t.Errorf("id %q store %v", id, obj["store"])
			}
			_, up, _ := rec.last(t)
			if !strings.Contains(up, `"stream":true`) {
				t.Errorf("the upstream was not asked for a stream: %s", up)
			}
		})
	}
	// With tools: reasoning, text and a call, each done.
	status, obj := unaryBody(t, p, strings.Replace(codexRequest(userMsg, true), `"stream":true`, `"stream":false`, 1), nil)
	if status != 200 || strings.Join(outputTypes(obj), ",") != "reasoning,message,function_call" {
		t.Fatalf("%d %v", status, outputTypes(obj))
	}
	for _, it := range obj["output"].([]any) {
		if m := it.(map[string]any); m["type"] != "reasoning" && m["status"] != "completed" {
			t.Errorf("item %v", m)
		}
	}
	if obj["store"] != false { // Codex's store:false
		t.Errorf("store %v", obj["store"])
	}
}

// The official Go SDK's non-streaming call decodes the answer.
func TestUnaryOpenAIGoClient(t *testing.T) {
	p := newProxy(t, newUpstream(t, scripted.New(nil)), server.Config{})
	client := openai.NewClient(option.WithBaseURL(p.ts.URL+"/v1"), option.WithAPIKey("sk-test"), option.WithHTTPClient(p.client), option.WithMaxRetries(0))
	resp, err := client.Responses.New(context.Background(), responses.ResponseNewParams{
		Model: "m", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hello")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != responses.ResponseStatusCompleted || !strings.Contains(resp.OutputText(), "scripted model") || resp.Usage.TotalTokens == 0 {
		t.Errorf("status %q text %q usage %+v", resp.Status, resp.OutputText(), resp.Usage)
	}
	if !resp.ParallelToolCalls || resp.Object != "response" || len(resp.Output) != 1 {
		t.Errorf("response %+v", resp)
	}
}

// Errors are JSON bodies with the status that fits: the upstream's HTTP
// error as it is; a stream that fails after it started by what failed.
func TestUnaryErrors(t *testing.T) {
	cases := []struct {
		name     string
		upstream http.HandlerFunc
		status   int
		code     string
		msg      string
	}{
		{"upstream 429", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(429)
			_, _ = io.WriteString(w, `{"error":{"message":"slow down","type":"rate_limit_error"}}`)
		}, 429, "", "slow down"},
		{"error event", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, `data: {"id":"c","choices":[{"index":0,"delta":{"content":"par"}}]}`+"\n\n"+
				`data: {"error":{"message":"Rate limit reached, try again in 2s","type":"rate_limit_error","code":"rate_limit_exceeded"}}`+"\n\n")
		}, 429, "rate_limit_exceeded", "Rate limit reached"},
		{"dies mid-stream", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, `data: {"id":"c","choices":[{"index":0,"delta":{"content":"par"}}]}`+"\n\n")
		}, 502, "", "ended"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newProxy(t, newUpstream(t, c.upstream), server.Config{})
			status, obj := unaryBody(t, p, `{"model":"m","input":"hi"}`, nil)
			e, _ := obj["error"].(map[string]any)
			if status != c.status || e == nil || !strings.Contains(e["message"].(string), c.msg) {
				t.Fatalf("%d %v", status, obj)
			}
			if c.code != "" && e["code"] != c.code {
				t.Errorf("code %v", e["code"])
			}
			if _, isResponse := obj["object"]; isResponse {
				t.Errorf("an error answered with a Response object: %v", obj)
			}
		})
	}
}

// A response cut by the length limit is HTTP 200 with status incomplete.
func TestUnaryIncomplete(t *testing.T) {
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, `data: {"id":"c","choices":[{"index":0,"delta":{"content":"cut"},"finish_reason":"length"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	p := newProxy(t, up, server.Config{})
	status, obj := unaryBody(t, p, `{"model":"m","input":"hi"}`, nil)
	d, _ := obj["incomplete_details"].(map[string]any)
	if status != 200 || obj["status"] != "incomplete" || d["reason"] != "max_output_tokens" || outputText(obj) != "cut" {
		t.Errorf("%d %v", status, obj)
	}
}

// With proxy follow-ups a non-streaming client gets the final round's
// Response object (nothing of the rounds asked again), and the response
// kept is what that client got.
func TestUnaryProxyFollowups(t *testing.T) {
	requireProbe(t)
	sc := newScriptedChat(func(n int, _ string) string {
		if n == 0 {
			return "REJECT: no."
		}
		return "Here is the final answer."
	})
	p := newProxy(t, newUpstream(t, sc.rec), server.Config{Followups: server.FollowupsProxy})
	body := strings.Replace(strings.Replace(codexRequest(devMsg+","+userMsg, true), `"stream":true`, `"stream":false`, 1), `"store":false`, `"store":true`, 1)
	resp := p.post(t, probePath(), body, nil)
	data, _ := io.ReadAll(resp.Body)
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, data)
	}
	if outputText(obj) != "Here is the final answer." || strings.Contains(string(data), "REJECT") || obj["store"] != true {
		t.Errorf("response %s", data)
	}
	if bodies, _, _ := sc.rec.all(); len(bodies) != 2 {
		t.Errorf("upstream asked %d times", len(bodies))
	}
}
