// Package serveconfig reads the configuration file of `harnessflow serve
// --config` (docs/serve-config.md): one proxy in front of several model
// servers, each model name the client sends routed to an ordered list of
// upstreams (the first one, then the fallbacks), renamed for them, with a
// default harness and model capabilities.
//
// The file is TOML. Parse and Load read and validate it completely — an
// unknown key, a bad URL, an unknown wire, harness or tool format, a model
// that names an upstream the file does not define, a duplicate or
// unreachable model entry, an environment variable or key file that is
// missing — and report every problem as FILE:LINE: message. Route finds the
// upstreams of a model; Holder keeps the configuration a running server
// uses and replaces it only with one that validated.
//
// Harness names are checked against the harness registry: the program
// imports the harnesses it serves (harness/all) before loading a file.
package serveconfig

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/stages/operator"
	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/stages/textcall"
)

// MinClientKeyBytes is the shortest client key accepted (the server's
// server.MinClientKeyBytes: shorter keys are guessable).
const MinClientKeyBytes = 16

// maxErrors bounds the problems one validation reports.
const maxErrors = 20

// Config is a validated configuration file. It is immutable once returned:
// a reload makes a new one (see Holder).
type Config struct {
	// File is the path the configuration was read from (as given).
	File string
	// Listen lists the addresses to serve on (empty: the server's default).
	Listen []string
	// ClientKeys are the bearer keys clients must present (empty: none
	// required), read from client_keys.env and client_keys.file.
	ClientKeys []string
	// InsecureOpenRelay allows a non-loopback address with upstream keys
	// and no client keys.
	InsecureOpenRelay bool
	// Environment names the environment variables the file reads
	// (client_keys.env, upstreams' api_key_env), in the order read. A
	// process's environment is fixed when it starts: a reload reads them
	// as they were then (the server's reload log says so).
	Environment []string
	// Store is the response store, in serve's --store syntax: "memory"
	// (the default), "none", or a redis://, rediss:// or unix:// URL.
	Store string
	// DefaultModel is the model of a request that names none ("": such a
	// request is refused). It routes like any model.
	DefaultModel string
	// ToolFormat is the default text tool-call format of chat answers
	// ("": auto); a model's tool_format overrides it.
	ToolFormat string
	// Followups is the follow-up mode, "client" or "proxy" ("": client).
	Followups string
	// MaxFollowupRounds bounds the proxy's follow-up rounds (0: the
	// server's default).
	MaxFollowupRounds int
	// UpstreamHeaderTimeout and UpstreamIdleTimeout are the upstreams'
	// timeouts unless an upstream sets its own; ShutdownGrace is the
	// shutdown's grace period. As in server.Config: 0 is the default, a
	// negative value no limit (the file's "0s").
	UpstreamHeaderTimeout time.Duration
	UpstreamIdleTimeout   time.Duration
	ShutdownGrace         time.Duration
	// Upstreams are the model servers, in the order the file defines them.
	Upstreams []*Upstream
	// Models are the model entries in the file's order: the first that
	// matches a model name routes it.
	Models []*Model
	// Stages are the operator stages of the [[stage]] tables, in the
	// file's order (stages/operator): the server puts them into every
	// response graph.
	Stages []*operator.Stage

	upstreams map[string]*Upstream // by name
	exact     map[string]*Model    // exact entries by lowercased name
}

// Upstream is one model server.
type Upstream struct {
	// Name is the upstream's name in the file ([upstreams.NAME]).
	Name string
	// BaseURL is the server's base URL without a trailing slash; the
	// wire's path (/chat/completions, /messages, /responses) is appended.
	BaseURL string
	// Wire is the server's wire (chat when the file leaves it out).
	Wire harness.Wire
	// APIKey authenticates the proxy's requests to it ("": the client's
	// Authorization is passed on). Never printed.
	APIKey string
	// Headers are extra request headers (canonical names).
	Headers map[string]string
	// HeaderTimeout and IdleTimeout are the upstream's timeouts (the
	// file's [timeouts] unless it sets its own): 0 the server's default, a
	// negative value no limit.
	HeaderTimeout time.Duration
	IdleTimeout   time.Duration
	// MaxConns caps the connections open to it at once (0: no cap);
	// MaxIdleConns the idle ones kept for the next requests (0: the
	// server's default).
	MaxConns     int
	MaxIdleConns int
	// MaxAnswerBytes, MaxBodyBytes and MaxCompressionRatio bound one
	// answer of it (server.AnswerLimits): the text, arguments and reasoning
	// held, the decompressed body, and decompressed bytes per compressed
	// byte. 0: the server's default; a negative value: no bound.
	MaxAnswerBytes      int64
	MaxBodyBytes        int64
	MaxCompressionRatio int64
	// Line is where the file defines it.
	Line int
}

// String names the upstream and its redacted URL, never its key.
func (u *Upstream) String() string {
	return fmt.Sprintf("%s (%s, wire %s)", u.Name, redactURL(u.BaseURL), u.Wire)
}

// Model is one entry of the file's [[models]]: the model names it matches
// and where they go.
type Model struct {
	// Name is the model name the entry matches, as written: an exact name,
	// or a pattern where * stands for any run of characters and ? for one.
	// Matching ignores case.
	Name string
	// Upstreams are the upstreams to try, in order: the next only when the
	// one before failed before the client received anything.
	Upstreams []*Upstream
	// UpstreamModel is the model name sent upstream ("": the client's).
	UpstreamModel string
	// UpstreamModels overrides UpstreamModel per upstream name.
	UpstreamModels map[string]string
	// Harness is the harness a request on the plain routes
	// (/v1/responses) is shaped as ("": native); a request on
	// /h/NAME/v1/responses keeps its NAME.
	Harness string
	// Caps are the model capabilities the entry sets (see CapsFor).
	Caps Caps
	// When, when set, routes only the requests it says: WhenThinking (the
	// request asks for reasoning) or WhenLongContext (its input is
	// estimated at LongContextTokens or more). Such an entry is tried before
	// every entry without a condition (RouteFor).
	When string
	// LongContextTokens is WhenLongContext's threshold.
	LongContextTokens int64
	// Line is where the file starts the entry.
	Line int

	pattern bool
	lower   string
}

// IsPattern reports whether Name is a pattern rather than an exact name.
func (m *Model) IsPattern() bool { return m.pattern }

// Caps are the model capabilities a model entry sets; a nil or empty field
// is one it leaves to the built-in table (harness.ModelCaps documents each).
type Caps struct {
	Reasoning       *request.ReasoningControl
	Efforts         []string
	MaxOutputTokens *int64
	Variants        map[string]string
	ToolsInPrompt   *bool
	ToolFormat      *string
	// The client-field knowledge (docs/request-shaping.md#client-fields).
	MaxTokensField *request.TokenField
	PromptCacheKey *bool
	Metadata       *bool
	Unsupported    []string
	ThinkingOpen   *bool
}

// IsZero reports whether the entry sets no capability.
func (c Caps) IsZero() bool {
	return c.Reasoning == nil && c.Efforts == nil && c.MaxOutputTokens == nil && c.Variants == nil &&
		c.ToolsInPrompt == nil && c.ToolFormat == nil && c.MaxTokensField == nil && c.PromptCacheKey == nil &&
		c.Metadata == nil && c.Unsupported == nil && c.ThinkingOpen == nil
}

// Over returns base with the fields c sets replaced (variants merged, c's
// winning). A model whose entry sets its reasoning form counts as known
// (Matched).
func (c Caps) Over(base harness.ModelCaps) harness.ModelCaps {
	if c.Reasoning != nil {
		base.Reasoning = *c.Reasoning
		base.Matched = true
	}
	if c.Efforts != nil {
		base.Efforts = c.Efforts
	}
	if c.MaxOutputTokens != nil {
		base.MaxOutputTokens = *c.MaxOutputTokens
	}
	if c.Variants != nil {
		vs := maps.Clone(base.Variants)
		if vs == nil {
			vs = map[string]string{}
		}
		maps.Copy(vs, c.Variants)
		base.Variants = vs
	}
	if c.ToolsInPrompt != nil {
		base.ToolsInPrompt = *c.ToolsInPrompt
	}
	if c.ToolFormat != nil {
		base.ToolFormat = *c.ToolFormat
	}
	if c.MaxTokensField != nil {
		base.MaxTokensField = *c.MaxTokensField
	}
	if c.PromptCacheKey != nil {
		base.PromptCacheKey = *c.PromptCacheKey
	}
	if c.Metadata != nil {
		base.Metadata = *c.Metadata
	}
	if c.Unsupported != nil {
		base.Unsupported = c.Unsupported
	}
	if c.ThinkingOpen != nil {
		base.ThinkingOpen = *c.ThinkingOpen
	}
	return base
}

// ModelTable returns the model table a request for upstreamModel is shaped
// with: base (nil: the built-in table) when the entry sets no capability,
// else a table whose every lookup gives base's entry for upstreamModel with
// the entry's capabilities over it.
func (m *Model) ModelTable(base *harness.ModelTable, upstreamModel string) (*harness.ModelTable, error) {
	if m.Caps.IsZero() {
		return base, nil
	}
	caps := m.Caps.Over(base.Lookup(upstreamModel))
	caps.Match = ""
	t, err := harness.NewModelTable(caps)
	if err != nil {
		return nil, fmt.Errorf("serveconfig: model %q: %w", m.Name, err)
	}
	return t, nil
}

// upstreamModel is the name sent to up for a request naming model.
func (m *Model) upstreamModel(up *Upstream, model string) string {
	if n := m.UpstreamModels[up.Name]; n != "" {
		return n
	}
	if m.UpstreamModel != "" {
		return m.UpstreamModel
	}
	return model
}

// Options are how a file's references are resolved.
type Options struct {
	// LookupEnv reads an environment variable; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Registry holds the harnesses the entries may name; nil means
	// harness.Default(). It should be the server's (server.Config.Registry).
	Registry *harness.Registry
}

func (o Options) registry() *harness.Registry {
	if o.Registry != nil {
		return o.Registry
	}
	return harness.Default()
}

func (o Options) lookupEnv(name string) (string, bool) {
	if o.LookupEnv != nil {
		return o.LookupEnv(name)
	}
	return os.LookupEnv(name)
}

// Load reads and validates the configuration file at path. Relative file
// names in it (key files) are relative to its directory.
func Load(path string, opts Options) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("serveconfig: %w", err)
	}
	return Parse(data, path, opts)
}

// Parse validates the configuration in data, read from the file called
// name (for messages, and the directory of relative file names). Its error
// lists every problem found (up to 20), one per line, as NAME:LINE:
// message; each is an *Error.
func Parse(data []byte, name string, opts Options) (*Config, error) {
	var f fileConfig
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, decodeError(name, data, err)
	}
	v := &validator{file: name, dir: filepath.Dir(name), lines: indexLines(data), opts: opts}
	c := v.build(&f)
	if err := v.err(); err != nil {
		return nil, err
	}
	c.File = name
	c.Environment = v.env
	return c, nil
}

// Error is one problem of a configuration file.
type Error struct {
	File string
	Line int // 0: the file as a whole
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// decodeError turns the TOML decoder's error into *Errors with lines.
func decodeError(name string, data []byte, err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) {
		ix := indexLines(data)
		errs := make([]error, 0, len(strict.Errors))
		for i := range strict.Errors {
			de := &strict.Errors[i]
			line, _ := de.Position()
			errs = append(errs, &Error{File: name, Line: line, Msg: unknownKey(de.Key(), line, ix)})
		}
		return errors.Join(errs...)
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, col := de.Position()
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		if k := de.Key(); len(k) > 0 {
			msg = fmt.Sprintf("%s: %s", strings.Join(k, "."), msg)
		}
		return &Error{File: name, Line: line, Msg: fmt.Sprintf("%s (column %d)", msg, col)}
	}
	return &Error{File: name, Msg: err.Error()}
}

// unknownKey describes an unknown key: `unknown key "x" in [upstreams.y]`.
func unknownKey(key toml.Key, line int, ix lineIndex) string {
	if len(key) == 0 {
		return "unknown key"
	}
	k, table := key[len(key)-1], key[:len(key)-1]
	if len(table) == 0 {
		// The decoder leaves out the table of a key in an inline table:
		// the index knows where it was written.
		table = ix.tableOf(k, line)
	}
	switch {
	case len(table) == 0:
		return fmt.Sprintf("unknown key %q at the top level", k)
	case table[0] == "models" && len(table) == 1:
		if n := ix.arrayEntry("models", line); n >= 0 {
			return fmt.Sprintf("unknown key %q in [[models]] entry %d", k, n+1)
		}
		return fmt.Sprintf("unknown key %q in [[models]]", k)
	}
	return fmt.Sprintf("unknown key %q in [%s]", k, strings.Join(table, "."))
}

// validator collects the problems of one file.
type validator struct {
	file  string
	dir   string
	lines lineIndex
	opts  Options
	errs  []error
	env   []string // the environment variables read (Config.Environment)
}

// lookupEnv reads an environment variable, noting its name.
func (v *validator) lookupEnv(name string) (string, bool) {
	if !slices.Contains(v.env, name) {
		v.env = append(v.env, name)
	}
	return v.opts.lookupEnv(name)
}

func (v *validator) errorf(line int, format string, args ...any) {
	if len(v.errs) < maxErrors {
		v.errs = append(v.errs, &Error{File: v.file, Line: line, Msg: fmt.Sprintf(format, args...)})
	}
}

func (v *validator) err() error { return errors.Join(v.errs...) }

// build validates f and resolves it into a Config.
func (v *validator) build(f *fileConfig) *Config {
	c := &Config{
		InsecureOpenRelay: f.InsecureOpenRelay,
		Store:             strings.TrimSpace(f.Store),
		DefaultModel:      f.DefaultModel,
		ToolFormat:        f.ToolFormat,
		Followups:         f.Followups,
		MaxFollowupRounds: f.MaxFollowupRounds,
		upstreams:         map[string]*Upstream{},
		exact:             map[string]*Model{},
	}
	c.Listen = v.listen(f.Listen)
	c.ClientKeys = v.clientKeys(f.ClientKeys)
	v.store(c.Store)
	if c.ToolFormat != "" {
		if err := textcall.CheckName(c.ToolFormat); err != nil {
			v.errorf(v.lines.line("tool_format"), "tool_format: %v", err)
		}
	}
	switch c.Followups {
	case "", "client", "proxy":
	default:
		v.errorf(v.lines.line("followups"), "followups %q: want client or proxy", c.Followups)
	}
	if c.MaxFollowupRounds < 0 {
		v.errorf(v.lines.line("max_followup_rounds"), "max_followup_rounds %d: want 1 or more", c.MaxFollowupRounds)
	}
	c.UpstreamHeaderTimeout = v.duration(f.Timeouts.UpstreamHeader, "timeouts", "upstream_header")
	c.UpstreamIdleTimeout = v.duration(f.Timeouts.UpstreamIdle, "timeouts", "upstream_idle")
	c.ShutdownGrace = v.duration(f.Timeouts.ShutdownGrace, "timeouts", "shutdown_grace")

	names := slices.Collect(maps.Keys(f.Upstreams))
	slices.SortFunc(names, func(a, b string) int {
		if d := v.lines.line("upstreams", a) - v.lines.line("upstreams", b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	for _, name := range names {
		u := v.upstream(name, f.Upstreams[name], c)
		c.Upstreams = append(c.Upstreams, u)
		c.upstreams[name] = u
	}
	if len(f.Models) == 0 {
		v.errorf(0, "no [[models]]: the file must route at least one model name to an upstream")
	}
	for i := range f.Models {
		if m := v.model(i, &f.Models[i], c); m != nil {
			c.Models = append(c.Models, m)
		}
	}
	for i, st := range f.Stages {
		if s := v.stage(i, st); s != nil {
			c.Stages = append(c.Stages, s)
		}
	}
	if c.DefaultModel != "" && len(v.errs) == 0 {
		if _, err := c.Route(c.DefaultModel); err != nil {
			v.errorf(v.lines.line("default_model"), "default_model %q: no [[models]] entry matches it", c.DefaultModel)
		}
	}
	return c
}

func (v *validator) listen(raw any) []string {
	line := v.lines.line("listen")
	var addrs []string
	switch x := raw.(type) {
	case nil:
		return nil
	case string:
		addrs = []string{x}
	case []any:
		for _, a := range x {
			s, ok := a.(string)
			if !ok {
				v.errorf(line, "listen: want an address or a list of addresses (strings), got a %T", a)
				return nil
			}
			addrs = append(addrs, s)
		}
	default:
		v.errorf(line, "listen: want an address (\"127.0.0.1:8787\") or a list of them, got a %T", raw)
		return nil
	}
	for _, a := range addrs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			v.errorf(line, "listen %q: want HOST:PORT (%v)", a, err)
		}
	}
	return addrs
}

func (v *validator) clientKeys(ck fileClientKeys) []string {
	var keys []string
	if ck.Env != "" {
		line := v.lines.line("client_keys", "env")
		text, ok := v.lookupEnv(ck.Env)
		if !ok || strings.TrimSpace(text) == "" {
			v.errorf(line, "client_keys.env: environment variable %s is not set or empty", ck.Env)
		} else {
			keys = append(keys, v.splitKeys(text, line, "client_keys.env "+ck.Env)...)
		}
	}
	if ck.File != "" {
		line := v.lines.line("client_keys", "file")
		data, err := os.ReadFile(v.path(ck.File))
		if err != nil {
			v.errorf(line, "client_keys.file: %v", err)
		} else {
			keys = append(keys, v.splitKeys(string(data), line, "client_keys.file "+ck.File)...)
		}
	}
	return keys
}

// splitKeys splits a list of client keys as server.ParseClientKeys does:
// separated by commas or newlines, "#" starting a comment line. Its errors
// never quote a key.
func (v *validator) splitKeys(text string, line int, where string) []string {
	var keys []string
	for l := range strings.Lines(text) {
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		for k := range strings.SplitSeq(l, ",") {
			if k = strings.TrimSpace(k); k == "" {
				continue
			}
			if len(k) < MinClientKeyBytes {
				v.errorf(line, "%s: key %d is %d bytes long: want at least %d", where, len(keys)+1, len(k), MinClientKeyBytes)
				return nil
			}
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		v.errorf(line, "%s: no keys (want keys separated by commas or newlines)", where)
	}
	return keys
}

func (v *validator) store(s string) {
	switch {
	case s == "", s == "memory", s == "none":
	case strings.HasPrefix(s, "redis://"), strings.HasPrefix(s, "rediss://"), strings.HasPrefix(s, "unix://"):
	default:
		v.errorf(v.lines.line("store"), "store: want memory, none or a redis://, rediss:// or unix:// URL, got %q", redactURL(s))
	}
}

// duration resolves an optional duration: unset is 0 (the default), 0 no
// limit (-1).
func (v *validator) duration(d *duration, path ...string) time.Duration {
	switch {
	case d == nil:
		return 0
	case d.d < 0:
		v.errorf(v.lines.line(path...), "%s: %s is negative (0s means no limit)", strings.Join(path, "."), d.d)
		return 0
	case d.d == 0:
		return -1
	}
	return d.d
}

// path resolves a file name of the configuration.
func (v *validator) path(name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(v.dir, name)
}

// refusedHeaders are the headers the proxy sets itself.
var refusedHeaders = []string{"Authorization", "X-Api-Key", "Content-Length", "Host", "Content-Type"}

func (v *validator) upstream(name string, f fileUpstream, c *Config) *Upstream {
	line := v.lines.line("upstreams", name)
	u := &Upstream{Name: name, Line: line, MaxConns: f.MaxConns, MaxIdleConns: f.MaxIdleConns,
		MaxAnswerBytes: f.MaxAnswerBytes, MaxBodyBytes: f.MaxBodyBytes, MaxCompressionRatio: f.MaxCompressionRatio}
	where := fmt.Sprintf("upstream %q", name)
	if !validName(name) {
		v.errorf(line, "%s: a name is letters, digits, '-', '_' and '.'", where)
	}
	switch base, err := checkBaseURL(f.BaseURL); {
	case f.BaseURL == "":
		v.errorf(line, "%s: no base_url", where)
	case err != nil:
		v.errorf(v.lines.line("upstreams", name, "base_url"), "%s: base_url %v", where, err)
	default:
		u.BaseURL = base
	}
	u.Wire = harness.WireChat
	if f.Wire != "" {
		w, err := harness.ParseWire(f.Wire)
		if err != nil {
			v.errorf(v.lines.line("upstreams", name, "wire"), "%s: %v", where, err)
		} else {
			u.Wire = w
		}
	}
	switch {
	case f.APIKeyEnv != "" && f.APIKeyFile != "":
		v.errorf(v.lines.line("upstreams", name, "api_key_file"), "%s: api_key_env and api_key_file both set: want one", where)
	case f.APIKeyEnv != "":
		key, ok := v.lookupEnv(f.APIKeyEnv)
		if key = strings.TrimSpace(key); !ok || key == "" {
			v.errorf(v.lines.line("upstreams", name, "api_key_env"), "%s: api_key_env: environment variable %s is not set or empty", where, f.APIKeyEnv)
		}
		u.APIKey = key
	case f.APIKeyFile != "":
		l := v.lines.line("upstreams", name, "api_key_file")
		data, err := os.ReadFile(v.path(f.APIKeyFile))
		switch {
		case err != nil:
			v.errorf(l, "%s: api_key_file: %v", where, err)
		case strings.TrimSpace(string(data)) == "":
			v.errorf(l, "%s: api_key_file %s is empty", where, f.APIKeyFile)
		case strings.ContainsAny(strings.TrimSpace(string(data)), "\r\n"):
			v.errorf(l, "%s: api_key_file %s has more than one line: want the key alone", where, f.APIKeyFile)
		default:
			u.APIKey = strings.TrimSpace(string(data))
		}
	}
	if len(f.Headers) > 0 {
		u.Headers = make(map[string]string, len(f.Headers))
		for k, val := range f.Headers {
			ck := http.CanonicalHeaderKey(k)
			l := v.lines.line("upstreams", name, "headers", k)
			switch {
			case slices.Contains(refusedHeaders, ck):
				v.errorf(l, "%s: headers: %s is the proxy's to set (the key goes in api_key_env or api_key_file)", where, ck)
			case !validHeaderName(k):
				v.errorf(l, "%s: headers: %q is not a header name", where, k)
			case strings.ContainsAny(val, "\r\n\x00"):
				v.errorf(l, "%s: headers: the value of %s has a line break or NUL", where, ck)
			}
			u.Headers[ck] = val
		}
	}
	u.HeaderTimeout = c.UpstreamHeaderTimeout
	if f.HeaderTimeout != nil {
		u.HeaderTimeout = v.duration(f.HeaderTimeout, "upstreams", name, "header_timeout")
	}
	u.IdleTimeout = c.UpstreamIdleTimeout
	if f.IdleTimeout != nil {
		u.IdleTimeout = v.duration(f.IdleTimeout, "upstreams", name, "idle_timeout")
	}
	if f.MaxConns < 0 {
		v.errorf(v.lines.line("upstreams", name, "max_conns"), "%s: max_conns %d is negative (0: no cap)", where, f.MaxConns)
	}
	if f.MaxIdleConns < 0 {
		v.errorf(v.lines.line("upstreams", name, "max_idle_conns"), "%s: max_idle_conns %d is negative (0: the default)", where, f.MaxIdleConns)
	}
	return u
}

func (v *validator) model(i int, f *fileModel, c *Config) *Model {
	idx := fmt.Sprint(i)
	line := v.lines.line("models", idx)
	at := func(key string) int { return v.lines.line("models", idx, key) }
	name := strings.TrimSpace(f.Name)
	where := fmt.Sprintf("[[models]] entry %d", i+1)
	if name == "" {
		v.errorf(line, "%s: no name (the model name clients send, or a pattern such as \"qwen3-*\")", where)
		return nil
	}
	where = fmt.Sprintf("model %q", name)
	if strings.ContainsAny(name, " \t\r\n") {
		v.errorf(at("name"), "%s: a model name has no spaces", where)
	}
	m := &Model{Name: name, Line: line, lower: strings.ToLower(name), pattern: strings.ContainsAny(name, "*?"),
		UpstreamModel: f.UpstreamModel, Harness: f.Harness}
	if len(f.Upstreams) == 0 {
		v.errorf(at("name"), "%s: no upstreams (the names of [upstreams.NAME] tables to try, in order)", where)
	}
	for _, n := range f.Upstreams {
		u := c.upstreams[n]
		switch {
		case u == nil:
			v.errorf(at("upstreams"), "%s: unknown upstream %q (defined: %s)", where, n, strings.Join(upstreamNames(c), ", "))
			continue
		case slices.Contains(m.Upstreams, u):
			v.errorf(at("upstreams"), "%s: upstream %q listed twice", where, n)
			continue
		}
		m.Upstreams = append(m.Upstreams, u)
	}
	for n, um := range f.UpstreamModels {
		switch {
		case !slices.Contains(f.Upstreams, n):
			v.errorf(at("upstream_models"), "%s: upstream_models names %q, which is not one of its upstreams", where, n)
		case strings.TrimSpace(um) == "":
			v.errorf(at("upstream_models"), "%s: upstream_models: empty model name for %q", where, n)
		}
	}
	if len(f.UpstreamModels) > 0 {
		m.UpstreamModels = maps.Clone(f.UpstreamModels)
	}
	// The entry's harness (native when it names none) must be served on
	// every upstream's wire, as requests on the plain routes are shaped.
	reg := v.opts.registry()
	if err := reg.CheckName(m.Harness); err != nil {
		v.errorf(at("harness"), "%s: %v", where, err)
	} else {
		hl := at("harness")
		if f.Harness == "" {
			hl = at("upstreams")
		}
		for _, u := range m.Upstreams {
			err := reg.CheckRoute(u.Wire, m.Harness)
			if we, ok := errors.AsType[*harness.WireError](err); ok {
				we.Flag = "an upstream with wire ="
			}
			if err == nil {
				_, err = reg.Resolve(u.Wire, m.Harness)
			}
			if err != nil {
				v.errorf(hl, "%s: upstream %q (wire %s): %v", where, u.Name, u.Wire, err)
			}
		}
	}
	m.Caps = v.caps(f, at, where)
	switch m.When = f.When; m.When {
	case "", WhenThinking:
		if f.LongContextTokens != 0 {
			v.errorf(at("long_context_tokens"), "%s: long_context_tokens is the threshold of when = %q", where, WhenLongContext)
		}
	case WhenLongContext:
		m.LongContextTokens = f.LongContextTokens
		if m.LongContextTokens == 0 {
			m.LongContextTokens = DefaultLongContextTokens
		}
		if m.LongContextTokens < 0 {
			v.errorf(at("long_context_tokens"), "%s: long_context_tokens %d: want a positive number of tokens", where, m.LongContextTokens)
		}
	default:
		v.errorf(at("when"), "%s: when = %q: want %q or %q", where, m.When, WhenThinking, WhenLongContext)
	}
	// The first matching entry wins (the conditional ones first): an exact
	// name an earlier entry of the same condition matches, or the same
	// pattern twice, would never be used.
	for _, prev := range c.Models {
		if prev.When != m.When {
			continue
		}
		if prev.lower == m.lower || prev.pattern && !m.pattern && globMatch(prev.lower, m.lower) {
			v.errorf(at("name"), "%s is never used: the entry on line %d (%q) matches it first", where, prev.Line, prev.Name)
			return m
		}
	}
	if !m.pattern && m.When == "" {
		c.exact[m.lower] = m
	}
	return m
}

// caps validates a model entry's capabilities.
func (v *validator) caps(f *fileModel, at func(string) int, where string) Caps {
	c := Caps{Efforts: f.Efforts, MaxOutputTokens: f.MaxOutputTokens, Variants: f.Variants, ToolsInPrompt: f.ToolsInPrompt, ToolFormat: f.ToolFormat,
		PromptCacheKey: f.PromptCacheKey, Metadata: f.Metadata, Unsupported: f.Unsupported, ThinkingOpen: f.ThinkingOpen}
	if f.Reasoning != nil {
		r := request.ReasoningControl(*f.Reasoning)
		c.Reasoning = &r
	}
	if f.MaxTokensField != nil {
		tf := request.TokenField(*f.MaxTokensField)
		c.MaxTokensField = &tf
	}
	// Each field alone, so that the error points at its line.
	for _, p := range []struct {
		key  string
		caps Caps
	}{
		{"reasoning", Caps{Reasoning: c.Reasoning}},
		{"efforts", Caps{Efforts: c.Efforts}},
		{"max_output_tokens", Caps{MaxOutputTokens: c.MaxOutputTokens}},
		{"variants", Caps{Variants: c.Variants}},
		{"tool_format", Caps{ToolFormat: c.ToolFormat}},
		{"max_tokens_field", Caps{MaxTokensField: c.MaxTokensField}},
		{"unsupported", Caps{Unsupported: c.Unsupported}},
	} {
		if p.caps.IsZero() {
			continue
		}
		if err := p.caps.Over(harness.ModelCaps{}).Check(); err != nil {
			v.errorf(at(p.key), "%s: %v", where, err)
		}
	}
	for h, val := range c.Variants {
		if err := v.opts.registry().CheckVariant(h, val); err != nil {
			v.errorf(at("variants"), "%s: variants: %v", where, err)
		}
	}
	return c
}

// stage makes the operator stage of [[stage]] table i: its kind, the
// kind's options the other keys.
func (v *validator) stage(i int, t map[string]any) *operator.Stage {
	line := v.lines.line("stage", fmt.Sprint(i))
	kind, ok := t["kind"].(string)
	if !ok || kind == "" {
		v.errorf(line, "[[stage]] entry %d: no kind (want one of %s)", i+1, stageKinds())
		return nil
	}
	opts := make(map[string]any, len(t)-1)
	for k, val := range t {
		if k != "kind" {
			opts[k] = val
		}
	}
	s, err := operator.New(kind, opts)
	if err != nil {
		v.errorf(line, "[[stage]] entry %d: %v", i+1, err)
		return nil
	}
	return s
}

func stageKinds() string {
	var ns []string
	for _, k := range operator.Kinds() {
		ns = append(ns, k.Name)
	}
	return strings.Join(ns, ", ")
}

func upstreamNames(c *Config) []string {
	names := make([]string, 0, len(c.Upstreams))
	for _, u := range c.Upstreams {
		names = append(names, u.Name)
	}
	if len(names) == 0 {
		return []string{"none"}
	}
	return names
}

// validName reports whether s is a usable upstream name (it appears in
// logs and metric labels).
func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
		default:
			return false
		}
	}
	return true
}

// validHeaderName reports whether s is an HTTP header name (an RFC 9110
// token).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// checkBaseURL validates an upstream base URL and trims its trailing
// slash. Its error never quotes a password.
func checkBaseURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", fmt.Errorf("is not a URL: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("%q: want http://host[:port][/path] or https://…", u.Redacted())
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%q: want no query or fragment (the wire's path is appended)", u.Redacted())
	}
	return strings.TrimRight(s, "/"), nil
}

// redactURL hides the password of a URL.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(not a URL)"
	}
	return u.Redacted()
}
