package streamtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
	"golang.org/x/tools/txtar"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// lines is a toy stream stage: every complete input line is a command,
// "msg" (a message item is added), "text X" (an output_text.delta), "close X"
// (the message is done, with text X), "done" (completed), "done R"
// (completed with finish reason R) or "fail" (a stage error at the end of
// the input). Its bugs can be switched on to show that the checks catch
// them.
type lines struct {
	buf  []byte
	fail bool
	// perRead emits a delta per read, so the output depends on the split.
	perRead bool
	// borrow keeps the reads it was lent instead of copying them.
	borrow  bool
	borrows [][]byte
	// twoTerminals emits a second completed event after "done".
	twoTerminals bool
}

func (l *lines) Push(_ context.Context, in []byte, emit func(protocol.ResponseEvent)) error {
	if l.perRead {
		emit(protocol.TextDelta(fmt.Sprintf("read of %d", len(in))))
	}
	if l.borrow {
		l.borrows = append(l.borrows, in)
		return nil
	}
	l.buf = append(l.buf, in...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return nil
		}
		line := string(l.buf[:i])
		l.buf = l.buf[i+1:]
		switch {
		case line == "msg":
			emit(protocol.Added(&protocol.Message{ID: "m", Role: "assistant"}))
		case strings.HasPrefix(line, "text "):
			emit(protocol.TextDelta(line[5:]))
		case strings.HasPrefix(line, "close "):
			emit(protocol.Done(&protocol.Message{ID: "m", Role: "assistant", Content: []protocol.ContentItem{protocol.OutputText(line[6:])}}))
		case strings.HasPrefix(line, "done "):
			done := protocol.Completed("r", nil)
			done.FinishReason = line[5:]
			emit(done)
		case line == "done":
			emit(protocol.Completed("r", nil))
			if l.twoTerminals {
				emit(protocol.Completed("r", nil))
			}
		case line == "fail":
			l.fail = true
		}
	}
}

func (l *lines) Finish(_ context.Context, emit func(protocol.ResponseEvent)) error {
	if l.fail {
		return errors.New("told to fail")
	}
	for _, b := range l.borrows {
		emit(protocol.TextDelta(string(b)))
	}
	if l.borrow {
		emit(protocol.Completed("r", nil))
	}
	return nil
}

func graph(t testing.TB, bugs lines) *pipeline.Graph {
	t.Helper()
	g, err := pipeline.New("toy", pipeline.NewNode("toy.lines", func() pipeline.Stage[[]byte, protocol.ResponseEvent] {
		l := bugs
		return &l
	}))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// recorder is a testing.TB that records failures instead of reporting them;
// Fatal ends the goroutine, as it does for a real test.
type recorder struct {
	testing.TB
	failed bool
	msgs   []string
}

func (r *recorder) Helper() {}
func (r *recorder) Error(args ...any) {
	r.failed = true
	r.msgs = append(r.msgs, fmt.Sprint(args...))
}
func (r *recorder) Errorf(format string, args ...any) { r.Error(fmt.Sprintf(format, args...)) }
func (r *recorder) Fatal(args ...any)                 { r.Error(args...); runtime.Goexit() }
func (r *recorder) Fatalf(format string, args ...any) { r.Fatal(fmt.Sprintf(format, args...)) }

// fails runs check with a recorder and returns what it reported.
func fails(t *testing.T, check func(tb testing.TB)) []string {
	t.Helper()
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		check(r)
	}()
	<-done
	return r.msgs
}

func mustFail(t *testing.T, what, want string, check func(tb testing.TB)) {
	t.Helper()
	msgs := fails(t, check)
	if len(msgs) == 0 {
		t.Fatalf("%s went unnoticed", what)
	}
	if !strings.Contains(strings.Join(msgs, "\n"), want) {
		t.Fatalf("%s: reported %q, want a message containing %q", what, msgs, want)
	}
}

func TestRunAndReplay(t *testing.T) {
	g := graph(t, lines{})
	data := []byte("text a\ntext bc\ndone\n")
	o := Replay(t, g, data)
	want := []string{`{"type":"output_text.delta","delta":"a"}`, `{"type":"output_text.delta","delta":"bc"}`, `{"type":"completed","response_id":"r"}`}
	if o.Err != nil || strings.Join(o.Lines, "\n") != strings.Join(want, "\n") || len(o.Events) != 3 {
		t.Fatalf("got %s", o)
	}

	failed := Replay(t, g, []byte("text a\nfail\n"))
	if failed.Err == nil || !strings.Contains(failed.ErrText(), "told to fail") || !strings.HasSuffix(failed.String(), "\nrun error: "+failed.ErrText()) {
		t.Fatalf("got %s", failed)
	}
	if (Outcome{}).ErrText() != "" {
		t.Fatal("ErrText of a success")
	}
	AsyncFailures(t, g, []byte("text a\nfail\n"), 20)
	CheckSplit(t, g, data, 4)
	CheckSplit(t, g, data, 7)
}

func TestChecksCanFail(t *testing.T) {
	data := []byte("text a\ntext bc\ndone\n")
	mustFail(t, "a split-dependent stage", "differs from fused/whole", func(tb testing.TB) {
		Replay(tb, graph(t, lines{perRead: true}), data)
	})
	mustFail(t, "a stage keeping borrowed input", "differs from fused/whole", func(tb testing.TB) {
		Replay(tb, graph(t, lines{borrow: true}), data)
	})
	mustFail(t, "a split-dependent stage", "run differs", func(tb testing.TB) {
		CheckSplit(tb, graph(t, lines{perRead: true}), data, 1)
	})
	mustFail(t, "two terminal events", "want exactly one terminal event", func(tb testing.TB) {
		Replay(tb, graph(t, lines{twoTerminals: true}), data)
	})
	mustFail(t, "no terminal event", "want exactly one terminal event", func(tb testing.TB) {
		Replay(tb, graph(t, lines{}), []byte("text a\n"))
	})
	mustFail(t, "a run that does not fail", "want a run error", func(tb testing.TB) {
		AsyncFailures(tb, graph(t, lines{}), data, 1)
	})
}

func TestTerminalContract(t *testing.T) {
	done, delta := protocol.Completed("r", nil), protocol.TextDelta("x")
	boom := errors.New("boom")
	for _, tc := range []struct {
		o    Outcome
		want string
	}{
		{Outcome{Events: []protocol.ResponseEvent{delta, done}}, ""},
		{Outcome{Events: []protocol.ResponseEvent{delta}, Err: boom}, ""},
		{Outcome{Err: boom}, ""},
		{Outcome{Events: []protocol.ResponseEvent{delta, done}, Err: boom}, "run failed (boom) but 1 terminal event(s)"},
		{Outcome{Events: []protocol.ResponseEvent{done, delta}}, "want exactly one terminal event, last; got 1"},
		{Outcome{Events: []protocol.ResponseEvent{done, done}}, "got 2"},
		{Outcome{Events: []protocol.ResponseEvent{delta}}, "got 0"},
	} {
		got := terminalProblem(tc.o)
		if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%v: %q, want %q", tc.o.Events, got, tc.want)
		}
	}
}

func writeArchive(t *testing.T, dir, name, comment string, files ...string) {
	t.Helper()
	arc := &txtar.Archive{Comment: []byte(comment)}
	for i := 0; i < len(files); i += 2 {
		arc.Files = append(arc.Files, txtar.File{Name: files[i], Data: []byte(files[i+1])})
	}
	if err := os.WriteFile(filepath.Join(dir, name+".txtar"), txtar.Format(arc), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestGoldens(t *testing.T) {
	dir := t.TempDir()
	layout := GoldenLayout{Dir: dir, Inputs: []string{"in.txt", "in.json"}, Extras: []string{"opts.json"}}
	writeArchive(t, dir, "a", "plain, not strip-final-newline\n", "in.txt", "text a\ndone\n")
	writeArchive(t, dir, "b", "strip-final-newline\n", "in.json", "text b\ndone\nfail\n", "opts.json", "{}\n",
		WantFile, "stale\n")
	gs := LoadGoldens(t, layout)
	if len(gs) != 2 || gs[0].Name != "a" || gs[1].Name != "b" || !gs[1].Has("strip-final-newline") || gs[0].Has("strip-final-newline") {
		t.Fatalf("loaded %+v", gs)
	}
	if string(gs[1].File("opts.json")) != "{}\n" || gs[1].File("none") != nil {
		t.Fatalf("extra file %q", gs[1].File("opts.json"))
	}
	if string(gs[0].Input) != "text a\ndone\n" || string(gs[1].Input) != "text b\ndone\nfail" || gs[0].Want != nil {
		t.Fatalf("inputs %q %q, want %q", gs[0].Input, gs[1].Input, gs[0].Want)
	}
	graphFor := func(Golden) (*pipeline.Graph, error) { return graph(t, lines{}), nil }
	mustFail(t, "stale goldens", "events differ", func(tb testing.TB) { checkGolden(tb, gs[1], false, graphFor) })
	mustFail(t, "a graph error", "no graph", func(tb testing.TB) {
		checkGolden(tb, gs[0], false, func(Golden) (*pipeline.Graph, error) { return nil, errors.New("no graph") })
	})

	runGoldens(t, gs, true, graphFor)
	gs = LoadGoldens(t, layout)
	if string(gs[0].Want) != "{\"type\":\"output_text.delta\",\"delta\":\"a\"}\n{\"type\":\"completed\",\"response_id\":\"r\"}\n" {
		t.Fatalf("updated want: %q", gs[0].Want)
	}
	if string(gs[1].Want) != "{\"type\":\"output_text.delta\",\"delta\":\"b\"}\n{\"type\":\"completed\",\"response_id\":\"r\"}\n" {
		// The last line has no newline once stripped, so "fail" is never run.
		t.Fatalf("updated want: %q", gs[1].Want)
	}
	if f := gs[1].Archive.Files; len(f) != 3 || f[1].Name != "opts.json" {
		t.Fatalf("update lost files: %v", f)
	}
	RunGoldens(t, gs, graphFor)

	writeArchive(t, dir, "c", "", "in.txt", "done\n", WantFile, `{"type":"completed","response_id":"r"}`+"\n"+`{"run_error":"x"}`+"\n")
	c := LoadGoldens(t, layout)[2]
	mustFail(t, "a missing run error", `run_error`, func(tb testing.TB) { checkGolden(tb, c, false, graphFor) })

	bad := t.TempDir()
	writeArchive(t, bad, "x", "", "in.txt", "", "other", "")
	mustFail(t, "an unexpected file", `unexpected file "other"`, func(tb testing.TB) { LoadGoldens(tb, GoldenLayout{Dir: bad, Inputs: layout.Inputs}) })
	writeArchive(t, bad, "x", "", "in.txt", "", "in.json", "")
	mustFail(t, "two inputs", "2 input files", func(tb testing.TB) { LoadGoldens(tb, GoldenLayout{Dir: bad, Inputs: layout.Inputs}) })
	writeArchive(t, bad, "x", "", WantFile, "")
	mustFail(t, "no input", "0 input files", func(tb testing.TB) { LoadGoldens(tb, GoldenLayout{Dir: bad, Inputs: layout.Inputs}) })
	mustFail(t, "no archives", "no golden archives", func(tb testing.TB) { LoadGoldens(tb, GoldenLayout{Dir: t.TempDir()}) })
}

func writeFixture(t *testing.T, dir, name, data, expected string, bytes int) {
	t.Helper()
	sum := sha256.Sum256([]byte(data))
	exp := fmt.Sprintf(`{"fixture":%q,"bytes":%d,"sha256":%q,"expected":%s}`, name, bytes, hex.EncodeToString(sum[:]), expected)
	if err := os.WriteFile(filepath.Join(dir, name+".sse"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".expect.json"), []byte(exp), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFixtures(t *testing.T) {
	dir := t.TempDir()
	data := "msg\ntext Hi\nclose Hi\ndone stop\n"
	writeFixture(t, dir, "f01_text", data, `{"text":"Hi","terminal":"completed","finish_reason":"stop"}`, len(data))
	fs := LoadFixtures(t, dir)
	if len(fs) != 1 || fs[0].Name != "f01_text" || string(fs[0].Data) != data || fs[0].Expected["text"] != "Hi" || !bytes.Contains(fs[0].Expect, []byte(`"fixture":"f01_text"`)) {
		t.Fatalf("loaded %+v", fs)
	}
	g := graph(t, lines{})
	RunFixtures(t, g, fs)
	CheckTampers(t, g, fs, Tampers{"f01": {
		func(e map[string]any) { e["text"] = "Ho" },
		func(e map[string]any) { e["terminal"] = "failed" },
		func(e map[string]any) { e["unknown"] = 1.0 },
		func(e map[string]any) { e["finish_reason"] = "length" },
		func(e map[string]any) { e["finish_reason"] = nil },
		func(e map[string]any) { e["response_id"] = "x" },
	}})

	mustFail(t, "an unnoticed tamper", "tamper 0 on f01 went unnoticed", func(tb testing.TB) {
		CheckTampers(tb, g, fs, Tampers{"f01": {func(e map[string]any) { e["native_finish_reason"] = "length" }}})
	})
	mustFail(t, "an unknown fixture", "no fixture f02", func(tb testing.TB) { CheckTampers(tb, g, fs, Tampers{"f02": nil}) })
	mustFail(t, "a wrong expectation", `text = "Hi", want "Ho"`, func(tb testing.TB) {
		f := fs[0]
		f.Expected = map[string]any{"text": "Ho"}
		CheckFixture(tb, g, f)
	})
	mustFail(t, "a failing run", "run error", func(tb testing.TB) {
		CheckFixture(tb, g, Fixture{Name: "x", Data: []byte("fail\n")})
	})

	// Top-level response_id, model and replay offsets.
	other := t.TempDir()
	writeFixture(t, other, "f02_top", data, `{"text":"Hi","response_id":"r"},"response_id":"ignored","model":"m","replay":{"split_at_byte_offsets":[1,5,9]}`, len(data))
	f := LoadFixtures(t, other)[0]
	if f.Expected["response_id"] != "r" || f.Expected["model"] != "m" || !slices.Equal(f.SplitAt, []int{1, 5, 9}) {
		t.Fatalf("loaded %+v", f)
	}
	mustFail(t, "a wrong server model", `server_model = "", want "m"`, func(tb testing.TB) { CheckFixture(tb, g, f) })
	// Only the split-at reads cut "sg\nt" out of the stream.
	splitAtRead := func(in any) (any, bool) { return true, string(in.([]byte)) == "sg\nt" }
	mustFail(t, "a spy seeing the split-at reads", "fused/split-at: spied [true], fused/whole: []", func(tb testing.TB) {
		CheckFixture(tb, pipeline.Must(Spy(graph(t, lines{}), "toy.lines", splitAtRead)), f)
	})
	f.SplitAt = nil
	mustFail(t, "a wrong server model", `server_model = "", want "m"`, func(tb testing.TB) {
		CheckFixture(tb, pipeline.Must(Spy(graph(t, lines{}), "toy.lines", splitAtRead)), f)
	})
	if got := SplitAt([]int{3, 2, 5, 10, 12}, 10); !slices.Equal(got.Sizes, []int{3, 2, 5}) || got.Name != "split-at" {
		t.Fatalf("SplitAt: %+v", got)
	}

	edited := t.TempDir()
	writeFixture(t, edited, "f01_text", data, `{}`, len(data)+1)
	mustFail(t, "an edited fixture", "bytes or sha256 differ", func(tb testing.TB) { LoadFixtures(tb, edited) })
	mustFail(t, "no fixtures", "no fixtures", func(tb testing.TB) { LoadFixtures(tb, t.TempDir()) })
}

// TestCheckExpected covers what the stream packages' fixtures do not reach.
func TestCheckExpected(t *testing.T) {
	msg := &protocol.Message{ID: "m", Role: "assistant"}
	events := []protocol.ResponseEvent{
		protocol.TextDelta("early"),
		protocol.Added(msg),
		protocol.TextDelta("Hi"),
		protocol.Done(&protocol.Message{ID: "m", Role: "assistant", Content: []protocol.ContentItem{{Type: "output_text", Text: "Ho"}}}),
		protocol.Failed(&protocol.StreamError{Kind: protocol.ErrKindTruncated, Message: "cut"}),
	}
	errs := CheckExpected(map[string]any{
		"terminal":             "eof_without_terminal",
		"error":                map[string]any{"kind": "upstream_truncated", "message": "cut", "bogus": 1.0},
		"items":                []any{map[string]any{"type": "message", "id": "m"}},
		"native_finish_reason": "ignored",
		"finish_reason":        nil,
	}, events)
	want := []string{
		"output_text.delta before any message item was added",
		`done message text "Ho" differs from its deltas "Hi"`,
		"error.bogus is not checked by this test",
	}
	if strings.Join(errs, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(errs, "\n"), strings.Join(want, "\n"))
	}
}

func TestSpy(t *testing.T) {
	pass := pipeline.StageNode("toy.pass", pipeline.Map(func(e protocol.ResponseEvent) protocol.ResponseEvent { return e }))
	g, err := graph(t, lines{}).Append(pass)
	if err != nil {
		t.Fatal(err)
	}
	deltas := pipeline.Must(Spy(g, "toy.pass", func(in any) (any, bool) {
		e := in.(protocol.ResponseEvent)
		return e.Delta, e.Type == protocol.EventOutputTextDelta
	}))
	if o := Replay(t, deltas, []byte("text a\ntext b\ndone stop\n")); !slices.Equal(o.Spied, []any{"a", "b"}) {
		t.Fatalf("spied %v", o.Spied)
	}
	// A failed run: every replay spied a prefix of the fused/whole run's.
	if o := Replay(t, deltas, []byte("text a\nfail\n")); o.Err == nil || !slices.Equal(o.Spied, []any{"a"}) {
		t.Fatalf("spied %v, error %v", o.Spied, o.Err)
	}
	// Outside this package's runs a spy records nothing, and costs nothing.
	if err := pipeline.Run(context.Background(), deltas, &chunkSource{data: []byte("text a\ndone\n")}, &collector{}); err != nil {
		t.Fatal(err)
	}
	mustFail(t, "spied values that depend on the reads", "spied", func(tb testing.TB) {
		Replay(tb, pipeline.Must(Spy(g, "toy.lines", func(in any) (any, bool) { return len(in.([]byte)), true })), []byte("text a\ndone\n"))
	})
	if _, err := Spy(g, "toy.none", nil); err == nil || !strings.Contains(err.Error(), "toy.none") {
		t.Fatalf("spy on a missing node: %v", err)
	}
}

func TestCheckExpectedToolCalls(t *testing.T) {
	args := `{"path":"a.go","content":"héllo"}`
	sum := sha256.Sum256([]byte(args))
	call := &protocol.FunctionCall{ID: "fc", CallID: "c1", Name: "write", Arguments: args,
		Extra: protocol.Extra{ProviderMetadataKey: json.RawMessage(`{"google":{"sig":"s"}}`)}}
	events := []protocol.ResponseEvent{
		protocol.Added(&protocol.Reasoning{ID: "rs"}),
		protocol.ReasoningDelta("think", 0),
		protocol.Done(&protocol.Reasoning{ID: "rs", Content: []protocol.ReasoningContent{{Type: protocol.ReasoningTypeText, Text: "thought"}}}),
		protocol.Added(&protocol.Message{ID: "m", Role: "assistant"}),
		protocol.Done(call),
		protocol.Done(&protocol.CustomToolCall{CallID: "c2", Name: "apply_patch", Input: "*** Begin"}),
		protocol.Completed("r", nil),
	}
	good := map[string]any{
		"reasoning": map[string]any{"text": "think", "source_field": "reasoning_content"},
		"tool_calls": []any{
			map[string]any{"id": "c1", "arguments_len_bytes": float64(len(args)), "arguments_sha256": hex.EncodeToString(sum[:]),
				"arguments_prefix": `{"path":`, "decoded_content_len_runes": 5.0, "provider_metadata": map[string]any{"google": map[string]any{"sig": "s"}}},
			map[string]any{"id": "c2", "kind": "custom", "arguments_len_bytes": 9.0, "arguments_prefix": "***"},
		},
		"partial_tool_calls": []any{map[string]any{"id": "c9", "name": "read"}},
		"finish_reason":      nil,
	}
	want := []string{
		`done reasoning text "thought" differs from its deltas "think"`,
		`message item "m" was added but is not done on a completed stream`,
	}
	if errs := CheckExpected(good, events); strings.Join(errs, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(errs, "\n"), strings.Join(want, "\n"))
	}
	for i, edit := range []func(e map[string]any){
		func(e map[string]any) { ToolCall(e, 0)["arguments_len_bytes"] = 1.0 },
		func(e map[string]any) { ToolCall(e, 0)["arguments_sha256"] = "00" },
		func(e map[string]any) { ToolCall(e, 0)["arguments_prefix"] = "{}" },
		func(e map[string]any) { ToolCall(e, 0)["decoded_content_len_runes"] = 6.0 },
		func(e map[string]any) { ToolCall(e, 0)["provider_metadata"] = map[string]any{} },
		func(e map[string]any) { ToolCall(e, 1)["arguments_len_bytes"] = 8.0 },
		func(e map[string]any) { e["partial_tool_calls"] = []any{map[string]any{"id": "c1"}} },
		func(e map[string]any) {
			e["partial_tool_calls"] = []any{map[string]any{"id": "c9", "name": "apply_patch"}}
		},
		func(e map[string]any) { e["finish_reason"] = "stop" },
		func(e map[string]any) { e["response_id"] = "x" },
		func(e map[string]any) { e["reasoning"].(map[string]any)["bogus"] = 1.0 },
	} {
		exp := deepCopy(t, good)
		edit(exp)
		if errs := CheckExpected(exp, events); len(errs) <= len(want) {
			t.Errorf("edit %d went unnoticed", i)
		}
	}
}

func TestCheckExpectedFailures(t *testing.T) {
	failed := protocol.Failed(&protocol.StreamError{Kind: protocol.ErrKindUpstream, Type: "server_error"})
	failed.ResponseID = "r"
	events := []protocol.ResponseEvent{failed}
	errs := CheckExpected(map[string]any{
		"finish_reason": "error",
		"response_id":   "r",
		"error":         map[string]any{"type": "server_error", "code": nil, "message": nil},
	}, events)
	// The message is null in the expectation, but a failure must say what
	// went wrong.
	if strings.Join(errs, "\n") != "failed event without an error message" {
		t.Fatalf("got %q", errs)
	}
	failed.Error.Code, failed.Error.Message = "x", "m"
	errs = CheckExpected(map[string]any{"error": map[string]any{"code": nil}, "finish_reason": nil, "response_id": "q"}, events)
	want := []string{`error.code = x, want none`, `finish_reason = "error", want ""`, `terminal response_id = "r", want "q"`}
	if strings.Join(errs, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(errs, "\n"), strings.Join(want, "\n"))
	}
	if errs := CheckExpected(map[string]any{"response_id": "r"}, nil); len(errs) != 1 {
		t.Fatalf("no terminal event: %q", errs)
	}
}
