package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/benchmark"
)

// benchQuick are the flags that keep a bench test short: a small stream,
// two iterations of everything.
var benchQuick = []string{"--chunks", "400", "--iterations", "2"}

func benchCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return cli(t, "", append([]string{"bench"}, args...)...)
}

func TestBenchMarkdownAndSVG(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "bench.svg")
	code, out, errOut := benchCLI(t, append(benchQuick, "--svg", svg)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"### native · chat · response direction (ChatCompletionsCompat)",
		"Graph `response.native.chat` ([]byte → protocol.ResponseEvent): sse.decode → chat.decode → chat.accumulate → chat.finalize.",
		"| stage | method | fused ns/event | fused CPU ns/event | fused allocs/event | async ns/event |",
		"| sse.decode | replay |", "| chat.finalize | replay |", "| **end to end** |",
		"openai-go (ssestream + ChatCompletionAccumulator)", "Sum of the rows / end to end: fused",
		"load average", "Command: `harnessflow bench --chunks 400",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	text := xmlText(t, data)
	for _, want := range []string{"native · chat · response direction", "ns per upstream event", "openai-go (peer)", "chat.accumulate", "end to end"} {
		if !strings.Contains(text, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}

func TestBenchJSON(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "cpu.svg")
	code, out, errOut := benchCLI(t, append(benchQuick, "--json", "--mode", "fused", "--wire", "messages", "--svg", svg, "--chart-cpu")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep benchmark.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(rep.Results) != 1 {
		t.Fatalf("%d results", len(rep.Results))
	}
	r := rep.Results[0]
	// No harness serves messages natively: the protocol layer is measured.
	if r.Graph != "anthropic-response" || !strings.Contains(r.Label, "protocol layer") || len(r.Stages) != 3 {
		t.Errorf("graph %s (%s), %d stages", r.Graph, r.Label, len(r.Stages))
	}
	if r.EndToEnd["fused"] == nil || r.EndToEnd["async"] != nil || r.Corpus.Events != 400 {
		t.Errorf("modes %v, events %d", r.Modes, r.Corpus.Events)
	}
	if len(r.Peers) != 1 || r.Peers[0].Name != "anthropic-sdk-go" || !r.Peers[0].Agrees {
		t.Errorf("peers %+v", r.Peers)
	}
	if rep.Machine.CPUs < 1 || rep.Command == "" {
		t.Errorf("machine %+v, command %q", rep.Machine, rep.Command)
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	if text := xmlText(t, data); !strings.Contains(text, "CPU ns per upstream event") || !strings.Contains(text, "anthropic-sdk-go (peer)") {
		t.Errorf("CPU chart text: %s", text)
	}
}

func TestBenchRequestDirection(t *testing.T) {
	code, out, errOut := benchCLI(t, "--direction", "request", "--requests", "4", "--iterations", "2", "--mode", "fused", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep benchmark.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	if r.Out != "request.Shaped" || r.Corpus.Events != 4 || len(r.Peers) != 0 || len(r.Stages) == 0 {
		t.Errorf("request graph result: %s, %d events, %d peers, %d stages", r.Out, r.Corpus.Events, len(r.Peers), len(r.Stages))
	}
	// The shared request set, a directory of JSON files, with a harness.
	code, out, errOut = benchCLI(t, "--direction", "request", "--harness", "minimal", "--corpus", "../../harness/harnesstest/requests", "--iterations", "1", "--mode", "async")
	if code != exitOK {
		t.Fatalf("minimal over the shared requests: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "minimal · chat · request direction") || !strings.Contains(out, "| request.encode | prefix") {
		t.Errorf("output:\n%s", out)
	}
}

func TestBenchRecordedCorpus(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"chat_parallel_tools.sse"} {
		data, err := os.ReadFile(filepath.Join("../../testdata/streams", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"a.sse", "b.sse"} {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	code, out, errOut := benchCLI(t, "--corpus", dir, "--iterations", "2", "--vs", "none", "--mode", "fused")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "2 input(s)") || strings.Contains(out, "openai-go") {
		t.Errorf("output:\n%s", out)
	}
	code, _, errOut = benchCLI(t, "--corpus", filepath.Join(dir, "a.sse"), "--iterations", "1", "--request", "../../harness/harnesstest/requests/tool_history.json")
	if code != exitOK {
		t.Fatalf("one file, planned request: exit %d: %s", code, errOut)
	}
}

func TestBenchBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--duration", "1s", "--iterations", "3"},
		{"--wire", "websocket"},
		{"--mode", "parallel"},
		{"--direction", "sideways"},
		{"--vs", "langchain"},
		{"--vs", "anthropic-sdk-go"}, // not a chat peer
		{"--direction", "request", "--vs", "openai-go"},
		{"--direction", "request", "--request", "x.json"},
		{"--corpus", "/nonexistent/corpus.sse"},
		{"--chunks", "10"},
		{"--harness", "no-such-harness", "--wire", "messages"},
		{"extra-argument"},
		{"--iterations", "-1"},
	} {
		code, _, errOut := benchCLI(t, args...)
		if code != exitUsage || !strings.HasPrefix(errOut, "harnessflow bench") && !strings.Contains(errOut, "Usage") && !strings.Contains(errOut, "invalid") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
	if code, _, errOut := benchCLI(t, "--help"); code != exitOK || !strings.Contains(errOut, "--corpus") {
		t.Errorf("--help: %d %q", code, errOut)
	}
}

// xmlText checks that data is well-formed XML and returns its text.
func xmlText(t *testing.T, data []byte) string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	var b strings.Builder
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return b.String()
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		if cd, ok := tok.(xml.CharData); ok {
			b.Write(cd)
		}
	}
}
