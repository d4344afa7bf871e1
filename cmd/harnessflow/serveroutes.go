package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/all"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/serveconfig"
	"github.com/harnessflow/harnessflow/server"
	"github.com/harnessflow/harnessflow/stages/operator"
)

// configOverrides are the serve flags that may be given with --config:
// they set what the file does not (logging, execution, prompts, stream
// extensions) or, for --listen, replace the file's addresses.
var configOverrides = append([]string{"config", "listen", "v", "mode", "stage-timing", "debug-addr", "workspace", "max-event-bytes",
	"max-streams", "queue-timeout", "prompts", "model-caps", "variant", "terminus-exec", "redact", "redact-pattern", "log-events", "record"},
	boundFlagNames...)

// serveFlags are the values of serve's flags that apply with --config.
type serveFlags struct {
	listen, mode, debugAddr, workspace string
	verbose, stageTiming               bool
	maxEvent, maxStreams               int
	queueTimeout                       time.Duration
	ext                                *extensionFlags
	layer                              *layerFlags
	bounds                             *boundFlags
}

// runServeConfig is `harnessflow serve --config FILE` (docs/serve-config.md):
// the proxy routing each request by its model to the file's upstreams,
// re-reading the file on SIGHUP (a file that does not validate is refused
// and the running configuration kept). The shutdown is serve's.
func runServeConfig(ctx context.Context, fs *flag.FlagSet, path string, f serveFlags, stdout, stderr io.Writer) int {
	var conflict []string
	listenGiven := false
	fs.Visit(func(fl *flag.Flag) {
		switch {
		case fl.Name == "listen":
			listenGiven = true
		case !slices.Contains(configOverrides, fl.Name):
			conflict = append(conflict, "--"+fl.Name)
		}
	})
	if len(conflict) > 0 {
		return usageError(stderr, "serve", serveSynopsis, "%s cannot be combined with --config: set it in %s (docs/serve-config.md); "+
			"with --config only --%s may be given", strings.Join(conflict, ", "), path, strings.Join(configOverrides[1:], ", --"))
	}
	c, err := loadServeConfig(path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	mode, err := pipeline.ParseMode(f.mode)
	if err != nil {
		return fail(stderr, "serve", exitUsage, "--mode: %v", err)
	}
	planCfg, err := f.layer.config(harness.WireChat, "")
	if err != nil {
		return fail(stderr, "serve", exitUsage, "%v", err)
	}
	addrs := c.Listen
	if listenGiven || len(addrs) == 0 {
		addrs = []string{f.listen}
	}
	workspace := harness.DefaultWorkspacePolicy(addrs[0], len(c.ClientKeys) > 0)
	if f.workspace != "" {
		if workspace, err = harness.ParseWorkspacePolicy(f.workspace); err != nil {
			return fail(stderr, "serve", exitUsage, "--workspace: %v", err)
		}
	}
	store, err := openStore(c.Store)
	if err != nil {
		return fail(stderr, "serve", exitUsage, "%s: store: %v", path, err)
	}
	defer store.close()

	errOut := &syncWriter{w: stderr}
	level := slog.LevelInfo
	if f.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(errOut, &slog.HandlerOptions{Level: level}))
	flagStages, err := f.ext.stages()
	if err != nil {
		return fail(stderr, "serve", exitUsage, "%v", err)
	}
	routes := serveconfig.NewHolder(c, serveconfig.Options{Registry: all.Registry()})
	cfg := server.Config{
		Registry:          all.Registry(),
		Routes:            routes,
		Mode:              mode,
		Logger:            logger,
		StageTiming:       f.stageTiming,
		Models:            planCfg.Models,
		Prompts:           planCfg.Prompts,
		Variants:          planCfg.Variants,
		Workspace:         workspace,
		ToolFormat:        c.ToolFormat,
		Followups:         c.Followups,
		MaxFollowupRounds: c.MaxFollowupRounds,
		MaxEventBytes:     f.maxEvent,
		MaxStreams:        f.maxStreams,
		QueueTimeout:      noLimit(f.queueTimeout),
		Extend:            configExtend(routes, flagStages, errOut),
		ShutdownGrace:     c.ShutdownGrace,
		ClientKeys:        c.ClientKeys,
		InsecureOpenRelay: c.InsecureOpenRelay,
		DefaultModel:      c.DefaultModel,
		Store:             store.store,
		NoStore:           store.none,
	}
	f.bounds.apply(&cfg)
	if err := cfg.Check(); err != nil {
		return fail(stderr, "serve", exitUsage, "%s: %v", path, err)
	}
	lns, code := listenAll(ctx, cfg, addrs, stderr)
	if lns == nil {
		return code
	}
	if f.debugAddr != "" {
		stopDebug, err := startDebug(ctx, f.debugAddr, stdout, errOut)
		if err != nil {
			closeAll(lns)
			return fail(stderr, "serve", exitUsage, "%v", err)
		}
		defer stopDebug()
	}
	srv := server.New(cfg)
	// Caught before the start line is printed: from then on a SIGHUP
	// reloads and never ends the process.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	clients := "any caller"
	if len(c.ClientKeys) > 0 {
		clients = fmt.Sprintf("bearer key required (%d accepted)", len(c.ClientKeys))
	}
	var bases []string
	for _, ln := range lns {
		if !server.IsLoopback(ln.Addr()) {
			fmt.Fprintf(errOut, "harnessflow serve: warning: listening on %s, which is not a loopback address\n", ln.Addr())
		}
		bases = append(bases, "http://"+ln.Addr().String())
	}
	fmt.Fprintf(stdout, "harnessflow serve: listening on %s, routes from %s (%d upstreams, models %s), clients: %s\n",
		strings.Join(bases, ", "), path, len(c.Upstreams), strings.Join(c.ModelNames(), ", "), clients)
	fmt.Fprintf(stdout, "Point Codex at it: [model_providers.harnessflow] base_url = %q, wire_api = \"responses\"; model = one of the models above "+
		"(kill -HUP %d re-reads %s)\n", bases[0]+"/v1", os.Getpid(), path)
	fmt.Fprintf(errOut, "harnessflow serve: response store: %s\n", store.desc)
	checkStore(ctx, store, errOut)

	served := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { reloadOnHangup(srv, path, hup, served) })
	wg.Go(func() { stopOnSignals(ctx, errOut, srv, graceText(c.ShutdownGrace), served) })
	errs := make([]error, len(lns))
	var serving sync.WaitGroup
	for i, ln := range lns {
		serving.Go(func() { errs[i] = srv.Serve(ctx, ln) })
	}
	serving.Wait()
	close(served)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fail(stderr, "serve", exitError, "%v", err)
	}
	return exitOK
}

// configExtend puts into every response graph the [[stage]] stages of the
// configuration routes holds at the request (a reload changes them), then
// the flags' stages.
func configExtend(routes *serveconfig.Holder, flagStages []*operator.Stage, log io.Writer) func(server.StreamInfo) []pipeline.Edit {
	return func(info server.StreamInfo) []pipeline.Edit {
		st := operator.Stream{Wire: string(info.Wire), Log: log}
		var cs []*operator.Stage
		if c := routes.Config(); c != nil {
			cs = c.Stages
		}
		return append(operator.Edits(st, cs...), operator.Edits(st, flagStages...)...)
	}
}

// listenAll listens on every address, refusing an open relay before and
// after binding; on failure it closes what it opened, reports and returns
// nil and the exit status.
func listenAll(ctx context.Context, cfg server.Config, addrs []string, stderr io.Writer) ([]net.Listener, int) {
	const fix = " (set client_keys or insecure_open_relay in the configuration)"
	var lc net.ListenConfig
	var lns []net.Listener
	for _, a := range addrs {
		if addr, err := net.ResolveTCPAddr("tcp", a); err == nil {
			if err := cfg.CheckAddr(addr); err != nil {
				closeAll(lns)
				return nil, fail(stderr, "serve", exitUsage, "%v%s", err, fix)
			}
		}
		ln, err := lc.Listen(ctx, "tcp", a)
		if err != nil {
			closeAll(lns)
			return nil, fail(stderr, "serve", exitError, "%v", listenError(err, a))
		}
		lns = append(lns, ln)
		if err := cfg.CheckAddr(ln.Addr()); err != nil {
			closeAll(lns)
			return nil, fail(stderr, "serve", exitUsage, "%v%s", err, fix)
		}
	}
	return lns, exitOK
}

func closeAll(lns []net.Listener) {
	for _, ln := range lns {
		ln.Close()
	}
}

// reloadOnHangup re-reads the configuration file on every signal of hup
// until done is closed (the server logs what a reload did).
func reloadOnHangup(srv *server.Server, path string, hup <-chan os.Signal, done <-chan struct{}) {
	for {
		select {
		case <-hup:
			_, _ = srv.Reload(path) // logged by the server; a refused file leaves the running one
		case <-done:
			return
		}
	}
}

// graceText is how long the shutdown lets streams finish, for the
// stopping message (the configuration's 0 is the default, negative none).
func graceText(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d == 0:
		return server.DefaultShutdownGrace.String()
	}
	return d.String()
}
