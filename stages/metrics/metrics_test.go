package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sinks"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/chatstream"
	"github.com/harnessflow/harnessflow/stages/metrics"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func graph(t *testing.T, m *metrics.Metrics) *pipeline.Graph {
	t.Helper()
	g, err := chatstream.Graph(chatstream.Options{})
	if err == nil {
		g, err = g.InsertAfter("chat.finalize", m.Node())
	}
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Counts are exact under concurrent runs in both modes, and match the
// events the runs produced.
func TestConcurrentRuns(t *testing.T) {
	m := metrics.New()
	g := graph(t, m)
	obs := m.Observer(g)
	files := []string{"c05_parallel_3_interleaved.sse", "c09_truncated_no_done.sse", "c10_error_mid_stream.sse"}
	const perFile = 20
	var mu sync.Mutex
	wantEvents := map[protocol.EventType]uint64{}
	var wantDelta uint64
	var wg sync.WaitGroup
	for i := range perFile * len(files) {
		data := fixture(t, files[i%len(files)])
		mode := []pipeline.Mode{pipeline.Fused, pipeline.Async}[i%2]
		wg.Go(func() {
			sink := sinks.Collect[protocol.ResponseEvent]()
			if err := pipeline.Run(context.Background(), g, sources.Reader(strings.NewReader(string(data)), sources.WithReadSize(97)), sink,
				pipeline.WithMode(mode), pipeline.WithObserver(obs)); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			for _, ev := range sink.Items() {
				wantEvents[ev.Type]++
				wantDelta += uint64(len(ev.Delta))
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	s := m.Snapshot()
	if diff := cmp.Diff(wantEvents, s.Events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	n := uint64(perFile * len(files))
	if s.DeltaBytes != wantDelta || s.Started != n || s.Completed != perFile || s.Failed != 2*perFile || s.Unended != 0 {
		t.Errorf("snapshot %+v", s)
	}
	if diff := cmp.Diff(map[string]uint64{protocol.ErrKindUpstream: perFile, protocol.ErrKindTruncated: perFile}, s.Failures); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	var names []string
	for _, ns := range s.Nodes {
		names = append(names, ns.Node)
		if ns.Graph != chatstream.GraphName || ns.In == 0 || ns.Elapsed <= 0 || ns.Errors != 0 {
			t.Errorf("node %+v", ns)
		}
	}
	if want := []string{"sse.decode", "chat.decode", "chat.accumulate", "chat.finalize", "metrics.count"}; !cmp.Equal(want, names) {
		t.Errorf("nodes %v", names)
	}
	// metrics.count passes every event: its inputs and outputs are the events.
	last := s.Nodes[len(s.Nodes)-1]
	var total uint64
	for _, v := range wantEvents {
		total += v
	}
	if last.In != total || last.Out != total {
		t.Errorf("metrics.count in %d out %d, want %d", last.In, last.Out, total)
	}
}

func TestRunErrorsAndUnended(t *testing.T) {
	m := metrics.New()
	g := graph(t, m)
	err := pipeline.Run(context.Background(), g, sources.Slice([][]byte{[]byte("data: {not json\n\n")}),
		sinks.Discard[protocol.ResponseEvent](), pipeline.WithObserver(m.Observer(g)))
	if err == nil {
		t.Fatal("no error")
	}
	m.RunError(err)
	m.RunError(context.Canceled)
	m.RunError(errors.New("x"))
	m.RunError(nil)
	// A stream ending without completed/failed (no chat graph: bare events).
	bare := pipeline.Must(pipeline.New("bare", m.Node()))
	if err := pipeline.Run(context.Background(), bare, sources.Slice([]protocol.ResponseEvent{protocol.Created(), {Type: "custom.x"}}), sinks.Discard[protocol.ResponseEvent]()); err != nil {
		t.Fatal(err)
	}
	if err := pipeline.Run(context.Background(), bare, sources.Slice([]protocol.ResponseEvent{protocol.Failed(&protocol.StreamError{}), protocol.Completed("", nil)}), sinks.Discard[protocol.ResponseEvent]()); err != nil {
		t.Fatal(err)
	}
	s := m.Snapshot()
	if diff := cmp.Diff(map[string]uint64{"chat.decode": 1, "context": 1, "other": 1}, s.RunErrors); diff != "" {
		t.Errorf("run errors (-want +got):\n%s", diff)
	}
	if s.Unended != 1 || s.Failed != 1 || s.Completed != 0 || s.Failures["unknown"] != 1 || s.Events["custom.x"] != 1 {
		t.Errorf("snapshot %+v", s)
	}
	var decodeErrs uint64
	for _, n := range s.Nodes {
		if n.Node == "chat.decode" {
			decodeErrs = n.Errors
		}
	}
	if decodeErrs != 1 {
		t.Errorf("chat.decode errors = %d", decodeErrs)
	}
}

func TestPrometheus(t *testing.T) {
	m := metrics.New()
	g := pipeline.Must(pipeline.New("g\"1", m.Node().Renamed("a\\b\nc")))
	if err := pipeline.Run(context.Background(), g, sources.Slice([]protocol.ResponseEvent{protocol.TextDelta("héllo"), protocol.Completed("r", nil)}),
		sinks.Discard[protocol.ResponseEvent](), pipeline.WithObserver(m.Observer(g))); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("content type %q", ct)
	}
	out := rec.Body.String()
	for _, want := range []string{
		"# TYPE harnessflow_node_inputs_total counter\nharnessflow_node_inputs_total{graph=\"g\\\"1\",node=\"a\\\\b\\nc\"} 2\n",
		"harnessflow_stream_events_total{type=\"completed\"} 1\nharnessflow_stream_events_total{type=\"output_text.delta\"} 1\n",
		"harnessflow_stream_delta_bytes_total 6\n",
		"harnessflow_streams_ended_total{outcome=\"completed\"} 1\n",
		"# HELP harnessflow_run_errors_total Runs stopped by a fatal error, by stage.\n# TYPE harnessflow_run_errors_total counter\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	// Every sample line is "name{labels} value" or "name value".
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, "# ") {
			continue
		}
		if f := strings.Fields(line[strings.LastIndexByte(line, '}')+1:]); len(f) < 1 || !strings.HasPrefix(line, "harnessflow_") {
			t.Errorf("bad line %q", line)
		}
	}
	if err := m.WritePrometheus(failWriter{}); err == nil {
		t.Errorf("write error not returned")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, fmt.Errorf("closed") }

// Tracked streams: every started stream ends exactly once with the outcome
// its caller gives, whether its run carried a terminal event, failed with a
// run error, was cancelled, or got its failure written outside the graph.
func TestTrackedStreams(t *testing.T) {
	m := metrics.New()
	run := func(evs []protocol.ResponseEvent, ctx context.Context) (*metrics.Stream, error) {
		st := m.StartStream()
		g := pipeline.Must(pipeline.New("tracked", st.Node()))
		return st, pipeline.Run(ctx, g, sources.Slice(evs), sinks.Discard[protocol.ResponseEvent]())
	}
	// A completed stream: the node passes response.completed, End says so.
	st, err := run([]protocol.ResponseEvent{protocol.Created(), protocol.TextDelta("hi"), protocol.Completed("r", nil)}, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	st.End(metrics.OutcomeCompleted, nil)
	st.End(metrics.OutcomeFailed, nil) // a second End counts nothing
	// A failed event from the graph: its kind is counted once, by End.
	st, _ = run([]protocol.ResponseEvent{protocol.Created(), protocol.Failed(&protocol.StreamError{Kind: protocol.ErrKindUpstream})}, context.Background())
	st.End(metrics.OutcomeFailed, nil)
	// A cancelled run: no terminal event passed, the client went away.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	st, err = run([]protocol.ResponseEvent{protocol.Created()}, ctx)
	if err == nil {
		t.Fatal("cancelled run: no error")
	}
	st.End(metrics.OutcomeClientClosed, nil)
	// A failure written by the caller (a timeout, say): counted as a failed
	// event and by its kind.
	st, _ = run([]protocol.ResponseEvent{protocol.Created(), protocol.TextDelta("x")}, context.Background())
	st.End(metrics.OutcomeFailed, &protocol.StreamError{Kind: protocol.ErrKindTruncated})
	// A shutdown and an unknown outcome (counted as failed).
	m.StartStream().End(metrics.OutcomeShutdown, &protocol.StreamError{Kind: protocol.ErrKindTruncated})
	m.StartStream().End("config_error", nil)
	// Started but not yet ended.
	m.StartStream()

	s := m.Snapshot()
	if s.Started != 7 {
		t.Errorf("started %d, want 7", s.Started)
	}
	want := map[string]uint64{"completed": 1, "incomplete": 0, "failed": 3, "client_closed": 1, "shutdown": 1, "no_terminal_event": 0}
	if diff := cmp.Diff(want, s.Ended); diff != "" {
		t.Errorf("ended (-want +got):\n%s", diff)
	}
	var ended uint64
	for _, n := range s.Ended {
		ended += n
	}
	if ended != s.Started-1 {
		t.Errorf("ended %d, started %d (one still running)", ended, s.Started)
	}
	if diff := cmp.Diff(map[string]uint64{protocol.ErrKindUpstream: 1, protocol.ErrKindTruncated: 2, "unknown": 1}, s.Failures); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	if s.Events[protocol.EventFailed] != 3 || s.Events[protocol.EventCompleted] != 1 {
		t.Errorf("events %v", s.Events)
	}
	var buf strings.Builder
	if err := m.WritePrometheus(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"harnessflow_streams_started_total 7\n",
		"harnessflow_streams_ended_total{outcome=\"client_closed\"} 1\n",
		"harnessflow_streams_ended_total{outcome=\"shutdown\"} 1\n",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("no %q in\n%s", want, buf.String())
		}
	}
}

// A RunObserver per run counts exactly what the shared Observer counts, in
// both modes, and only once it is flushed; as a run's Counter it counts the
// same at the end of the run.
func TestRunObserverMatchesObserver(t *testing.T) {
	shared, perRun, counted := metrics.New(), metrics.New(), metrics.New()
	gs, gr, gc := graph(t, shared), graph(t, perRun), graph(t, counted)
	files := []string{"c05_parallel_3_interleaved.sse", "c09_truncated_no_done.sse", "c10_error_mid_stream.sse"}
	var wg sync.WaitGroup
	for i := range 12 {
		data := fixture(t, files[i%len(files)])
		mode := []pipeline.Mode{pipeline.Fused, pipeline.Async}[i%2]
		wg.Go(func() {
			run := func(g *pipeline.Graph, opt pipeline.RunOption) {
				if err := pipeline.Run(context.Background(), g, sources.Reader(strings.NewReader(string(data)), sources.WithReadSize(61)),
					sinks.Discard[protocol.ResponseEvent](), pipeline.WithMode(mode), opt); err != nil {
					t.Error(err)
				}
			}
			run(gs, pipeline.WithObserver(shared.Observer(gs)))
			run(gc, pipeline.WithCounter(counted.RunObserver(gc)))
			obs := perRun.RunObserver(gr)
			run(gr, pipeline.WithObserver(obs))
			obs.Flush()
			obs.Flush() // a second flush adds nothing
		})
	}
	wg.Wait()
	counts := func(s metrics.Snapshot) []metrics.NodeSnapshot {
		for i := range s.Nodes {
			s.Nodes[i].Elapsed = 0
		}
		return s.Nodes
	}
	a, b := counts(shared.Snapshot()), counts(perRun.Snapshot())
	if diff := cmp.Diff(a, b); diff != "" || len(a) == 0 || a[0].In == 0 {
		t.Errorf("per-run counts differ from shared ones (-shared +per-run):\n%s", diff)
	}
	if diff := cmp.Diff(a, counts(counted.Snapshot())); diff != "" {
		t.Errorf("counts at the end of the run differ from shared ones (-shared +counted):\n%s", diff)
	}

	// Before Flush, nothing of the run is counted.
	m := metrics.New()
	g := graph(t, m)
	obs := m.RunObserver(g)
	if err := pipeline.Run(context.Background(), g, sources.Reader(strings.NewReader(string(fixture(t, files[0])))),
		sinks.Discard[protocol.ResponseEvent](), pipeline.WithObserver(obs)); err != nil {
		t.Fatal(err)
	}
	for _, n := range m.Snapshot().Nodes {
		if n.In != 0 || n.Out != 0 {
			t.Fatalf("node %s counted before Flush: %+v", n.Node, n)
		}
	}
	obs.Flush()
	if n := m.Snapshot().Nodes; len(n) == 0 || n[0].In == 0 || n[0].Elapsed <= 0 {
		t.Fatalf("nothing counted after Flush: %+v", n)
	}
}
