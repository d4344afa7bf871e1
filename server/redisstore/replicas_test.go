package redisstore_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/harness"
	_ "github.com/harnessflow/harnessflow/harness/all" // every harness, for the per-harness replica runs
	"github.com/harnessflow/harnessflow/prompts"
	"github.com/harnessflow/harnessflow/scripted"
	"github.com/harnessflow/harnessflow/server"
	"github.com/harnessflow/harnessflow/server/redisstore"
)

// recorder is an upstream that records the bodies it receives and answers
// them with the scripted model.
type recorder struct {
	h    http.Handler
	mu   sync.Mutex
	seen []string // path + "\n" + body
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.seen = append(r.seen, req.URL.Path+"\n"+string(body))
	r.mu.Unlock()
	req.Body = io.NopCloser(bytes.NewReader(body))
	r.h.ServeHTTP(w, req)
}

func (r *recorder) bodies() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// echoScript answers every request with a text naming what the model saw
// last, so that an answer shows which conversation it belongs to.
func echoScript() *scripted.Script {
	return &scripted.Script{Model: "scripted", Turns: []scripted.Turn{{Text: "You said: {{user}}"}}}
}

// replicas are proxies that share one store, in front of one upstream.
type replicas struct {
	up      *recorder
	servers []*httptest.Server
	client  *http.Client
}

// newReplicas starts n proxies with store (nil: one in-memory store shared
// by all of them) in front of a recording scripted upstream playing script
// (nil: echoScript).
func newReplicas(t *testing.T, n int, store server.Store, cfg server.Config, script *scripted.Script) *replicas {
	t.Helper()
	if script == nil {
		script = echoScript()
	}
	rec := &recorder{h: scripted.New(script)}
	up := httptest.NewServer(rec)
	t.Cleanup(up.Close)
	if store == nil {
		store = server.NewMemoryStore(server.StoreLimits{}, nil)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rp := &replicas{up: rec, client: &http.Client{Transport: &http.Transport{}}}
	for range n {
		c := cfg
		c.Upstream, c.Store = up.URL+"/v1", store
		c.Now = func() time.Time { return now }
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		srv := server.New(c)
		ts := httptest.NewServer(srv.Handler())
		t.Cleanup(func() { ts.Close(); srv.CloseIdleConnections() })
		rp.servers = append(rp.servers, ts)
	}
	t.Cleanup(rp.client.CloseIdleConnections)
	return rp
}

// post sends a non-streaming Responses request to replica i and returns
// the status and the decoded body.
func (rp *replicas) post(t *testing.T, i int, path string, body map[string]any) (int, map[string]any) {
	t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, rp.servers[i%len(rp.servers)].URL+path, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer sk-replica-test-key")
	resp, err := rp.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatalf("HTTP %d, body %q: %v", resp.StatusCode, raw, err)
	}
	return resp.StatusCode, obj
}

func userMessage(text string) map[string]any {
	return map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": text}}}
}

func outputText(obj map[string]any) string {
	var b strings.Builder
	out, _ := obj["output"].([]any)
	for _, it := range out {
		m, _ := it.(map[string]any)
		if m["type"] != "message" {
			continue
		}
		parts, _ := m["content"].([]any)
		for _, p := range parts {
			if pm, _ := p.(map[string]any); pm["type"] == "output_text" {
				b.WriteString(pm["text"].(string))
			}
		}
	}
	return b.String()
}

// outputSummary is a response's output without ids: type, role and text
// of each item.
func outputSummary(obj map[string]any) string {
	var b strings.Builder
	out, _ := obj["output"].([]any)
	for _, it := range out {
		m, _ := it.(map[string]any)
		fmt.Fprintf(&b, "[%v %v", m["type"], m["role"])
		parts, _ := m["content"].([]any)
		for _, p := range parts {
			if pm, _ := p.(map[string]any); pm["text"] != nil {
				fmt.Fprintf(&b, " %q", pm["text"])
			}
		}
		for _, k := range []string{"name", "arguments", "action", "input"} {
			if v, ok := m[k]; ok {
				fmt.Fprintf(&b, " %s=%v", k, v)
			}
		}
		b.WriteString("]")
	}
	fmt.Fprintf(&b, " status=%v end_turn=%v", obj["status"], obj["end_turn"])
	return b.String()
}

// conversation plays turns of one conversation, request i on replica
// pick(i): with previous_response_id (chain) or with the whole history in
// input and "store": false, as Codex sends it. It returns a summary of
// each output (outputSummary). With echo, each answer must quote its own
// turn's message (the echo script behind a harness that passes it on).
func conversation(t *testing.T, rp *replicas, path, name string, turns int, chain, echo bool, pick func(int) int) []string {
	t.Helper()
	var answers []string
	var history []any
	prev := ""
	for i := range turns {
		msg := userMessage(fmt.Sprintf("%s turn %d", name, i+1))
		body := map[string]any{"model": "m", "stream": false}
		if chain {
			body["input"] = []any{msg}
			if prev != "" {
				body["previous_response_id"] = prev
			}
		} else {
			history = append(history, msg)
			body["input"] = history
			body["store"] = false
		}
		status, obj := rp.post(t, pick(i), path, body)
		if status != http.StatusOK {
			t.Fatalf("%s turn %d on replica %d: HTTP %d %v", name, i+1, pick(i), status, obj)
		}
		text := outputText(obj)
		if want := fmt.Sprintf("%s turn %d", name, i+1); echo && (!strings.HasPrefix(text, "You said: ") || !strings.Contains(text, want)) {
			t.Errorf("%s turn %d: answer %q, want the echo of %q", name, i+1, text, want)
		}
		answers = append(answers, outputSummary(obj))
		prev, _ = obj["id"].(string)
		if !chain {
			for _, it := range obj["output"].([]any) {
				history = append(history, it)
			}
		}
	}
	return answers
}

// Every registered chat-wire harness answers a conversation spread over
// two replicas exactly as one proxy answers it: the same upstream bodies
// (main and title requests), the same answers — whichever replica served
// which turn, and with a replica that never saw the earlier turns.
func TestReplicasServeLikeOne(t *testing.T) {
	for _, spec := range harness.All() {
		if !spec.Supports(harness.WireChat) {
			continue
		}
		path := "/h/" + spec.Name + "/v1/responses"
		if spec.Name == harness.NativeName {
			path = "/v1/responses"
		}
		t.Run(spec.Name, func(t *testing.T) {
			for _, chain := range []bool{true, false} {
				one := newReplicas(t, 1, nil, server.Config{}, nil)
				two := newReplicas(t, 2, nil, server.Config{}, nil)
				a1 := conversation(t, one, path, "conv", 4, chain, false, func(int) int { return 0 })
				a2 := conversation(t, two, path, "conv", 4, chain, false, func(i int) int { return i % 2 })
				if diff := cmp.Diff(a1, a2); diff != "" {
					t.Errorf("chain %v: answers (-one +two):\n%s", chain, diff)
				}
				if diff := cmp.Diff(one.up.bodies(), two.up.bodies()); diff != "" {
					t.Errorf("chain %v: upstream requests (-one proxy +two replicas):\n%s", chain, diff)
				}
			}
		})
	}
}

// opencode's title request goes out once per conversation — on its first
// turn — however its turns are spread over the replicas, with
// previous_response_id or with the whole history.
func TestTitleRequestOncePerConversation(t *testing.T) {
	title, err := prompts.Default().Render(harness.NameOpenCode, "title", nil)
	if err != nil {
		t.Fatal(err)
	}
	// The title system text as JSON, without its closing quote: opencode
	// keeps the text's final newline (its variant fork trims it).
	marker, _ := json.Marshal(strings.TrimRight(title, "\n"))
	marker = marker[:len(marker)-1]
	rp := newReplicas(t, 3, nil, server.Config{}, nil)
	for c := range 4 {
		name := fmt.Sprintf("conv-%d", c)
		conversation(t, rp, "/h/opencode/v1/responses", name, 5, c%2 == 0, true, func(i int) int { return i + c })
	}
	titles := map[string]int{}
	for _, b := range rp.up.bodies() {
		if !strings.Contains(b, string(marker)) {
			continue
		}
		for c := range 4 {
			if name := fmt.Sprintf("conv-%d turn", c); strings.Contains(b, name) {
				titles[name]++
			}
		}
	}
	for c := range 4 {
		if n := titles[fmt.Sprintf("conv-%d turn", c)]; n != 1 {
			t.Errorf("conv-%d: %d title requests, want 1", c, n)
		}
	}
}

// Follow-ups the proxy runs itself stay within one client request: two
// replicas in proxy mode send the upstream what one sends.
func TestProxyFollowupsOnReplicas(t *testing.T) {
	// What each harness takes as a usable answer, given after its
	// follow-up (the first answer of every turn echoes, which it refuses).
	usable := map[string]scripted.Turn{
		harness.NameSWEAgent:     {Text: "DISCUSSION\nLook around.\n\n```\nls\n```"},
		harness.NameMiniSWEAgent: {Text: "THOUGHT: look around.", ToolCalls: []scripted.ToolCall{{Name: "bash", Arguments: json.RawMessage(`{"command":"ls"}`)}}},
		harness.NameTerminus2:    {Text: `{"analysis":"a","plan":"p","commands":[{"keystrokes":"ls\n","duration":0.1}],"task_complete":false}`},
	}
	for _, name := range []string{harness.NameSWEAgent, harness.NameMiniSWEAgent, harness.NameTerminus2} {
		t.Run(name, func(t *testing.T) {
			cfg := server.Config{Followups: server.FollowupsProxy}
			script := &scripted.Script{Turns: []scripted.Turn{
				{When: &scripted.Match{UserContains: "task turn"}, Text: "You said: {{user}}"},
				usable[name],
			}}
			one := newReplicas(t, 1, nil, cfg, script)
			two := newReplicas(t, 2, nil, cfg, script)
			path := "/h/" + name + "/v1/responses"
			// The echo script answers without a command: the harnesses ask
			// for a follow-up (a format error or a reminder).
			a1 := conversation(t, one, path, "task", 3, true, false, func(int) int { return 0 })
			a2 := conversation(t, two, path, "task", 3, true, false, func(i int) int { return i })
			if diff := cmp.Diff(a1, a2); diff != "" {
				t.Errorf("outputs (-one +two):\n%s", diff)
			}
			b1, b2 := one.up.bodies(), two.up.bodies()
			if len(b1) <= 3 {
				t.Errorf("%d upstream requests for 3 turns: no follow-up round ran", len(b1))
			}
			if diff := cmp.Diff(b1, b2); diff != "" {
				t.Errorf("upstream requests (-one proxy +two replicas):\n%s", diff)
			}
		})
	}
}

// Replicas sharing a Redis store continue each other's conversations;
// when Redis goes away, a request that needs the store (a lookup, or an
// answer to keep) gets HTTP 503 (code store_unavailable) and one that does
// not ("store": false) is served. TestRedisOutageUnderStreams follows
// streams through outages.
func TestReplicasOnRedis(t *testing.T) {
	rs := startRedis(t)
	store := open(t, rs, "cooldown=100ms", server.StoreLimits{MaxResponses: 1000, TTL: time.Hour})
	rp := newReplicas(t, 2, store, server.Config{}, nil)
	mem := newReplicas(t, 2, nil, server.Config{}, nil)
	for _, path := range []string{"/v1/responses", "/h/opencode/v1/responses"} {
		a := conversation(t, rp, path, "redis-conv", 4, true, true, func(i int) int { return i })
		b := conversation(t, mem, path, "redis-conv", 4, true, true, func(i int) int { return i })
		if diff := cmp.Diff(b, a); diff != "" {
			t.Errorf("%s: answers on Redis (-memory +redis):\n%s", path, diff)
		}
	}
	if diff := cmp.Diff(mem.up.bodies(), rp.up.bodies()); diff != "" {
		t.Errorf("upstream requests (-memory store +redis store):\n%s", diff)
	}

	_, first := rp.post(t, 0, "/v1/responses", map[string]any{"model": "m", "input": []any{userMessage("before the outage")}})
	rs.stop()
	status, obj := rp.post(t, 1, "/v1/responses", map[string]any{"model": "m", "input": []any{userMessage("next")}, "previous_response_id": first["id"]})
	e, _ := obj["error"].(map[string]any)
	if status != http.StatusServiceUnavailable || e["code"] != "store_unavailable" ||
		!strings.Contains(fmt.Sprint(e["message"]), "response store failed") || !strings.Contains(fmt.Sprint(e["message"]), redisstore.ErrUnavailable.Error()) {
		t.Errorf("previous_response_id during the outage: HTTP %d %v", status, obj)
	}
	t.Logf("during the outage a client got HTTP %d: %v", status, e["message"])
	status, obj = rp.post(t, 1, "/v1/responses", map[string]any{"model": "m", "input": []any{userMessage("would be kept")}})
	if e, _ := obj["error"].(map[string]any); status != http.StatusServiceUnavailable || e["code"] != "store_unavailable" {
		t.Errorf("a request to keep during the outage: HTTP %d %v", status, obj)
	}
	status, obj = rp.post(t, 0, "/v1/responses", map[string]any{"model": "m", "input": []any{userMessage("no store needed")}, "store": false})
	if status != http.StatusOK || !strings.Contains(outputText(obj), "no store needed") || obj["store"] != false {
		t.Errorf("a store:false request during the outage: HTTP %d %v", status, obj)
	}
	rs.restart(t)
	deadline := time.Now().Add(5 * time.Second)
	for {
		status, obj = rp.post(t, 1, "/v1/responses", map[string]any{"model": "m", "input": []any{userMessage("after")}})
		if obj["store"] == true || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if status != http.StatusOK || obj["store"] != true {
		t.Fatalf("after Redis came back: HTTP %d store %v", status, obj["store"])
	}
	status, obj = rp.post(t, 0, "/v1/responses", map[string]any{"model": "m", "input": []any{userMessage("chained")}, "previous_response_id": obj["id"]})
	if status != http.StatusOK || !strings.Contains(outputText(obj), "chained") {
		t.Errorf("a chain after the outage: HTTP %d %v", status, obj)
	}
}
