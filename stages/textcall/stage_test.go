package textcall

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/chatstream"
)

// xtest is a format only these tests use: <<xtest:NAME>>{json}<</xtest>>,
// with the arguments streamed as they come.
func init() {
	Register(Format{
		Name:    "xtest",
		Summary: "test-only format: <<xtest:NAME>>{json}<</xtest>>",
		New:     func(Config) Parser { return &xtestParser{} },
		Starts:  []string{"<<xtest:"},
	})
}

type xtestParser struct {
	held  string
	state int // 0 text, 1 name, 2 args
	name  string
	raw   string // the markup so far, for Close
}

const (
	xtestOpen  = "<<xtest:"
	xtestName  = ">>"
	xtestClose = "<</xtest>>"
)

func (p *xtestParser) FormatName() string { return "xtest" }

func (p *xtestParser) Quiet(s string) bool {
	return p.state == 0 && p.held == "" && !strings.Contains(s, "<")
}

func (p *xtestParser) Feed(out []Event, s string) []Event {
	buf := p.held + s
	p.held = ""
	for buf != "" {
		switch p.state {
		case 0:
			i := strings.Index(buf, xtestOpen)
			if i < 0 {
				k := HeldTail(buf, xtestOpen)
				out = AppendText(out, buf[:len(buf)-k])
				p.held = buf[len(buf)-k:]
				return out
			}
			out = AppendText(out, buf[:i])
			p.raw, p.state, buf = xtestOpen, 1, buf[i+len(xtestOpen):]
		case 1:
			i := strings.Index(buf, xtestName)
			if i < 0 {
				p.held = buf
				return out
			}
			p.name, p.raw = buf[:i], p.raw+buf[:i+len(xtestName)]
			out = append(out, Event{Kind: CallBegin, Name: p.name})
			p.state, buf = 2, buf[i+len(xtestName):]
		case 2:
			i := strings.Index(buf, xtestClose)
			if i < 0 {
				k := HeldTail(buf, xtestClose)
				out = AppendArgs(out, buf[:len(buf)-k])
				p.raw += buf[:len(buf)-k]
				p.held = buf[len(buf)-k:]
				return out
			}
			out = AppendArgs(out, buf[:i])
			out = append(out, Event{Kind: CallEnd})
			p.state, p.raw, buf = 0, "", buf[i+len(xtestClose):]
		}
	}
	return out
}

func (p *xtestParser) Close(out []Event) []Event {
	if p.state == 0 {
		return AppendText(out, p.held)
	}
	out = append(out, Event{Kind: Malformed, Text: "unterminated xtest call"})
	return AppendText(out, p.raw+p.held)
}

// sseOf returns a chat stream whose content arrives in the given pieces,
// then finish and [DONE].
func sseOf(pieces ...string) string {
	var b strings.Builder
	for _, p := range pieces {
		c, _ := json.Marshal(p)
		fmt.Fprintf(&b, "data: {\"id\":\"chatcmpl-1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%s}}]}\n\n", c)
	}
	b.WriteString("data: {\"id\":\"chatcmpl-1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	return b.String()
}

// runChat runs body through the chat response graph, with chat.textcalls
// for format ("" for none), read in pieces of size bytes (0: whole), and
// returns the events as JSON lines.
func runChat(t *testing.T, format string, kinds protocol.ToolKinds, body string, size int, mode pipeline.Mode) []string {
	t.Helper()
	g, err := chatstream.Graph(chatstream.Options{ToolKinds: kinds})
	if err != nil {
		t.Fatal(err)
	}
	if format != "" {
		n, err := Node(Options{Format: format})
		if err != nil {
			t.Fatal(err)
		}
		if g, err = g.InsertBefore(chatstream.AccumulateName, n); err != nil {
			t.Fatal(err)
		}
	}
	var lines []string
	src := pipeline.SourceFunc[[]byte](func(_ context.Context, emit func([]byte) error) error {
		data := []byte(body)
		for len(data) > 0 {
			n := len(data)
			if size > 0 {
				n = min(size, n)
			}
			piece := append([]byte(nil), data[:n]...)
			if err := emit(piece); err != nil {
				return err
			}
			if mode == pipeline.Fused { // a stage keeping lent bytes is caught
				for i := range piece {
					piece[i] = 0xA5
				}
			}
			data = data[n:]
		}
		return nil
	})
	err = pipeline.Run(context.Background(), g, src, pipeline.SinkFunc[protocol.ResponseEvent](func(ev protocol.ResponseEvent) error {
		b, err := ev.MarshalJSON()
		lines = append(lines, string(b))
		return err
	}), pipeline.WithMode(mode))
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// runAll runs body whole, byte by byte and in 7-byte reads, fused and
// async, checks that all agree, and returns the events.
func runAll(t *testing.T, format string, kinds protocol.ToolKinds, body string) []string {
	t.Helper()
	want := runChat(t, format, kinds, body, 0, pipeline.Fused)
	for _, mode := range []pipeline.Mode{pipeline.Fused, pipeline.Async} {
		for _, size := range []int{0, 1, 7} {
			if d := cmp.Diff(want, runChat(t, format, kinds, body, size, mode)); d != "" {
				t.Fatalf("mode %v, reads of %d bytes differ (-whole +this):\n%s", mode, size, d)
			}
		}
	}
	return want
}

func TestStagePlainTextIsUnchanged(t *testing.T) {
	// Text with no byte that can start a marker: the same events.
	bodies := []string{
		sseOf("Hello", ", world. ", "x = y and a: b"),
		sseOf("  ", "\n", "plain", "\n\n- list\n", "héllo ｜ wörld"),
	}
	for i, body := range bodies {
		off := runAll(t, "", nil, body)
		for _, format := range []string{Off, Auto, "xtest"} {
			if d := cmp.Diff(off, runAll(t, format, nil, body)); d != "" {
				t.Errorf("body %d, format %s changes plain text (-none +format):\n%s", i, format, d)
			}
		}
	}
	// Text that only looks like markup: the same message (the deltas may
	// be cut elsewhere while a tail that could start a marker is held).
	looks := []string{
		sseOf("Use <tool_call> tags? No: ", "<notatag> and <<xtest", " is not closed"),
		sseOf("x < y and [a] {b}", " <thin", "king> [TOOL_CALLS? ", "<|tool"),
	}
	for i, body := range looks {
		off := runAll(t, "", nil, body)
		for _, format := range []string{Off, Auto, "xtest"} {
			got := runAll(t, format, nil, body)
			if a, b := off[len(off)-2], got[len(got)-2]; a != b {
				t.Errorf("body %d, format %s: message differs:\n none: %s\n  got: %s", i, format, a, b)
			}
		}
	}
}

func TestStageRecoversCalls(t *testing.T) {
	kinds := protocol.ToolKinds{"apply_patch": {Kind: protocol.KindCustom}}
	body := sseOf("Let me look.", "<<xt", "est:exec_command>>{\"cmd\":", "\"ls\"}<</xt", "est>> and <<xtest:apply_patch>>{\"input\":\"*** Begin Patch\\n\"}<</xtest>>", " done")
	for _, format := range []string{Auto, "xtest"} {
		got := runAll(t, format, kinds, body)
		want := []string{
			`{"type":"server_model","model":"m"}`,
			`{"type":"created"}`,
			`{"type":"output_item.added","item":{"type":"message","id":"chat-message-1","role":"assistant","content":[{"type":"output_text","text":""}]}}`,
			`{"type":"output_text.delta","delta":"Let me look."}`,
			`{"type":"output_text.delta","delta":" and "}`,
			`{"type":"output_text.delta","delta":" done"}`,
			`{"type":"output_item.done","item":{"type":"message","id":"chat-message-1","role":"assistant","content":[{"type":"output_text","text":"Let me look. and  done"}]}}`,
			`{"type":"output_item.done","item":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"ls\"}","call_id":"call_chatcmpl-1_0"}}`,
			`{"type":"output_item.done","item":{"type":"custom_tool_call","call_id":"call_chatcmpl-1_1","name":"apply_patch","input":"*** Begin Patch\n"}}`,
			`{"type":"completed","response_id":"chatcmpl-1","finish_reason":"tool_calls"}`,
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("format %s (-want +got):\n%s", format, d)
		}
	}
}

func TestStageUnterminatedMarkupIsGivenBack(t *testing.T) {
	body := sseOf("Start ", "<<xtest:exec_command>>{\"cmd\":\"l")
	off := runAll(t, "", nil, body)
	observed := map[string]int{}
	g, _ := chatstream.Graph(chatstream.Options{})
	n, _ := Node(Options{Format: Auto, Observe: func(format, outcome string) { observed[format+"/"+outcome]++ }})
	g, _ = g.InsertBefore(chatstream.AccumulateName, n)
	got := runAll(t, Auto, nil, body)
	// The text arrives in other deltas, but the message is the same.
	if last := func(l []string) string { return l[len(l)-2] }; last(off) != last(got) {
		t.Errorf("message differs:\n none: %s\n auto: %s", last(off), last(got))
	}
	if err := pipeline.Run(context.Background(), g, pipeline.SourceFunc[[]byte](func(_ context.Context, emit func([]byte) error) error {
		return emit([]byte(body))
	}), pipeline.SinkFunc[protocol.ResponseEvent](func(protocol.ResponseEvent) error { return nil })); err != nil {
		t.Fatal(err)
	}
	if observed["xtest/malformed"] != 1 {
		t.Errorf("observed %v, want one xtest/malformed", observed)
	}
}

func TestStageRealToolCallsWin(t *testing.T) {
	body := `data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"<<xtest:a>>{}<</xtest>> then "}}]}

data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"<<xtest:b>>{}<</xtest>>","tool_calls":[{"index":0,"id":"call_real","type":"function","function":{"name":"real","arguments":"{}"}}]}}]}

data: {"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]

`
	got := strings.Join(runAll(t, Auto, nil, body), "\n")
	for _, want := range []string{
		`"name":"a","arguments":"{}","call_id":"call_c_0"`, // recovered before the real call
		`"name":"real","arguments":"{}","call_id":"call_real"`,
		`"text":" then <<xtest:b>>{}<</xtest>>"`, // left as text
	} {
		if !strings.Contains(got, want) {
			t.Errorf("events lack %s:\n%s", want, got)
		}
	}
}

func TestStageThinkInContent(t *testing.T) {
	body := sseOf("<thi", "nk>I should list.", "</think>\n\nListing.")
	got := runAll(t, Auto, nil, body)
	joined := strings.Join(got, "\n")
	for _, want := range []string{
		`{"type":"reasoning_content.delta","delta":"I should list.","content_index":0}`,
		`"content":[{"type":"output_text","text":"Listing."}]`,
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("events lack %s:\n%s", want, joined)
		}
	}
}

func TestNodeRefusesUnknownFormat(t *testing.T) {
	_, err := Node(Options{Format: "hermez"})
	if err == nil || !strings.Contains(err.Error(), `unknown tool format "hermez"`) || !strings.Contains(err.Error(), "xtest") {
		t.Fatalf("err = %v", err)
	}
}
