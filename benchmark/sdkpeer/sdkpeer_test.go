package sdkpeer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/harnessflow/harnessflow/benchmark"
	"github.com/harnessflow/harnessflow/benchmark/sdkpeer"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/stages/anthropicstream"
	"github.com/harnessflow/harnessflow/stages/chatstream"
	"github.com/harnessflow/harnessflow/stages/responsesstream"
)

// These tests measure our graphs next to the official SDKs' peers (moved
// here from package benchmark, which no longer imports the SDKs).

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// quick runs every variant twice: enough to exercise every path, fast.
func quick() benchmark.Options { return benchmark.Options{Iterations: 2} }

func TestGraphChat(t *testing.T) {
	c, err := benchmark.Generate("chat", 600)
	if err != nil {
		t.Fatal(err)
	}
	g, err := chatstream.Graph(chatstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opts := quick()
	opts.Peers = []benchmark.Peer{sdkpeer.OpenAIChat()}
	r, err := benchmark.Graph(context.Background(), g, c, opts)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(r.Nodes, ",") != "sse.decode,chat.decode,chat.accumulate,chat.finalize" || len(r.Stages) != 4 {
		t.Fatalf("nodes %v, %d stages", r.Nodes, len(r.Stages))
	}
	if r.In != "[]byte" || r.Out != "protocol.ResponseEvent" || r.Corpus.Events != 600 || r.Corpus.Bytes != len(c.Inputs[0]) {
		t.Errorf("result header %+v %+v", r.In, r.Corpus)
	}
	for _, st := range r.Stages {
		if st.Method != benchmark.MethodReplay {
			t.Errorf("%s: method %s (%s), want replay", st.Node, st.Method, st.Note)
		}
		for _, mode := range []string{"fused", "async"} {
			m := st.Modes[mode]
			if m == nil || m.Iterations != 2 || m.Samples != 2 {
				t.Fatalf("%s %s: %+v", st.Node, mode, m)
			}
		}
	}
	for _, mode := range []string{"fused", "async"} {
		e := r.EndToEnd[mode]
		if e.NsPerEvent <= 0 || e.EventsPerSec <= 0 || e.MBPerSec <= 0 || e.AllocsPerEvent <= 0 {
			t.Errorf("end to end %s: %+v", mode, e)
		}
		if r.SumRatio[mode] <= 0 {
			t.Errorf("sum ratio %s: %v", mode, r.SumRatio[mode])
		}
	}
	// Allocations are counted exactly, so the parts add up to about the
	// whole (fused: the stages allocate nothing per event but a few
	// buffers; the source one chunk per read).
	if s, e := r.SumOfStages["fused"].AllocsPerEvent, r.EndToEnd["fused"].AllocsPerEvent; s > e*1.5+0.01 || s < e/1.5-0.01 {
		t.Errorf("fused allocations: stages sum to %v per event, end to end %v", s, e)
	}
	if !r.Output.Completed || r.Output.Outputs == 0 {
		t.Errorf("output %+v", r.Output)
	}
	if len(r.Peers) != 1 || !r.Peers[0].Agrees || r.Peers[0].Speedup["fused"] <= 0 || r.Peers[0].CPUSpeedup["async"] <= 0 {
		t.Fatalf("peers %+v", r.Peers)
	}
}

func TestGraphOtherWires(t *testing.T) {
	ag, _ := anthropicstream.Graph(anthropicstream.Options{})
	rg, _ := responsesstream.Graph(responsesstream.Options{})
	tests := []struct {
		wire  string
		g     *pipeline.Graph
		peers []benchmark.Peer
	}{
		{"messages", ag, []benchmark.Peer{sdkpeer.AnthropicMessages()}},
		{"responses", rg, nil},
	}
	for _, tt := range tests {
		c, err := benchmark.Generate(tt.wire, 400)
		if err != nil {
			t.Fatal(err)
		}
		opts := quick()
		opts.Modes = []pipeline.Mode{pipeline.Fused}
		opts.Peers = tt.peers
		r, err := benchmark.Graph(context.Background(), tt.g, c, opts)
		if err != nil {
			t.Fatalf("%s: %v", tt.wire, err)
		}
		if len(r.Stages) != tt.g.Len() || r.EndToEnd["async"] != nil || r.EndToEnd["fused"] == nil {
			t.Errorf("%s: %d stages, modes %v", tt.wire, len(r.Stages), r.Modes)
		}
		for _, p := range r.Peers {
			if !p.Agrees {
				t.Errorf("%s: peer %s disagrees: %s", tt.wire, p.Name, p.Difference)
			}
		}
	}
}

func TestReport(t *testing.T) {
	c, _ := benchmark.Generate("messages", 300)
	g, _ := anthropicstream.Graph(anthropicstream.Options{})
	opts := quick()
	opts.Peers = []benchmark.Peer{sdkpeer.AnthropicMessages()}
	r, err := benchmark.Graph(context.Background(), g, c, opts)
	if err != nil {
		t.Fatal(err)
	}
	r.Label = "test · messages"
	m := benchmark.ReadMachine()
	m.LoadAfter = benchmark.LoadAverage()
	rep := &benchmark.Report{Title: "harnessflow bench", Command: "harnessflow bench --wire messages", Machine: m, Results: []*benchmark.Result{r}}

	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### test · messages", "| stage | method | fused ns/event |", "| anthropic.decode | replay |",
		"| **end to end** |", "anthropic-sdk-go (ssestream + Message.Accumulate)", "| yes |", "Sum of the rows / end to end: fused", "Machine: go"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md.String())
		}
	}
	// Every table row has as many cells as its header.
	for _, block := range strings.Split(md.String(), "\n\n") {
		lines := strings.Split(strings.TrimSpace(block), "\n")
		if !strings.HasPrefix(lines[0], "|") {
			continue
		}
		cells := strings.Count(lines[0], " |")
		for _, l := range lines[1:] {
			if strings.Count(l, " |") != cells {
				t.Errorf("row %q has another number of cells than %q", l, lines[0])
			}
		}
	}

	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back benchmark.Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Results) != 1 || back.Results[0].EndToEnd["fused"].NsPerEvent != r.EndToEnd["fused"].NsPerEvent || back.Results[0].Stages[2].Node != "anthropic.accumulate" {
		t.Errorf("JSON round trip: %s", js.String())
	}

	svg, err := rep.SVG()
	if err != nil {
		t.Fatal(err)
	}
	text := svgText(t, svg)
	for _, want := range []string{"test · messages", "ns per upstream event", "fused", "async", "anthropic-sdk-go (peer)", "anthropic.decode", "end to end"} {
		if !strings.Contains(text, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	// The CPU chart says so on its axis.
	rep.ChartCPU = true
	cpuSVG, err := rep.SVG()
	if err != nil {
		t.Fatal(err)
	}
	if text := svgText(t, cpuSVG); !strings.Contains(text, "CPU ns per upstream event") {
		t.Error("CPU chart: axis title does not say CPU")
	}
	// Two results stack into one document.
	rep.Results = append(rep.Results, r)
	svg2, err := rep.SVG()
	if err != nil {
		t.Fatal(err)
	}
	svgText(t, svg2)
	if bytes.Count(svg2, []byte("<svg")) != 3 {
		t.Errorf("stacked SVG has %d svg elements", bytes.Count(svg2, []byte("<svg")))
	}
}

// svgText checks that svg is well-formed XML and returns its text.
func svgText(t *testing.T, svg []byte) string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var b strings.Builder
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return b.String()
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed: %v", err)
		}
		if cd, ok := tok.(xml.CharData); ok {
			b.Write(cd)
		}
	}
}

func TestPeers(t *testing.T) {
	for _, wire := range []string{"chat", "messages"} {
		p, ok := benchmark.PeerFor(wire)
		if !ok {
			t.Fatalf("%s: no peer", wire)
		}
		q, err := benchmark.PeerByName(p.Name)
		if err != nil || q.Name != p.Name {
			t.Errorf("benchmark.PeerByName(%s): %v", p.Name, err)
		}
		// A body that is not the wire's stream does not crash the peer.
		if _, err := p.Run([]byte("data: {not json\n\n")); err == nil && wire == "chat" {
			t.Errorf("%s: broken chunk accepted", p.Name)
		}
	}
	if _, ok := benchmark.PeerFor("responses"); ok {
		t.Error("responses has a peer")
	}
	if _, err := benchmark.PeerByName("langchain"); err == nil {
		t.Error("unknown peer: no error")
	}
}
