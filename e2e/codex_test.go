package e2e

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/harnessflow/harnessflow/harness"
	_ "github.com/harnessflow/harnessflow/harness/all" // every harness route
	"github.com/harnessflow/harnessflow/scripted"
	"github.com/harnessflow/harnessflow/server"
)

// TestMain checks that no test leaves a goroutine of the in-process proxy
// or scripted model behind.
// When the test binary is started as the MCP server of the MCP test
// (mcp_test.go), it serves MCP on stdin and stdout instead.
func TestMain(m *testing.M) {
	if os.Getenv(mcpProbeEnv) != "" {
		os.Exit(serveMCPProbe(os.Stdin, os.Stdout, os.Getenv(mcpProbeEnv)))
	}
	goleak.VerifyTestMain(m)
}

// codexEnv names the environment variable that enables the Codex tests.
const codexEnv = "HARNESSFLOW_CODEX"

const (
	// codexTimeout bounds one `codex exec` run.
	codexTimeout = 60 * time.Second
	// codexModel is a model of Codex's bundled catalog, so Codex sends the
	// request it sends for real models (an unknown name gets fallback
	// metadata and a warning). The scripted model answers any name.
	codexModel = "gpt-5.5"
	// apiKeyEnv and apiKey are the provider credential Codex is given; the
	// proxy passes it through and the scripted model ignores it.
	apiKeyEnv = "HARNESSFLOW_E2E_API_KEY"
	apiKey    = "sk-harnessflow-e2e"
	// prompt is what Codex is asked; the scripted model does not read it.
	prompt = "Say hello using the shell."
	// helloOutput is what the default script's command prints.
	helloOutput = "hello from harnessflow"
)

// TestCodex runs the real Codex CLI (`codex exec`) against the proxy. It
// skips unless HARNESSFLOW_CODEX names a Codex binary; scripts/e2e-codex.sh
// installs the pinned release and sets it.
func TestCodex(t *testing.T) {
	bin := os.Getenv(codexEnv)
	if bin == "" {
		t.Skipf("set %s to a Codex CLI binary to run (scripts/e2e-codex.sh does)", codexEnv)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s: %v", codexEnv, err)
	}

	// The default script: one call of Codex's shell tool running
	// `echo hello from harnessflow`, then a final text quoting its output.
	t.Run("ShellToolCall", func(t *testing.T) {
		t.Parallel()
		p := startProxy(t, scripted.Default())
		run := runCodex(t, bin, p.url+"/v1", true)
		if run.exitCode != 0 {
			t.Fatalf("codex exited with %d, want 0\n%s", run.exitCode, run)
		}
		ev := parseEvents(t, run)
		cmd := ev.command(t, scripted.DefaultCommand)
		if !strings.Contains(cmd.AggregatedOutput, helloOutput) {
			t.Errorf("command output = %q, want it to contain %q", cmd.AggregatedOutput, helloOutput)
		}
		final := ev.finalMessage(t)
		if !strings.Contains(final, "It printed:\n\n"+helloOutput) {
			t.Errorf("final message does not quote the tool output %q:\n%s", helloOutput, final)
		}
		p.stop(t)
		p.checkCompleted(t, "/v1/responses", "", 2)
	})

	// The harness route: the same exchange through /h/native/v1, with a
	// command whose output appears in neither the command nor the script,
	// and which leaves a file in the work directory.
	t.Run("NativeHarnessRoute", func(t *testing.T) {
		t.Parallel()
		const (
			command = "printf 'native %s ok\\n' route | tee proof.txt"
			output  = "native route ok"
		)
		yes, no := true, false
		script := &scripted.Script{Turns: []scripted.Turn{
			{When: &scripted.Match{Tools: &yes, ToolResult: &no}, Text: "Running it.",
				ToolCalls: []scripted.ToolCall{{Command: command}}},
			{When: &scripted.Match{ToolResult: &yes}, Text: "The shell said: {{tool_output}}"},
		}}
		p := startProxy(t, script)
		run := runCodex(t, bin, p.url+"/h/native/v1", true)
		checkProofRun(t, run, output)
		p.stop(t)
		p.checkCompleted(t, "/h/native/v1/responses", "native", 2)
	})

	// The harness routes: the same tool-using exchange through
	// /h/NAME/v1, the upstream seeing the harness's own request shape.
	for _, hr := range harnessRoutes(t) {
		label := cmp.Or(hr.label, hr.name)
		t.Run("Harness/"+label, func(t *testing.T) {
			t.Parallel()
			if hr.needs != nil {
				hr.needs(t)
			}
			command := "printf '%s route ok\\n' " + label + " | tee proof.txt"
			output := label + " route ok"
			p := startProxy(t, hr.script(command), withWire(hr.wire))
			run := runCodexModel(t, bin, p.url+"/h/"+hr.name+"/v1", cmp.Or(hr.model, codexModel), true)
			if hr.after != nil {
				hr.after(t, run)
			}
			final := checkProofRun(t, run, output)
			p.stop(t)
			p.checkUpstream(t, "/h/"+hr.name+"/v1/responses", hr.name, 2, 2+hr.titles)
			if hr.route != nil {
				for i, r := range p.log.records() {
					if want := hr.route(); r.route != want {
						t.Errorf("proxy request %d went by route %q, want %q", i+1, r.route, want)
					}
				}
			}
			bodies := p.upstreamBodies()
			if len(bodies) > hr.titles && hr.checkBody != nil {
				if err := hr.checkBody(bodies[hr.titles]); err != nil {
					t.Errorf("first upstream request: %v\n%s", err, bodies[hr.titles])
				}
			}
			if hr.checkBodies != nil {
				if err := hr.checkBodies(bodies); err != nil {
					t.Errorf("upstream requests: %v", err)
				}
			}
			t.Logf("codex final message: %s", final)
		})
	}

	defaultModelTests(t, bin)

	// An upstream HTTP 400: the proxy answers 400 with the upstream's
	// message, and Codex (retries off) prints the body and fails.
	t.Run("UpstreamError400", func(t *testing.T) {
		t.Parallel()
		const message = "harnessflow e2e: scripted bad request"
		p := startProxy(t, &scripted.Script{Turns: []scripted.Turn{{Status: http.StatusBadRequest, Error: message}}})
		run := runCodex(t, bin, p.url+"/v1", false)
		if run.exitCode == 0 {
			t.Fatalf("codex exited with 0, want non-zero\n%s", run)
		}
		body := `{"error":{"message":"` + message + `","type":"invalid_request_error"`
		if !strings.Contains(run.stderr, "ERROR: "+body) {
			t.Errorf("codex did not print the error body %s\n%s", body, run)
		}
		p.stop(t)
		recs := p.log.records()
		if len(recs) != 1 {
			t.Fatalf("proxy logged %d requests, want 1 (retries are off): %+v", len(recs), recs)
		}
		if r := recs[0]; r.status != http.StatusBadRequest || r.upstreamStatus != http.StatusBadRequest || r.outcome != "upstream_error" {
			t.Errorf("proxy request = %+v, want status 400, upstream_status 400, outcome upstream_error", r)
		}
		if n := p.upstreamRequests(); n != 1 {
			t.Errorf("scripted model got %d requests, want 1", n)
		}
		if s := p.srv.Metrics(); s.Started != 0 {
			t.Errorf("metrics: %d streams started, want 0", s.Started)
		}
	})
}

// ---------------------------------------------------------------------------
// the proxy

// proxy is a harnessflow server running in-process in front of a scripted
// model, both on loopback ports.
type proxy struct {
	wire harness.Wire // the upstream wire ("" is chat)
	url  string       // the proxy's base URL, without /v1
	srv  *server.Server
	log  *requestLog
	stop func(t *testing.T) // shuts the proxy down; later calls do nothing

	mu       sync.Mutex
	upstream []string // "METHOD path auth-ok" of each request the scripted model got
	bodies   [][]byte // the body of each request the scripted model got
}

// messages reports whether the proxy's upstream wire is the Messages wire.
func (p *proxy) messages() bool { return p.wire == harness.WireMessages }

// upstreamBodies returns the bodies the scripted model got, in order.
func (p *proxy) upstreamBodies() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.bodies)
}

// harnessRoute is one harness route the real Codex is driven through.
type harnessRoute struct {
	name string
	// label names the subtest and the proof (name when empty); model is
	// the model in Codex's config (codexModel when empty); route, when
	// set, gives the route every request must take.
	label, model string
	route        func() string
	// script plays one tool-using exchange running command.
	script func(command string) *scripted.Script
	// checkBody checks the first request the upstream got (after the
	// title requests).
	checkBody func(body []byte) error
	// titles is how many title requests the upstream gets before the
	// first main request.
	titles int
	// checkBodies, when set, checks every request the upstream got, in
	// order.
	checkBodies func(bodies [][]byte) error
	// wire is the upstream wire of the route ("" is chat).
	wire harness.Wire
	// needs, when set, runs first and may skip the test (a tool the
	// harness needs on the machine).
	needs func(t *testing.T)
	// after, when set, runs right after Codex (to clean up what the
	// harness left on the machine).
	after func(t *testing.T, run codexRun)
}

// withWire sets the proxy's upstream wire ("" leaves chat).
func withWire(w harness.Wire) func(*server.Config) {
	return func(c *server.Config) {
		if w != "" {
			c.Wire = w
		}
	}
}

// toolScript calls the client's shell tool (as the harness presents it)
// with command, then quotes its output.
func toolScript(command string) *scripted.Script {
	yes, no := true, false
	return &scripted.Script{Turns: []scripted.Turn{
		{When: &scripted.Match{Tools: &yes, ToolResult: &no}, Text: "Running it.",
			ToolCalls: []scripted.ToolCall{{Command: command}}},
		{When: &scripted.Match{ToolResult: &yes}, Text: "The shell said: {{tool_output}}"},
	}}
}

// routeChecks are the harness routes' own parts, by harness name: what the
// upstream must see of the harness's requests, the script of a text
// protocol, the title requests, a tool the harness needs on the machine.
// A registered harness without an entry is driven with toolScript and the
// common checks (its route, the proof file, the completed streams).
var routeChecks = map[string]harnessRoute{
	harness.NameMinimal:        {checkBody: checkMinimalBody},
	harness.NameKimiCLI:        {checkBody: checkKimiCLIBody},
	harness.NameQwenCode:       {checkBody: checkQwenCodeBody},
	harness.NameOpenCode:       {titles: 1, checkBodies: checkOpenCodeBodies},
	harness.NameClaudeCode:     {titles: 1, checkBodies: checkClaudeCodeBodies},
	harness.NameClaudeCodeBare: {titles: 1, checkBodies: checkClaudeCodeBareBodies},
	harness.NameZCode:          {checkBody: checkZCodeBody},
	harness.NameSWEAgent:       {script: sweAgentScript, checkBody: checkSWEAgentBody},
	harness.NameMiniSWEAgent:   {script: miniSWEScript, checkBody: checkMiniSWEBody},
	harness.NameTerminus2:      {script: terminusScript, checkBody: checkTerminusBody, needs: needTmux, after: stopTmux},
	harness.NameKimiCode:       {checkBodies: checkKimiCodeBodies},
	harness.NameDeepSeekTUI:    {checkBodies: checkDeepSeekTUIBodies},
	harness.NamePi:             {checkBodies: checkPiBodies},
	harness.NameLittleCoder:    {checkBodies: checkLittleCoderBodies},
}

// extraRoutes are the routes beyond one per registered harness: /h/auto/,
// which picks a harness by the model's name.
var extraRoutes = []harnessRoute{
	{name: harness.NameAuto, label: "auto-qwen", model: "Qwen3-Coder-Next", script: toolScript, checkBody: checkAutoQwenBody,
		route: func() string { return "ChatHarness(QwenCode)" }},
	{name: harness.NameAuto, label: "auto-kimi", model: "kimi-k2.5", script: toolScript, route: autoKimiRoute},
}

// harnessRoutes lists the harness routes of the end-to-end test, from the
// registry: one per registered harness but native (NativeHarnessRoute
// drives that), on the first wire the scripted model answers where the
// harness's route is its own (ChatHarness on chat; MessagesHarness on
// messages, for the harnesses that route chat otherwise or shape messages
// only), with its parts from routeChecks and the route Resolve gives; then
// extraRoutes. A registered harness with no such wire, and an entry of
// routeChecks that names no registered harness, fail the test.
func harnessRoutes(t *testing.T) []harnessRoute {
	t.Helper()
	var routes []harnessRoute
	registered := map[string]bool{}
	for _, spec := range harness.All() {
		registered[spec.Name] = true
		if spec.Name == harness.NativeName {
			continue
		}
		hr := routeChecks[spec.Name]
		hr.name = spec.Name
		if hr.script == nil {
			hr.script = toolScript
		}
		found := false
		for _, w := range scripted.Wires() {
			r, err := harness.Resolve(w, spec.Name)
			if err != nil || r.Kind != harness.RouteChatHarness && r.Kind != harness.RouteMessagesHarness {
				continue
			}
			want := r.String()
			hr.wire, hr.route, found = w, func() string { return want }, true
			break
		}
		if !found {
			t.Errorf("harness %q has no route of its own on a wire the scripted model answers (%v): the end-to-end test cannot drive it", spec.Name, scripted.Wires())
			continue
		}
		routes = append(routes, hr)
	}
	for name := range routeChecks {
		if !registered[name] {
			t.Errorf("routeChecks names %q, which is not a registered harness", name)
		}
	}
	if len(routes) < 10 {
		t.Fatalf("only %d harness routes: the harnesses are not all registered", len(routes))
	}
	return append(routes, extraRoutes...)
}

// TestHarnessRoutes derives the harness routes without Codex, so that a
// registered harness the end-to-end test cannot drive, or a stale entry
// of routeChecks, fails the plain `go test ./e2e/` too; each route's wire
// is one its harness shapes.
func TestHarnessRoutes(t *testing.T) {
	for _, hr := range harnessRoutes(t) {
		if hr.name == harness.NameAuto {
			continue
		}
		spec, ok := harness.Lookup(hr.name)
		if !ok || !spec.Supports(hr.wire) || hr.route == nil {
			t.Errorf("route %s: wire %s is not one the harness shapes", hr.name, hr.wire)
		}
	}
}

// checkMinimalBody: minimal's system prompt first, usage asked for, no
// tool_choice.
func checkMinimalBody(body []byte) error {
	var b struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		StreamOptions json.RawMessage `json:"stream_options"`
		ToolChoice    json.RawMessage `json:"tool_choice"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return err
	}
	if len(b.Messages) == 0 || b.Messages[0].Role != "system" || !bytes.Contains(b.Messages[0].Content, []byte("software engineer")) {
		return fmt.Errorf("the first message is not minimal's system prompt")
	}
	if string(b.StreamOptions) != `{"include_usage":true}` || b.ToolChoice != nil {
		return fmt.Errorf("not minimal's body: stream_options %s, tool_choice %s", b.StreamOptions, b.ToolChoice)
	}
	return nil
}

// startProxy starts the scripted model playing script and the proxy in
// front of it, as `harnessflow serve` does without --upstream, the proxy's
// configuration edited by opts. Both stop when the test ends.
func startProxy(t *testing.T, script *scripted.Script, opts ...func(*server.Config)) *proxy {
	t.Helper()
	if err := script.Check(); err != nil {
		t.Fatalf("script: %v", err)
	}
	return startProxyFor(t, scripted.New(script), opts...)
}

// startUpstreamProxy starts the proxy in front of model, a chat server,
// with its configuration edited by edit (nil: none).
func startUpstreamProxy(t *testing.T, model http.Handler, edit func(*server.Config)) *proxy {
	t.Helper()
	if edit == nil {
		return startProxyFor(t, model)
	}
	return startProxyFor(t, model, edit)
}

// startProxyFor starts model and the proxy in front of it (see startProxy).
func startProxyFor(t *testing.T, model http.Handler, opts ...func(*server.Config)) *proxy {
	t.Helper()
	var cfg server.Config
	for _, o := range opts {
		o(&cfg)
	}
	p := &proxy{log: &requestLog{}, wire: cfg.Wire}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body) // a short read shows in the scripted model's answer
		r.Body = io.NopCloser(bytes.NewReader(body))
		p.mu.Lock()
		auth := r.Header.Get("Authorization") == "Bearer "+apiKey
		if p.wire == harness.WireMessages { // Codex's key travels as x-api-key, and only there
			auth = r.Header.Get("x-api-key") == apiKey && r.Header.Get("Authorization") == ""
		}
		p.upstream = append(p.upstream, fmt.Sprintf("%s %s auth-ok=%t", r.Method, r.URL.Path, auth))
		p.bodies = append(p.bodies, body)
		p.mu.Unlock()
		model.ServeHTTP(w, r)
	}))
	t.Cleanup(up.Close)

	ctx, cancel := context.WithCancel(context.Background())
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	p.url = "http://" + ln.Addr().String()
	cfg.Upstream, cfg.Logger = up.URL+"/v1", slog.New(p.log)
	p.srv = server.New(cfg)
	done := make(chan error, 1)
	go func() { done <- p.srv.Serve(ctx, ln) }()
	var once sync.Once
	p.stop = func(t *testing.T) {
		once.Do(func() {
			cancel() // Serve waits for the requests in flight, so their records are logged
			if err := <-done; err != nil {
				t.Errorf("proxy: %v", err)
			}
		})
	}
	t.Cleanup(func() { p.stop(t) })
	return p
}

// upstreamRequests returns how many requests the scripted model got.
func (p *proxy) upstreamRequests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.upstream)
}

// checkCompleted checks, after stop, that the proxy served exactly n
// requests on path for harness, each a stream that completed, and that each
// went upstream as a chat request carrying Codex's credential.
func (p *proxy) checkCompleted(t *testing.T, path, harness string, n int) {
	t.Helper()
	p.checkUpstream(t, path, harness, n, n)
}

// checkUpstream is checkCompleted for a proxy that sends upstream requests
// besides the n client requests (title requests): the upstream gets
// upstream requests in all.
func (p *proxy) checkUpstream(t *testing.T, path, harness string, n, upstream int) {
	t.Helper()
	recs := p.log.records()
	if len(recs) != n {
		t.Errorf("proxy logged %d requests, want %d: %+v", len(recs), n, recs)
	}
	for i, r := range recs {
		if r.path != path || r.harness != harness || r.status != http.StatusOK || r.outcome != "completed" {
			t.Errorf("proxy request %d = %+v, want path %s, harness %q, status 200, outcome completed", i+1, r, path, harness)
		}
	}
	s := p.srv.Metrics()
	if s.Started != uint64(n) || s.Completed != uint64(n) || s.Failed != 0 || s.Unended != 0 {
		t.Errorf("metrics: started %d, completed %d, failed %d, unended %d; want %d, %d, 0, 0",
			s.Started, s.Completed, s.Failed, s.Unended, n, n)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.upstream) != upstream {
		t.Errorf("scripted model got %d requests, want %d: %q", len(p.upstream), upstream, p.upstream)
	}
	for _, u := range p.upstream {
		want := "POST /v1/chat/completions auth-ok=true"
		if p.messages() {
			want = "POST /v1/messages auth-ok=true"
		}
		if u != want {
			t.Errorf("scripted model request %q, want %q (Codex's key)", u, want)
		}
	}
}

// requestLog is a slog.Handler keeping the proxy's per-request records
// ("harnessflow request"); other records are dropped.
type requestLog struct {
	mu   sync.Mutex
	recs []requestRecord
}

// requestRecord is one "harnessflow request" log record.
type requestRecord struct {
	path, harness, outcome, route string
	status, upstreamStatus        int
}

// Enabled implements slog.Handler.
func (*requestLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

// Handle implements slog.Handler.
func (h *requestLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "harnessflow request" {
		return nil
	}
	var rec requestRecord
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "path":
			rec.path = a.Value.String()
		case "harness":
			rec.harness = a.Value.String()
		case "route":
			rec.route = a.Value.String()
		case "outcome":
			rec.outcome = a.Value.String()
		case "status":
			rec.status = int(a.Value.Int64())
		case "upstream_status":
			rec.upstreamStatus = int(a.Value.Int64())
		}
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, rec)
	return nil
}

// WithAttrs implements slog.Handler (the attributes are not kept).
func (h *requestLog) WithAttrs([]slog.Attr) slog.Handler { return h }

// WithGroup implements slog.Handler (groups are not kept).
func (h *requestLog) WithGroup(string) slog.Handler { return h }

func (h *requestLog) records() []requestRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]requestRecord(nil), h.recs...)
}

// ---------------------------------------------------------------------------
// the client

// codexRun is the result of one `codex exec`.
type codexRun struct {
	exitCode       int
	stdout, stderr string
	workDir        string
}

func (r codexRun) String() string {
	return fmt.Sprintf("--- codex stdout:\n%s\n--- codex stderr:\n%s", r.stdout, r.stderr)
}

// configTOML is Codex's config.toml: one provider at the proxy, no retries
// (so an error shows at once), nothing reported anywhere else. runCodexModel
// puts the model line before it.
const configTOML = `model_provider = "harnessflow"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.harnessflow]
name = "harnessflow"
base_url = %q
wire_api = "responses"
env_key = %q
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 30000

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"

[features]
plugins = false
`

// runCodex runs `codex exec prompt` with baseURL as its provider, in fresh
// HOME, CODEX_HOME and work directories, stdin from /dev/null, at most
// codexTimeout; jsonl asks for --json events on stdout. It fails the test
// on a timeout and when Codex leaves a process behind.
func runCodex(t *testing.T, bin, baseURL string, jsonl bool) codexRun {
	t.Helper()
	return runCodexModel(t, bin, baseURL, codexModel, jsonl)
}

// runCodexModel is runCodex with model in Codex's config; "" leaves the
// model out, so Codex picks its default model (and that model's request
// shape: see defaultModelTests).
func runCodexModel(t *testing.T, bin, baseURL, model string, jsonl bool) codexRun {
	t.Helper()
	return runCodexConfig(t, bin, baseURL, model, jsonl, "")
}

// runCodexConfig is runCodexModel with extra appended to Codex's
// config.toml (tables of its own, such as an MCP server).
func runCodexConfig(t *testing.T, bin, baseURL, model string, jsonl bool, extra string) codexRun {
	t.Helper()
	root := t.TempDir()
	home := filepath.Join(root, "home")
	codexHome := filepath.Join(root, "codex-home")
	work := filepath.Join(root, "work")
	for _, d := range []string{home, codexHome, work} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	config := fmt.Sprintf(configTOML, baseURL, apiKeyEnv)
	if model != "" {
		config = fmt.Sprintf("model = %q\n", model) + config
	}
	config += extra
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}

	args := []string{"exec", "--skip-git-repo-check", "--ephemeral", "--strict-config", "--color", "never",
		"-C", work, "-s", "danger-full-access"}
	if jsonl {
		args = append(args, "--json")
	}
	args = append(args, prompt)
	ctx, cancel := context.WithTimeout(context.Background(), codexTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = work
	// Only what Codex needs: no OPENAI_* variables, no proxies, no real HOME.
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"CODEX_HOME=" + codexHome,
		apiKeyEnv + "=" + apiKey,
		"NO_PROXY=127.0.0.1,localhost",
		"no_proxy=127.0.0.1,localhost",
		"RUST_LOG=error",
	}
	if tmp := os.Getenv("TMPDIR"); tmp != "" {
		cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr // Stdin stays nil: /dev/null
	ownProcessGroup(cmd)
	cmd.WaitDelay = 5 * time.Second

	start := time.Now()
	err := cmd.Run()
	run := codexRun{stdout: stdout.String(), stderr: stderr.String(), workDir: work}
	if cmd.Process != nil {
		reapGroup(t, cmd.Process.Pid)
	}
	t.Logf("codex exec ran %v", time.Since(start).Round(time.Millisecond))
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("codex exec did not finish in %v (killed)\n%s", codexTimeout, run)
	case err == nil:
	case errors.As(err, &exitErr):
		run.exitCode = exitErr.ExitCode()
	default:
		t.Fatalf("codex exec: %v\n%s", err, run)
	}
	return run
}

// reapGroup waits briefly for the rest of Codex's process group to exit,
// then kills what is left and fails the test.
func reapGroup(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Second); groupAlive(pid); {
		if time.Now().After(deadline) {
			t.Errorf("codex left processes behind (process group %d); killing them", pid)
			if err := killGroup(pid); err != nil {
				t.Errorf("kill process group %d: %v", pid, err)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// codexEvents are the JSONL events of `codex exec --json`.
type codexEvents []codexEvent

// codexEvent is one `codex exec --json` event, the fields the tests read.
type codexEvent struct {
	Type  string     `json:"type"`
	Item  *codexItem `json:"item"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	Message string `json:"message"`
}

// codexItem is the item of an item.* event.
type codexItem struct {
	Type             string `json:"type"`
	Text             string `json:"text"`
	Command          string `json:"command"`
	AggregatedOutput string `json:"aggregated_output"`
	ExitCode         *int   `json:"exit_code"`
	Status           string `json:"status"`
}

// codexModelVariant loads a model table, written to a temporary file, that
// picks variant of harness for Codex's model.
func codexModelVariant(t *testing.T, harnessName, variant string) *harness.ModelTable {
	t.Helper()
	caps := filepath.Join(t.TempDir(), "models.json")
	table := `[{"match":"` + codexModel + `","variants":{"` + harnessName + `":"` + variant + `"}}]`
	if err := os.WriteFile(caps, []byte(table), 0o600); err != nil {
		t.Fatal(err)
	}
	models, err := harness.LoadModelTable(caps)
	if err != nil {
		t.Fatal(err)
	}
	return models
}

// checkProofRun checks a Codex run whose task was one shell command that
// prints output and writes it to proof.txt: Codex exited 0, the command ran
// and printed output, the work directory's proof.txt holds it, and the
// final message quotes it after "The shell said: ". It returns the final
// message for the caller's own checks.
func checkProofRun(t *testing.T, run codexRun, output string) string {
	t.Helper()
	if run.exitCode != 0 {
		t.Fatalf("codex exited with %d, want 0\n%s", run.exitCode, run)
	}
	ev := parseEvents(t, run)
	if cmd := ev.command(t, "proof.txt"); !strings.Contains(cmd.AggregatedOutput, output) {
		t.Errorf("command output = %q, want it to contain %q", cmd.AggregatedOutput, output)
	}
	if data, err := os.ReadFile(filepath.Join(run.workDir, "proof.txt")); err != nil || strings.TrimSpace(string(data)) != output {
		t.Errorf("work dir proof.txt = %q, %v; want %q", data, err, output)
	}
	final := ev.finalMessage(t)
	if !strings.Contains(final, "The shell said: "+output) {
		t.Errorf("final message does not quote the tool output %q:\n%s", output, final)
	}
	return final
}

// parseEvents decodes stdout of a --json run and checks that its one turn
// completed.
func parseEvents(t *testing.T, run codexRun) codexEvents {
	t.Helper()
	var evs codexEvents
	sc := bufio.NewScanner(strings.NewReader(run.stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var ev codexEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("codex --json line %q: %v\n%s", line, err, run)
		}
		evs = append(evs, ev)
	}
	var completed int
	for _, ev := range evs {
		switch ev.Type {
		case "turn.completed":
			completed++
		case "turn.failed", "error":
			t.Errorf("codex event %s: %s%s", ev.Type, ev.Message, ev.errorMessage())
		}
	}
	if completed != 1 {
		t.Fatalf("codex reported %d completed turns, want 1\n%s", completed, run)
	}
	return evs
}

func (ev codexEvent) errorMessage() string {
	if ev.Error == nil {
		return ""
	}
	return ev.Error.Message
}

// command returns the one completed command execution whose command line
// contains want, and checks that it succeeded.
func (evs codexEvents) command(t *testing.T, want string) codexItem {
	t.Helper()
	var found []codexItem
	for _, ev := range evs {
		if ev.Type == "item.completed" && ev.Item != nil && ev.Item.Type == "command_execution" {
			found = append(found, *ev.Item)
		}
	}
	if len(found) != 1 || !strings.Contains(found[0].Command, want) {
		t.Fatalf("codex ran commands %+v, want one running %q", found, want)
	}
	c := found[0]
	if c.Status != "completed" || c.ExitCode == nil || *c.ExitCode != 0 {
		t.Errorf("command %q: status %q, exit code %v; want completed, 0", c.Command, c.Status, fmtExit(c.ExitCode))
	}
	return c
}

func fmtExit(code *int) string {
	if code == nil {
		return "none"
	}
	return fmt.Sprint(*code)
}

// finalMessage returns the text of the last agent message.
func (evs codexEvents) finalMessage(t *testing.T) string {
	t.Helper()
	for i := len(evs) - 1; i >= 0; i-- {
		if ev := evs[i]; ev.Type == "item.completed" && ev.Item != nil && ev.Item.Type == "agent_message" {
			return ev.Item.Text
		}
	}
	t.Fatal("codex reported no agent message")
	return ""
}
