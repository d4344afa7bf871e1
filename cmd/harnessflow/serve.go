package main

import (
	"context"
	"flag"
	"fmt"
	"github.com/harnessflow/harnessflow/codec"
	"github.com/harnessflow/harnessflow/internal/httpserve"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/all"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/scripted"
	"github.com/harnessflow/harnessflow/server"
	"github.com/harnessflow/harnessflow/stages/textcall"
)

// serveSynopsis is the short usage of serve.
const serveSynopsis = "Usage: harnessflow serve [--listen 127.0.0.1:8787] [--upstream URL --upstream-wire chat|messages|responses] [flags]"

// runServe implements `harnessflow serve`: the Responses API proxy
// (docs/architecture.md#proxy) until ctx is cancelled (the first SIGINT or SIGTERM), then a
// graceful shutdown: the streams in flight get --shutdown-grace to finish,
// and the second signal (stopNow(ctx)) ends them at once. Without
// --upstream it runs the scripted model in-process on a loopback port, so
// it works offline; that model outlives the shutdown.
func runServe(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", server.DefaultAddr, "address to listen on (port 0 picks a free port; the address is printed)")
	upstream := fs.String("upstream", "", "the model server's base `URL`, e.g. http://127.0.0.1:8000/v1 (default: the built-in scripted model)")
	wireName := fs.String("upstream-wire", "chat", "the upstream's wire: "+codec.Choices())
	keyEnv := fs.String("api-key-env", "", "send the API key in environment variable `NAME` upstream instead of the client's Authorization")
	model := fs.String("model", "", "replace the model of every request with `NAME`")
	modeName := fs.String("mode", "fused", "execution mode of the response graphs: fused or async")
	stageTiming := fs.Bool("stage-timing", false, "time every node of the response graphs for /metrics (harnessflow_node_seconds_total); costs two clock reads per node per event")
	scriptFile := fs.String("script", "", "script `FILE` for the built-in scripted model (without --upstream)")
	verbose := fs.Bool("v", false, "debug logs (never credentials; error details may quote upstream bytes)")
	followups := fs.String("followups", server.FollowupsClient, "harness follow-ups: client (stream them, end_turn:false) or proxy (re-ask the upstream)")
	maxRounds := fs.Int("max-followup-rounds", server.DefaultMaxFollowupRounds, "proxy follow-ups: at most `N` re-asks per client request")
	maxEvent := fs.Int("max-event-bytes", 0, "cap on one upstream SSE line or event (default 32 MiB)")
	headerTimeout := fs.Duration("upstream-header-timeout", server.DefaultUpstreamHeaderTimeout,
		"give up on an upstream that sends no response headers within `D` (HTTP 504; 0: no limit); a non-streaming upstream request waits up to --upstream-idle-timeout when that is longer")
	idleTimeout := fs.Duration("upstream-idle-timeout", server.DefaultUpstreamIdleTimeout,
		"end a stream with response.failed when the upstream sends nothing for `D` mid-answer (0: no limit; the default is Codex CLI's own stream idle timeout)")
	grace := fs.Duration("shutdown-grace", server.DefaultShutdownGrace,
		"on SIGTERM or SIGINT, let the streams in flight finish for up to `D`, then end them with response.failed (0: at once; a second signal: at once)")
	maxStreams := fs.Int("max-streams", 0, "serve at most `N` requests at once (0: no bound); one over the bound waits --queue-timeout for a slot, then gets HTTP 503 with Retry-After (size it at about 70% of the saturation point harnessflow-load finds)")
	queueTimeout := fs.Duration("queue-timeout", server.DefaultQueueTimeout, "with --max-streams, how long a request over the bound waits for a slot before its 503 (`D`; 0: no wait)")
	clientKeysEnv := fs.String("client-keys-env", "", "require clients to send \"Authorization: Bearer KEY\" with a key listed (comma or newline separated) in environment variable `NAME`")
	clientKeysFile := fs.String("client-keys-file", "", "like --client-keys-env, with the keys in `FILE` (one per line or comma separated; # starts a comment line)")
	openRelay := fs.Bool("insecure-open-relay", false, "allow a non-loopback --listen with --api-key-env and no client keys: anyone who reaches the port spends the upstream key")
	defaultModel := fs.String("default-model", "", "the model of a request that names none (without it such a request gets HTTP 400)")
	storeFlag := fs.String("store", "memory", storeFlagHelp)
	debugAddr := fs.String("debug-addr", "", "also serve pprof profiles and runtime statistics at http://`ADDR`/debug/ (a loopback address; off by default)")
	configFile := fs.String("config", "", "route by model to the upstreams of the configuration `FILE` (docs/serve-config.md); SIGHUP re-reads it")
	workspaceFlag := fs.String("workspace", "", "whether harnesses read the client's working directory from this machine: local or none (default: local on a loopback --listen without client keys, else none)")
	var ext extensionFlags
	ext.register(fs)
	var bounds boundFlags
	bounds.register(fs)
	layer := layerFlags{toolFormatDefault: textcall.Auto}
	layer.register(fs)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, "Usage: harnessflow serve [--listen 127.0.0.1:8787] [--upstream URL --upstream-wire chat|messages|responses]")
		fmt.Fprintln(w, "       [--api-key-env NAME] [--model NAME] [--mode fused|async] [--stage-timing] [--script FILE]")
		fmt.Fprintln(w, "       [--redact] [--redact-pattern RE]... [--log-events] [--record DIR]")
		fmt.Fprintln(w, "       [--followups client|proxy] [--max-followup-rounds N] [--prompts DIR] [--model-caps FILE]")
		fmt.Fprintln(w, "       [--upstream-header-timeout 2m] [--upstream-idle-timeout 5m] [--shutdown-grace 30s]")
		fmt.Fprintln(w, "       [--client-keys-env NAME | --client-keys-file FILE] [--insecure-open-relay] [--default-model NAME]")
		fmt.Fprintln(w, "       [--debug-addr 127.0.0.1:PORT] [--max-streams N [--queue-timeout 100ms]]")
		fmt.Fprintln(w, "       [--max-answer-bytes N] [--max-upstream-body-bytes N] [--max-compression-ratio N]")
		fmt.Fprintln(w, "       [--max-input-items N] [--max-conns N] [--body-timeout 30s]")
		fmt.Fprintln(w, "   or: harnessflow serve --config serve.toml [--listen ADDR] [-v] [--mode M] [extension and prompt flags]")
		fmt.Fprintln(w, "       [--store memory|none|redis://HOST:PORT/DB]")
		fmt.Fprintln(w, "Serves the OpenAI Responses API (POST /v1/responses; POST /h/HARNESS/v1/responses to emulate a")
		fmt.Fprintln(w, "harness; GET /metrics; GET /healthz) in front of a model server speaking "+codec.Choices()+".")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, serveSynopsis, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "serve", serveSynopsis, "%s", extraArgs(fs, 0))
	}
	if err := bounds.check(); err != nil {
		return fail(stderr, "serve", exitUsage, "%v", err)
	}
	if *configFile != "" { // serveroutes.go
		return runServeConfig(ctx, fs, *configFile, serveFlags{listen: *listen, mode: *modeName, debugAddr: *debugAddr,
			workspace: *workspaceFlag, verbose: *verbose, stageTiming: *stageTiming, maxEvent: *maxEvent,
			maxStreams: *maxStreams, queueTimeout: *queueTimeout, ext: &ext, layer: &layer, bounds: &bounds}, stdout, stderr)
	}
	wire, err := harness.ParseWire(*wireName)
	if err != nil {
		return fail(stderr, "serve", exitUsage, "--upstream-wire: %v", err)
	}
	mode, err := pipeline.ParseMode(*modeName)
	if err != nil {
		return fail(stderr, "serve", exitUsage, "--mode: %v", err)
	}
	var apiKey string
	if *keyEnv != "" {
		if apiKey = os.Getenv(*keyEnv); apiKey == "" {
			return fail(stderr, "serve", exitUsage, "--api-key-env: environment variable %s is not set or empty", *keyEnv)
		}
	}
	if *upstream == "" && wire == harness.WireResponses {
		return fail(stderr, "serve", exitUsage, "--upstream-wire %s needs --upstream (the built-in scripted model speaks chat and messages)", wire)
	}
	if *upstream != "" && *scriptFile != "" {
		return fail(stderr, "serve", exitUsage, "--script applies to the built-in scripted model only, not with --upstream")
	}
	if *upstream != "" {
		if err := (server.Config{Upstream: *upstream, Wire: wire}).Check(); err != nil {
			return fail(stderr, "serve", exitUsage, "--upstream: %v", err)
		}
	}
	if *maxRounds < 1 {
		return fail(stderr, "serve", exitUsage, "--max-followup-rounds: want at least 1, got %d", *maxRounds)
	}
	if *followups != server.FollowupsClient && *followups != server.FollowupsProxy {
		return fail(stderr, "serve", exitUsage, "--followups: want client or proxy, got %q", *followups)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"upstream-header-timeout", *headerTimeout}, {"upstream-idle-timeout", *idleTimeout}, {"shutdown-grace", *grace}, {"queue-timeout", *queueTimeout}} {
		if d.v < 0 {
			return fail(stderr, "serve", exitUsage, "--%s: want 0 or more, got %s", d.name, d.v)
		}
	}
	if *maxStreams < 0 {
		return fail(stderr, "serve", exitUsage, "--max-streams: want 0 (no bound) or more, got %d", *maxStreams)
	}
	clientKeys, err := loadClientKeys(*clientKeysEnv, *clientKeysFile)
	if err != nil {
		return fail(stderr, "serve", exitUsage, "%v", err)
	}
	workspace := harness.DefaultWorkspacePolicy(*listen, len(clientKeys) > 0)
	if *workspaceFlag != "" {
		if workspace, err = harness.ParseWorkspacePolicy(*workspaceFlag); err != nil {
			return fail(stderr, "serve", exitUsage, "--workspace: %v", err)
		}
	}
	planCfg, err := layer.config(wire, *upstream)
	if err != nil {
		return fail(stderr, "serve", exitUsage, "%v", err)
	}
	script, err := loadScript(*scriptFile)
	if err != nil {
		return fail(stderr, "serve", exitUsage, "%v", err)
	}
	stages, err := ext.stages()
	if err != nil {
		return fail(stderr, "serve", exitUsage, "%v", err)
	}
	store, err := openStore(*storeFlag)
	if err != nil {
		return fail(stderr, "serve", exitUsage, "%v", err)
	}
	defer store.close()

	errOut := &syncWriter{w: stderr}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(errOut, &slog.HandlerOptions{Level: level}))

	// The scripted model outlives the proxy's shutdown (ctx ends when the
	// first signal comes): the streams in flight finish against it.
	upCtx, upCancel := context.WithCancel(context.WithoutCancel(ctx))
	defer upCancel()
	var lc net.ListenConfig
	upstreamDesc := fmt.Sprintf("%s (wire %s)", server.RedactURL(*upstream), wire)
	scriptedDone := make(chan error, 1)
	if *upstream == "" {
		sln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
		if err != nil {
			return fail(stderr, "serve", exitError, "scripted model: %v", err)
		}
		*upstream = "http://" + sln.Addr().String() + "/v1"
		upstreamDesc = "the built-in scripted model at " + *upstream + " (no --upstream given)"
		go func() { scriptedDone <- httpserve.Serve(upCtx, sln, scripted.New(script), errOut) }()
	} else {
		scriptedDone <- nil
	}

	cfg := server.Config{
		Registry: all.Registry(),
		Upstream: *upstream,
		Wire:     wire,
		APIKey:   apiKey,
		Model:    *model,
		Mode:     mode,
		Logger:   logger,

		StageTiming: *stageTiming,

		Models:            planCfg.Models,
		Prompts:           planCfg.Prompts,
		Variants:          planCfg.Variants,
		ToolFormat:        planCfg.ToolFormat,
		ToolsInPrompt:     planCfg.ToolsInPrompt,
		Workspace:         workspace,
		Followups:         *followups,
		MaxFollowupRounds: *maxRounds,
		MaxEventBytes:     *maxEvent,
		Extend:            extend(stages, errOut),

		UpstreamHeaderTimeout: noLimit(*headerTimeout),
		UpstreamIdleTimeout:   noLimit(*idleTimeout),
		ShutdownGrace:         noLimit(*grace),
		MaxStreams:            *maxStreams,
		QueueTimeout:          noLimit(*queueTimeout),
		ClientKeys:            clientKeys,
		InsecureOpenRelay:     *openRelay,
		DefaultModel:          *defaultModel,
		Store:                 store.store,
		NoStore:               store.none,
	}
	bounds.apply(&cfg)
	// Refuse an open relay before binding anything (Serve checks again).
	if addr, err := net.ResolveTCPAddr("tcp", *listen); err == nil {
		if err := cfg.CheckAddr(addr); err != nil {
			upCancel()
			<-scriptedDone
			return fail(stderr, "serve", exitUsage, "%v (--client-keys-env, --client-keys-file, or --insecure-open-relay)", err)
		}
	}
	ln, err := lc.Listen(ctx, "tcp", *listen)
	if err != nil {
		upCancel()
		<-scriptedDone
		return fail(stderr, "serve", exitError, "%v", listenError(err, *listen))
	}
	if err := cfg.CheckAddr(ln.Addr()); err != nil {
		ln.Close()
		upCancel()
		<-scriptedDone
		return fail(stderr, "serve", exitUsage, "%v (--client-keys-env, --client-keys-file, or --insecure-open-relay)", err)
	}
	if *debugAddr != "" {
		stopDebug, err := startDebug(ctx, *debugAddr, stdout, errOut)
		if err != nil {
			ln.Close()
			upCancel()
			<-scriptedDone
			return fail(stderr, "serve", exitUsage, "%v", err)
		}
		defer stopDebug()
	}
	srv := server.New(cfg)
	if !server.IsLoopback(ln.Addr()) {
		fmt.Fprintf(errOut, "harnessflow serve: warning: listening on %s, which is not a loopback address\n", ln.Addr())
	}
	clients := "any caller"
	if len(clientKeys) > 0 {
		clients = fmt.Sprintf("bearer key required (%d accepted)", len(clientKeys))
	}
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, "harnessflow serve: listening on %s, upstream %s, clients: %s\n", base, upstreamDesc, clients)
	// The native route has no Messages translation: on that wire the start
	// line points at a harness route that serves it.
	codexBase, routes := base+"/v1", "harness routes: "+base+"/h/NAME/v1"
	if wire == harness.WireMessages {
		codexBase = base + "/h/" + harness.NameClaudeCode + "/v1"
		var onWire []string
		for _, h := range harness.All() {
			if h.Supports(wire) {
				onWire = append(onWire, "/h/"+h.Name+"/v1")
			}
		}
		routes = "messages routes: " + strings.Join(onWire, ", ") + "; /v1 has no native Messages translation"
	}
	fmt.Fprintf(stdout, "Point Codex at it: [model_providers.harnessflow] base_url = %q, wire_api = \"responses\" (%s)\n", codexBase, routes)
	fmt.Fprintf(errOut, "harnessflow serve: response store: %s\n", store.desc)
	checkStore(ctx, store, errOut)

	served := make(chan struct{})
	// Caught from here on: a SIGHUP re-reads the client keys and never
	// ends the process.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	reloaded := make(chan struct{})
	go func() {
		defer close(reloaded)
		reloadKeysOnHangup(srv, logger, *clientKeysEnv, *clientKeysFile, hup, served)
	}()
	go stopOnSignals(ctx, errOut, srv, grace.String(), served)
	serveErr := srv.Serve(ctx, ln)
	close(served)
	<-reloaded
	upCancel()
	scriptedErr := <-scriptedDone
	if serveErr != nil {
		return fail(stderr, "serve", exitError, "%v", serveErr)
	}
	if scriptedErr != nil {
		return fail(stderr, "serve", exitError, "scripted model: %v", scriptedErr)
	}
	return exitOK
}

// noLimit maps a flag's 0 ("no limit", "at once") to the server's negative
// value (its 0 means the default).
func noLimit(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// loadClientKeys reads the client keys of --client-keys-env and
// --client-keys-file (both may be given: the keys of both are accepted).
// Its errors never quote a key.
func loadClientKeys(envName, file string) ([]string, error) {
	var keys []string
	if envName != "" {
		text := os.Getenv(envName)
		if strings.TrimSpace(text) == "" {
			return nil, fmt.Errorf("--client-keys-env: environment variable %s is not set or empty", envName)
		}
		k, err := server.ParseClientKeys(text)
		if err != nil {
			return nil, fmt.Errorf("--client-keys-env %s: %w", envName, err)
		}
		keys = append(keys, k...)
	}
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--client-keys-file: %w", err)
		}
		k, err := server.ParseClientKeys(string(data))
		if err != nil {
			return nil, fmt.Errorf("--client-keys-file %s: %w", file, err)
		}
		keys = append(keys, k...)
	}
	return keys, nil
}

// reloadKeysOnHangup re-reads the client keys of --client-keys-env and
// --client-keys-file on every signal of hup until done is closed: the
// requests that arrive next are checked against them (kill -HUP revokes a
// key removed from the file). A list that does not read is refused and the
// keys in force kept. The log line says every time that an environment
// variable is read as it was when the process started.
func reloadKeysOnHangup(srv *server.Server, log *slog.Logger, envName, file string, hup <-chan os.Signal, done <-chan struct{}) {
	for {
		select {
		case <-hup:
		case <-done:
			return
		}
		if envName == "" && file == "" {
			log.Info("harnessflow: SIGHUP: nothing to re-read (no --client-keys-file, --client-keys-env or --config)")
			continue
		}
		attrs := []slog.Attr{}
		if file != "" {
			attrs = append(attrs, slog.String("file", file))
		}
		if envName != "" {
			attrs = append(attrs, slog.String("environment_as_at_start", envName))
		}
		keys, err := loadClientKeys(envName, file)
		if err == nil {
			err = srv.SetClientKeys(keys)
		}
		if err != nil {
			log.LogAttrs(context.Background(), slog.LevelWarn, "harnessflow: client keys refused; the keys in force are kept",
				append(attrs, slog.String("error", err.Error()))...)
			continue
		}
		log.LogAttrs(context.Background(), slog.LevelInfo, "harnessflow: client keys reloaded", append(attrs, slog.Int("client_keys", len(keys)))...)
	}
}

// stopOnSignals stops srv in two steps until served is closed: at the
// first signal (ctx done) it says the streams in flight get grace to
// finish, at the second it stops srv at once.
func stopOnSignals(ctx context.Context, errOut io.Writer, srv *server.Server, grace string, served <-chan struct{}) {
	select {
	case <-ctx.Done(): // the first signal
		fmt.Fprintf(errOut, "harnessflow serve: stopping: the streams in flight get up to %s to finish; send the signal again to stop at once\n", grace)
	case <-served:
		return
	}
	select {
	case <-stopNow(ctx): // the second signal
		srv.Stop()
	case <-served:
	}
}
