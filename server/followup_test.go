package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/server"
)

func requireProbe(t *testing.T) {
	t.Helper()
	if probeName == "" {
		t.Skip("every harness name with a chat route is registered by the build: no name left for the probe harness")
	}
}

func probePath() string { return "/h/" + probeName + "/v1/responses" }

// withInstructions adds "instructions" to a request body.
func withInstructions(body, instructions string) string {
	return `{"instructions":` + fmt.Sprintf("%q", instructions) + `,` + strings.TrimPrefix(body, "{")
}

// metricsText returns the proxy's /metrics page.
func metricsText(t *testing.T, p *proxy) string {
	t.Helper()
	resp, err := p.client.Get(p.ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// chatMessage is one message of a chat body, its content as text.
type chatMessage struct{ Role, Text string }

func chatMessages(t *testing.T, body string) []chatMessage {
	t.Helper()
	var b struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		t.Fatalf("chat body %s: %v", body, err)
	}
	var out []chatMessage
	for _, m := range b.Messages {
		var text string
		if json.Unmarshal(m.Content, &text) != nil {
			var parts []struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(m.Content, &parts)
			for _, p := range parts {
				text += p.Text
			}
		}
		out = append(out, chatMessage{m.Role, text})
	}
	return out
}

func itemText(it map[string]any) string {
	var s strings.Builder
	content, _ := it["content"].([]any)
	for _, c := range content {
		s.WriteString(c.(map[string]any)["text"].(string))
	}
	return s.String()
}

// Client mode (the default): the harness's follow-up reaches the client as
// a user message item with an input_text part, and response.completed says
// "end_turn": false; the rejected answer does not leak.
func TestFollowupClientMode(t *testing.T) {
	requireProbe(t)
	sc := newScriptedChat(func(int, string) string { return "REJECT: no." })
	p := newProxy(t, newUpstream(t, sc.rec), server.Config{})
	evs := readSSE(t, p.post(t, probePath(), codexRequest(userMsg, true), nil).Body)
	last := terminal(t, evs)
	if last.Name != "response.completed" {
		t.Fatalf("ended with %s", last.Raw)
	}
	response := last.Data["response"].(map[string]any)
	if end, ok := response["end_turn"]; !ok || end != false {
		t.Errorf("completed response: end_turn %v (present %v), want false", end, ok)
	}
	want := []any{map[string]any{"type": "input_text", "text": probeFollowup}}
	items := doneItems(evs)
	if len(items) != 1 || items[0]["type"] != "message" || items[0]["role"] != "user" || !cmp.Equal(items[0]["content"], want) {
		t.Fatalf("done items %v, want one user message", items)
	}
	if out := response["output"].([]any); len(out) != 1 || out[0].(map[string]any)["role"] != "user" {
		t.Errorf("completed output %v", out)
	}
	for _, e := range evs {
		if strings.Contains(e.Raw, "REJECT") || e.Name == "response.output_text.delta" || e.Name == "response.content_part.added" {
			t.Errorf("the rejected answer leaked: %s", e.Raw)
		}
	}
	if n := sc.rec.requests(); n != 1 {
		t.Errorf("client mode asked the upstream %d times", n)
	}
}

// Proxy mode: the proxy asks the upstream again with the round's output
// and the follow-up appended, and the client sees only the final round.
func TestFollowupProxyMode(t *testing.T) {
	requireProbe(t)
	for _, c := range []struct {
		first string
		mode  pipeline.Mode
	}{{"REJECT: no.", pipeline.Fused}, {"NUDGE: almost.", pipeline.Fused}, {"REJECT: no.", pipeline.Async}, {"NUDGE: almost.", pipeline.Async}} {
		first := c.first
		t.Run(first[:5]+"/"+c.mode.String(), func(t *testing.T) {
			sc := newScriptedChat(func(n int, _ string) string {
				if n == 0 {
					return first
				}
				return "Here is the final answer."
			})
			p := newProxy(t, newUpstream(t, sc.rec), server.Config{Followups: server.FollowupsProxy, Mode: c.mode})
			evs := readSSE(t, p.post(t, probePath(), codexRequest(devMsg+","+userMsg, true), nil).Body)
			last := terminal(t, evs)
			if last.Name != "response.completed" || count(evs, "response.created") != 1 || count(evs, "response.in_progress") != 1 {
				t.Fatalf("events %v", names(evs))
			}
			if end, ok := last.Data["response"].(map[string]any)["end_turn"]; ok {
				t.Errorf("final round: end_turn %v", end)
			}
			items := doneItems(evs)
			if len(items) != 1 || items[0]["role"] != "assistant" || itemText(items[0]) != "Here is the final answer." {
				t.Fatalf("done items %v", items)
			}
			for _, e := range evs {
				if strings.Contains(e.Raw, first[:5]) || strings.Contains(e.Raw, probeFollowup) {
					t.Errorf("the first round leaked: %s", e.Raw)
				}
			}

			bodies, _, _ := sc.rec.all()
			if len(bodies) != 2 {
				t.Fatalf("upstream asked %d times, want 2", len(bodies))
			}
			one, two := chatMessages(t, bodies[0]), chatMessages(t, bodies[1])
			// The second request is the first plus what the client would
			// have recorded: the kept assistant message (NUDGE), then the
			// follow-up as a user message.
			want := append([]chatMessage(nil), one...)
			if first[:5] == "NUDGE" {
				want = append(want, chatMessage{"assistant", first})
			}
			want = append(want, chatMessage{"user", probeFollowup})
			if diff := cmp.Diff(want, two); diff != "" {
				t.Errorf("second upstream request messages (-want +got):\n%s", diff)
			}

			m := metricsText(t, p)
			for _, w := range []string{
				`harnessflow_followup_rounds_total{harness="` + probeName + `"} 1`,
				`harnessflow_streams_ended_total{outcome="completed"} 1`,
			} {
				if !strings.Contains(m, w) {
					t.Errorf("metrics lack %q:\n%s", w, m)
				}
			}
			logs := p.logs.String()
			if !strings.Contains(logs, "follow-up round") || !strings.Contains(logs, "followup_rounds=1") || !strings.Contains(logs, "outcome=completed") {
				t.Errorf("logs:\n%s", logs)
			}
		})
	}
}

// Proxy mode is bounded: an upstream that never gives a usable answer is
// asked MaxFollowupRounds+1 times, and the client gets response.failed
// with a clear message and nothing of any round.
func TestFollowupProxyModeBound(t *testing.T) {
	requireProbe(t)
	for _, rounds := range []int{0, 1, 2} {
		t.Run(fmt.Sprint(rounds), func(t *testing.T) {
			sc := newScriptedChat(func(int, string) string { return "REJECT: never." })
			p := newProxy(t, newUpstream(t, sc.rec), server.Config{Followups: server.FollowupsProxy, MaxFollowupRounds: rounds})
			evs := readSSE(t, p.post(t, probePath(), codexRequest(userMsg, true), nil).Body)
			limit := rounds
			if limit == 0 {
				limit = server.DefaultMaxFollowupRounds
			}
			if want := []string{"response.created", "response.in_progress", "response.failed"}; !cmp.Equal(want, names(evs)) {
				t.Fatalf("events %v, want %v", names(evs), want)
			}
			e := terminal(t, evs).Data["response"].(map[string]any)["error"].(map[string]any)
			msg := fmt.Sprintf("harness %s: the model still had no usable answer after %d follow-up rounds", probeName, limit)
			if e["message"] != msg || e["code"] != "followup_limit" {
				t.Errorf("error %v, want message %q", e, msg)
			}
			bodies, _, _ := sc.rec.all()
			if len(bodies) != limit+1 {
				t.Fatalf("upstream asked %d times, want %d", len(bodies), limit+1)
			}
			if n := strings.Count(bodies[limit], probeFollowup); n != limit {
				t.Errorf("the last request holds %d follow-ups, want %d", n, limit)
			}
			m := metricsText(t, p)
			for _, w := range []string{
				fmt.Sprintf(`harnessflow_followup_rounds_total{harness="%s"} %d`, probeName, limit),
				`harnessflow_streams_ended_total{outcome="failed"} 1`,
			} {
				if !strings.Contains(m, w) {
					t.Errorf("metrics lack %q:\n%s", w, m)
				}
			}
			if !strings.Contains(p.logs.String(), "outcome=failed") {
				t.Errorf("logs:\n%s", p.logs.String())
			}
		})
	}
}

// In proxy mode a round that fails, and an upstream error status on a
// re-ask, reach the client as in client mode.
func TestFollowupProxyModeErrors(t *testing.T) {
	requireProbe(t)
	t.Run("status", func(t *testing.T) {
		var n atomic.Int32
		up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if n.Add(1) == 2 {
				w.Header().Set("Retry-After", "3")
				w.WriteHeader(http.StatusTooManyRequests)
				io.WriteString(w, `{"error":{"message":"slow down","type":"requests"}}`)
				return
			}
			chatAnswer(w, string(body), "REJECT")
		}))
		p := newProxy(t, up, server.Config{Followups: server.FollowupsProxy})
		resp := p.post(t, probePath(), codexRequest(userMsg, true), nil)
		if msg, _ := errorBody(t, resp); resp.StatusCode != http.StatusTooManyRequests || msg != "slow down" || resp.Header.Get("Retry-After") != "3" {
			t.Errorf("%d %q", resp.StatusCode, msg)
		}
	})
	t.Run("stream", func(t *testing.T) {
		up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}`+"\n\n")
			http.NewResponseController(w).Flush()
			panic(http.ErrAbortHandler)
		}))
		p := newProxy(t, up, server.Config{Followups: server.FollowupsProxy})
		evs := readSSE(t, p.post(t, probePath(), codexRequest(userMsg, true), nil).Body)
		if last := terminal(t, evs); last.Name != "response.failed" {
			t.Errorf("events %v", names(evs))
		}
	})
}

// Title requests (docs/architecture.md#title-requests) go first to the same path, with the same
// query, headers and credentials; their answer is dropped. A failing one
// is logged (without content) and counted, and the turn goes on.
func TestTitleRequest(t *testing.T) {
	requireProbe(t)
	body := withInstructions(codexRequest(userMsg, true), wantTitle)
	client := map[string]string{"Authorization": "Bearer sk-client"}
	cases := []struct {
		name    string
		title   func(w http.ResponseWriter)
		outcome string
	}{
		{"ok", nil, "ok"},
		{"status", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, "title meltdown")
		}, "failed"},
		{"broken", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, `data: {"id":"t","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"title meltdown"}}]}`+"\n\n")
			http.NewResponseController(w).Flush()
			panic(http.ErrAbortHandler)
		}, "failed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := newScriptedChat(func(int, string) string { return "The answer." })
			sc.title = c.title
			p := newProxy(t, newUpstream(t, sc.rec), server.Config{})
			evs := readSSE(t, p.post(t, probePath(), body, client).Body)
			if last := terminal(t, evs); last.Name != "response.completed" {
				t.Fatalf("ended with %s", last.Raw)
			}
			bodies, queries, headers := sc.rec.all()
			if len(bodies) != 2 || !strings.Contains(bodies[0], probeTitle) || strings.Contains(bodies[1], probeTitle) {
				t.Fatalf("upstream bodies %q", bodies)
			}
			for i := range bodies {
				if queries[i] != "beta=true" || headers[i].Get("X-Probe") != "yes" || headers[i].Get("Authorization") != "Bearer sk-client" ||
					headers[i].Get("Accept") != "text/event-stream" {
					t.Errorf("request %d: query %q, headers %v", i, queries[i], headers[i])
				}
			}
			m := metricsText(t, p)
			if w := `harnessflow_title_requests_total{outcome="` + c.outcome + `"} 1`; !strings.Contains(m, w) {
				t.Errorf("metrics lack %q:\n%s", w, m)
			}
			logs := p.logs.String()
			if c.outcome == "failed" && !strings.Contains(logs, `level=WARN msg="harnessflow title request failed`) {
				t.Errorf("no warning logged:\n%s", logs)
			}
			if strings.Contains(logs, "meltdown") || strings.Contains(logs, probeTitle) || strings.Contains(logs, "sk-client") {
				t.Errorf("logs hold content:\n%s", logs)
			}
		})
	}
}

// A client that goes away while the title request runs stops the turn: the
// main request is never sent.
func TestTitleRequestClientGone(t *testing.T) {
	requireProbe(t)
	arrived := make(chan struct{})
	sc := newScriptedChat(func(int, string) string { return "The answer." })
	titleDone := make(chan struct{})
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(probeTitle)) {
			close(arrived)
			<-r.Context().Done()
			close(titleDone)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		sc.rec.ServeHTTP(w, r)
	}))
	p := newProxy(t, up, server.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-arrived:
			cancel()
		case <-ctx.Done():
		}
	}()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.ts.URL+probePath(), strings.NewReader(withInstructions(codexRequest(userMsg, true), wantTitle)))
	if resp, err := p.client.Do(req); err == nil {
		resp.Body.Close()
	}
	select {
	case <-titleDone:
	case <-time.After(5 * time.Second):
		t.Fatal("the title request was not cancelled")
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(p.logs.String(), "outcome=client_closed") {
		if time.Now().After(deadline) {
			t.Fatalf("no client_closed log:\n%s", p.logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := sc.rec.requests(); n != 0 {
		t.Errorf("the main request was sent %d times", n)
	}
	if m := metricsText(t, p); strings.Contains(m, "harnessflow_title_requests_total{") {
		t.Errorf("a cancelled title request was counted:\n%s", m)
	}
}

// A unary shaped body (no "stream": true) is sent with Accept:
// application/json and its JSON answer translated; a streaming one asks
// for text/event-stream.
func TestUnaryShapedBody(t *testing.T) {
	requireProbe(t)
	sc := newScriptedChat(func(int, string) string { return "One JSON answer." })
	p := newProxy(t, newUpstream(t, sc.rec), server.Config{})
	for _, c := range []struct{ instructions, accept string }{{wantUnary, "application/json"}, {"", "text/event-stream"}} {
		evs := readSSE(t, p.post(t, probePath(), withInstructions(codexRequest(userMsg, true), c.instructions), nil).Body)
		items := doneItems(evs)
		if terminal(t, evs).Name != "response.completed" || len(items) != 1 || itemText(items[0]) != "One JSON answer." {
			t.Errorf("%q: events %v", c.instructions, names(evs))
		}
		_, body, hdr := sc.rec.last(t)
		if hdr.Get("Accept") != c.accept || strings.Contains(body, `"stream":true`) != (c.accept == "text/event-stream") {
			t.Errorf("%q: Accept %q, body %s", c.instructions, hdr.Get("Accept"), body)
		}
	}
}

// What serve sends upstream is what `harnessflow shape` prints: for every
// registered harness and every wire that routes to it, the upstream gets
// exactly the bytes of harness.Plan's shaped body (and title request, query
// and headers).
func TestServeSendsWhatShapePrints(t *testing.T) {
	requests := []string{
		codexRequest(devMsg+","+userMsg, true),
		withInstructions(codexRequest(devMsg+","+userMsg+toolRound("call_1"), true), wantTitle),
		`{"model":"m","input":"hello","stream":true}`,
		// The client fields (docs/request-shaping.md#client-fields).
		`{"model":"gpt-5.5","input":"hello","stream":true,"max_output_tokens":5,"temperature":0.1,"top_p":0.9,"top_logprobs":2,` +
			`"user":"u-1","metadata":{"k":"v"},"prompt_cache_key":"conv-123"}`,
	}
	tested := 0
	for _, spec := range harness.All() {
		for _, wire := range harness.Wires() {
			route, err := harness.Resolve(wire, spec.Name)
			if err != nil || route.Harness != spec.Name {
				continue
			}
			tested++
			t.Run(spec.Name+"/"+string(wire), func(t *testing.T) {
				rec := &recorder{h: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.WriteHeader(http.StatusServiceUnavailable) // only the request matters
				})}
				up := newUpstream(t, rec)
				// One clock for both: harness prompts show the time.
				now := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
				p := newProxy(t, up, server.Config{Wire: wire, Now: now})
				path := "/h/" + spec.Name + "/v1/responses"
				if spec.Name == harness.NativeName {
					path = "/v1/responses"
				}
				for i, body := range requests {
					before := rec.requests()
					resp := p.post(t, path, body, map[string]string{"session-id": "s-1"})
					io.Copy(io.Discard, resp.Body)
					req, err := protocol.DecodeRequest([]byte(body))
					if err != nil {
						t.Fatal(err)
					}
					turn, err := harness.Plan(context.Background(), harness.Config{Wire: wire, BaseURL: up.URL + "/v1", Now: now}, spec.Name, req,
						http.Header{"Session-Id": {"s-1"}})
					if err != nil {
						t.Fatalf("request %d: plan: %v", i, err)
					}
					want := [][]byte{turn.Shaped.Body}
					if turn.Shaped.TitleRequest != nil {
						want = [][]byte{turn.Shaped.TitleRequest, turn.Shaped.Body}
					}
					bodies, queries, headers := rec.all()
					bodies, queries, headers = bodies[before:], queries[before:], headers[before:]
					if len(bodies) != len(want) {
						t.Fatalf("request %d: upstream got %d requests, want %d", i, len(bodies), len(want))
					}
					q := url.Values{}
					for k, v := range turn.Shaped.Query {
						q.Set(k, v)
					}
					for j := range want {
						if bodies[j] != string(want[j]) {
							t.Errorf("request %d, upstream request %d:\nserve sent %s\nshape says %s", i, j, bodies[j], want[j])
						}
						if queries[j] != q.Encode() {
							t.Errorf("request %d, upstream request %d: query %q, want %q", i, j, queries[j], q.Encode())
						}
						for k, v := range turn.Shaped.Headers {
							if k := http.CanonicalHeaderKey(k); k != "Authorization" && k != "X-Api-Key" && headers[j].Get(k) != v {
								t.Errorf("request %d, upstream request %d: header %s %q, want %q", i, j, k, headers[j].Get(k), v)
							}
						}
					}
				}
			})
		}
	}
	if tested < 2 {
		t.Errorf("only %d (harness, wire) pairs tested", tested)
	}
}

// A call to a tool the client did not advertise, from a harness with a
// bridge stage, reaches the client under its own name and is counted.
func TestUnbridgedCallCounted(t *testing.T) {
	requireProbe(t)
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a.go\"}"}}]},"finish_reason":null}]}`+"\n\n")
		io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`+"\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	p := newProxy(t, up, server.Config{})
	evs := readSSE(t, p.post(t, probePath(), codexRequest(userMsg, true), nil).Body)
	items := doneItems(evs)
	if terminal(t, evs).Name != "response.completed" || len(items) != 1 || items[0]["name"] != "read_file" {
		t.Fatalf("events %v, items %v", names(evs), items)
	}
	if m, w := metricsText(t, p), `harnessflow_unbridged_tool_calls_total{harness="`+probeName+`",tool="read_file"} 1`; !strings.Contains(m, w) {
		t.Errorf("metrics lack %q:\n%s", w, m)
	}
}
