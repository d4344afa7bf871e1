package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/server"
	"github.com/harnessflow/harnessflow/server/scripted"
)

// runServe implements `harnessflow serve`: the Responses API proxy
// (DESIGN §7) until ctx is cancelled (Ctrl-C). Without --upstream it runs
// the scripted model in-process on a loopback port, so it works offline.
func runServe(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", server.DefaultAddr, "address to listen on (port 0 picks a free port; the address is printed)")
	upstream := fs.String("upstream", "", "the model server's base `URL`, e.g. http://127.0.0.1:8000/v1 (default: the built-in scripted model)")
	wireName := fs.String("upstream-wire", "chat", "the upstream's wire: chat, messages or responses")
	keyEnv := fs.String("api-key-env", "", "send the API key in environment variable `NAME` upstream instead of the client's Authorization")
	model := fs.String("model", "", "replace the model of every request with `NAME`")
	modeName := fs.String("mode", "fused", "execution mode of the response graphs: fused or async")
	scriptFile := fs.String("script", "", "script `FILE` for the built-in scripted model (without --upstream)")
	verbose := fs.Bool("v", false, "debug logs (never credentials; error details may quote upstream bytes)")
	followups := fs.String("followups", server.FollowupsClient, "harness follow-ups: client (stream them, end_turn:false) or proxy (re-ask the upstream)")
	maxRounds := fs.Int("max-followup-rounds", server.DefaultMaxFollowupRounds, "proxy follow-ups: at most `N` re-asks per client request")
	maxEvent := fs.Int("max-event-bytes", 0, "cap on one upstream SSE line or event (default 32 MiB)")
	var ext extensionFlags
	ext.register(fs)
	var layer layerFlags
	layer.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: harnessflow serve [--listen 127.0.0.1:8787] [--upstream URL --upstream-wire chat|messages|responses]")
		fmt.Fprintln(stderr, "       [--api-key-env NAME] [--model NAME] [--mode fused|async] [--script FILE]")
		fmt.Fprintln(stderr, "       [--redact] [--redact-pattern RE]... [--log-events] [--record DIR]")
		fmt.Fprintln(stderr, "       [--followups client|proxy] [--max-followup-rounds N] [--prompts DIR] [--model-caps FILE]")
		fmt.Fprintln(stderr, "Serves the OpenAI Responses API (POST /v1/responses; POST /h/HARNESS/v1/responses to emulate a")
		fmt.Fprintln(stderr, "harness; GET /metrics; GET /healthz) in front of a chat, messages or responses model server.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(reorder(fs, args)); err != nil {
		return flagStatus(err)
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return exitUsage
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
	if *upstream == "" && wire != harness.WireChat {
		return fail(stderr, "serve", exitUsage, "--upstream-wire %s needs --upstream (the built-in scripted model speaks chat)", wire)
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
	planCfg, err := layer.config(wire, *upstream)
	if err != nil {
		return fail(stderr, "serve", exitUsage, "%v", err)
	}
	script, err := loadScript(*scriptFile)
	if err != nil {
		return fail(stderr, "serve", exitUsage, "%v", err)
	}

	errOut := &syncWriter{w: stderr}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(errOut, &slog.HandlerOptions{Level: level}))

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var lc net.ListenConfig
	upstreamDesc := fmt.Sprintf("%s (wire %s)", *upstream, wire)
	scriptedDone := make(chan error, 1)
	if *upstream == "" {
		sln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
		if err != nil {
			return fail(stderr, "serve", exitError, "scripted model: %v", err)
		}
		*upstream = "http://" + sln.Addr().String() + "/v1"
		upstreamDesc = "the built-in scripted model at " + *upstream + " (no --upstream given)"
		go func() { scriptedDone <- serveHTTP(ctx, sln, scripted.New(script), errOut) }()
	} else {
		scriptedDone <- nil
	}

	ln, err := lc.Listen(ctx, "tcp", *listen)
	if err != nil {
		cancel()
		<-scriptedDone
		return fail(stderr, "serve", exitError, "%v", err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		fmt.Fprintf(errOut, "harnessflow serve: warning: listening on %s, which is not a loopback address\n", ln.Addr())
	}
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, "harnessflow serve: listening on %s, upstream %s\n", base, upstreamDesc)
	fmt.Fprintf(stdout, "Point Codex at it: [model_providers.harnessflow] base_url = %q, wire_api = \"responses\" "+
		"(harness routes: %s/h/NAME/v1)\n", base+"/v1", base)

	srv := server.New(server.Config{
		Upstream: *upstream,
		Wire:     wire,
		APIKey:   apiKey,
		Model:    *model,
		Mode:     mode,
		Logger:   logger,

		Models:            planCfg.Models,
		Prompts:           planCfg.Prompts,
		Followups:         *followups,
		MaxFollowupRounds: *maxRounds,
		MaxEventBytes:     *maxEvent,
		Extend: func(g *pipeline.Graph, info server.StreamInfo) (*pipeline.Graph, func() error, error) {
			return ext.apply(g, string(info.Wire), errOut)
		},
	})
	serveErr := srv.Serve(ctx, ln)
	cancel()
	scriptedErr := <-scriptedDone
	if serveErr != nil {
		return fail(stderr, "serve", exitError, "%v", serveErr)
	}
	if scriptedErr != nil {
		return fail(stderr, "serve", exitError, "scripted model: %v", scriptedErr)
	}
	return exitOK
}
