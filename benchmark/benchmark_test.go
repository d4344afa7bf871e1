package benchmark

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/chatstream"
	"github.com/harnessflow/harnessflow/stages/request"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// quick runs every variant twice: enough to exercise every path, fast.
var quick = Options{Iterations: 2}

func TestGenerate(t *testing.T) {
	for _, wire := range []string{"chat", "messages", "responses"} {
		for _, k := range []int{MinChunks, 1234, DefaultChunks} {
			c, err := Generate(wire, k)
			if err != nil {
				t.Fatalf("%s %d: %v", wire, k, err)
			}
			again, _ := Generate(wire, k)
			if !bytes.Equal(c.Inputs[0], again.Inputs[0]) {
				t.Errorf("%s %d: not deterministic", wire, k)
			}
			if n := CountSSEEvents(c.Inputs[0]); n != k || c.Events != k {
				t.Errorf("%s %d: %d SSE events (Events %d)", wire, k, n, c.Events)
			}
			if w := c.Expect[0]; w.Text == "" || w.Reasoning == "" || len(w.Calls) == 0 {
				t.Errorf("%s %d: expected result lacks text, reasoning or calls: %+v", wire, k, w)
			}
		}
	}
	if _, err := Generate("chat", MinChunks-1); err == nil {
		t.Error("too few chunks: no error")
	}
	if _, err := Generate("websocket", 1000); err == nil || !strings.Contains(err.Error(), "unknown wire") {
		t.Errorf("unknown wire: %v", err)
	}
	if got := GenerateWires(); len(got) != 3 {
		t.Errorf("GenerateWires() = %v, want the three built-in wires", got)
	}
}

// TestGeneratedIsTheBenchCorpus pins the default generated streams to the
// corpora of `go test ./bench` (chatCorpus, anthCorpus in bench/), whose
// SHA-256 these are, so that `harnessflow bench` and the Go benchmarks
// measure the same bytes. If bench/ changes its corpus, both must change.
func TestGeneratedIsTheBenchCorpus(t *testing.T) {
	for wire, want := range map[string]string{
		"chat":     "27329aea03dda3561af4eb1555190adf2ffb248d2017ab5a6772d70045ade908",
		"messages": "61b260537b5b5a2c7392e5c588319aafd7f8fdcd1bbf6e4fabbf874c5894d212",
	} {
		c, err := Generate(wire, DefaultChunks)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(c.Inputs[0])
		if got := hex.EncodeToString(sum[:]); got != want {
			t.Errorf("%s: sha256 %s, want %s (the bench corpus)", wire, got, want)
		}
	}
}

func TestGraphRequestDirection(t *testing.T) {
	c, err := GenerateRequests(6)
	if err != nil {
		t.Fatal(err)
	}
	if c.Events != 6 || len(c.Inputs) != 6 {
		t.Fatalf("corpus %d events, %d inputs", c.Events, len(c.Inputs))
	}
	g, err := request.NewChatGraph(request.Options{IncludeUsage: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Graph(context.Background(), g, c, quick)
	if err != nil {
		t.Fatal(err)
	}
	if r.Out != "request.Shaped" || r.Corpus.Events != 6 || len(r.Stages) != g.Len() {
		t.Fatalf("result %s, %d events, %d stages", r.Out, r.Corpus.Events, len(r.Stages))
	}
	for _, st := range r.Stages {
		// Request stages edit the *request.Shaping they get: no replay.
		if st.Method != MethodPrefix || st.Note == "" {
			t.Errorf("%s: method %s, note %q", st.Node, st.Method, st.Note)
		}
	}
	if r.Output == nil || r.Output.Outputs != 1 {
		t.Errorf("output %+v", r.Output)
	}
}

// mark is a user element type, declared with Type.
type mark struct {
	n    int
	data []byte
}

// TestReplayFallback: a stage that edits its input in place cannot be
// measured by replaying that input; Graph notices and uses the prefix.
func TestReplayFallback(t *testing.T) {
	c, _ := Generate("chat", 300)
	chat, _ := chatstream.Graph(chatstream.Options{})
	editor := pipeline.StageNode("user.edit", pipeline.Func[[]byte, mark](func(_ context.Context, b []byte, emit func(mark)) error {
		orig := bytes.Clone(b)
		b[0]++ // edits the chunk it was given
		emit(mark{n: int(b[0]), data: orig})
		return nil
	}))
	back := pipeline.StageNode("user.back", pipeline.Func[mark, []byte](func(_ context.Context, m mark, emit func([]byte)) error {
		emit(m.data)
		return nil
	}))
	g, err := chat.Prepend(editor, back)
	if err != nil {
		t.Fatal(err)
	}
	// The undeclared type is an error that says what to do.
	if _, err := Graph(context.Background(), g, c, quick); err == nil || !strings.Contains(err.Error(), "benchmark.Type[benchmark.mark]()") {
		t.Fatalf("undeclared type: %v", err)
	}
	opts := quick
	opts.Types = []ElemType{Type[mark]()}
	opts.Modes = []pipeline.Mode{pipeline.Fused}
	r, err := Graph(context.Background(), g, c, opts)
	if err != nil {
		t.Fatal(err)
	}
	if st := r.Stages[0]; st.Method != MethodPrefix || !strings.Contains(st.Note, "another output") {
		t.Errorf("user.edit: method %s, note %q", st.Method, st.Note)
	}
	if st := r.Stages[1]; st.Method != MethodReplay {
		t.Errorf("user.back: method %s, note %q", st.Method, st.Note)
	}
	// With EndToEndOnly only the output type matters.
	opts.Types = nil
	opts.EndToEndOnly = true
	if r, err := Graph(context.Background(), g, c, opts); err != nil || r.Stages != nil || r.Source != nil {
		t.Errorf("end to end only: %v, %+v", err, r)
	}
}

func TestGraphErrors(t *testing.T) {
	g, _ := chatstream.Graph(chatstream.Options{})
	ctx := context.Background()
	if _, err := Graph(ctx, g, Corpus{}, quick); !errors.Is(err, errNoInputs) {
		t.Errorf("empty corpus: %v", err)
	}
	if _, err := Graph(ctx, nil, Corpus{Inputs: [][]byte{nil}}, quick); err == nil {
		t.Error("nil graph: no error")
	}
	if _, err := Graph(ctx, g, Corpus{Name: "x", Inputs: [][]byte{[]byte(": comment only\n\n")}}, quick); err == nil || !strings.Contains(err.Error(), "no events") {
		t.Errorf("no events: %v", err)
	}
	// A corpus that does not give what it expects.
	c, _ := Generate("chat", 300)
	c.Expect[0].Text += "!"
	if _, err := Graph(ctx, g, c, quick); err == nil || !strings.Contains(err.Error(), "expected result") {
		t.Errorf("wrong expectation: %v", err)
	}
	// A request graph over bytes that are not a request.
	rg, _ := request.NewChatGraph(request.Options{})
	if _, err := Graph(ctx, rg, Corpus{Inputs: [][]byte{[]byte("data: x\n\n")}}, quick); err == nil {
		t.Error("bad request corpus: no error")
	}
	// Cancelled.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	c, _ = Generate("chat", 300)
	if _, err := Graph(cctx, g, c, quick); err == nil {
		t.Error("cancelled: no error")
	}
}

func TestLoadCorpus(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("b.sse", "data: {\"b\":1}\n\ndata: [DONE]\n\n")
	write("a.sse", "event: x\ndata: 1\n\nevent: y\ndata: 2\n\n")
	write("notes.txt", "ignored")
	write(".hidden.sse", "ignored")
	c, err := LoadCorpus(dir, ".sse")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Inputs) != 2 || !bytes.HasPrefix(c.Inputs[0], []byte("event: x")) {
		t.Fatalf("inputs %q", c.Inputs)
	}
	if n := CountSSEEvents(c.Inputs[0]) + CountSSEEvents(c.Inputs[1]); n != 3 {
		t.Errorf("%d events, want 3 ([DONE] not counted)", n)
	}
	one, err := LoadCorpus(filepath.Join(dir, "notes.txt"))
	if err != nil || len(one.Inputs) != 1 {
		t.Errorf("one file: %v %v", one, err)
	}
	if _, err := LoadCorpus(dir, ".json"); err == nil {
		t.Error("no matching files: no error")
	}
	if _, err := LoadCorpus(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing path: no error")
	}
}

func TestSummaryDiff(t *testing.T) {
	want := &Summary{Text: "hi", Reasoning: "r", Calls: []Call{{"c1", "f", "{}"}}, TotalTokens: 3, InputTokens: 1, OutputTokens: 2}
	same := *want
	if d := want.Diff(&same, true, true); d != "" {
		t.Errorf("same: %s", d)
	}
	for name, got := range map[string]*Summary{
		"text":      {Text: "ho", Reasoning: "r", Calls: want.Calls},
		"reasoning": {Text: "hi", Reasoning: "x", Calls: want.Calls},
		"calls":     {Text: "hi", Reasoning: "r"},
		"call":      {Text: "hi", Reasoning: "r", Calls: []Call{{"c1", "f", "{ }"}}},
		"usage":     {Text: "hi", Reasoning: "r", Calls: want.Calls, TotalTokens: 4},
	} {
		if d := want.Diff(got, true, true); d == "" {
			t.Errorf("%s: no difference found", name)
		}
	}
	if d := want.Diff(&Summary{Text: "hi", Calls: want.Calls}, false, false); d != "" {
		t.Errorf("without reasoning and usage: %s", d)
	}
	if d := want.Diff(nil, false, false); d == "" {
		t.Error("nil: no difference")
	}
}

func TestSummarySink(t *testing.T) {
	s := &summarySink{}
	for _, ev := range []protocol.ResponseEvent{
		{Type: protocol.EventOutputItemDone, Item: &protocol.Message{Content: []protocol.ContentItem{{Type: "output_text", Text: "a"}, {Type: "output_text", Text: "b"}}}},
		{Type: protocol.EventOutputItemDone, Item: &protocol.CustomToolCall{CallID: "c", Name: "apply_patch", Input: "x"}},
		{Type: protocol.EventFailed, Error: &protocol.StreamError{Message: "boom"}},
	} {
		if err := s.Accept(ev); err != nil {
			t.Fatal(err)
		}
	}
	if s.s.Text != "ab" || len(s.s.Calls) != 1 || s.s.Calls[0].Arguments != "x" || s.s.Failed != "boom" || s.s.Outputs != 3 {
		t.Errorf("summary %+v", s.s)
	}
}

func TestMachine(t *testing.T) {
	m := ReadMachine()
	if m.CPUs < 1 || m.GoVersion == "" || !strings.Contains(m.String(), m.OS) {
		t.Errorf("machine %+v", m)
	}
	for _, tt := range []struct {
		before, after string
		loaded        bool
	}{
		{"0.50 0.40 0.30", "1.90 0.50 0.40", false},
		{"2.50 0.40 0.30", "", true},
		{"0.10 0.10 0.10", "3.00 1.00 1.00", true},
		{"", "", false},
	} {
		m := Machine{CPUs: 2, LoadBefore: tt.before, LoadAfter: tt.after}
		if m.Loaded() != tt.loaded {
			t.Errorf("%+v: Loaded %v", m, m.Loaded())
		}
	}
}
