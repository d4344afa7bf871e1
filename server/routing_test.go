package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/scripted"
	"github.com/harnessflow/harnessflow/serveconfig"
	"github.com/harnessflow/harnessflow/server"
)

// routed is a proxy running with a routing config file.
type routed struct {
	*proxy
	path string // the config file
}

// newRouted starts a proxy routing with the config text (its upstreams'
// base URLs written as {{NAME}}, replaced from urls).
func newRouted(t *testing.T, text string, urls map[string]string) *routed {
	t.Helper()
	for name, u := range urls {
		text = strings.ReplaceAll(text, "{{"+name+"}}", u)
	}
	path := filepath.Join(t.TempDir(), "serve.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := serveconfig.Load(path, serveconfig.Options{})
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	srv := server.New(server.Config{Routes: serveconfig.NewHolder(c, serveconfig.Options{}),
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	ts := httptest.NewServer(srv.Handler())
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(func() {
		client.CloseIdleConnections()
		ts.Close()
		srv.CloseIdleConnections()
	})
	return &routed{proxy: &proxy{ts: ts, srv: srv, logs: logs, client: client}, path: path}
}

// rewrite replaces the config file's text.
func (p *routed) rewrite(t *testing.T, text string, urls map[string]string) {
	t.Helper()
	for name, u := range urls {
		text = strings.ReplaceAll(text, "{{"+name+"}}", u)
	}
	if err := os.WriteFile(p.path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// scriptedUpstream is a scripted chat and messages server whose answer
// names it and the model it was asked for; it counts its requests.
type scriptedUpstream struct {
	*httptest.Server
	requests atomic.Int64
}

func newScripted(t *testing.T, name string, delayMS int) *scriptedUpstream {
	t.Helper()
	h := scripted.New(&scripted.Script{DelayMS: delayMS, ChunkSize: 4, Turns: []scripted.Turn{{Text: name + " served {{model}}"}}})
	u := &scriptedUpstream{}
	u.Server = newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			u.requests.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	return u
}

// answer is the text of a stream's output_text deltas.
func answer(evs []sseEvent) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Name == "response.output_text.delta" {
			b.WriteString(e.Data["delta"].(string))
		}
	}
	return b.String()
}

func ask(model string) string {
	return `{"model":` + fmt.Sprintf("%q", model) + `,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}],"stream":true}`
}

func (p *routed) get(t *testing.T, path string) string {
	t.Helper()
	resp, err := p.client.Get(p.ts.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

const twoUpstreams = `
[upstreams.a]
base_url = "{{a}}/v1"
[upstreams.b]
base_url = "{{b}}/v1"
wire = "messages"

[[models]]
name = "alpha"
upstreams = ["a"]
upstream_model = "alpha-served"

[[models]]
name = "claude-*"
upstreams = ["b"]
harness = "claude-code"

[[models]]
name = "beta-*"
upstreams = ["a"]
`

func TestRoutedByModel(t *testing.T) {
	a, b := newScripted(t, "A", 0), newScripted(t, "B", 0)
	p := newRouted(t, twoUpstreams, map[string]string{"a": a.URL, "b": b.URL})
	for _, tt := range []struct {
		model, want string
	}{
		{"alpha", "A served alpha-served"},
		{"ALPHA", "A served alpha-served"},
		{"beta-7b", "A served beta-7b"},
		{"claude-sonnet-4-5", "B served claude-sonnet-4-5"},
	} {
		resp := p.post(t, "/v1/responses", ask(tt.model), nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: HTTP %d", tt.model, resp.StatusCode)
		}
		evs := readSSE(t, resp.Body)
		end := terminal(t, evs)
		if got := answer(evs); end.Name != "response.completed" || got != tt.want {
			t.Errorf("%s: %s %q, want completed %q", tt.model, end.Name, got, tt.want)
		}
		// The response names the model that answered, as with --model.
		_, served, _ := strings.Cut(tt.want, " served ")
		if m := end.Data["response"].(map[string]any)["model"]; m != served {
			t.Errorf("%s: the response names model %v, want %s", tt.model, m, served)
		}
	}
	// claude-code sends a title request before the turn.
	if a.requests.Load() != 3 || b.requests.Load() != 2 {
		t.Errorf("requests: a %d, b %d; want 3, 2", a.requests.Load(), b.requests.Load())
	}

	// A model no entry matches: 404 naming the configured models.
	resp := p.post(t, "/v1/responses", ask("gpt-5"), nil)
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown model: HTTP %d, want 404", resp.StatusCode)
	}
	if msg, _ := errorBody(t, resp); !strings.Contains(msg, `model "gpt-5" is not served here; this server serves: alpha, claude-*, beta-*`) {
		t.Errorf("unknown model: %q", msg)
	}

	// /v1/models lists the configured names; /metrics counts by upstream and model.
	var list struct {
		Data []struct{ ID string } `json:"data"`
	}
	if err := json.Unmarshal([]byte(p.get(t, "/v1/models")), &list); err != nil || len(list.Data) != 1 || list.Data[0].ID != "alpha" {
		t.Errorf("/v1/models: %+v %v", list, err)
	}
	p.waitMetrics(t,
		`harnessflow_routed_streams_total{upstream="a",model="alpha",outcome="completed"} 2`,
		`harnessflow_routed_streams_total{upstream="a",model="beta-*",outcome="completed"} 1`,
		`harnessflow_routed_streams_total{upstream="b",model="claude-*",outcome="completed"} 1`,
		`harnessflow_upstream_attempts_total{upstream="b",model="claude-*",result="ok"} 1`)
}

// A /h/NAME/ route keeps its harness; a harness no upstream of the model
// serves is refused.
func TestRoutedHarnessPath(t *testing.T) {
	a, b := newScripted(t, "A", 0), newScripted(t, "B", 0)
	p := newRouted(t, twoUpstreams, map[string]string{"a": a.URL, "b": b.URL})
	resp := p.post(t, "/h/kimi-cli/v1/responses", ask("alpha"), nil)
	if evs := readSSE(t, resp.Body); answer(evs) != "A served alpha-served" {
		t.Errorf("kimi-cli on alpha: %q", answer(evs))
	}
	resp = p.post(t, "/h/kimi-cli/v1/responses", ask("claude-x"), nil)
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("kimi-cli on a messages upstream: HTTP %d, want 400", resp.StatusCode)
	}
	if msg, _ := errorBody(t, resp); !strings.Contains(msg, `model "claude-x": wire_api = "messages" is not supported by harness = "kimi-cli"`) {
		t.Errorf("kimi-cli on a messages upstream: %q", msg)
	}
	if n := b.requests.Load(); n != 0 {
		t.Errorf("the messages upstream was asked %d times", n)
	}

	// An entry whose first upstream's wire the harness does not serve: the
	// next upstream serves it.
	p = newRouted(t, `
[upstreams.a]
base_url = "{{a}}/v1"
[upstreams.b]
base_url = "{{b}}/v1"
wire = "messages"
[[models]]
name = "both"
upstreams = ["b", "a"]
harness = "claude-code"
`, map[string]string{"a": a.URL, "b": b.URL})
	resp = p.post(t, "/h/kimi-cli/v1/responses", ask("both"), nil)
	if evs := readSSE(t, resp.Body); answer(evs) != "A served both" {
		t.Errorf("kimi-cli on an entry whose first upstream speaks messages: %q", answer(evs))
	}
}

// failing is a first upstream that fails in one way.
type failing struct {
	name string
	url  func(t *testing.T) string
	// retried says the second upstream answers instead.
	retried bool
	result  string // the first attempt's result in /metrics
	status  int    // the client's status when not retried
}

func downURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

func statusURL(status int, delay time.Duration) func(t *testing.T) string {
	return func(t *testing.T) string {
		return newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body) // then a client that leaves cancels r's context
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			io.WriteString(w, `{"error":{"message":"first upstream says no","type":"x"}}`)
		})).URL
	}
}

// redirectURL is an upstream that redirects every request to a server
// that fails the test when reached.
func redirectURL(t *testing.T) string {
	elsewhere := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the redirect was followed: %s %s", r.Method, r.URL)
	}))
	return newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		http.Redirect(w, r, elsewhere.URL+"/v1/chat/completions", http.StatusTemporaryRedirect)
	})).URL
}

const fallbackConfig = `
[upstreams.first]
base_url = "{{first}}/v1"
header_timeout = "300ms"
[upstreams.second]
base_url = "{{second}}/v1"

[[models]]
name = "m"
upstreams = ["first", "second"]
upstream_models = { second = "m2" }
`

func TestFallbacks(t *testing.T) {
	for _, tt := range []failing{
		{name: "first upstream down", url: downURL, retried: true, result: "unreachable"},
		{name: "503", url: statusURL(503, 0), retried: true, result: "http_5xx"},
		{name: "429", url: statusURL(429, 0), retried: true, result: "http_429"},
		{name: "slow headers", url: statusURL(200, 5*time.Second), retried: true, result: "header_timeout"},
		{name: "400 is the client's", url: statusURL(400, 0), retried: false, result: "http_4xx", status: 400},
		{name: "a redirect is not followed", url: redirectURL, retried: true, result: "redirect"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			second := newScripted(t, "second", 0)
			p := newRouted(t, fallbackConfig, map[string]string{"first": tt.url(t), "second": second.URL})
			resp := p.post(t, "/v1/responses", ask("m"), nil)
			metricsText := p.get(t, "/metrics") // the attempts are counted before the answer starts
			if !strings.Contains(metricsText, fmt.Sprintf(`harnessflow_upstream_attempts_total{upstream="first",model="m",result=%q} 1`, tt.result)) {
				t.Errorf("/metrics lacks the first attempt (%s):\n%s", tt.result, metricLines(metricsText, "attempts"))
			}
			if !tt.retried {
				if resp.StatusCode != tt.status || second.requests.Load() != 0 {
					t.Errorf("HTTP %d, second upstream asked %d times; want %d and 0", resp.StatusCode, second.requests.Load(), tt.status)
				}
				return
			}
			evs := readSSE(t, resp.Body)
			if got := answer(evs); resp.StatusCode != 200 || terminal(t, evs).Name != "response.completed" || got != "second served m2" {
				t.Errorf("HTTP %d, answer %q; want the second upstream's", resp.StatusCode, got)
			}
			p.waitMetrics(t, `harnessflow_upstream_attempts_total{upstream="second",model="m",result="ok"} 1`,
				`harnessflow_routed_streams_total{upstream="second",model="m",outcome="completed"} 1`)
			if !strings.Contains(p.logs.String(), "the request goes to the next upstream") {
				t.Errorf("the failed attempt is not logged:\n%s", p.logs.String())
			}
		})
	}
}

// A failure after the client's stream started is not retried.
func TestFallbackNotAfterFirstByte(t *testing.T) {
	first := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"half an ans"},"finish_reason":null}]}`+"\n\n")
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close() // the upstream dies mid-stream
		}
	}))
	second := newScripted(t, "second", 0)
	p := newRouted(t, fallbackConfig, map[string]string{"first": first.URL, "second": second.URL})
	resp := p.post(t, "/v1/responses", ask("m"), nil)
	evs := readSSE(t, resp.Body)
	if end := terminal(t, evs); end.Name != "response.failed" || answer(evs) != "half an ans" {
		t.Errorf("%s %q, want response.failed after the first upstream's text", end.Name, answer(evs))
	}
	if n := second.requests.Load(); n != 0 {
		t.Errorf("the second upstream was asked %d times after the stream started", n)
	}
	p.waitMetrics(t, `harnessflow_routed_streams_total{upstream="first",model="m",outcome="failed"} 1`)
}

// waitMetrics waits (up to 5 s) until /metrics has every line of want: a
// stream is counted once its handler returns, just after the client read
// the last byte.
func (p *routed) waitMetrics(t *testing.T, want ...string) {
	t.Helper()
	var text string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		text = p.get(t, "/metrics")
		missing := ""
		for _, w := range want {
			if !strings.Contains(text, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("/metrics lacks %s:\n%s", missing, metricLines(text, "harnessflow_upstream_attempts", "harnessflow_routed", "harnessflow_config"))
			return
		}
	}
}

func metricLines(text string, subs ...string) string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		for _, s := range subs {
			if strings.Contains(sc.Text(), s) {
				out = append(out, sc.Text())
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

const reloadA = `
[upstreams.a]
base_url = "{{a}}/v1"
[[models]]
name = "m"
upstreams = ["a"]
`

const reloadB = `
[upstreams.b]
base_url = "{{b}}/v1"
[[models]]
name = "m"
upstreams = ["b"]
`

// Streams in flight across a reload finish on the config they started
// with; new requests use the new one at once; a broken file is refused and
// the running config kept.
func TestReloadUnderLoad(t *testing.T) {
	const streams = 32
	// a answers slowly: its streams are in flight while the config changes.
	a, b := newScripted(t, "A", 10), newScripted(t, "B", 0)
	urls := map[string]string{"a": a.URL, "b": b.URL}
	p := newRouted(t, reloadA, urls)

	var wg sync.WaitGroup
	bodies := make([][]byte, streams)
	errs := make([]error, streams)
	for i := range streams {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, p.ts.URL+"/v1/responses", strings.NewReader(ask("m")))
			req.Header.Set("Content-Type", "application/json")
			resp, err := p.client.Do(req)
			if err != nil {
				errs[i] = err
				return
			}
			defer resp.Body.Close()
			bodies[i], errs[i] = io.ReadAll(resp.Body)
		})
	}
	deadline := time.Now().Add(10 * time.Second)
	for a.requests.Load() < streams && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if a.requests.Load() != streams {
		t.Fatalf("only %d streams reached the first upstream", a.requests.Load())
	}
	p.rewrite(t, reloadB, urls)
	if _, err := p.srv.Reload(p.path); err != nil {
		t.Fatal(err)
	}
	// A new request goes to b at once, while a's streams are still running.
	resp := p.post(t, "/v1/responses", ask("m"), nil)
	if got := answer(readSSE(t, resp.Body)); got != "B served m" {
		t.Errorf("a request after the reload: %q, want b's answer", got)
	}
	wg.Wait()
	for i := range streams {
		if errs[i] != nil {
			t.Errorf("stream %d: %v", i, errs[i])
			continue
		}
		evs := readSSE(t, bytes.NewReader(bodies[i]))
		if end := terminal(t, evs); end.Name != "response.completed" || answer(evs) != "A served m" {
			t.Errorf("stream %d: %s %q, want completed by a", i, end.Name, answer(evs))
		}
	}

	// A broken file is refused; the running config stays.
	p.rewrite(t, strings.Replace(reloadB, `upstreams = ["b"]`, `upstreams = ["c"]`, 1), urls)
	if _, err := p.srv.Reload(p.path); err == nil || !strings.Contains(err.Error(), `unknown upstream "c"`) {
		t.Errorf("Reload of a broken file: %v", err)
	}
	resp = p.post(t, "/v1/responses", ask("m"), nil)
	if got := answer(readSSE(t, resp.Body)); got != "B served m" {
		t.Errorf("after a refused reload: %q, want b's answer", got)
	}
	p.waitMetrics(t,
		`harnessflow_config_reloads_total{result="ok"} 1`,
		`harnessflow_config_reloads_total{result="refused"} 1`,
		fmt.Sprintf(`harnessflow_routed_streams_total{upstream="a",model="m",outcome="completed"} %d`, streams),
		`harnessflow_routed_streams_total{upstream="b",model="m",outcome="completed"} 2`)
	if !strings.Contains(p.logs.String(), "configuration refused; the running one is kept") {
		t.Errorf("the refused reload is not logged")
	}
}

// A model entry's capabilities shape the request sent upstream (its one
// effort taken for the request's); an entry without any leaves the model to
// the built-in table.
func TestRoutedCaps(t *testing.T) {
	var mu sync.Mutex
	bodies := map[string]string{}
	h := scripted.New(nil)
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct{ Model string }
		_ = json.Unmarshal(body, &m)
		mu.Lock()
		bodies[m.Model] = string(body)
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	p := newRouted(t, `
[upstreams.a]
base_url = "{{a}}/v1"
[[models]]
name = "effortful"
upstreams = ["a"]
upstream_model = "local-model-1"
reasoning = "reasoning_effort"
efforts = ["low"]
[[models]]
name = "plain"
upstreams = ["a"]
upstream_model = "local-model-2"
`, map[string]string{"a": up.URL})
	withEffort := func(model string) string {
		return strings.Replace(ask(model), `"stream":true`, `"stream":true,"reasoning":{"effort":"medium"}`, 1)
	}
	for _, model := range []string{"effortful", "plain"} {
		resp := p.post(t, "/v1/responses", withEffort(model), nil)
		if end := terminal(t, readSSE(t, resp.Body)); end.Name != "response.completed" {
			t.Fatalf("%s: %s", model, end.Name)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if b := bodies["local-model-1"]; !strings.Contains(b, `"reasoning_effort":"low"`) {
		t.Errorf("the entry's reasoning form and efforts did not shape the request: %s", b)
	}
	// An unknown model: the native route's default form, the effort as asked.
	if b := bodies["local-model-2"]; !strings.Contains(b, `"reasoning_effort":"medium"`) {
		t.Errorf("an entry without caps: %s", b)
	}
}

// Each upstream gets its own key (Bearer, or x-api-key on the messages
// wire), never the client's, and its extra headers.
func TestRoutedCredentialsAndHeaders(t *testing.T) {
	t.Setenv("HF_ROUTING_TEST_KEY_A", "sk-routing-test-a")
	t.Setenv("HF_ROUTING_TEST_KEY_B", "sk-routing-test-b")
	var mu sync.Mutex
	seen := map[string]http.Header{}
	record := func(name string, h http.Handler) *httptest.Server {
		return newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen[name] = r.Header.Clone()
			mu.Unlock()
			h.ServeHTTP(w, r)
		}))
	}
	a, b := record("a", scripted.New(nil)), record("b", scripted.New(nil))
	p := newRouted(t, `
[upstreams.a]
base_url = "{{a}}/v1"
api_key_env = "HF_ROUTING_TEST_KEY_A"
headers = { "X-Title" = "harnessflow test", "HTTP-Referer" = "https://example.com" }
[upstreams.b]
base_url = "{{b}}/v1"
wire = "messages"
api_key_env = "HF_ROUTING_TEST_KEY_B"
[[models]]
name = "chat-model"
upstreams = ["a"]
[[models]]
name = "claude-x"
upstreams = ["b"]
harness = "claude-code"
`, map[string]string{"a": a.URL, "b": b.URL})
	for _, model := range []string{"chat-model", "claude-x"} {
		resp := p.post(t, "/v1/responses", ask(model), map[string]string{"Authorization": "Bearer sk-the-clients-own"})
		if end := terminal(t, readSSE(t, resp.Body)); end.Name != "response.completed" {
			t.Fatalf("%s: %s", model, end.Name)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	ha, hb := seen["a"], seen["b"]
	if ha.Get("Authorization") != "Bearer sk-routing-test-a" || ha.Get("X-Title") != "harnessflow test" || ha.Get("Http-Referer") != "https://example.com" {
		t.Errorf("upstream a got Authorization %q, X-Title %q, HTTP-Referer %q", ha.Get("Authorization"), ha.Get("X-Title"), ha.Get("Http-Referer"))
	}
	if hb.Get("X-Api-Key") != "sk-routing-test-b" || hb.Get("Authorization") != "" || hb.Get("X-Title") != "" {
		t.Errorf("upstream b got x-api-key %q, Authorization %q, X-Title %q", hb.Get("X-Api-Key"), hb.Get("Authorization"), hb.Get("X-Title"))
	}
}

// max_conns caps the connections to an upstream: requests over it wait
// for one to be free.
func TestRoutedMaxConns(t *testing.T) {
	var active, peak atomic.Int64
	h := scripted.New(&scripted.Script{DelayMS: 5, Turns: []scripted.Turn{{Text: "one at a time"}}})
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := active.Add(1)
		defer active.Add(-1)
		for {
			old := peak.Load()
			if n <= old || peak.CompareAndSwap(old, n) {
				break
			}
		}
		h.ServeHTTP(w, r)
	}))
	p := newRouted(t, "[upstreams.a]\nbase_url = \"{{a}}/v1\"\nmax_conns = 1\n[[models]]\nname = \"m\"\nupstreams = [\"a\"]\n",
		map[string]string{"a": up.URL})
	var wg sync.WaitGroup
	texts := make([]string, 4)
	for i := range texts {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, p.ts.URL+"/v1/responses", strings.NewReader(ask("m")))
			req.Header.Set("Content-Type", "application/json")
			resp, err := p.client.Do(req)
			if err != nil {
				texts[i] = err.Error()
				return
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			texts[i] = string(body)
		})
	}
	wg.Wait()
	for i, text := range texts {
		if !strings.Contains(text, "event: response.completed") {
			t.Errorf("stream %d did not complete: %.300s", i, text)
		}
	}
	if got := peak.Load(); got != 1 {
		t.Errorf("the upstream served %d requests at once, want 1 (max_conns)", got)
	}
}
