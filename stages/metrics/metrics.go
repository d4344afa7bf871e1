// Package metrics counts what flows through response graphs, for the
// proxy's /metrics endpoint: per node (through a pipeline.Observer, so
// stages never count themselves) and per stream (through a counting stage
// at the end of a response graph).
//
//	m := metrics.New()                       // one per process
//	g, err = g.Append(m.Node())              // per-stream counters
//	err = pipeline.Run(ctx, g, src, sink, pipeline.WithObserver(m.Observer(g)))
//	if err != nil { m.RunError(err) }
//	http.Handle("/metrics", m)               // Prometheus text format
//
// A caller that knows how each stream ended (the proxy) tracks it, so that
// streams stopped by a run error, a client that went away or a shutdown are
// counted as ended too:
//
//	st := m.StartStream()                    // counts the start
//	g, err = g.Append(st.Node())             // counts the events
//	...
//	st.End(metrics.OutcomeClientClosed, nil) // counts the end, once
//
// A Metrics is safe for concurrent use by any number of runs, in fused and
// async mode. It counts only what passes through graphs: the proxy's own
// counters (title requests, follow-up rounds, timeouts, …) are the
// server's, which writes this package's families first on its /metrics
// page through Collect.
package metrics

import (
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/harnessflow/harnessflow/internal/promtext"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
)

// Name is the node name of the per-stream counting stage.
const Name = "metrics.count"

// Metrics holds the counters. The zero value is not ready: use New.
type Metrics struct {
	nodes sync.Map // nodeKey → *nodeCounters

	events     [len(knownTypes)]atomic.Uint64
	deltaBytes atomic.Uint64
	started    atomic.Uint64

	mu        sync.Mutex
	ended     map[string]uint64             // ended streams by outcome (Outcome*)
	other     map[protocol.EventType]uint64 // events of unknown types
	failures  map[string]uint64             // failed events by error kind
	runErrors map[string]uint64             // fatal run errors by stage
}

// New returns empty Metrics.
func New() *Metrics {
	return &Metrics{ended: map[string]uint64{}, other: map[protocol.EventType]uint64{}, failures: map[string]uint64{},
		runErrors: map[string]uint64{}}
}

// Stream outcomes: the values of the outcome label of
// harnessflow_streams_ended_total.
const (
	// OutcomeCompleted is a stream that ended with response.completed.
	OutcomeCompleted = "completed"
	// OutcomeIncomplete is a stream that ended with response.incomplete
	// (output cut by the token limit or a content filter).
	OutcomeIncomplete = "incomplete"
	// OutcomeFailed is a stream that ended with response.failed.
	OutcomeFailed = "failed"
	// OutcomeClientClosed is a stream whose client went away before its
	// terminal event.
	OutcomeClientClosed = "client_closed"
	// OutcomeShutdown is a stream the server's shutdown ended (with
	// response.failed) because it did not finish within the grace period.
	OutcomeShutdown = "shutdown"
	// OutcomeNoTerminal is a stream whose events ended without a terminal
	// event (counted by an untracked Node only).
	OutcomeNoTerminal = "no_terminal_event"
)

// outcomes lists every outcome, in the order /metrics prints them.
var outcomes = [...]string{OutcomeCompleted, OutcomeIncomplete, OutcomeFailed, OutcomeClientClosed, OutcomeShutdown, OutcomeNoTerminal}

var knownTypes = [...]protocol.EventType{
	protocol.EventCreated, protocol.EventServerModel, protocol.EventOutputItemAdded,
	protocol.EventOutputItemDone, protocol.EventOutputTextDelta, protocol.EventReasoningContentDelta,
	protocol.EventReasoningSummaryDelta, protocol.EventReasoningSummaryPartAdded,
	protocol.EventToolCallInputDelta, protocol.EventCompleted, protocol.EventFailed,
}

func typeIndex(t protocol.EventType) int {
	switch t {
	case protocol.EventCreated:
		return 0
	case protocol.EventServerModel:
		return 1
	case protocol.EventOutputItemAdded:
		return 2
	case protocol.EventOutputItemDone:
		return 3
	case protocol.EventOutputTextDelta:
		return 4
	case protocol.EventReasoningContentDelta:
		return 5
	case protocol.EventReasoningSummaryDelta:
		return 6
	case protocol.EventReasoningSummaryPartAdded:
		return 7
	case protocol.EventToolCallInputDelta:
		return 8
	case protocol.EventCompleted:
		return 9
	case protocol.EventFailed:
		return 10
	}
	return -1
}

type nodeKey struct{ graph, node string }

type nodeCounters struct {
	key     nodeKey
	index   int
	in, out atomic.Uint64
	errors  atomic.Uint64
	nanos   atomic.Int64
}

func (m *Metrics) counters(graph, node string, index int) *nodeCounters {
	k := nodeKey{graph, node}
	if c, ok := m.nodes.Load(k); ok {
		return c.(*nodeCounters)
	}
	c, _ := m.nodes.LoadOrStore(k, &nodeCounters{key: k, index: index})
	return c.(*nodeCounters)
}

// Observer returns a pipeline.Observer that counts, for every node of g,
// inputs, outputs, errors and time (labelled graph=g.Name(), node=name).
// Pass it to pipeline.Run with pipeline.WithObserver; it may be shared by
// concurrent runs of g.
func (m *Metrics) Observer(g *pipeline.Graph) pipeline.Observer {
	o := &observer{m: m, graph: g.Name()}
	for i, info := range g.Nodes() {
		o.byIndex = append(o.byIndex, m.counters(o.graph, info.Name, i))
	}
	return o
}

type observer struct {
	m       *Metrics
	graph   string
	byIndex []*nodeCounters
}

func (o *observer) Observe(ob pipeline.Observation) {
	var c *nodeCounters
	if ob.Index >= 0 && ob.Index < len(o.byIndex) && o.byIndex[ob.Index].key.node == ob.Node {
		c = o.byIndex[ob.Index]
	} else {
		c = o.m.counters(o.graph, ob.Node, ob.Index)
	}
	c.add(ob)
}

// add counts one observation into the shared counters.
func (c *nodeCounters) add(ob pipeline.Observation) {
	if !ob.Finish {
		c.in.Add(1)
	}
	if ob.Outputs > 0 {
		c.out.Add(uint64(ob.Outputs))
	}
	if ob.Err != nil {
		c.errors.Add(1)
	}
	if ob.Elapsed != 0 {
		c.nanos.Add(int64(ob.Elapsed))
	}
}

// RunObserver returns an Observer for one run of g that counts like
// [Metrics.Observer] but keeps the counts in the run until Flush adds them to
// the metrics, so that a stream's every element costs no shared atomic
// update. Call Flush once pipeline.Run has returned; until then the run's
// node counts are not in Snapshot or /metrics. It must not be shared by
// concurrent runs (in async mode each node reports from its own goroutine,
// which it may).
func (m *Metrics) RunObserver(g *pipeline.Graph) *RunObserver {
	o := &RunObserver{m: m, graph: g.Name()}
	for i, info := range g.Nodes() {
		o.nodes = append(o.nodes, runCounts{c: m.counters(o.graph, info.Name, i)})
	}
	return o
}

// RunObserver is the per-run observer [Metrics.RunObserver] returns.
type RunObserver struct {
	m     *Metrics
	graph string
	nodes []runCounts
}

// runCounts is one node's counts in one run, written by one goroutine.
type runCounts struct {
	c               *nodeCounters
	in, out, errors uint64
	nanos           int64
}

// Observe counts one observation in the run.
func (o *RunObserver) Observe(ob pipeline.Observation) {
	n := o.listed(ob.Index, ob.Node)
	if n == nil {
		// A node the graph did not list when the run started: count it
		// directly.
		o.m.counters(o.graph, ob.Node, ob.Index).add(ob)
		return
	}
	if !ob.Finish {
		n.in++
	}
	n.out += uint64(ob.Outputs)
	if ob.Err != nil {
		n.errors++
	}
	n.nanos += int64(ob.Elapsed)
}

// listed returns the run's counts of node name at index, or nil when the
// graph did not list it there when the run started.
func (o *RunObserver) listed(index int, name string) *runCounts {
	if index < 0 || index >= len(o.nodes) || o.nodes[index].c.key.node != name {
		return nil
	}
	return &o.nodes[index]
}

// Count adds a run's per-node totals to the metrics at once: o is then the
// run's pipeline.Counter (pipeline.WithCounter), which in the fused mode
// costs the run nothing per element. Nodes the graph did not list when o
// was made are counted by name.
func (o *RunObserver) Count(counts []pipeline.NodeCount) {
	for _, c := range counts {
		var n *nodeCounters
		if l := o.listed(c.Index, c.Node); l != nil {
			n = l.c
		} else {
			n = o.m.counters(o.graph, c.Node, c.Index)
		}
		if c.Inputs != 0 {
			n.in.Add(c.Inputs)
		}
		if c.Outputs != 0 {
			n.out.Add(c.Outputs)
		}
		if c.Failed {
			n.errors.Add(1)
		}
	}
}

// Flush adds the run's counts to the metrics (and clears them, so that a
// second Flush adds nothing).
func (o *RunObserver) Flush() {
	for i := range o.nodes {
		n := &o.nodes[i]
		if n.in != 0 {
			n.c.in.Add(n.in)
		}
		if n.out != 0 {
			n.c.out.Add(n.out)
		}
		if n.errors != 0 {
			n.c.errors.Add(n.errors)
		}
		if n.nanos != 0 {
			n.c.nanos.Add(n.nanos)
		}
		*n = runCounts{c: n.c}
	}
}

// RunError counts a fatal error returned by pipeline.Run, by the stage it
// came from ("other" when it names none).
func (m *Metrics) RunError(err error) {
	if err == nil {
		return
	}
	stage := "other"
	var se *pipeline.StageError
	switch {
	case errors.As(err, &se):
		stage = se.Stage
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		stage = "context"
	}
	m.mu.Lock()
	m.runErrors[stage]++
	m.mu.Unlock()
}

// Node returns the per-stream counting node (Name): a pass-through
// Stage[protocol.ResponseEvent, protocol.ResponseEvent] counting events by
// type, delta bytes, and streams by outcome (completed, failed with the
// error kind, or ended without a terminal event). Append it to a response
// graph, after any redaction, to count what clients see.
//
// It counts a stream as ended only when its events say how it ended or its
// input ends: a run stopped by an error or a cancelled context never
// reaches Finish, so that stream stays started and never ended. A caller
// that knows how each stream ended (the proxy does) uses StartStream
// instead.
func (m *Metrics) Node() pipeline.Node {
	return pipeline.NewNode(Name, func() pipeline.Stage[protocol.ResponseEvent, protocol.ResponseEvent] {
		return &counter{m: m}
	}, pipeline.Describe("count events and streams for /metrics"))
}

// Stream is one response stream whose start and end the caller counts
// itself, so that every started stream is counted as ended exactly once,
// with its outcome, however it ended: by its terminal event, a run error,
// a client that went away or a shutdown. Create it with StartStream; it is
// safe for concurrent use.
type Stream struct {
	m     *Metrics
	mu    sync.Mutex
	kind  string // error kind of the failed event the stream's node passed
	ended bool
}

// StartStream counts a started stream and returns its handle. Put the
// handle's Node in the stream's graph and call End when the stream is over.
func (m *Metrics) StartStream() *Stream {
	m.started.Add(1)
	return &Stream{m: m}
}

// Node returns the stream's counting node (Name): it counts events and
// delta bytes as Metrics.Node does, and leaves the start and the end of the
// stream to the handle.
func (st *Stream) Node() pipeline.Node {
	return pipeline.NewNode(Name, func() pipeline.Stage[protocol.ResponseEvent, protocol.ResponseEvent] {
		return &counter{m: st.m, stream: st}
	}, pipeline.Describe("count events for /metrics (the stream's end is counted by its caller)"))
}

// End counts the stream as ended with outcome (one of the Outcome
// constants; anything else counts as OutcomeFailed). Only the first call
// counts. failure is the error of a response.failed event the caller wrote
// to the client itself, outside the stream's graph: it is counted as a
// failed event, and its kind as the stream's failure kind (not for
// OutcomeClientClosed: that client got nothing). For a stream
// whose graph carried the failed event, pass nil: the node saw its kind.
func (st *Stream) End(outcome string, failure *protocol.StreamError) {
	st.mu.Lock()
	if st.ended {
		st.mu.Unlock()
		return
	}
	st.ended = true
	kind := st.kind
	st.mu.Unlock()
	m := st.m
	if !slices.Contains(outcomes[:], outcome) {
		outcome = OutcomeFailed
	}
	if failure != nil && outcome != OutcomeClientClosed { // a client that went away got nothing
		m.events[typeIndex(protocol.EventFailed)].Add(1)
		kind = failureKind(failure)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ended[outcome]++
	if outcome == OutcomeFailed || outcome == OutcomeShutdown {
		if kind == "" {
			kind = "unknown"
		}
		m.failures[kind]++
	}
}

func failureKind(e *protocol.StreamError) string {
	if e != nil && e.Kind != "" {
		return e.Kind
	}
	return "unknown"
}

type counter struct {
	m        *Metrics
	stream   *Stream // nil: the counter counts the stream's start and end itself
	started  bool
	terminal bool
}

func (c *counter) Push(_ context.Context, ev protocol.ResponseEvent, emit func(protocol.ResponseEvent)) error {
	m := c.m
	if !c.started {
		c.started = true
		if c.stream == nil {
			m.started.Add(1)
		}
	}
	if i := typeIndex(ev.Type); i >= 0 {
		m.events[i].Add(1)
	} else {
		m.mu.Lock()
		m.other[ev.Type]++
		m.mu.Unlock()
	}
	if ev.Delta != "" {
		m.deltaBytes.Add(uint64(len(ev.Delta)))
	}
	if !c.terminal && (ev.Type == protocol.EventCompleted || ev.Type == protocol.EventFailed) {
		c.terminal = true
		switch {
		case c.stream != nil:
			if ev.Type == protocol.EventFailed {
				c.stream.mu.Lock()
				c.stream.kind = failureKind(ev.Error)
				c.stream.mu.Unlock()
			}
		case ev.Type == protocol.EventCompleted:
			m.end(OutcomeCompleted, "")
		default:
			m.end(OutcomeFailed, failureKind(ev.Error))
		}
	}
	emit(ev)
	return nil
}

func (c *counter) Finish(context.Context, func(protocol.ResponseEvent)) error {
	if c.stream != nil {
		return nil
	}
	if !c.started {
		c.started = true
		c.m.started.Add(1)
	}
	if !c.terminal {
		c.m.end(OutcomeNoTerminal, "")
	}
	return nil
}

// end counts an ended stream (and, when kind is set, its failure kind).
func (m *Metrics) end(outcome, kind string) {
	m.mu.Lock()
	m.ended[outcome]++
	if kind != "" {
		m.failures[kind]++
	}
	m.mu.Unlock()
}

// NodeSnapshot is the totals of one node of one graph.
type NodeSnapshot struct {
	Graph, Node string
	Index       int // position in the graph
	In, Out     uint64
	Errors      uint64
	Elapsed     time.Duration
}

// Snapshot is a consistent-enough copy of all counters (each counter is read
// atomically; counters may move between reads).
type Snapshot struct {
	Nodes      []NodeSnapshot                // by graph name, then position
	Events     map[protocol.EventType]uint64 // events by type (non-zero only)
	DeltaBytes uint64                        // bytes of delta text
	Started    uint64                        // streams started (StartStream, or reaching an untracked counting stage)
	Ended      map[string]uint64             // ended streams by outcome (every Outcome constant, zeros included)
	Completed  uint64                        // streams that ended with completed (Ended[OutcomeCompleted])
	Failed     uint64                        // streams that ended with failed (Ended[OutcomeFailed])
	Unended    uint64                        // streams whose input ended without either (Ended[OutcomeNoTerminal])
	Failures   map[string]uint64             // failed streams by error kind
	RunErrors  map[string]uint64             // fatal run errors by stage
}

// Snapshot returns the current totals.
func (m *Metrics) Snapshot() Snapshot {
	s := Snapshot{
		Events:     map[protocol.EventType]uint64{},
		DeltaBytes: m.deltaBytes.Load(),
		Started:    m.started.Load(),
		Ended:      map[string]uint64{},
	}
	m.nodes.Range(func(_, v any) bool {
		c := v.(*nodeCounters)
		s.Nodes = append(s.Nodes, NodeSnapshot{Graph: c.key.graph, Node: c.key.node, Index: c.index,
			In: c.in.Load(), Out: c.out.Load(), Errors: c.errors.Load(), Elapsed: time.Duration(c.nanos.Load())})
		return true
	})
	slices.SortFunc(s.Nodes, func(a, b NodeSnapshot) int {
		if c := strings.Compare(a.Graph, b.Graph); c != 0 {
			return c
		}
		if a.Index != b.Index {
			return a.Index - b.Index
		}
		return strings.Compare(a.Node, b.Node)
	})
	for i, t := range knownTypes {
		if n := m.events[i].Load(); n > 0 {
			s.Events[t] = n
		}
	}
	m.mu.Lock()
	for _, o := range outcomes {
		s.Ended[o] = m.ended[o]
	}
	s.Completed, s.Failed, s.Unended = m.ended[OutcomeCompleted], m.ended[OutcomeFailed], m.ended[OutcomeNoTerminal]
	maps.Copy(s.Events, m.other)
	s.Failures = maps.Clone(m.failures)
	s.RunErrors = maps.Clone(m.runErrors)
	m.mu.Unlock()
	return s
}

// WritePrometheus writes the counters in the Prometheus text exposition
// format (version 0.0.4), in a stable order.
func (m *Metrics) WritePrometheus(w io.Writer) error {
	pw := promtext.NewWriter(w)
	m.Collect(pw)
	return pw.Flush()
}

// Collect writes the counters' families into pw, in a stable order, for a
// page that holds other families too (the proxy's /metrics puts these
// first). A nil pw writes nothing.
func (m *Metrics) Collect(pw *promtext.Writer) {
	if pw == nil {
		return
	}
	s := m.Snapshot()
	nodeFamily := func(name, help string, val func(NodeSnapshot) uint64) {
		pw.Counter(name, help)
		for _, n := range s.Nodes {
			pw.Sample(name, val(n), "graph", n.Graph, "node", n.Node)
		}
	}
	nodeFamily("harnessflow_node_inputs_total", "Elements pushed into a graph node.", func(n NodeSnapshot) uint64 { return n.In })
	nodeFamily("harnessflow_node_outputs_total", "Elements emitted by a graph node.", func(n NodeSnapshot) uint64 { return n.Out })
	nodeFamily("harnessflow_node_errors_total", "Fatal errors raised by a graph node.", func(n NodeSnapshot) uint64 { return n.Errors })
	// Node time only when some run was timed (runs with
	// pipeline.WithoutTiming report none): a column of zeros would read as
	// "free", not "not measured".
	if slices.ContainsFunc(s.Nodes, func(n NodeSnapshot) bool { return n.Elapsed != 0 }) {
		const name = "harnessflow_node_seconds_total"
		pw.Counter(name, "Time spent in a graph node, excluding downstream nodes in fused mode.")
		for _, n := range s.Nodes {
			pw.Float(name, n.Elapsed.Seconds(), "graph", n.Graph, "node", n.Node)
		}
	}

	events := map[string]uint64{}
	for t, n := range s.Events {
		events[string(t)] = n
	}
	pw.CounterMap("harnessflow_stream_events_total", "Response events by type.", "type", events)
	pw.Counter("harnessflow_stream_delta_bytes_total", "Bytes of streamed delta text.")
	pw.Sample("harnessflow_stream_delta_bytes_total", s.DeltaBytes)
	pw.Counter("harnessflow_streams_started_total", "Response streams started.")
	pw.Sample("harnessflow_streams_started_total", s.Started)
	pw.Counter("harnessflow_streams_ended_total", "Response streams by how they ended.")
	for _, o := range outcomes {
		pw.Sample("harnessflow_streams_ended_total", s.Ended[o], "outcome", o)
	}
	pw.CounterMap("harnessflow_stream_failures_total", "Failed response streams (outcome failed or shutdown) by error kind.", "kind", s.Failures)
	pw.CounterMap("harnessflow_run_errors_total", "Runs stopped by a fatal error, by stage.", "stage", s.RunErrors)
}

// ServeHTTP serves WritePrometheus, for a /metrics endpoint.
func (m *Metrics) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", promtext.ContentType)
	_ = m.WritePrometheus(w) // a failed write means the client went away
}
