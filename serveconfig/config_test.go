package serveconfig

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	_ "github.com/harnessflow/harnessflow/harness/all"
	"github.com/harnessflow/harnessflow/stages/request"
)

// testEnv is the environment of the tests' files.
func testEnv(extra ...string) Options {
	env := map[string]string{
		"HF_TEST_CLIENT_KEYS": "client-key-0123456789abcdef, client-key-fedcba9876543210",
		"HF_TEST_HOSTED_KEY":  "hosted-secret-key",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		env[extra[i]] = extra[i+1]
	}
	return Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
}

func loadGood(t *testing.T) *Config {
	t.Helper()
	c, err := Load(filepath.Join("testdata", "serve.toml"), testEnv())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLoadGoodFile(t *testing.T) {
	c := loadGood(t)
	if want := []string{"127.0.0.1:8787", "[::1]:8787"}; !slices.Equal(c.Listen, want) {
		t.Errorf("Listen = %q, want %q", c.Listen, want)
	}
	if want := []string{"client-key-0123456789abcdef", "client-key-fedcba9876543210"}; !slices.Equal(c.ClientKeys, want) {
		t.Errorf("ClientKeys = %q, want %q", c.ClientKeys, want)
	}
	if c.Store != "memory" || c.DefaultModel != "qwen3-coder" {
		t.Errorf("Store %q DefaultModel %q", c.Store, c.DefaultModel)
	}
	if c.UpstreamHeaderTimeout != 90*time.Second || c.UpstreamIdleTimeout != 5*time.Minute || c.ShutdownGrace != 20*time.Second {
		t.Errorf("timeouts %v %v %v", c.UpstreamHeaderTimeout, c.UpstreamIdleTimeout, c.ShutdownGrace)
	}
	var names []string
	for _, u := range c.Upstreams {
		names = append(names, u.Name)
	}
	if want := []string{"local", "hosted", "anthropic"}; !slices.Equal(names, want) {
		t.Fatalf("upstreams %q, want the file's order %q", names, want)
	}
	for _, tt := range []struct {
		name                   string
		base                   string
		wire                   harness.Wire
		key                    string
		header, idle           time.Duration
		maxConns               int
		headers                map[string]string
		wantLine               int
		wantStringWithoutMatch string
	}{
		{name: "local", base: "http://127.0.0.1:8000/v1", wire: harness.WireChat, header: 90 * time.Second, idle: 5 * time.Minute, maxConns: 64, wantLine: 15},
		{name: "hosted", base: "https://api.example.com/v1", wire: harness.WireChat, key: "hosted-secret-key",
			header: 30 * time.Second, idle: 5 * time.Minute, wantLine: 21,
			headers: map[string]string{"X-Title": "harnessflow", "Http-Referer": "https://example.com"}},
		{name: "anthropic", base: "https://messages.example.com/v1", wire: harness.WireMessages, key: "sk-ant-test-key-0123456789",
			header: 90 * time.Second, idle: -1, wantLine: 28},
	} {
		u := c.Upstream(tt.name)
		if u == nil {
			t.Fatalf("no upstream %q", tt.name)
		}
		if u.BaseURL != tt.base || u.Wire != tt.wire || u.APIKey != tt.key || u.HeaderTimeout != tt.header ||
			u.IdleTimeout != tt.idle || u.MaxConns != tt.maxConns || u.Line != tt.wantLine {
			t.Errorf("upstream %s = %+v", tt.name, *u)
		}
		if tt.headers != nil && !mapsEqual(u.Headers, tt.headers) {
			t.Errorf("upstream %s headers %v, want %v", tt.name, u.Headers, tt.headers)
		}
		if u.APIKey != "" && strings.Contains(u.String(), u.APIKey) {
			t.Errorf("upstream %s: String() shows the key", tt.name)
		}
	}
	glm := c.Models[2]
	if glm.Name != "glm-4.6" || glm.Harness != "opencode" || *glm.Caps.Reasoning != request.ReasoningThinkingType ||
		!slices.Equal(glm.Caps.Efforts, []string{"low", "high"}) || *glm.Caps.MaxOutputTokens != 32768 ||
		glm.Caps.Variants["mini-swe-agent"] != "text" || glm.Line != 46 {
		t.Errorf("glm entry %+v", *glm)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// base is a valid file the error cases add to or edit.
const base = `
[upstreams.local]
base_url = "http://127.0.0.1:8000/v1"

[[models]]
name = "m"
upstreams = ["local"]
`

func TestParseErrors(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "serve.toml")
	if err := os.WriteFile(filepath.Join(dir, "empty.key"), []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "short.keys"), []byte("# clients\nshort\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		doc  string
		want []string // each error, as FILE:LINE: message (FILE is "F")
	}{
		{"unknown key in an upstream", "[upstreams.y]\nbase_url = \"http://h/v1\"\nx = 1\n[[models]]\nname = \"m\"\nupstreams = [\"y\"]\n",
			[]string{`F:3: unknown key "x" in [upstreams.y]`}},
		{"unknown keys at the top and in a model", "lisen = \"a:1\"\n" + base + "upstream = \"local\"\n",
			[]string{`F:1: unknown key "lisen" at the top level`, `F:9: unknown key "upstream" in [[models]] entry 1`}},
		{"dotted keys", "upstreams.local.base_url = \"http://h/v1\"\nupstreams.local.wire = \"grpc\"\n[[models]]\nname = \"m\"\nupstreams = [\"local\"]\n",
			[]string{`F:2: upstream "local": unknown wire "grpc"`}},
		{"unknown key in an inline table", "timeouts = { upstream_header = \"1m\", idle = \"1m\" }\n" + base,
			[]string{`F:1: unknown key "idle" in [timeouts]`}},
		{"TOML syntax", "[upstreams.local\n", []string{`F:1: `}},
		{"wrong type", base + "[upstreams.local2]\nbase_url = \"http://h\"\nmax_conns = \"ten\"\n",
			[]string{`F:10: upstreams.local2.max_conns: cannot decode TOML string`}},
		{"bad duration", "[timeouts]\nupstream_idle = \"5 minutes\"\n" + base,
			[]string{`F:2: timeouts.upstream_idle: want a duration such as "30s" or "2m"`}},
		{"bad URL scheme", "[upstreams.local]\nbase_url = \"ftp://user:pw@h/v1\"\n[[models]]\nname = \"m\"\nupstreams = [\"local\"]\n",
			[]string{`F:2: upstream "local": base_url "ftp://user:xxxxx@h/v1": want http://host[:port][/path] or https://…`}},
		{"URL not parsable", "[upstreams.local]\nbase_url = \"http://h:port/v1\"\n[[models]]\nname = \"m\"\nupstreams = [\"local\"]\n",
			[]string{`F:2: upstream "local": base_url is not a URL: invalid port ":port" after host`}},
		{"no base URL", "[upstreams.local]\nwire = \"chat\"\n[[models]]\nname = \"m\"\nupstreams = [\"local\"]\n",
			[]string{`F:1: upstream "local": no base_url`}},
		{"unknown wire", base + "[upstreams.b]\nbase_url = \"http://h\"\nwire = \"grpc\"\n",
			[]string{`F:10: upstream "b": unknown wire "grpc": want responses, chat or messages`}},
		{"missing key env", base + "[upstreams.b]\nbase_url = \"http://h\"\napi_key_env = \"HF_TEST_UNSET\"\n",
			[]string{`F:10: upstream "b": api_key_env: environment variable HF_TEST_UNSET is not set or empty`}},
		{"empty key env", base + "[upstreams.b]\nbase_url = \"http://h\"\napi_key_env = \"HF_TEST_EMPTY\"\n",
			[]string{`F:10: upstream "b": api_key_env: environment variable HF_TEST_EMPTY is not set or empty`}},
		{"empty key file", base + "[upstreams.b]\nbase_url = \"http://h\"\napi_key_file = \"empty.key\"\n",
			[]string{`F:10: upstream "b": api_key_file empty.key is empty`}},
		{"missing key file", base + "[upstreams.b]\nbase_url = \"http://h\"\napi_key_file = \"nope.key\"\n",
			[]string{`F:10: upstream "b": api_key_file: open `}},
		{"both key sources", base + "[upstreams.b]\nbase_url = \"http://h\"\napi_key_env = \"HF_TEST_HOSTED_KEY\"\napi_key_file = \"k\"\n",
			[]string{`F:11: upstream "b": api_key_env and api_key_file both set`}},
		{"refused header", base + "[upstreams.b]\nbase_url = \"http://h\"\nheaders = { authorization = \"Bearer x\" }\n",
			[]string{`F:10: upstream "b": headers: Authorization is the proxy's to set`}},
		{"negative limits", base + "[upstreams.b]\nbase_url = \"http://h\"\nmax_conns = -1\nheader_timeout = \"-1s\"\n",
			[]string{`F:10: upstream "b": max_conns -1 is negative`, `F:11: upstreams.b.header_timeout: -1s is negative`}},
		{"unknown upstream", "[upstreams.local]\nbase_url = \"http://h\"\n[[models]]\nname = \"m\"\nupstreams = [\"local\", \"remote\"]\n",
			[]string{`F:5: model "m": unknown upstream "remote" (defined: local)`}},
		{"upstream twice", "[upstreams.local]\nbase_url = \"http://h\"\n[[models]]\nname = \"m\"\nupstreams = [\"local\", \"local\"]\n",
			[]string{`F:5: model "m": upstream "local" listed twice`}},
		{"no upstreams", "[upstreams.local]\nbase_url = \"http://h\"\n[[models]]\nname = \"m\"\n",
			[]string{`F:4: model "m": no upstreams`}},
		{"no models", "[upstreams.local]\nbase_url = \"http://h\"\n", []string{`F: no [[models]]`}},
		{"nameless model", base + "[[models]]\nupstreams = [\"local\"]\n", []string{`F:8: [[models]] entry 2: no name`}},
		{"duplicate model", base + "[[models]]\nname = \"M\"\nupstreams = [\"local\"]\n",
			[]string{`F:9: model "M" is never used: the entry on line 5 ("m") matches it first`}},
		{"model behind a pattern", "[upstreams.local]\nbase_url = \"http://h\"\n[[models]]\nname = \"qwen*\"\nupstreams = [\"local\"]\n" +
			"[[models]]\nname = \"qwen3-coder\"\nupstreams = [\"local\"]\n",
			[]string{`F:7: model "qwen3-coder" is never used: the entry on line 3 ("qwen*") matches it first`}},
		{"duplicate upstream table", base + "[upstreams.local]\nbase_url = \"http://h\"\n", []string{`F:8: upstreams.local: table local already exists`}},
		{"unknown harness", base + "harness = \"claude-cod\"\n", []string{`F:8: model "m": unknown harness "claude-cod"`}},
		{"harness on a wire it does not shape", base + "harness = \"zcode\"\n", []string{`F:8: model "m": upstream "local" (wire chat): harness "zcode" does not shape chat requests (it shapes messages); use an upstream with wire = messages`}},
		{"harness the wire refuses", "[upstreams.a]\nbase_url = \"http://h\"\nwire = \"messages\"\n[[models]]\nname = \"m\"\nupstreams = [\"a\"]\nharness = \"kimi-cli\"\n",
			[]string{`F:7: model "m": upstream "a" (wire messages): wire_api = "messages" is not supported by harness = "kimi-cli"`}},
		{"messages upstream without a harness", "[upstreams.a]\nbase_url = \"http://h\"\nwire = \"messages\"\n[[models]]\nname = \"m\"\nupstreams = [\"a\"]\n",
			[]string{`F:6: model "m": upstream "a" (wire messages): wire_api = "messages" requires a harness-native transport`}},
		{"bad tool format", base + "tool_format = \"hermes2\"\n", []string{`F:8: model "m": tool_format: unknown tool format "hermes2"`}},
		{"bad global tool format", "tool_format = \"nope\"\n" + base, []string{`F:1: tool_format: unknown tool format "nope"`}},
		{"bad reasoning", base + "reasoning = \"loud\"\n", []string{`F:8: model "m": unknown reasoning "loud"`}},
		{"bad effort", base + "efforts = [\"huge\"]\n", []string{`F:8: model "m": efforts: unknown effort "huge"`}},
		{"variant of an unknown harness", base + "variants = { nobody = \"text\" }\n", []string{`F:8: model "m": variants: unknown harness "nobody"`}},
		{"unknown variant", base + "variants = { \"terminus-2\" = \"yaml\" }\n", []string{`F:8: model "m": variants: harness "terminus-2": variant "yaml": unknown value "yaml" (choices: format: json (default) or xml; exec: tmux (default) or plain)`}},
		{"upstream_models of another upstream", base + "upstream_models = { hosted = \"x\" }\n",
			[]string{`F:8: model "m": upstream_models names "hosted", which is not one of its upstreams`}},
		{"bad listen", "listen = \"8787\"\n" + base, []string{`F:1: listen "8787": want HOST:PORT`}},
		{"listen not a string", "listen = 8787\n" + base, []string{`F:1: listen: want an address`}},
		{"bad store", "store = \"postgres://x:pw@h/db\"\n" + base, []string{`F:1: store: want memory, none or a redis://`, `postgres://x:xxxxx@h/db`}},
		{"bad followups", "followups = \"server\"\n" + base, []string{`F:1: followups "server": want client or proxy`}},
		{"client keys env unset", "[client_keys]\nenv = \"HF_TEST_UNSET\"\n" + base,
			[]string{`F:2: client_keys.env: environment variable HF_TEST_UNSET is not set or empty`}},
		{"client key too short", "[client_keys]\nfile = \"short.keys\"\n" + base,
			[]string{`F:2: client_keys.file short.keys: key 1 is 5 bytes long: want at least 16`}},
		{"default model not routed", "default_model = \"other\"\n" + base, []string{`F:1: default_model "other": no [[models]] entry matches it`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc), name, testEnv("HF_TEST_EMPTY", " "))
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			got := strings.ReplaceAll(err.Error(), name, "F")
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("error:\n%s\nwant it to contain %q", got, w)
				}
			}
			if strings.Count(got, "\nF") != len(tt.want)-1 && tt.name != "bad store" {
				t.Errorf("error:\n%s\nwant %d problem(s)", got, len(tt.want))
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("error %T is not an *Error", err)
			}
			for _, secret := range []string{"pw@", "hosted-secret-key", "Bearer x"} {
				if strings.Contains(got, secret) {
					t.Errorf("error quotes a secret (%q): %s", secret, got)
				}
			}
		})
	}
}

func TestRoute(t *testing.T) {
	c := loadGood(t)
	type attempt struct{ upstream, model string }
	for _, tt := range []struct {
		model   string
		entry   string
		harness string
		want    []attempt
	}{
		{"qwen3-coder", "qwen3-coder", "", []attempt{{"local", "Qwen/Qwen3-Coder-30B-A3B-Instruct"}, {"hosted", "qwen/qwen3-coder"}}},
		{"Qwen3-Coder", "qwen3-coder", "", []attempt{{"local", "Qwen/Qwen3-Coder-30B-A3B-Instruct"}, {"hosted", "qwen/qwen3-coder"}}},
		{"claude-sonnet-4-5", "claude-*", "claude-code", []attempt{{"anthropic", "claude-sonnet-4-5"}}},
		{"GLM-4.6", "glm-4.6", "opencode", []attempt{{"hosted", "GLM-4.6"}}},
		{"deepseek/deepseek-v3.2", "*", "", []attempt{{"hosted", "deepseek/deepseek-v3.2"}}},
	} {
		r, err := c.Route(tt.model)
		if err != nil {
			t.Errorf("Route(%q): %v", tt.model, err)
			continue
		}
		var got []attempt
		for _, a := range r.Attempts {
			got = append(got, attempt{a.Upstream.Name, a.Model})
		}
		if r.Entry.Name != tt.entry || r.Entry.Harness != tt.harness || !slices.Equal(got, tt.want) {
			t.Errorf("Route(%q) = entry %q harness %q attempts %v, want %q %q %v", tt.model, r.Entry.Name, r.Entry.Harness, got, tt.entry, tt.harness, tt.want)
		}
	}
}

func TestRouteUnknownModel(t *testing.T) {
	doc := base + "[[models]]\nname = \"qwen3-*\"\nupstreams = [\"local\"]\n"
	c, err := Parse([]byte(doc), "F", testEnv())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ model, want string }{
		{"gpt-5", `model "gpt-5" is not served here; this server serves: m, qwen3-*`},
		{"", `the request names no model; this server serves: m, qwen3-*`},
		{"qwen2", `model "qwen2" is not served here`},
	} {
		_, err := c.Route(tt.model)
		var um *UnknownModelError
		if !errors.As(err, &um) {
			t.Errorf("Route(%q): %v, want an *UnknownModelError", tt.model, err)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) || um.Model != tt.model || !slices.Equal(um.Configured, []string{"m", "qwen3-*"}) {
			t.Errorf("Route(%q): %+v %q, want %q", tt.model, um, err, tt.want)
		}
	}
}

func TestGlobMatch(t *testing.T) {
	for _, tt := range []struct {
		pattern, name string
		want          bool
	}{
		{"*", "", true},
		{"*", "anything/at-all", true},
		{"qwen3-*", "qwen3-coder", true},
		{"qwen3-*", "qwen3-", true},
		{"qwen3-*", "qwen2-coder", false},
		{"*/glm-4.6", "zai-org/glm-4.6", true},
		{"*/glm-4.6", "glm-4.6", false},
		{"*coder*", "qwen/qwen3-coder-plus", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"gpt-?", "gpt-5", true},
		{"gpt-?", "gpt-55", false},
		{"é?", "éé", true},
		{"exact", "exact", true},
		{"exact", "exact2", false},
	} {
		if got := globMatch(tt.pattern, tt.name); got != tt.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestModelTable(t *testing.T) {
	c := loadGood(t)
	builtin := harness.BuiltinModels()
	for _, tt := range []struct {
		model, upstreamModel string
		want                 harness.ModelCaps
		same                 bool // the base table itself
	}{
		// No caps in the entry: the built-in table, looked up by the
		// upstream's name.
		{model: "claude-x", upstreamModel: "claude-x", same: true},
		// tool_format only: the built-in entry's reasoning is kept.
		{model: "qwen3-coder", upstreamModel: "Qwen/Qwen3-Coder-30B-A3B-Instruct",
			want: harness.ModelCaps{ToolFormat: "qwen3_coder", Matched: true}},
		// Everything set: the entry's over the built-in glm-4.6 entry.
		{model: "glm-4.6", upstreamModel: "glm-4.6", want: harness.ModelCaps{Reasoning: request.ReasoningThinkingType,
			Efforts: []string{"low", "high"}, MaxOutputTokens: 32768, Variants: map[string]string{"mini-swe-agent": "text"}, Matched: true}},
	} {
		r, err := c.Route(tt.model)
		if err != nil {
			t.Fatal(err)
		}
		table, err := r.Entry.ModelTable(builtin, tt.upstreamModel)
		if err != nil {
			t.Fatal(err)
		}
		if tt.same {
			if table != builtin {
				t.Errorf("%s: a new table for an entry without caps", tt.model)
			}
			continue
		}
		got := table.Lookup("whatever-the-request-says")
		if got.Reasoning != tt.want.Reasoning || !slices.Equal(got.Efforts, tt.want.Efforts) || got.MaxOutputTokens != tt.want.MaxOutputTokens ||
			!mapsEqual(got.Variants, tt.want.Variants) || got.ToolFormat != tt.want.ToolFormat || got.Matched != tt.want.Matched {
			t.Errorf("%s: caps %+v, want %+v", tt.model, got, tt.want)
		}
	}
}

func TestCapsOverMergesVariants(t *testing.T) {
	off := false
	c := Caps{Variants: map[string]string{"terminus-2": "plain"}, ToolsInPrompt: &off}
	base := harness.ModelCaps{Variants: map[string]string{"mini-swe-agent": "text", "terminus-2": "tmux"}, ToolsInPrompt: true}
	got := c.Over(base)
	if want := map[string]string{"mini-swe-agent": "text", "terminus-2": "plain"}; !mapsEqual(got.Variants, want) || got.ToolsInPrompt {
		t.Errorf("Over = %+v", got)
	}
	if base.Variants["terminus-2"] != "tmux" {
		t.Errorf("Over changed the base's variants: %v", base.Variants)
	}
}

func BenchmarkRoute(b *testing.B) {
	c, err := Load(filepath.Join("testdata", "serve.toml"), testEnv())
	if err != nil {
		b.Fatal(err)
	}
	for _, model := range []string{"qwen3-coder", "claude-sonnet-4-5", "org/some-model-not-listed"} {
		b.Run(model, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Route(model); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// harness = "auto" is accepted on every wire: each request picks its
// harness by the fork's default rule (harness.DefaultFor).
func TestAutoHarness(t *testing.T) {
	for _, wire := range []string{"chat", "messages", "responses"} {
		dir := t.TempDir()
		name := filepath.Join(dir, "serve.toml")
		text := "[upstreams.local]\nbase_url = \"http://h\"\nwire = \"" + wire + "\"\n[[models]]\nname = \"*\"\nupstreams = [\"local\"]\nharness = \"auto\"\n"
		if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Load(name, testEnv())
		if err != nil {
			t.Errorf("wire %s: %v", wire, err)
			continue
		}
		if r, err := c.Route("kimi-k2.5"); err != nil || r.Entry.Harness != "auto" {
			t.Errorf("wire %s: Route = %+v, %v", wire, r.Entry, err)
		}
	}
}

func TestCapsThinkingOpen(t *testing.T) {
	on, off := true, false
	if (Caps{ThinkingOpen: &off}).IsZero() {
		t.Error("an entry setting thinking_open is zero")
	}
	if got := (Caps{ThinkingOpen: &on}).Over(harness.ModelCaps{}); !got.ThinkingOpen {
		t.Error("thinking_open = true not applied")
	}
	if got := (Caps{ThinkingOpen: &off}).Over(harness.ModelCaps{ThinkingOpen: true}); got.ThinkingOpen {
		t.Error("thinking_open = false does not override the built-in entry")
	}
	c, err := Parse([]byte("[upstreams.u]\nbase_url = \"http://127.0.0.1:1/v1\"\n[[models]]\nname = \"qwq\"\nupstreams = [\"u\"]\nthinking_open = false\n"), "t.toml", testEnv())
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Route("qwq")
	if err != nil {
		t.Fatal(err)
	}
	table, err := r.Entry.ModelTable(harness.BuiltinModels(), "Qwen/QwQ-32B")
	if err != nil {
		t.Fatal(err)
	}
	if table.Lookup("Qwen/QwQ-32B").ThinkingOpen {
		t.Error("the file's thinking_open = false does not reach the model table")
	}
}

// Entries with a when condition route the requests they name first.
func TestRouteForConditions(t *testing.T) {
	c, err := Parse([]byte(`
[upstreams.local]
base_url = "http://127.0.0.1:8000/v1"
[upstreams.big]
base_url = "http://127.0.0.1:9000/v1"

[[models]]
name = "claude-*"
upstreams = ["local"]
upstream_model = "small"

[[models]]
name = "claude-*"
when = "thinking"
upstreams = ["big"]
upstream_model = "reasoner"

[[models]]
name = "claude-*"
when = "long_context"
long_context_tokens = 1000
upstreams = ["big"]
upstream_model = "long"
`), "t.toml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	tokens := func(n int64) func() int64 { return func() int64 { return n } }
	for _, tc := range []struct {
		name string
		r    Request
		want string
	}{
		{"plain", Request{InputTokens: tokens(10)}, "small"},
		{"thinking", Request{Thinking: true, InputTokens: tokens(10)}, "reasoner"},
		{"long", Request{InputTokens: tokens(1000)}, "long"},
		{"thinking and long: the first in the file", Request{Thinking: true, InputTokens: tokens(5000)}, "reasoner"},
		{"no estimate", Request{}, "small"},
	} {
		r, err := c.RouteFor("claude-sonnet-4-5", tc.r)
		if err != nil || r.Attempts[0].Model != tc.want {
			t.Errorf("%s: %+v %v, want %s", tc.name, r.Attempts, err, tc.want)
		}
	}
	if r, err := c.Route("claude-x"); err != nil || r.Attempts[0].Model != "small" {
		t.Errorf("Route ignores the conditions: %+v %v", r, err)
	}
	for _, bad := range []struct{ body, want string }{
		{`when = "sometimes"`, `want "thinking" or "long_context"`},
		{`when = "thinking"` + "\nlong_context_tokens = 5", `long_context_tokens is the threshold`},
		{`when = "long_context"` + "\nlong_context_tokens = -5", `want a positive number`},
	} {
		_, err := Parse([]byte("[upstreams.local]\nbase_url = \"http://127.0.0.1:8000/v1\"\n[[models]]\nname = \"m\"\nupstreams = [\"local\"]\n"+bad.body+"\n"), "t.toml", Options{})
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v", bad.body, err)
		}
	}
	_, err = Parse([]byte("[upstreams.local]\nbase_url = \"http://127.0.0.1:8000/v1\"\n[[models]]\nname = \"m*\"\nwhen = \"thinking\"\nupstreams = [\"local\"]\n[[models]]\nname = \"m1\"\nwhen = \"thinking\"\nupstreams = [\"local\"]\n"), "t.toml", Options{})
	if err == nil || !strings.Contains(err.Error(), "never used") {
		t.Errorf("a conditional entry shadowed by one of the same condition: %v", err)
	}
}
