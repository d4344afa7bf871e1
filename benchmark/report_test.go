package benchmark

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// A stage measured at or below zero (the difference of two noisy
// measurements) is shown as ≤0* with its footnote, never as a negative
// figure; the default table is narrow and --wide (Report.Wide) shows every
// column.
func TestReportClampsAndWidth(t *testing.T) {
	meas := func(ns, cpu, allocs float64) *Measurement {
		return &Measurement{NsPerEvent: ns, NsSpread: 3, CPUNsPerEvent: cpu, AllocsPerEvent: allocs, EventsPerSec: 1e6, MBPerSec: 300}
	}
	res := &Result{
		Graph: "chat-response", In: "[]byte", Out: "protocol.ResponseEvent", Label: "native · chat · response direction (ChatCompletionsCompat)",
		Nodes: []string{"sse.decode", "chat.decode"}, Modes: []string{"fused", "async"},
		Stages: []*Stage{
			{Node: "sse.decode", Method: MethodReplay, Modes: map[string]*Measurement{"fused": meas(-79.1, -12, -0.01), "async": meas(40, 41, 0)}},
			{Node: "chat.decode", Method: MethodReplay, Modes: map[string]*Measurement{"fused": meas(321, 323, 0.001), "async": meas(936, 940, 0.001)}},
		},
		EndToEnd: map[string]*Measurement{"fused": meas(730, 766, 0.025), "async": meas(1488, 1500, 0.03)},
		Peers:    []*PeerResult{{Name: "openai-go", Description: "ssestream + ChatCompletionAccumulator", Measurement: meas(31957, 35208, 63.5), Speedup: map[string]float64{"fused": 43.8, "async": 21}, Agrees: true}},
	}
	for _, wide := range []bool{false, true} {
		rep := &Report{Title: "harnessflow bench", Results: []*Result{res}, Wide: wide}
		var md bytes.Buffer
		if err := rep.WriteMarkdown(&md); err != nil {
			t.Fatal(err)
		}
		out := md.String()
		if strings.Contains(out, "-79") || regexp.MustCompile(`\| -[0-9]`).MatchString(out) {
			t.Errorf("wide=%v: a negative figure is shown:\n%s", wide, out)
		}
		if !strings.Contains(out, "| sse.decode | replay | ≤0* |") || !strings.Contains(out, belowNoiseNote) {
			t.Errorf("wide=%v: no ≤0* marker or footnote:\n%s", wide, out)
		}
		widest, tables := 0, ""
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "|") {
				widest = max(widest, utf8.RuneCountInString(line))
				tables += line + "\n"
			}
		}
		switch {
		case !wide && widest > 110:
			t.Errorf("narrow table %d characters wide:\n%s", widest, out)
		case !wide && (strings.Contains(tables, "events/s") || strings.Contains(tables, "±") || !strings.Contains(out, "--wide")):
			t.Errorf("narrow table shows wide columns or lacks the --wide hint:\n%s", out)
		case wide && (!strings.Contains(tables, "fused events/s") || !strings.Contains(tables, "async MB/s") || !strings.Contains(tables, "± 3.0")):
			t.Errorf("wide table lacks columns:\n%s", out)
		}
		if !strings.Contains(out, "openai-go (ssestream + ChatCompletionAccumulator)") {
			t.Errorf("wide=%v: the peer's description is missing:\n%s", wide, out)
		}
	}
	// Without a figure at or below zero there is no footnote.
	res.Stages = res.Stages[1:]
	var md bytes.Buffer
	if err := (&Report{Results: []*Result{res}}).WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "≤0") {
		t.Errorf("footnote without a clamped figure:\n%s", md.String())
	}
}
