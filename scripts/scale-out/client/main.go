// Command client is the scale-out test's helper (run by scripts/scale-out.sh):
//
//	client ports N                       print N free loopback ports
//	client upstream --script FILE        a scripted model that counts what it is asked
//	client drive --lb URL ...            drive conversations through the load balancer
//
// "upstream" serves the scripted model (scripted) on a loopback port
// it prints, and checks every chat request it gets: a title request
// (opencode's, recognised by its system prompt) is counted per
// conversation; a main request must carry its conversation's turns 1..N in
// order, and the answers of turns 1..N-1, and nothing of another
// conversation. GET /stats returns the counts and the problems found.
//
// "drive" plays conversations against the load balancer — sequential
// previous_response_id chains (whose turns must land on alternating
// replicas), then concurrent opencode and native conversations, then (with
// --redis-pid) every conversation at once while Redis is killed and
// restarted, then long streams while one replica is killed — checks every
// answer, and prints a summary. It exits 1 when anything was served
// wrongly.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/prompts"
	"github.com/harnessflow/harnessflow/scripted"
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: client ports N | upstream --script FILE | drive --lb URL ...")
		return 2
	}
	var err error
	switch args[0] {
	case "ports":
		err = ports(args[1:])
	case "upstream":
		err = upstream(args[1:])
	case "drive":
		var ok bool
		ok, err = drive(args[1:])
		if err == nil && !ok {
			return 1
		}
	default:
		err = fmt.Errorf("unknown command %q", args[0])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "scale-out client:", err)
		return 1
	}
	return 0
}

// ports prints free loopback ports (a port is free when it is printed;
// the caller binds it soon after).
func ports(args []string) error {
	n := 1
	if len(args) > 0 {
		var err error
		if n, err = strconv.Atoi(args[0]); err != nil {
			return fmt.Errorf("ports: %w", err)
		}
	}
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	var out []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("ports: %w", err)
		}
		lns = append(lns, ln)
		out = append(out, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	}
	fmt.Println(strings.Join(out, " "))
	return nil
}

// ---------------------------------------------------------------------------
// the counting upstream

// marker finds the conversation and turn a message belongs to.
var marker = regexp.MustCompile(`\[conv ([a-z0-9-]+) turn (\d+)\]`)

// stats is what an upstream saw.
type stats struct {
	Requests      int            `json:"requests"`
	Titles        map[string]int `json:"titles"`         // title requests by conversation
	Main          map[string]int `json:"main"`           // main requests by conversation
	HistoryErrors []string       `json:"history_errors"` // main requests whose history was wrong
	Unknown       int            `json:"unknown"`        // requests without a marker
}

type counter struct {
	title string // opencode's title system prompt
	h     http.Handler
	mu    sync.Mutex
	st    stats
}

// chatBody is what the upstream reads of a chat request.
type chatBody struct {
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// text is a chat content's text (a string or an array of text parts).
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts) // no text: ""
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func (c *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/stats" {
		c.mu.Lock()
		data, _ := json.Marshal(c.st)
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(data)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if strings.HasSuffix(r.URL.Path, "/chat/completions") {
		c.check(body)
	}
	c.h.ServeHTTP(w, r)
}

// check counts one chat request and checks its history.
func (c *counter) check(body []byte) {
	var b chatBody
	_ = json.Unmarshal(body, &b) // not JSON: no marker, counted as unknown
	c.mu.Lock()
	defer c.mu.Unlock()
	c.st.Requests++
	title := len(b.Messages) > 0 && b.Messages[0].Role == "system" && strings.TrimSpace(text(b.Messages[0].Content)) == c.title
	var conv string
	var turns, answers []int
	problem := ""
	for _, m := range b.Messages {
		found := marker.FindAllStringSubmatch(text(m.Content), -1)
		if len(found) == 0 || m.Role != "user" && m.Role != "assistant" {
			continue
		}
		// A message of one turn names that turn only (an echo quotes it).
		f := found[0]
		if conv == "" {
			conv = f[1]
		} else if f[1] != conv {
			problem = fmt.Sprintf("conversation %s holds a message of %s", conv, f[1])
		}
		n, _ := strconv.Atoi(f[2])
		if m.Role == "user" {
			turns = append(turns, n)
		} else {
			answers = append(answers, n)
		}
	}
	switch {
	case conv == "":
		c.st.Unknown++
		return
	case title:
		if c.st.Titles == nil {
			c.st.Titles = map[string]int{}
		}
		c.st.Titles[conv]++
		return
	}
	if c.st.Main == nil {
		c.st.Main = map[string]int{}
	}
	c.st.Main[conv]++
	for i, n := range turns {
		if n != i+1 && problem == "" {
			problem = fmt.Sprintf("conversation %s: user turns %v, want 1..%d in order", conv, turns, len(turns))
		}
	}
	for i, n := range answers {
		if n != i+1 && problem == "" {
			problem = fmt.Sprintf("conversation %s: answers of turns %v, want 1..%d", conv, answers, len(turns)-1)
		}
	}
	// opencode drops an assistant text that a user message follows (its
	// history rule), so its conversations ("oc-…") carry no earlier answers.
	if strings.HasPrefix(conv, "oc-") && len(answers) == 0 {
		answers = nil
	} else if len(answers) != len(turns)-1 && problem == "" {
		problem = fmt.Sprintf("conversation %s turn %d: %d earlier answers, want %d", conv, len(turns), len(answers), len(turns)-1)
	}
	if problem != "" {
		c.st.HistoryErrors = append(c.st.HistoryErrors, problem)
	}
}

// upstream serves the counting scripted model until SIGTERM or SIGINT.
func upstream(args []string) error {
	fs := flag.NewFlagSet("upstream", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address")
	scriptFile := fs.String("script", "", "script file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	script, err := scripted.Load(*scriptFile)
	if err != nil {
		return fmt.Errorf("upstream: %w", err)
	}
	title, err := prompts.Default().Render(harness.NameOpenCode, "title", nil)
	if err != nil {
		return fmt.Errorf("upstream: %w", err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("upstream: %w", err)
	}
	fmt.Printf("upstream listening on http://%s\n", ln.Addr())
	srv := &http.Server{Handler: &counter{title: strings.TrimSpace(title), h: scripted.New(script)}, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx) // the process ends
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("upstream: %w", err)
	}
	return nil
}

// ---------------------------------------------------------------------------
// the driver

// named is a NAME=VALUE flag that may repeat.
type named [][2]string

func (n *named) String() string { return fmt.Sprint(*n) }

func (n *named) Set(v string) error {
	name, value, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("want NAME=VALUE, got %q", v)
	}
	*n = append(*n, [2]string{name, value})
	return nil
}

// conv is one conversation the driver plays.
type conv struct {
	id      string
	harness string // "" for /v1/responses
	chain   bool   // previous_response_id; else the whole history, store false
	key     string // the client's API key
	turns   int    // turns completed
	prev    string // the last response id (chain)
	history []any  // input so far (whole-history conversations)
	served  []string
}

func (c *conv) path() string {
	if c.harness == "" {
		return "/v1/responses"
	}
	return "/h/" + c.harness + "/v1/responses"
}

// result is what one request gave.
type result struct {
	conv     *conv
	turn     int
	long     bool
	replica  string // the replica that served it (nginx's X-Harnessflow-Replica)
	tried    string // every address nginx tried
	status   int
	events   int
	terminal string // response.completed, response.failed, …; "" when the stream broke off
	text     string
	id       string
	output   []any
	err      error
	failure  string
	code     string // the error's code (store_unavailable, …)
	retry    string // the Retry-After of an HTTP error
	began    time.Time
	ended    time.Time
}

// stored reports whether r completed: a response reported as kept when
// its conversation is chained.
func (r *result) stored() bool { return r.terminal == "response.completed" && r.err == nil }

// retryable reports whether r is the answer of a store outage a client
// acts on: response.failed or HTTP 503, code store_unavailable, with a
// delay to retry after.
func (r *result) retryable() bool {
	if r.code != "store_unavailable" {
		return false
	}
	if r.terminal == "response.failed" {
		return strings.Contains(r.failure, "try again in")
	}
	return r.status == http.StatusServiceUnavailable && r.retry != ""
}

type driver struct {
	lb       string
	client   *http.Client
	replicas map[string]string // host:port → name
	names    []string
	mu       sync.Mutex
	results  []*result
}

func (d *driver) replicaName(addrs string) string {
	parts := strings.Split(addrs, ",")
	last := strings.TrimSpace(parts[len(parts)-1])
	if n, ok := d.replicas[last]; ok {
		return n
	}
	if last == "" {
		return "?"
	}
	return last
}

// send plays the next turn of c through the load balancer (streaming) and
// records the result; it does not advance c unless the turn completed.
func (d *driver) send(ctx context.Context, c *conv, long bool, started func()) *result {
	turn := c.turns + 1
	msgText := fmt.Sprintf("[conv %s turn %d] Tell me about turn %d.", c.id, turn, turn)
	if long {
		msgText += " LONG"
	}
	msg := map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": msgText}}}
	body := map[string]any{"model": "scale-out-model", "stream": true}
	if c.chain {
		body["input"] = []any{msg}
		if c.prev != "" {
			body["previous_response_id"] = c.prev
		}
	} else {
		body["input"] = append(slices.Clone(c.history), msg)
		body["store"] = false
	}
	res := &result{conv: c, turn: turn, long: long, began: time.Now()}
	defer func() {
		res.ended = time.Now()
		d.mu.Lock()
		d.results = append(d.results, res)
		d.mu.Unlock()
	}()
	data, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.lb+c.path(), bytes.NewReader(data))
	if err != nil {
		res.err = err
		return res
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.key)
	resp, err := d.client.Do(req)
	if err != nil {
		res.err = err
		return res
	}
	defer resp.Body.Close()
	res.status = resp.StatusCode
	res.tried = resp.Header.Get("X-Harnessflow-Replica")
	res.replica = d.replicaName(res.tried)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		res.failure = strings.TrimSpace(string(b))
		res.retry = resp.Header.Get("Retry-After")
		var e struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal(b, &e) == nil {
			res.code = e.Error.Code
		}
		return res
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type     string `json:"type"`
			Response struct {
				ID     string `json:"id"`
				Output []any  `json:"output"`
				Error  *struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			} `json:"response"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			res.err = fmt.Errorf("bad event: %w", err)
			return res
		}
		res.events++
		if res.events == 1 && started != nil {
			started()
		}
		switch ev.Type {
		case "response.completed", "response.failed", "response.incomplete":
			res.terminal, res.id, res.output = ev.Type, ev.Response.ID, ev.Response.Output
			if ev.Response.Error != nil {
				res.failure = ev.Response.Error.Code + ": " + ev.Response.Error.Message
				res.code = ev.Response.Error.Code
			}
		}
	}
	if err := sc.Err(); err != nil {
		res.err = err
	} else if res.terminal == "" {
		res.err = io.ErrUnexpectedEOF
	}
	res.text = outputText(res.output)
	if res.terminal == "response.completed" && res.err == nil {
		c.turns = turn
		c.prev = res.id
		c.served = append(c.served, res.replica)
		if !c.chain {
			c.history = append(append(c.history, msg), res.output...)
		}
	}
	return res
}

func outputText(out []any) string {
	var b strings.Builder
	for _, it := range out {
		m, _ := it.(map[string]any)
		if m["type"] != "message" {
			continue
		}
		parts, _ := m["content"].([]any)
		for _, p := range parts {
			if pm, _ := p.(map[string]any); pm["type"] == "output_text" {
				s, _ := pm["text"].(string)
				b.WriteString(s)
			}
		}
	}
	return b.String()
}

// wrong says why a completed answer is not its turn's, or "".
func wrong(r *result) string {
	if r.terminal != "response.completed" || r.err != nil {
		return ""
	}
	want := fmt.Sprintf("[conv %s turn %d]", r.conv.id, r.turn)
	switch {
	case !strings.HasPrefix(r.text, "You said: "):
		return fmt.Sprintf("%s turn %d: answer %.80q is not the echo", r.conv.id, r.turn, r.text)
	case !strings.Contains(r.text, want):
		return fmt.Sprintf("%s turn %d: answer %.120q lacks %s", r.conv.id, r.turn, r.text, want)
	case strings.Count(r.text, "[conv ") != 1:
		return fmt.Sprintf("%s turn %d: answer quotes other turns: %.120q", r.conv.id, r.turn, r.text)
	}
	return ""
}

// metricsStarted reads a replica's harnessflow_streams_started_total.
func (d *driver) metricsStarted(base string) (int, error) {
	resp, err := d.client.Get(base + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "harnessflow_streams_started_total "); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, errors.New("no harnessflow_streams_started_total in /metrics")
}

func (d *driver) upstreamStats(base string) (stats, error) {
	var st stats
	resp, err := d.client.Get(base + "/stats")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	err = json.NewDecoder(resp.Body).Decode(&st)
	return st, err
}

// parallel plays the conversations, workers at a time, each conversation's
// turns in order.
func (d *driver) parallel(ctx context.Context, convs []*conv, turns, workers int) {
	work := make(chan *conv)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for c := range work {
				for range turns {
					if r := d.send(ctx, c, false, nil); r.terminal != "response.completed" || r.err != nil {
						break
					}
				}
			}
		})
	}
	for _, c := range convs {
		work <- c
	}
	close(work)
	wg.Wait()
}

func drive(args []string) (bool, error) {
	fs := flag.NewFlagSet("drive", flag.ContinueOnError)
	lb := fs.String("lb", "", "the load balancer's base URL")
	var reps, ups, kill named
	fs.Var(&reps, "replica", "NAME=URL of a replica (repeat)")
	fs.Var(&ups, "upstream", "NAME=URL of a replica's scripted upstream (repeat)")
	fs.Var(&kill, "kill", "NAME=PID: the replica to kill mid-run")
	chains := fs.Int("chains", 6, "sequential previous_response_id chains")
	openConvs := fs.Int("opencode", 16, "concurrent opencode conversations")
	nativeConvs := fs.Int("native", 8, "concurrent native conversations")
	inflight := fs.Int("inflight", 8, "long streams in flight when the replica is killed")
	redisPID := fs.Int("redis-pid", 0, "the redis-server to kill for the outage phase (0: no outage phase); the arguments after the flags restart it")
	redisAddr := fs.String("redis-addr", "", "host:port of that redis-server")
	redisPIDFile := fs.String("redis-pidfile", "", "where to write the pid of the restarted redis-server")
	redisDown := fs.String("redis-down", "1s,4s", "how long Redis stays down in each outage (comma-separated durations)")
	writeRetry := fs.Duration("write-retry", 3*time.Second, "the replicas' write_retry: an outage this much shorter (less 1.5 s to reach Redis again) fails no stream, a longer one must")
	if err := fs.Parse(args); err != nil {
		return false, err
	}
	restartRedis := fs.Args()
	var downs []time.Duration
	for _, v := range strings.Split(*redisDown, ",") {
		dd, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil {
			return false, fmt.Errorf("drive: --redis-down: %w", err)
		}
		downs = append(downs, dd)
	}
	if *redisPID != 0 && (len(restartRedis) == 0 || *redisAddr == "" || *redisPIDFile == "") {
		return false, errors.New("drive: --redis-pid wants --redis-addr, --redis-pidfile and the restart command after the flags")
	}
	if *lb == "" || len(reps) != 2 || len(kill) != 1 {
		return false, errors.New("drive: want --lb, two --replica and one --kill")
	}
	d := &driver{lb: strings.TrimRight(*lb, "/"), client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}, replicas: map[string]string{}}
	for _, r := range reps {
		d.replicas[strings.TrimPrefix(r[1], "http://")] = r[0]
		d.names = append(d.names, r[0])
	}
	killName := kill[0][0]
	killPID, err := strconv.Atoi(kill[0][1])
	if err != nil {
		return false, fmt.Errorf("drive: --kill %s=%s: %w", killName, kill[0][1], err)
	}
	ctx := context.Background()
	var problems []string
	fail := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	keys := []string{"sk-scale-out-user-a", "sk-scale-out-user-b", "sk-scale-out-user-c"}
	var all []*conv
	newConv := func(id, h string, chain bool) *conv {
		c := &conv{id: id, harness: h, chain: chain, key: keys[len(all)%len(keys)]}
		all = append(all, c)
		return c
	}

	// 1. Sequential chains: round robin puts each turn on the other replica.
	var seq []*conv
	for i := range *chains {
		c := newConv(fmt.Sprintf("chain-%02d", i), "", true)
		seq = append(seq, c)
		for range 4 {
			d.send(ctx, c, false, nil)
		}
	}
	switches, pairs := 0, 0
	for _, c := range seq {
		for i := 1; i < len(c.served); i++ {
			pairs++
			if c.served[i] != c.served[i-1] {
				switches++
			}
		}
	}
	if pairs == 0 || switches != pairs {
		fail("sequential chains: %d of %d consecutive turns switched replica, want all", switches, pairs)
	}

	// 2. Concurrent conversations: opencode (title requests) and native,
	// chained and with the whole history.
	var conc []*conv
	for i := range *openConvs {
		conc = append(conc, newConv(fmt.Sprintf("oc-%02d", i), harness.NameOpenCode, i%2 == 0))
	}
	for i := range *nativeConvs {
		conc = append(conc, newConv(fmt.Sprintf("nat-%02d", i), "", i%2 == 0))
	}
	d.parallel(ctx, conc, 4, 8)

	// Before the kill: every replica's /metrics agrees with nginx's header.
	byHeader := map[string]int{}
	d.mu.Lock()
	for _, r := range d.results {
		byHeader[r.replica]++
	}
	d.mu.Unlock()
	metricsLine := []string{}
	for _, r := range reps {
		n, err := d.metricsStarted(r[1])
		if err != nil {
			fail("%s /metrics: %v", r[0], err)
			continue
		}
		metricsLine = append(metricsLine, fmt.Sprintf("%s %d streams (header: %d)", r[0], n, byHeader[r[0]]))
		if n != byHeader[r[0]] {
			fail("%s: /metrics counts %d streams, nginx's header %d", r[0], n, byHeader[r[0]])
		}
	}
	// 3. A Redis outage under streams (README "Running several replicas").
	var outage *outageReport
	outFrom, outTo := len(d.results), len(d.results)
	if *redisPID != 0 {
		var err error
		outage, err = d.redisOutage(ctx, all, *redisPID, *redisAddr, *redisPIDFile, downs, *writeRetry, restartRedis)
		if err != nil {
			return false, err
		}
		problems = append(problems, outage.problems...)
		outTo = len(d.results)
	}
	before := len(d.results)

	// 4. Long streams in flight; kill one replica when all have started.
	var victims []*conv
	for _, c := range append(slices.Clone(seq), conc...) {
		if c.chain && len(victims) < *inflight {
			victims = append(victims, c)
		}
	}
	var started sync.WaitGroup
	started.Add(len(victims))
	done := make(chan *result, len(victims))
	for _, c := range victims {
		var once sync.Once
		go func() {
			r := d.send(ctx, c, true, func() { once.Do(started.Done) })
			once.Do(started.Done)
			done <- r
		}()
	}
	waitTimeout(&started, 10*time.Second)
	time.Sleep(200 * time.Millisecond) // the streams are well under way
	killedAt := time.Now()
	if err := syscall.Kill(killPID, syscall.SIGKILL); err != nil {
		return false, fmt.Errorf("drive: kill %s (pid %d): %w", killName, killPID, err)
	}
	var inFlight []*result
	for range victims {
		inFlight = append(inFlight, <-done)
	}
	seen := map[string]int{}
	for _, r := range inFlight {
		switch {
		case r.replica == killName && r.terminal == "response.completed" && r.err == nil:
			fail("%s turn %d on %s completed although its replica was killed", r.conv.id, r.turn, killName)
		case r.replica != killName && (r.terminal != "response.completed" || r.err != nil):
			fail("%s turn %d on %s: %s %v", r.conv.id, r.turn, r.replica, r.terminal, r.err)
		}
		seen[describe(r)]++
	}

	// 5. After the kill: every conversation goes on, on the other replica
	// (an interrupted turn is sent again from the last completed response).
	var after []*result
	for _, c := range all {
		for range 2 {
			r := d.send(ctx, c, false, nil)
			after = append(after, r)
			if r.replica == killName {
				fail("%s turn %d went to the killed replica", c.id, r.turn)
			}
			if r.terminal != "response.completed" || r.err != nil {
				fail("%s turn %d after the kill: HTTP %d %s %v %s", c.id, r.turn, r.status, r.terminal, r.err, r.failure)
				break
			}
		}
	}

	// Answers, histories and title requests.
	wrongs := 0
	errs := 0
	dist := map[string]int{}
	for i, r := range d.results {
		if why := wrong(r); why != "" {
			wrongs++
			fail("wrong answer: %s", why)
		}
		interrupted := i >= before && r.long
		inOutage := i >= outFrom && i < outTo
		if !interrupted && !inOutage && (r.terminal != "response.completed" || r.err != nil) {
			errs++
		}
		dist[r.replica]++
	}
	titles := map[string]int{}
	mains := 0
	histErrs := 0
	var upLines []string
	for _, u := range ups {
		st, err := d.upstreamStats(u[1])
		if err != nil {
			fail("%s /stats: %v", u[0], err)
			continue
		}
		n := 0
		for c, k := range st.Titles {
			titles[c] += k
			n += k
		}
		for _, k := range st.Main {
			mains += k
		}
		histErrs += len(st.HistoryErrors)
		for _, h := range st.HistoryErrors {
			fail("%s: history: %s", u[0], h)
		}
		upLines = append(upLines, fmt.Sprintf("%s %d requests (%d title)", u[0], st.Requests, n))
	}
	openTitled := 0
	for _, c := range all {
		want := 0
		if c.harness == harness.NameOpenCode {
			want = 1
		}
		if titles[c.id] != want {
			fail("%s (%s): %d title requests, want %d", c.id, c.path(), titles[c.id], want)
		} else if want == 1 {
			openTitled++
		}
	}

	turns := 0
	for _, c := range all {
		turns += c.turns
	}
	nOpen, nChained := 0, 0
	for _, c := range all {
		if c.harness == harness.NameOpenCode {
			nOpen++
		}
		if c.chain {
			nChained++
		}
	}
	fmt.Printf("scale-out: %d replicas behind nginx %s, responses in Redis\n", len(reps), d.lb)
	fmt.Printf("conversations: %d (%d opencode, %d native; %d chained with previous_response_id, %d sending the whole history)\n",
		len(all), nOpen, len(all)-nOpen, nChained, len(all)-nChained)
	fmt.Printf("turns: %d completed of %d requests (%d main requests reached the upstreams)\n", turns, len(d.results), mains)
	fmt.Printf("replica distribution: %s\n", distribution(dist, d.names))
	fmt.Printf("alternation: %d of %d consecutive turns of the sequential chains switched replica\n", switches, pairs)
	fmt.Printf("per-replica /metrics before the kill: %s\n", strings.Join(metricsLine, ", "))
	fmt.Printf("upstreams: %s\n", strings.Join(upLines, ", "))
	fmt.Printf("title requests: %d of %d opencode conversations sent exactly one; native conversations sent none\n", openTitled, nOpen)
	if outage != nil {
		for _, line := range outage.lines {
			fmt.Println(line)
		}
	}
	fmt.Printf("kill: %s (pid %d) got SIGKILL %s after %d long streams had started; what the clients saw:\n", killName, killPID,
		killedAt.Format("15:04:05.000"), len(victims))
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range seen {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Printf("  %d × %s\n", seen[k], k)
	}
	afterOK, afterOn, passed := 0, map[string]int{}, 0
	for _, r := range after {
		if r.terminal == "response.completed" && r.err == nil {
			afterOK++
		}
		afterOn[r.replica]++
		if strings.Contains(r.tried, ",") {
			passed++
		}
	}
	retried, retriedOK := 0, 0
	for _, v := range inFlight {
		if v.replica != killName {
			continue
		}
		retried++
		for _, r := range after {
			if r.conv == v.conv && r.turn == v.turn && r.terminal == "response.completed" && r.err == nil {
				retriedOK++
			}
		}
	}
	fmt.Printf("after the kill: %d requests, %d completed, served by %s (%d first tried on %s, refused, passed on by nginx)\n",
		len(after), afterOK, distribution(afterOn, d.names), passed, killName)
	fmt.Printf("interrupted turns sent again from their last completed response: %d, completed on the other replica: %d\n", retried, retriedOK)
	if retriedOK != retried {
		fail("%d of %d interrupted turns did not complete when sent again", retried-retriedOK, retried)
	}
	fmt.Printf("errors: %d (outside the streams the kill cut and the Redis outage)\n", errs)
	fmt.Printf("wrong answers: %d; upstream history errors: %d\n", wrongs, histErrs)
	if len(problems) > 0 {
		fmt.Printf("FAIL: %d problems\n", len(problems))
		for _, p := range problems {
			fmt.Println("  -", p)
		}
		return false, nil
	}
	fmt.Println("PASS")
	return true, nil
}

// describe says what the client saw of a stream in flight at the kill.
func describe(r *result) string {
	what := r.terminal
	switch {
	case r.err != nil && r.terminal == "":
		what = fmt.Sprintf("connection error (%v) after %d events, no terminal event", r.err, r.events)
	case r.err != nil:
		what = fmt.Sprintf("%s, then %v", r.terminal, r.err)
	case r.terminal == "response.failed":
		what = "response.failed: " + r.failure
	case r.terminal == "response.completed":
		what = fmt.Sprintf("response.completed (%d events)", r.events)
	}
	if r.status != 0 && r.status != http.StatusOK {
		what = fmt.Sprintf("HTTP %d %s", r.status, r.failure)
	}
	return fmt.Sprintf("on %s: %s", r.replica, what)
}

func distribution(m map[string]int, names []string) string {
	var parts []string
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %d", n, m[n]))
	}
	for k, v := range m {
		if !slices.Contains(names, k) {
			parts = append(parts, fmt.Sprintf("%s %d", k, v))
		}
	}
	return strings.Join(parts, ", ")
}

func waitTimeout(wg *sync.WaitGroup, d time.Duration) {
	ch := make(chan struct{})
	go func() { wg.Wait(); close(ch) }()
	select {
	case <-ch:
	case <-time.After(d):
	}
}

// outageReport is what the Redis outage phase saw: summary lines and
// problems.
type outageReport struct {
	lines, problems []string
}

// redisOutage plays every conversation without pause while Redis is
// killed (SIGKILL: what it acknowledged is on disk, appendfsync always)
// and restarted after each of downs. Every turn must end stored
// (completed) or with a retryable store_unavailable failure, which the
// conversation sends again; a store:false conversation must be served
// throughout. An outage well within the replicas' write retry must fail no
// stream (they are held and stored), one longer than it must fail some.
// Once every conversation has stored two turns after Redis answered the
// last time, every response reported stored in the phase is continued
// with previous_response_id through the load balancer.
func (d *driver) redisOutage(ctx context.Context, convs []*conv, pid int, addr, pidFile string, downs []time.Duration, retry time.Duration,
	restart []string) (*outageReport, error) {
	rep := &outageReport{}
	fail := func(format string, a ...any) { rep.problems = append(rep.problems, fmt.Sprintf(format, a...)) }
	type storedTurn struct {
		c    *conv
		id   string
		turn int
	}
	var (
		mu      sync.Mutex
		kept    []storedTurn
		back    time.Time      // when Redis answered again the last time (zero before)
		counts  map[string]int // of the current outage
		byOut   []map[string]int
		firstOK time.Time // the first turn stored after back
	)
	counts = map[string]int{}
	byOut = append(byOut, counts) // before the first outage
	after := make([]atomic.Int64, len(convs))
	pctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i, c := range convs {
		wg.Go(func() {
			for pctx.Err() == nil {
				r := d.send(pctx, c, false, nil)
				if pctx.Err() != nil {
					return
				}
				mu.Lock()
				switch {
				case r.stored() && !c.chain:
					counts["completed (store false)"]++
				case r.stored():
					counts["stored"]++
					kept = append(kept, storedTurn{c, r.id, r.turn})
					if !back.IsZero() && r.began.After(back) {
						after[i].Add(1)
						if firstOK.IsZero() || r.ended.Before(firstOK) {
							firstOK = r.ended
						}
					}
				case !c.chain:
					fail("%s turn %d (store false) during the Redis outage: HTTP %d %s %v %s", c.id, r.turn, r.status, r.terminal, r.err, r.failure)
				case r.retryable() && r.terminal == "response.failed":
					counts["response.failed store_unavailable"]++
				case r.retryable():
					counts["HTTP 503 store_unavailable"]++
				default:
					fail("%s turn %d during the Redis outage: neither stored nor retryable: HTTP %d %s %v %.200s", c.id, r.turn, r.status, r.terminal, r.err, r.failure)
				}
				mu.Unlock()
				if !r.stored() {
					if !c.chain {
						return
					}
					time.Sleep(200 * time.Millisecond) // the turn again
				}
			}
		})
	}
	abort := func(err error) (*outageReport, error) {
		stop()
		wg.Wait()
		return nil, err
	}
	var timeline []string
	for n, down := range downs {
		time.Sleep(1500 * time.Millisecond) // served normally, Redis reached again
		mu.Lock()
		counts = map[string]int{}
		byOut = append(byOut, counts)
		mu.Unlock()
		killed := time.Now()
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			return abort(fmt.Errorf("drive: kill redis-server (pid %d): %w", pid, err))
		}
		time.Sleep(down)
		cmd := exec.Command(restart[0], restart[1:]...)
		if err := cmd.Start(); err != nil {
			return abort(fmt.Errorf("drive: restart redis-server: %w", err))
		}
		restarted := time.Now()
		pid = cmd.Process.Pid
		if err := os.WriteFile(pidFile, []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
			return abort(fmt.Errorf("drive: %w", err))
		}
		_ = cmd.Process.Release() // the script's cleanup ends it, by the pid file
		if err := waitRedis(addr, 10*time.Second); err != nil {
			return abort(fmt.Errorf("drive: restarted redis-server: %w", err))
		}
		mu.Lock()
		back, firstOK = time.Now(), time.Time{}
		for i := range after {
			after[i].Store(0)
		}
		mu.Unlock()
		timeline = append(timeline, fmt.Sprintf("outage %d: SIGKILL at %s, restarted %.1f s later, answering PING %.2f s after the restart",
			n+1, killed.Format("15:04:05.000"), restarted.Sub(killed).Seconds(), back.Sub(restarted).Seconds()))
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		all := true
		for i, c := range convs {
			all = all && (!c.chain || after[i].Load() >= 2)
		}
		if all {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	wg.Wait()
	for i, c := range convs {
		if c.chain && after[i].Load() < 2 {
			fail("%s: %d turns stored after Redis came back (want 2 within 20 s)", c.id, after[i].Load())
		}
	}
	// byOut[n+1] counts what ended from the kill of outage n+1 to the
	// kill of the next.
	for n, down := range downs {
		c := byOut[n+1]
		switch failed := c["response.failed store_unavailable"]; {
		case down+1500*time.Millisecond <= retry && failed > 0:
			fail("outage %d (%v, within the write retry of %v): %d streams failed, want them held and stored", n+1, down, retry, failed)
		case down > retry && failed+c["HTTP 503 store_unavailable"] == 0:
			fail("outage %d (%v, over the write retry of %v): no retryable failure", n+1, down, retry)
		}
	}

	// Every response reported stored in the phase is continued.
	work := make(chan storedTurn)
	var lost atomic.Int64
	var cw sync.WaitGroup
	for range 8 {
		cw.Go(func() {
			for k := range work {
				if why := d.continueFrom(ctx, k.c, k.id, k.turn); why != "" && lost.Add(1) <= 10 {
					mu.Lock()
					fail("%s turn %d (%s), reported stored during the outage phase: %s", k.c.id, k.turn, k.id, why)
					mu.Unlock()
				}
			}
		})
	}
	for _, k := range kept {
		work <- k
	}
	close(work)
	cw.Wait()

	rep.lines = append(rep.lines, fmt.Sprintf("redis outages (%d conversations without pause, replicas' write retry %v):", len(convs), retry))
	for n, c := range byOut {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(c)) {
			parts = append(parts, fmt.Sprintf("%d %s", c[k], k))
		}
		what := "  before the first outage: "
		if n > 0 {
			what = fmt.Sprintf("  %s; turns ending from then to the next kill: ", timeline[n-1])
		}
		rep.lines = append(rep.lines, what+strings.Join(parts, ", "))
	}
	rep.lines = append(rep.lines,
		fmt.Sprintf("  the first turn stored after the last restart ended %.2f s after Redis answered", firstOK.Sub(back).Seconds()),
		fmt.Sprintf("  responses reported stored in the phase (chained conversations): %d, continued afterwards with previous_response_id: %d",
			len(kept), len(kept)-int(lost.Load())))
	return rep, nil
}

// continueFrom sends the turn after a stored response (non-streaming,
// store false, through the load balancer) and says why it failed, or "".
// The conversation itself does not move on.
func (d *driver) continueFrom(ctx context.Context, c *conv, id string, turn int) string {
	marker := fmt.Sprintf("[conv %s turn %d]", c.id, turn+1)
	msg := map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": marker + " Tell me about it."}}}
	data, _ := json.Marshal(map[string]any{"model": "scale-out-model", "store": false, "previous_response_id": id, "input": []any{msg}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.lb+c.path(), bytes.NewReader(data))
	if err != nil {
		return err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.key)
	resp, err := d.client.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("HTTP %d %.300s", resp.StatusCode, body)
	}
	var obj struct {
		Output []any `json:"output"`
	}
	if err := json.Unmarshal(body, &obj); err != nil {
		return err.Error()
	}
	if text := outputText(obj.Output); !strings.Contains(text, marker) {
		return fmt.Sprintf("answer %.120q lacks %s", text, marker)
	}
	return ""
}

// waitRedis waits until the Redis server at addr answers PING with PONG
// (not while it loads its data).
func waitRedis(addr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var last error
	for time.Now().Before(deadline) {
		conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			_ = conn.SetDeadline(time.Now().Add(time.Second))
			_, err = conn.Write([]byte("PING\r\n"))
			if err == nil {
				var line string
				line, err = bufio.NewReader(conn).ReadString('\n')
				if err == nil && strings.HasPrefix(line, "+PONG") {
					conn.Close()
					return nil
				}
				if err == nil {
					err = fmt.Errorf("PING answered %q", strings.TrimSpace(line))
				}
			}
			conn.Close()
		}
		last = err
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s did not answer PING within %v: %v", addr, limit, last)
}
