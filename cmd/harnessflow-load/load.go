package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/harnessflow/harnessflow/benchmark"
	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/loadtest"
)

// Bounds of a load run.
const (
	maxProxyStreams  = 10000
	maxProxyEvents   = 10000
	maxProxyRounds   = 100
	maxProxyInterval = 10 * time.Second
)

// The targets of a load run, in the order they run at every N.
const (
	targetNative  = "serve native"
	targetHarness = "serve harness" // named "serve NAME" in the report
	// targetLarge is the pass-through sent the harness target's request
	// (a Codex-sized one by default): the floor of a large request.
	targetLarge = "pass-through large"
)

// Request bodies of the load clients.
const (
	proxyChatBody      = `{"model":"bench","messages":[{"role":"user","content":"Stream the benchmark text."}],"stream":true}`
	proxyMessagesBody  = `{"model":"bench","max_tokens":4096,"messages":[{"role":"user","content":"Stream the benchmark text."}],"stream":true}`
	proxyResponsesBody = `{"model":"bench","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Stream the benchmark text."}]}],"stream":true,"store":false}`
)

var (
	listeningRE = regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)
	debugRE     = regexp.MustCompile(`debug endpoints on (http://127\.0\.0\.1:\d+)`)
)

// loadSynopsis is the short usage of the command.
const loadSynopsis = "Usage: harnessflow-load [--streams 100,1000,2000] [--events K] [--interval D] [--rounds R] [--ramp D]"

// optionalDuration is a duration flag that knows whether it was given
// (its help shows no default).
type optionalDuration struct {
	d   time.Duration
	set bool
}

func (o *optionalDuration) String() string {
	if o == nil || !o.set {
		return ""
	}
	return o.d.String()
}

func (o *optionalDuration) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("want a duration such as 3s or 500ms")
	}
	if d < 0 {
		return errors.New("want a duration of 0 or more")
	}
	o.d, o.set = d, true
	return nil
}

// chatHarnesses lists the harnesses that shape chat requests.
func chatHarnesses() []string {
	var names []string
	for _, s := range harness.All() {
		if s.Supports(harness.WireChat) {
			names = append(names, s.Name)
		}
	}
	return names
}

// runLoad is the load run: a scripted upstream whose deltas carry their
// send time, and N concurrent streaming clients reaching it directly,
// through a plain reverse proxy, and through serve (native and with a
// harness), each a separate process on a loopback port (the upstream and
// the pass-through started from this binary, serve from the harnessflow
// one) and stopped at the end.
func runLoad(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	streamsArg := fs.String("streams", "100,1000,2000", "the numbers `N` of concurrent streams, comma separated")
	events := fs.Int("events", 60, "text deltas per stream (`K`)")
	interval := fs.Duration("interval", 50*time.Millisecond, "time `D` between two deltas of a stream")
	rounds := fs.Int("rounds", 2, "streams each client runs one after another (on its connection)")
	var rampFlag optionalDuration
	fs.Var(&rampFlag, "ramp", "the clients start evenly over `D` (default: one stream's duration, K × interval)")
	ramp := &rampFlag.d
	harnessName := fs.String("harness", harness.NameMinimal, "the harness of the serve-with-a-harness target (/h/NAME/v1/responses)")
	targetsArg := fs.String("targets", "direct,pass-through,pass-through-large,native,harness", "which targets run, comma separated")
	requestFile := fs.String("request", "", "a Responses request `FILE` the serve targets and pass-through-large send (default: a one-line user message for native, a generated Codex-sized request, 38 KB with 10 tools and 50 items, for harness and pass-through-large; stream is forced on)")
	rejections := fs.Bool("rejections", false, "count HTTP 503 answers as rejections (their latency apart, the client waiting Retry-After) rather than errors: for serve with --serve-flag=--max-streams=N")
	maxDuration := fs.Duration("max-duration", 15*time.Minute, "give up after `D` (the whole run; the processes are stopped)")
	asJSON := fs.Bool("json", false, "print the report as JSON instead of Markdown")
	svgFile := fs.String("svg", "", "also write the latency chart to `FILE` (SVG)")
	profileDir := fs.String("profile", "", "write CPU and heap profiles of the proxies under load to `DIR` (one pair per proxy and N; the heap profile after a collection, so that it shows what is live then)")
	profileSecs := fs.Int("profile-seconds", 0, "length of the CPU profiles (default: most of the time left once every client started)")
	bin := fs.String("bin", "", "the harnessflow `BINARY` that runs serve (default: harnessflow next to this binary, else the one on PATH)")
	var serveFlags stringList
	fs.Var(&serveFlags, "serve-flag", "an extra flag for serve, e.g. --serve-flag=--mode=async (repeatable)")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, loadSynopsis)
		fmt.Fprintln(w, "       [--targets direct,pass-through,pass-through-large,native,chat-inbound,messages-inbound,harness] [--harness NAME] [--request FILE] [--rejections]")
		fmt.Fprintln(w, "       [--json] [--svg FILE] [--profile DIR] [--max-duration D] [--bin HARNESSFLOW] [--serve-flag FLAG]...")
		fmt.Fprintln(w, "Starts a scripted chat upstream whose deltas carry their send time, a plain reverse proxy and serve,")
		fmt.Fprintln(w, "each a process on a loopback port, and N concurrent streaming clients through each: per-event")
		fmt.Fprintln(w, "latency p50/p99/max, added latency vs direct and vs the pass-through, errors, the proxy's CPU per")
		fmt.Fprintln(w, "delta, memory per concurrent stream and goroutines. Prints a Markdown table (or JSON). Serve runs")
		fmt.Fprintln(w, "from the harnessflow binary (--bin), the upstream and the pass-through from this one.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, loadSynopsis, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, loadSynopsis, "unexpected argument %q (this command takes none)", fs.Arg(0))
	}
	ns, err := parseStreams(*streamsArg)
	if err != nil {
		return fail(stderr, "", exitUsage, "--streams: %v", err)
	}
	switch {
	case *events < 1 || *events > maxProxyEvents:
		return fail(stderr, "", exitUsage, "--events: want 1 to %d", maxProxyEvents)
	case *interval < 0 || *interval > maxProxyInterval:
		return fail(stderr, "", exitUsage, "--interval: want 0 to %v", maxProxyInterval)
	case *rounds < 1 || *rounds > maxProxyRounds:
		return fail(stderr, "", exitUsage, "--rounds: want 1 to %d", maxProxyRounds)
	case *maxDuration <= 0:
		return fail(stderr, "", exitUsage, "--max-duration: want a positive duration")
	}
	targets, err := parseTargets(*targetsArg)
	if err != nil {
		return fail(stderr, "", exitUsage, "--targets: %v", err)
	}
	if slices.Contains(targets, "harness") {
		if err := harness.CheckName(*harnessName); err != nil {
			return fail(stderr, "", exitUsage, "--harness: %v", err)
		}
		if s, _ := harness.Lookup(*harnessName); !s.Supports(harness.WireChat) {
			return fail(stderr, "", exitUsage, "--harness: %s does not shape chat requests, the wire of the load run's upstream (pick one of: %s)", *harnessName, strings.Join(chatHarnesses(), ", "))
		}
	}
	streamDur := time.Duration(*events) * *interval
	if !rampFlag.set {
		*ramp = streamDur
	}
	body, warm, err := proxyRequest(*requestFile)
	if err != nil {
		return fail(stderr, "", exitUsage, "--request: %v", err)
	}
	large, largeWarm := body, warm
	if *requestFile == "" {
		if large, err = benchmark.CodexRequest("bench", true); err == nil {
			largeWarm, err = benchmark.CodexRequest(loadtest.WarmupModel, true)
		}
		if err != nil {
			return fail(stderr, "", exitError, "%v", err)
		}
	}
	if err := checkFileLimit(ns[len(ns)-1]); err != nil {
		return fail(stderr, "", exitUsage, "--streams: %v", err)
	}
	perRun := *ramp + time.Duration(*rounds)*streamDur + 3*time.Second
	if est := perRun * time.Duration(len(ns)*len(targets)); est > *maxDuration {
		return fail(stderr, "", exitUsage, "the run would take about %v, over --max-duration %v", est.Round(time.Second), *maxDuration)
	}
	self, err := os.Executable()
	if err != nil {
		return fail(stderr, "", exitError, "find this binary (it runs the upstream and the pass-through): %v", err)
	}
	if *bin == "" {
		if *bin, err = findHarnessflow(self); err != nil {
			return fail(stderr, "", exitUsage, "--bin: %v", err)
		}
	}
	if *profileDir != "" {
		if err := os.MkdirAll(*profileDir, 0o755); err != nil {
			return fail(stderr, "", exitError, "--profile: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, *maxDuration)
	defer cancel()

	b := &proxyBench{
		self: self, bin: *bin, events: *events, interval: *interval, rounds: *rounds, ramp: *ramp, streamDur: streamDur,
		harness: *harnessName, body: body, warm: warm, large: large, largeWarm: largeWarm, rejections: *rejections, serveFlags: serveFlags, profileDir: *profileDir, profileSecs: *profileSecs, log: stderr,
	}
	machine := benchmark.ReadMachine()
	report := &loadtest.ProxyReport{
		Title:   name,
		Command: strings.Join(append([]string{name}, args...), " "),
		Goals:   &loadtest.DefaultProxyGoals,
	}
	if err := b.run(ctx, ns, targets, report); err != nil {
		if ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
			return fail(stderr, "", exitError, "over --max-duration %v: %v", *maxDuration, err)
		}
		if ctx.Err() != nil {
			return fail(stderr, "", exitError, "interrupted")
		}
		return fail(stderr, "", exitError, "%v", err)
	}
	machine.LoadAfter = benchmark.LoadAverage()
	report.Machine = machine
	report.Setup = loadtest.SetupLines(*events, interval.String(), *rounds, ramp.String(),
		"Processes: the scripted upstream, the pass-through (net/http/httputil.ReverseProxy) and serve are separate processes on loopback ports; the clients run in the harnessflow-load process.",
		"serve flags: "+strings.Join(append(b.serveArgs("UPSTREAM")[3:], serveFlags...), " "),
		b.requestLine(targets))
	report.Compare()
	if *svgFile != "" {
		svg, err := report.SVG()
		if err == nil {
			err = os.WriteFile(*svgFile, svg, 0o644)
		}
		if err != nil {
			return fail(stderr, "", exitError, "--svg: %v", err)
		}
	}
	if *asJSON {
		err = report.WriteJSON(stdout)
	} else {
		err = report.WriteMarkdown(stdout)
	}
	if err != nil {
		return fail(stderr, "", exitError, "%v", err)
	}
	return exitOK
}

// proxyBench is one load run.
type proxyBench struct {
	self           string // this binary: the upstream and the pass-through
	bin            string // the harnessflow binary: serve
	events, rounds int
	interval, ramp time.Duration
	streamDur      time.Duration
	harness        string
	body, warm     []byte // the native target's request
	large          []byte // the harness and pass-through-large targets' request
	largeWarm      []byte
	rejections     bool
	serveFlags     []string
	profileDir     string
	profileSecs    int
	log            io.Writer
	upBaseURL      string
}

// run measures every target at every N, and stops every process it
// started.
func (b *proxyBench) run(ctx context.Context, ns []int, targets []string, report *loadtest.ProxyReport) error {
	up, err := startChild(ctx, "the scripted upstream", b.self, []string{"upstream", "--listen", "127.0.0.1:0",
		"--events", strconv.Itoa(b.events), "--interval", b.interval.String()}, listeningRE)
	if err != nil {
		return err
	}
	defer up.stop()
	b.upBaseURL = up.urls[0]
	for _, n := range ns {
		for _, t := range targets {
			if err := up.running(); err != nil {
				return err
			}
			fmt.Fprintf(b.log, "%s: N = %d, %s … (load %s)\n", name, n, b.targetName(t), benchmark.LoadAverage())
			run, err := b.measure(ctx, t, n)
			if err != nil {
				return err
			}
			report.Runs = append(report.Runs, run)
		}
	}
	return nil
}

// targetName is the name of target t in the report.
func (b *proxyBench) targetName(t string) string {
	switch t {
	case "direct":
		return loadtest.TargetDirect
	case "pass-through":
		return loadtest.TargetPassThrough
	case "native":
		return targetNative
	case "pass-through-large":
		return targetLarge
	case "chat-inbound", "messages-inbound":
		return "serve " + t // the native route, a Chat Completions or Messages client
	}
	return "serve " + b.harness
}

// requestLine says which request each target sends, for the report.
func (b *proxyBench) requestLine(targets []string) string {
	var parts []string
	for _, t := range targets {
		switch t {
		case "native":
			parts = append(parts, fmt.Sprintf("%s %d bytes", targetNative, len(b.body)))
		case "harness", "pass-through-large":
			parts = append(parts, fmt.Sprintf("%s %d bytes", b.targetName(t), len(b.large)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	line := "Requests: " + strings.Join(parts, ", ")
	if !bytes.Equal(b.large, b.body) {
		line += fmt.Sprintf(" (the large one a generated Codex-sized request: %d input items, %d tools; %s sends it to the chat upstream unchanged)",
			benchmark.CodexRequestItems, benchmark.CodexRequestTools, targetLarge)
	}
	return line + "."
}

// serveArgs are serve's arguments in front of upstream.
func (b *proxyBench) serveArgs(upstream string) []string {
	return []string{"serve", "--listen", "127.0.0.1:0", "--upstream", upstream, "--debug-addr", "127.0.0.1:0", "--shutdown-grace", "2s"}
}

// measure runs target t at n streams, with a fresh proxy process.
func (b *proxyBench) measure(ctx context.Context, t string, n int) (*loadtest.ProxyRun, error) {
	opts := loadtest.LoadOptions{Streams: n, Rounds: b.rounds, Events: b.events, Ramp: b.ramp,
		StreamTimeout: b.streamDur*3 + 60*time.Second, Rejections: b.rejections}
	target := loadtest.ProxyTarget{Name: b.targetName(t), Stream: loadtest.StreamChat,
		Body: []byte(proxyChatBody), Warmup: []byte(strings.Replace(proxyChatBody, `"bench"`, `"`+loadtest.WarmupModel+`"`, 1))}
	var proc *child
	var err error
	switch t {
	case "direct":
		target.URL = b.upBaseURL + "/v1/chat/completions"
	case "pass-through", "pass-through-large":
		if t == "pass-through-large" {
			target.Body, target.Warmup = b.large, b.largeWarm
		}
		proc, err = startChild(ctx, "the pass-through proxy", b.self, []string{"passthrough", "--listen", "127.0.0.1:0",
			"--upstream", b.upBaseURL, "--idle", strconv.Itoa(n + 16)}, listeningRE)
		if err != nil {
			return nil, err
		}
		target.URL = proc.urls[0] + "/v1/chat/completions"
		target.Debug = proc.urls[0] + "/debug/runtime"
		if b.profileDir != "" {
			opts.Ramped = b.profiler(proc.urls[0], fmt.Sprintf("N%d-%s", n, strings.ReplaceAll(target.Name, " ", "-")))
		}
	default:
		proc, err = startChild(ctx, "serve", b.bin, append(b.serveArgs(b.upBaseURL+"/v1"), b.serveFlags...), listeningRE, debugRE)
		if err != nil {
			return nil, err
		}
		path := "/v1/responses"
		if t == "harness" {
			path = "/h/" + b.harness + "/v1/responses"
		}
		target.URL, target.Debug = proc.urls[0]+path, proc.urls[1]+"/debug/runtime"
		target.Stream, target.Body, target.Warmup = loadtest.StreamResponses, b.body, b.warm
		switch t {
		case "harness":
			target.Body, target.Warmup = b.large, b.largeWarm
		case "chat-inbound": // the chat client's request, answered as chat chunks
			target.URL, target.Stream = proc.urls[0]+"/v1/chat/completions", loadtest.StreamChat
			target.Body, target.Warmup = []byte(proxyChatBody), []byte(strings.Replace(proxyChatBody, `"bench"`, `"`+loadtest.WarmupModel+`"`, 1))
		case "messages-inbound":
			target.URL, target.Stream = proc.urls[0]+"/v1/messages", loadtest.StreamMessages
			target.Body, target.Warmup = []byte(proxyMessagesBody), []byte(strings.Replace(proxyMessagesBody, `"bench"`, `"`+loadtest.WarmupModel+`"`, 1))
		}
		if b.profileDir != "" {
			opts.Ramped = b.profiler(proc.urls[1], fmt.Sprintf("N%d-%s", n, strings.ReplaceAll(target.Name, " ", "-")))
		}
	}
	if proc != nil {
		defer proc.stop()
		target.PID = proc.pid()
	}
	run, err := loadtest.RunLoad(ctx, target, opts)
	if err != nil {
		if proc != nil {
			if perr := proc.running(); perr != nil {
				return nil, fmt.Errorf("%w (%v)", err, perr)
			}
		}
		return nil, err
	}
	if proc != nil {
		if perr := proc.running(); perr != nil {
			return nil, fmt.Errorf("%s during the run at N = %d: %w", target.Name, n, perr)
		}
		if run.Errors > 0 {
			run.FirstError += " (the proxy's standard error ends: " + proc.stderrTail() + ")"
		}
	}
	return run, nil
}

// profiler returns the hook that takes a proxy's CPU profile under load (for
// most of the streams' remaining time) and then its heap profile, into
// the profile directory as NAME.cpu.pprof and NAME.heap.pprof.
func (b *proxyBench) profiler(debugBase, name string) func(context.Context) {
	return func(ctx context.Context) {
		secs := b.profileSecs
		if secs <= 0 {
			secs = max(int((time.Duration(b.rounds)*b.streamDur-b.ramp).Seconds()*0.8), 1)
		}
		get := func(path, file string) {
			client := &http.Client{Timeout: time.Duration(secs)*time.Second + 30*time.Second}
			defer client.CloseIdleConnections()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, debugBase+path, nil)
			if err == nil {
				var resp *http.Response
				if resp, err = client.Do(req); err == nil {
					defer resp.Body.Close()
					var f *os.File
					if f, err = os.Create(filepath.Join(b.profileDir, file)); err == nil {
						_, err = io.Copy(f, resp.Body)
						if cerr := f.Close(); err == nil {
							err = cerr
						}
					}
				}
			}
			if err != nil {
				fmt.Fprintf(b.log, "%s: profile %s: %v\n", name, file, err)
			}
		}
		get("/debug/pprof/profile?seconds="+strconv.Itoa(secs), name+".cpu.pprof")
		get("/debug/pprof/heap?gc=1", name+".heap.pprof") // gc=1: the live heap of now, not of the last collection
	}
}

// parseStreams parses --streams: ascending is not required; each 1 to
// maxProxyStreams. The result is sorted.
func parseStreams(s string) ([]int, error) {
	var ns []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > maxProxyStreams {
			return nil, fmt.Errorf("%q: want numbers from 1 to %d", f, maxProxyStreams)
		}
		if !slices.Contains(ns, n) {
			ns = append(ns, n)
		}
	}
	slices.Sort(ns)
	return ns, nil
}

// parseTargets parses --targets, in the canonical order.
func parseTargets(s string) ([]string, error) {
	all := []string{"direct", "pass-through", "pass-through-large", "native", "chat-inbound", "messages-inbound", "harness"}
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(all, f) {
			return nil, fmt.Errorf("%q: want some of %s", f, strings.Join(all, ","))
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return slices.Index(all, a) - slices.Index(all, b) })
	return out, nil
}

// proxyRequest returns the Responses request bodies of the serve targets:
// the measured one and the warm-up (the same with the upstream's warm-up
// model). A file's request has "stream": true forced on.
func proxyRequest(file string) (body, warm []byte, err error) {
	if file == "" {
		return []byte(proxyResponsesBody), []byte(strings.Replace(proxyResponsesBody, `"bench"`, `"`+loadtest.WarmupModel+`"`, 1)), nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	var req map[string]json.RawMessage
	if err := json.Unmarshal(data, &req); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", file, err)
	}
	req["stream"] = json.RawMessage("true")
	if _, ok := req["model"]; !ok {
		req["model"] = json.RawMessage(`"bench"`)
	}
	if body, err = json.Marshal(req); err != nil {
		return nil, nil, err
	}
	req["model"] = json.RawMessage(`"` + loadtest.WarmupModel + `"`)
	warm, err = json.Marshal(req)
	return body, warm, err
}
