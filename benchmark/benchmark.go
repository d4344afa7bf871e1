package benchmark

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"slices"
	"time"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/request"
)

// DefaultDuration is the time budget of a run when Options set neither a
// duration nor an iteration count.
const DefaultDuration = 2 * time.Second

// Rounds is how many samples a run takes of every measured variant, in
// interleaved rounds, so that a change of machine load hits them alike.
const Rounds = 5

// Options configure [Graph]. The zero value measures both modes, every
// stage and no peer, in about DefaultDuration.
type Options struct {
	// Modes are the execution modes to measure (default fused and async).
	Modes []pipeline.Mode
	// Duration is the time budget of the run (default DefaultDuration).
	// Each variant gets an equal share, at least one iteration per round;
	// a slow peer can make the run longer.
	Duration time.Duration
	// Iterations, when positive, replaces the budget: every variant runs
	// exactly that many iterations (over the corpus), in up to Rounds
	// samples.
	Iterations int
	// Peers are measured on the same corpus in the same run.
	Peers []Peer
	// Types declares element types of the graph that are not
	// harnessflow's own (see [ElemType]).
	Types []ElemType
	// EndToEndOnly skips the per-stage measurements.
	EndToEndOnly bool
}

// Measurement is the cost of one variant over the corpus, per upstream
// event of the corpus.
type Measurement struct {
	// NsPerEvent is the median over the samples of wall time per event.
	NsPerEvent float64 `json:"ns_per_event"`
	// NsSpread is half the range of the samples, in ns per event: a
	// noise indicator.
	NsSpread float64 `json:"ns_per_event_spread"`
	// CPUNsPerEvent is the median of the process's CPU time per event
	// (every thread, the garbage collector's included): steadier than
	// wall time on a shared machine, and above it when async stages run
	// in parallel. 0 when the platform does not report it.
	CPUNsPerEvent float64 `json:"cpu_ns_per_event"`
	// EventsPerSec and MBPerSec are the throughput NsPerEvent gives (MB =
	// 10⁶ bytes of corpus); 0 when NsPerEvent is not positive.
	EventsPerSec float64 `json:"events_per_sec"`
	MBPerSec     float64 `json:"mb_per_sec"`
	// AllocsPerEvent and BytesPerEvent are heap allocations (count and
	// bytes) per event, from runtime.MemStats over all samples.
	AllocsPerEvent float64 `json:"allocs_per_event"`
	BytesPerEvent  float64 `json:"bytes_per_event"`
	// Iterations is how many times the corpus was run, over Samples
	// samples.
	Iterations int `json:"iterations"`
	Samples    int `json:"samples"`
}

// Stage is the cost of one node of the graph on its own.
type Stage struct {
	// Node is the node's name.
	Node string `json:"node"`
	// Method is how the stage was isolated: MethodReplay or MethodPrefix
	// (see [Graph]); MethodSource for the source row.
	Method string `json:"method"`
	// Note explains a fallback from replay to prefix.
	Note string `json:"note,omitempty"`
	// Modes holds the measurement per mode name ("fused", "async").
	Modes map[string]*Measurement `json:"modes"`
}

// Isolation methods of a stage.
const (
	// MethodReplay: the stage's recorded input is replayed into it alone,
	// minus the replay alone.
	MethodReplay = "replay"
	// MethodPrefix: the graph up to and including the stage, minus the
	// graph up to the stage before it.
	MethodPrefix = "prefix"
	// MethodSource: the source alone, without any node.
	MethodSource = "source"
)

// PeerResult is a peer's cost on the same corpus.
type PeerResult struct {
	// Name and Description are the peer's (see [Peer]).
	Name        string `json:"name"`
	Description string `json:"description"`
	// Measurement is the peer's cost, per event of the same corpus.
	Measurement *Measurement `json:"measurement"`
	// Speedup is, per mode, the peer's time over our end-to-end time
	// (how many times faster our graph is).
	Speedup map[string]float64 `json:"speedup"`
	// CPUSpeedup is the same ratio of CPU times (steadier on a loaded
	// machine); empty when the platform does not report CPU time.
	CPUSpeedup map[string]float64 `json:"cpu_speedup,omitempty"`
	// Agrees says whether the peer's result (text, tool calls, and
	// reasoning when it has it) equals ours; Difference says how it
	// differs when not.
	Agrees     bool   `json:"agrees"`
	Difference string `json:"difference,omitempty"`
}

// Result is the outcome of [Graph].
type Result struct {
	// Label names the run in reports (e.g. "native · chat · response");
	// the caller sets it, the graph's name is shown when it is empty.
	Label string `json:"label,omitempty"`
	// Graph and Nodes name the graph and its nodes in order; In and Out
	// are its element types.
	Graph string   `json:"graph"`
	Nodes []string `json:"nodes"`
	In    string   `json:"in"`
	Out   string   `json:"out"`
	// Corpus describes the corpus.
	Corpus CorpusInfo `json:"corpus"`
	// Modes lists the measured modes in order.
	Modes []string `json:"modes"`
	// Source is the cost of producing the input alone (reading the
	// bytes); Stages is each node's own cost (nil with EndToEndOnly).
	Source *Stage   `json:"source,omitempty"`
	Stages []*Stage `json:"stages,omitempty"`
	// SumOfStages is, per mode, Source plus every stage; SumRatio is
	// SumOfStages over EndToEnd (1 means the parts add up exactly).
	SumOfStages map[string]*Measurement `json:"sum_of_stages,omitempty"`
	SumRatio    map[string]float64      `json:"sum_ratio,omitempty"`
	// EndToEnd is, per mode, the whole graph from the source to a sink
	// that keeps the result, as a caller runs it.
	EndToEnd map[string]*Measurement `json:"end_to_end"`
	// Output is what the end-to-end run produced from the first input.
	Output *Summary `json:"output,omitempty"`
	// Peers are the peers' results.
	Peers []*PeerResult `json:"peers,omitempty"`
	// Seconds is the wall time of the whole run.
	Seconds float64 `json:"seconds"`
}

// CorpusInfo describes a corpus in a Result.
type CorpusInfo struct {
	// Name is the corpus's name.
	Name string `json:"name"`
	// Inputs, Bytes and Events are the number of inputs, their total size
	// and the number of upstream events in them.
	Inputs int `json:"inputs"`
	Bytes  int `json:"bytes"`
	Events int `json:"events"`
}

// Graph measures g over the corpus: end to end in each mode, each stage on
// its own in each mode, and each peer, all in one run with interleaved
// samples. An iteration runs every input of the corpus through a fresh
// run of the graph; figures are per upstream event of the corpus.
//
// A stage is measured on its own, without timing hooks in the stages (an
// Observer's clock reads would cost as much as the cheaper stages), in
// one of two ways:
//
//   - replay: the stage's input stream is recorded once (owned copies),
//     then replayed into the stage alone; the replay alone is measured
//     next to it and subtracted. Used when the input elements are values
//     and replaying them twice gives the recorded output again (so the
//     stage does not modify what it reads).
//   - prefix: the graph up to the stage, minus the graph up to the stage
//     before it (or minus the source). Used for pointer elements (such as
//     *request.Shaping, which request stages edit in place) and as the
//     fallback.
//
// Replayed stages are measured independently of each other, so Source plus
// the stages (SumOfStages) is a real check against EndToEnd: in fused mode
// they agree within noise; in async mode the stages overlap on several
// cores and the sum exceeds the end-to-end time. Prefix differences add
// up by construction.
//
// The graph's input must be []byte (a body, read with sources.Reader as
// the proxy reads an upstream), *request.Shaping or
// *protocol.ResponsesRequest (a request, decoded from each input's JSON
// before timing).
func Graph(ctx context.Context, g *pipeline.Graph, c Corpus, opts Options) (*Result, error) {
	start := time.Now()
	if g == nil {
		return nil, fmt.Errorf("benchmark: nil graph")
	}
	if len(c.Inputs) == 0 {
		return nil, errNoInputs
	}
	b, err := newBench(g, c, opts)
	if err != nil {
		return nil, err
	}
	if err := b.prepare(ctx); err != nil {
		return nil, err
	}

	if err := b.sample(ctx); err != nil {
		return nil, err
	}
	res := b.result()
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// variant is one measured configuration: a function that runs the whole
// corpus once, and its samples.
type variant struct {
	name    string
	run     func(ctx context.Context) error
	samples []float64 // wall ns per iteration
	cpu     []float64 // process CPU ns per iteration (empty when unavailable)
	iters   int
	solo    bool // not part of a difference: may skip rounds when slow
	slow    bool // one iteration takes much longer than a sample's share
	mallocs uint64
	bytes   uint64
}

func (v *variant) nsPerIter() float64 { return median(v.samples) }

func (v *variant) allocsPerIter() float64 {
	if v.iters == 0 {
		return 0
	}
	return float64(v.mallocs) / float64(v.iters)
}

func (v *variant) bytesPerIter() float64 {
	if v.iters == 0 {
		return 0
	}
	return float64(v.bytes) / float64(v.iters)
}

// stagePlan says how one stage of one mode is measured: with (minus, plus)
// the result is plus − minus, sample by sample.
type stagePlan struct {
	minus, plus *variant
}

// input makes fresh sources of one corpus input.
type input struct {
	typ    ElemType
	source func(i int) any // a pipeline.Source of the graph's input type
}

type bench struct {
	g      *pipeline.Graph
	c      Corpus
	opts   Options
	types  typeTable
	nodes  []pipeline.NodeInfo
	elems  []ElemType // elems[0] is the input type, elems[k+1] node k's output
	in     input
	modes  []pipeline.Mode
	output *Summary

	// variants in sampling order: each stage's minus right before its plus.
	variants []*variant
	source   *variant
	e2e      map[pipeline.Mode]*variant
	stages   []map[pipeline.Mode]stagePlan
	methods  []string
	notes    []string
	peers    []*variant
	peerRes  []*PeerResult
}

func newBench(g *pipeline.Graph, c Corpus, opts Options) (*bench, error) {
	b := &bench{g: g, c: c, opts: opts, types: newTypeTable(opts.Types), nodes: g.Nodes(), e2e: map[pipeline.Mode]*variant{}}
	b.modes = opts.Modes
	if len(b.modes) == 0 {
		b.modes = []pipeline.Mode{pipeline.Fused, pipeline.Async}
	}
	if b.c.Events <= 0 {
		b.c.Events = countEvents(g.In(), c.Inputs)
	}
	if b.c.Events <= 0 {
		return nil, fmt.Errorf("benchmark: the corpus %s has no events", c.Name)
	}
	in, err := b.types.lookup(g.In(), "graph input")
	if err != nil {
		return nil, err
	}
	b.elems = append(b.elems, in)
	for i, n := range b.nodes {
		// End to end needs the graph's output type only.
		e, err := b.types.lookup(n.Out, "output of "+n.Name)
		if err != nil && (!opts.EndToEndOnly || i == len(b.nodes)-1) {
			return nil, err
		}
		b.elems = append(b.elems, e)
	}
	if b.in, err = makeInput(in, c.Inputs); err != nil {
		return nil, err
	}
	return b, nil
}

// countEvents counts the upstream events of a corpus: SSE events for
// byte inputs, else one per input.
func countEvents(in reflect.Type, inputs [][]byte) int {
	if in != reflect.TypeFor[[]byte]() {
		return len(inputs)
	}
	n := 0
	for _, b := range inputs {
		n += CountSSEEvents(b)
	}
	return n
}

// makeInput returns the sources of the corpus for a graph input type.
func makeInput(typ ElemType, inputs [][]byte) (input, error) {
	switch typ.Type() {
	case reflect.TypeFor[[]byte]():
		return input{typ: typ, source: func(i int) any {
			return pipeline.Source[[]byte](sources.Reader(bytes.NewReader(inputs[i])))
		}}, nil
	case reflect.TypeFor[*request.Shaping](), reflect.TypeFor[*protocol.ResponsesRequest]():
		reqs := make([]*protocol.ResponsesRequest, len(inputs))
		for i, data := range inputs {
			r, err := protocol.DecodeRequest(data)
			if err != nil {
				return input{}, fmt.Errorf("benchmark: corpus input %d: %w", i+1, err)
			}
			reqs[i] = r
		}
		if typ.Type() == reflect.TypeFor[*protocol.ResponsesRequest]() {
			return input{typ: typ, source: func(i int) any {
				return pipeline.Source[*protocol.ResponsesRequest](one(reqs[i]))
			}}, nil
		}
		return input{typ: typ, source: func(i int) any {
			return pipeline.Source[*request.Shaping](pipeline.SourceFunc[*request.Shaping](func(_ context.Context, emit func(*request.Shaping) error) error {
				return emit(request.NewShaping(reqs[i]))
			}))
		}}, nil
	}
	return input{}, fmt.Errorf("benchmark: graph input %v is not supported (want []byte, *request.Shaping or *protocol.ResponsesRequest)", typ.Type())
}

// one is a source of a single value.
func one[T any](v T) pipeline.SourceFunc[T] {
	return func(_ context.Context, emit func(T) error) error { return emit(v) }
}

// trigger is the source of a replay graph: one empty element.
func trigger() any {
	return pipeline.Source[[]byte](one[[]byte](nil))
}

// prepare checks the end-to-end output (and the peers'), records the
// streams of replayed stages, verifies the replays and lays out the
// variants.
func (b *bench) prepare(ctx context.Context) error {
	n := len(b.nodes)
	last := b.elems[n]
	summarize := last.Type() == reflect.TypeFor[protocol.ResponseEvent]()
	kind := sinkCount
	if summarize {
		kind = sinkSummary
	}
	// End to end, checked once per input.
	summaries := make([]*Summary, len(b.c.Inputs))
	for i := range b.c.Inputs {
		out, err := last.run(ctx, b.g, b.in.source(i), kind)
		if err != nil {
			return fmt.Errorf("benchmark: %s: input %d: %w", b.g.Name(), i+1, err)
		}
		if out.n == 0 {
			return fmt.Errorf("benchmark: %s: input %d gave no output", b.g.Name(), i+1)
		}
		if out.summary == nil {
			out.summary = &Summary{Outputs: out.n}
		}
		summaries[i] = out.summary
		if i < len(b.c.Expect) && b.c.Expect[i] != nil && summarize {
			if d := b.c.Expect[i].Diff(out.summary, true, true); d != "" {
				return fmt.Errorf("benchmark: %s: input %d does not give the expected result: %s", b.g.Name(), i+1, d)
			}
		}
	}
	b.output = summaries[0]

	b.source = &variant{name: "source", run: func(ctx context.Context) error {
		for i := range b.c.Inputs {
			if _, err := b.in.typ.drain(ctx, b.in.source(i), false); err != nil {
				return err
			}
		}
		return nil
	}}
	if !b.opts.EndToEndOnly {
		b.variants = append(b.variants, b.source)
		if err := b.planStages(ctx); err != nil {
			return err
		}
	}
	for _, m := range b.modes {
		v := &variant{name: "e2e " + m.String(), run: func(ctx context.Context) error {
			for i := range b.c.Inputs {
				if _, err := last.run(ctx, b.g, b.in.source(i), kind, pipeline.WithMode(m)); err != nil {
					return err
				}
			}
			return nil
		}}
		b.e2e[m] = v
		b.variants = append(b.variants, v)
	}
	for _, p := range b.opts.Peers {
		pr := &PeerResult{Name: p.Name, Description: p.Description, Agrees: true, Speedup: map[string]float64{}}
		for i, input := range b.c.Inputs {
			got, err := p.Run(input)
			if err != nil {
				return fmt.Errorf("benchmark: peer %s: input %d: %w", p.Name, i+1, err)
			}
			want, usage := summaries[i], false
			if i < len(b.c.Expect) && b.c.Expect[i] != nil {
				want, usage = b.c.Expect[i], true
			}
			if !summarize {
				pr.Agrees, pr.Difference = false, "the graph does not emit engine events"
			} else if d := want.Diff(got, p.Reasoning, usage); d != "" && pr.Agrees {
				pr.Agrees, pr.Difference = false, fmt.Sprintf("input %d: %s", i+1, d)
			}
		}
		v := &variant{name: "peer " + p.Name, solo: true, run: func(ctx context.Context) error {
			for _, input := range b.c.Inputs {
				if err := ctx.Err(); err != nil {
					return err
				}
				if _, err := p.Run(input); err != nil {
					return err
				}
			}
			return nil
		}}
		b.peers = append(b.peers, v)
		b.peerRes = append(b.peerRes, pr)
		b.variants = append(b.variants, v)
	}
	return nil
}

// planStages decides the method of every stage and adds its variants.
func (b *bench) planStages(ctx context.Context) error {
	n := len(b.nodes)
	b.stages = make([]map[pipeline.Mode]stagePlan, n)
	b.methods = make([]string, n)
	b.notes = make([]string, n)
	prefixes := make([]*pipeline.Graph, n)
	for k := range n {
		p, err := prefix(b.g, k)
		if err != nil {
			return err
		}
		prefixes[k] = p
	}
	// records[k][i] is the stream into node k for input i (recorded
	// lazily); records[n] the graph's output.
	records := make([][]any, n+1)
	record := func(k int) ([]any, error) {
		if records[k] != nil {
			return records[k], nil
		}
		rs := make([]any, len(b.c.Inputs))
		for i := range b.c.Inputs {
			var err error
			if k == 0 {
				rs[i], err = b.in.typ.drain(ctx, b.in.source(i), true)
			} else {
				var out runOut
				out, err = b.elems[k].run(ctx, prefixes[k-1], b.in.source(i), sinkKeep)
				rs[i] = out.kept
			}
			if err != nil {
				return nil, fmt.Errorf("benchmark: record the input of %s: %w", b.nodeName(k), err)
			}
		}
		records[k] = rs
		return rs, nil
	}
	prefixVariant := map[pipeline.Mode][]*variant{}
	prefixOf := func(m pipeline.Mode, k int) *variant {
		if k < 0 {
			return b.source
		}
		if prefixVariant[m] == nil {
			prefixVariant[m] = make([]*variant, n)
		}
		if v := prefixVariant[m][k]; v != nil {
			return v
		}
		g, out := prefixes[k], b.elems[k+1]
		v := &variant{name: fmt.Sprintf("prefix %s %s", b.nodeName(k), m), run: func(ctx context.Context) error {
			for i := range b.c.Inputs {
				if _, err := out.run(ctx, g, b.in.source(i), sinkCount, pipeline.WithMode(m)); err != nil {
					return err
				}
			}
			return nil
		}}
		prefixVariant[m][k] = v
		return v
	}
	isos := make([][]*pipeline.Graph, n)
	bases := make([][]*pipeline.Graph, n)
	for k := range n {
		method, note := MethodPrefix, ""
		if b.elems[k].Type().Kind() == reflect.Pointer {
			note = "pointer elements: stages may edit them in place"
		} else {
			var err error
			if isos[k], bases[k], note, err = b.replayable(ctx, k, record); err != nil {
				return err
			}
			if isos[k] != nil {
				method = MethodReplay
			}
		}
		b.methods[k], b.notes[k] = method, note
		b.stages[k] = map[pipeline.Mode]stagePlan{}
	}
	// Variants mode by mode, each stage's minus sampled right before its
	// plus (a prefix chain shares its variants).
	for _, m := range b.modes {
		for k := range n {
			if b.methods[k] == MethodPrefix {
				minus, plus := prefixOf(m, k-1), prefixOf(m, k)
				if !slices.Contains(b.variants, minus) {
					b.variants = append(b.variants, minus)
				}
				b.variants = append(b.variants, plus)
				b.stages[k][m] = stagePlan{minus: minus, plus: plus}
				continue
			}
			base := &variant{name: fmt.Sprintf("replay %s %s", b.nodeName(k), m), run: replayRun(bases[k], b.elems[k], m)}
			iso := &variant{name: fmt.Sprintf("stage %s %s", b.nodeName(k), m), run: replayRun(isos[k], b.elems[k+1], m)}
			b.variants = append(b.variants, base, iso)
			b.stages[k][m] = stagePlan{minus: base, plus: iso}
		}
	}
	return nil
}

// replayable builds the replay graphs of node k (one per input: the replay
// alone, and the replay then the node) and checks that replaying twice
// gives the recorded output again. It returns nil graphs and a note when
// the stage cannot be replayed.
func (b *bench) replayable(ctx context.Context, k int, record func(int) ([]any, error)) (isos, bases []*pipeline.Graph, note string, err error) {
	ins, err := record(k)
	if err != nil {
		return nil, nil, "", err
	}
	outs, err := record(k + 1)
	if err != nil {
		return nil, nil, "", err
	}
	node, _ := b.g.Node(b.nodes[k].Name)
	for i := range b.c.Inputs {
		rep := b.elems[k].replayNode(ins[i])
		base, err := pipeline.New("replay", rep)
		if err != nil {
			return nil, nil, "", fmt.Errorf("benchmark: replay %s: %w", b.nodeName(k), err)
		}
		iso, err := pipeline.New("replay+"+b.nodes[k].Name, rep, node)
		if err != nil {
			return nil, nil, "", fmt.Errorf("benchmark: replay %s: %w", b.nodeName(k), err)
		}
		for range 2 {
			out, err := b.elems[k+1].run(ctx, iso, trigger(), sinkKeep)
			if err != nil {
				return nil, nil, fmt.Sprintf("replay failed: %v", err), nil
			}
			if !reflect.DeepEqual(out.kept, outs[i]) {
				return nil, nil, "replayed input gave another output", nil
			}
		}
		isos, bases = append(isos, iso), append(bases, base)
	}
	return isos, bases, "", nil
}

// replayRun runs every replay graph of gs into a counting sink of out.
func replayRun(gs []*pipeline.Graph, out ElemType, m pipeline.Mode) func(context.Context) error {
	return func(ctx context.Context) error {
		for _, g := range gs {
			if _, err := out.run(ctx, g, trigger(), sinkCount, pipeline.WithMode(m)); err != nil {
				return err
			}
		}
		return nil
	}
}

// prefix returns g cut after node k.
func prefix(g *pipeline.Graph, k int) (*pipeline.Graph, error) {
	names := g.Names()
	p := g
	for i := len(names) - 1; i > k; i-- {
		var err error
		if p, err = p.Remove(names[i]); err != nil {
			return nil, fmt.Errorf("benchmark: cut %s after %s: %w", g.Name(), names[k], err)
		}
	}
	return p, nil
}

func (b *bench) nodeName(k int) string { return b.nodes[k].Name }

// sample runs the rounds: in each, every variant runs for its share of
// the budget (at least one iteration), in order.
func (b *bench) sample(ctx context.Context) error {
	budget := b.opts.Duration
	if budget <= 0 {
		budget = DefaultDuration
	}
	rounds := Rounds
	if b.opts.Iterations > 0 {
		rounds = min(Rounds, b.opts.Iterations)
	}
	slice := budget / time.Duration(rounds*len(b.variants))
	start := time.Now()
	for r := range rounds {
		// Collect once per round, so that no sample inherits another
		// variant's garbage.
		runtime.GC()
		for _, v := range b.variants {
			if v.slow && r%2 == 1 {
				continue // a slow variant (a peer) gets every other round
			}
			iters := 0
			if b.opts.Iterations > 0 {
				// Spread Iterations over the rounds.
				iters = b.opts.Iterations/rounds + btoi(r < b.opts.Iterations%rounds)
			}
			if err := v.sampleOnce(ctx, iters, slice); err != nil {
				return fmt.Errorf("benchmark: %s: %w", v.name, err)
			}
		}
		// A run slowed down (a slow peer, a loaded machine) stops after
		// three rounds rather than take much longer than asked.
		if b.opts.Iterations <= 0 && r >= 2 && time.Since(start) > budget {
			break
		}
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sampleOnce takes one sample: iters iterations, or as many as fit in
// slice (at least one).
func (v *variant) sampleOnce(ctx context.Context, iters int, slice time.Duration) error {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0, cpuOK := ProcessCPU()
	start := time.Now()
	n := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := v.run(ctx); err != nil {
			return err
		}
		n++
		if iters > 0 && n >= iters || iters <= 0 && time.Since(start) >= slice {
			break
		}
	}
	el := time.Since(start)
	cpu1, _ := ProcessCPU()
	runtime.ReadMemStats(&m1)
	v.samples = append(v.samples, float64(el.Nanoseconds())/float64(n))
	if cpuOK {
		v.cpu = append(v.cpu, float64(cpu1-cpu0)/float64(n))
	}
	if v.solo && iters <= 0 && el > 4*slice && n == 1 {
		v.slow = true
	}
	v.iters += n
	v.mallocs += m1.Mallocs - m0.Mallocs
	v.bytes += m1.TotalAlloc - m0.TotalAlloc
	return nil
}

// measurement turns per-iteration figures into per-event ones.
func (b *bench) measurement(samples, cpu []float64, allocs, bytes float64, iters int) *Measurement {
	ev := float64(b.c.Events)
	ns := median(samples)
	m := &Measurement{
		NsPerEvent:     ns / ev,
		NsSpread:       spread(samples) / ev,
		CPUNsPerEvent:  median(cpu) / ev,
		AllocsPerEvent: allocs / ev,
		BytesPerEvent:  bytes / ev,
		Iterations:     iters,
		Samples:        len(samples),
	}
	if ns > 0 {
		m.EventsPerSec = ev / ns * 1e9
		m.MBPerSec = float64(b.c.Bytes()) / ns * 1e3
	}
	return m
}

func (b *bench) of(v *variant) *Measurement {
	return b.measurement(v.samples, v.cpu, v.allocsPerIter(), v.bytesPerIter(), v.iters)
}

func (b *bench) result() *Result {
	r := &Result{
		Graph:    b.g.Name(),
		Nodes:    b.g.Names(),
		In:       typeName(b.g.In()),
		Out:      typeName(b.g.Out()),
		Corpus:   CorpusInfo{Name: b.c.Name, Inputs: len(b.c.Inputs), Bytes: b.c.Bytes(), Events: b.c.Events},
		EndToEnd: map[string]*Measurement{},
		Output:   b.output,
	}
	for _, m := range b.modes {
		r.Modes = append(r.Modes, m.String())
		r.EndToEnd[m.String()] = b.of(b.e2e[m])
	}
	if !b.opts.EndToEndOnly {
		src := b.of(b.source)
		r.Source = &Stage{Node: "source", Method: MethodSource, Modes: map[string]*Measurement{}}
		r.SumOfStages, r.SumRatio = map[string]*Measurement{}, map[string]float64{}
		sums, cpuSums := map[pipeline.Mode][]float64{}, map[pipeline.Mode][]float64{}
		sumAllocs, sumBytes := map[pipeline.Mode]float64{}, map[pipeline.Mode]float64{}
		for _, m := range b.modes {
			r.Source.Modes[m.String()] = src
			sums[m], cpuSums[m] = slices.Clone(b.source.samples), slices.Clone(b.source.cpu)
			sumAllocs[m], sumBytes[m] = b.source.allocsPerIter(), b.source.bytesPerIter()
		}
		for k, plans := range b.stages {
			st := &Stage{Node: b.nodes[k].Name, Method: b.methods[k], Note: b.notes[k], Modes: map[string]*Measurement{}}
			for _, m := range b.modes {
				p := plans[m]
				d, dc := diff(p.plus.samples, p.minus.samples), diff(p.plus.cpu, p.minus.cpu)
				allocs := p.plus.allocsPerIter() - p.minus.allocsPerIter()
				bytes := p.plus.bytesPerIter() - p.minus.bytesPerIter()
				st.Modes[m.String()] = b.measurement(d, dc, allocs, bytes, p.plus.iters)
				addTo(sums[m], d)
				addTo(cpuSums[m], dc)
				sumAllocs[m] += allocs
				sumBytes[m] += bytes
			}
			r.Stages = append(r.Stages, st)
		}
		for _, m := range b.modes {
			s := b.measurement(sums[m], cpuSums[m], sumAllocs[m], sumBytes[m], 0)
			r.SumOfStages[m.String()] = s
			if e := r.EndToEnd[m.String()]; e.NsPerEvent > 0 {
				r.SumRatio[m.String()] = s.NsPerEvent / e.NsPerEvent
			}
		}
	}
	for i, v := range b.peers {
		pr := b.peerRes[i]
		pr.Measurement = b.of(v)
		for _, m := range b.modes {
			e := r.EndToEnd[m.String()]
			if e.NsPerEvent > 0 {
				pr.Speedup[m.String()] = pr.Measurement.NsPerEvent / e.NsPerEvent
			}
			if e.CPUNsPerEvent > 0 && pr.Measurement.CPUNsPerEvent > 0 {
				if pr.CPUSpeedup == nil {
					pr.CPUSpeedup = map[string]float64{}
				}
				pr.CPUSpeedup[m.String()] = pr.Measurement.CPUNsPerEvent / e.CPUNsPerEvent
			}
		}
		r.Peers = append(r.Peers, pr)
	}
	return r
}

// diff returns a[j] − b[j] for the samples both have.
func diff(a, b []float64) []float64 {
	n := min(len(a), len(b))
	d := make([]float64, n)
	for j := range n {
		d[j] = a[j] - b[j]
	}
	return d
}

// addTo adds d to sum, sample by sample.
func addTo(sum, d []float64) {
	for j := range min(len(sum), len(d)) {
		sum[j] += d[j]
	}
}

// median of xs (0 for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// spread is half the range of xs.
func spread(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	return (hi - lo) / 2
}

// typeName is t as Go source writes it ([]byte rather than []uint8).
func typeName(t reflect.Type) string {
	if t == reflect.TypeFor[[]byte]() {
		return "[]byte"
	}
	return t.String()
}
