package chatstream

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/streamtest"
)

// handedOut is a SoFar as it was handed out, to check later that its bytes
// never changed.
type handedOut struct {
	view, copy string
}

// checkSoFar checks the SoFar of every text and reasoning delta of one
// stream: it is the item's text so far (the deltas' concatenation, this
// one included); the done item's text is the last one, over the same bytes
// (no copy); and no SoFar handed out changed by the end of the stream.
func checkSoFar(t *testing.T, name string, events []protocol.ResponseEvent) {
	t.Helper()
	texts := map[protocol.EventType]string{}
	last := map[protocol.EventType]string{}
	var kept []handedOut
	keptBytes := 0
	for i, e := range events {
		switch e.Type {
		case protocol.EventOutputTextDelta, protocol.EventReasoningContentDelta:
			want := texts[e.Type] + e.Delta
			if e.SoFar != want {
				t.Fatalf("%s: event %d (%s %q): SoFar %q, want the deltas so far %q", name, i, e.Type, e.Delta, e.SoFar, want)
			}
			texts[e.Type], last[e.Type] = want, e.SoFar
			if keptBytes < 1<<20 {
				kept = append(kept, handedOut{e.SoFar, strings.Clone(e.SoFar)})
				keptBytes += len(e.SoFar)
			}
		case protocol.EventOutputItemDone:
			var kind protocol.EventType
			var text string
			switch it := e.Item.(type) {
			case *protocol.Message:
				kind, text = protocol.EventOutputTextDelta, it.Content[0].Text
			case *protocol.Reasoning:
				kind, text = protocol.EventReasoningContentDelta, it.Content[0].Text
			default:
				continue
			}
			if text != texts[kind] {
				t.Fatalf("%s: done %s text %q, deltas %q", name, e.Item.ItemType(), text, texts[kind])
			}
			if text != "" && unsafe.StringData(text) != unsafe.StringData(last[kind]) {
				t.Errorf("%s: the done %s text is a copy, not the bytes of the last SoFar", name, e.Item.ItemType())
			}
		}
	}
	for i, k := range kept {
		if k.view != k.copy {
			t.Fatalf("%s: SoFar %d changed after it was handed out: %q, was %q", name, i, k.view, k.copy)
		}
	}
}

// Every recorded stream, in both modes and delivered whole, a byte at a
// time and in random reads, carries honest SoFars.
func TestSoFarFixturesAndGoldens(t *testing.T) {
	type input struct {
		name string
		data []byte
		opts Options
	}
	var ins []input
	for _, f := range loadFixtures(t) {
		opts, _ := optionsFor(t, f)
		ins = append(ins, input{"fixture " + f.Name, f.Data, opts})
	}
	for _, gd := range streamtest.LoadGoldens(t, goldenLayout) {
		if !gd.Has("unary") {
			ins = append(ins, input{"golden " + gd.Name, gd.Input, Options{CumulativeArguments: gd.Has("cumulative-arguments")}})
		}
	}
	rng := rand.New(rand.NewPCG(3, 0x50fa))
	deltas := 0
	for _, in := range ins {
		g := pipeline.Must(Graph(in.opts))
		for _, mode := range modes {
			for _, sizes := range [][]int{nil, {1}, streamtest.RandomSizes(rng, len(in.data), 97)} {
				o := streamtest.Run(t, g, in.data, mode, sizes)
				checkSoFar(t, in.name, o.Events)
				for _, e := range o.Events {
					if e.SoFar != "" {
						deltas++
					}
				}
			}
		}
	}
	if deltas == 0 {
		t.Fatal("no delta carried a SoFar")
	}
}

// A long text: the log moves to bigger arrays many times while SoFars of
// every size are out, and none of them changes.
func TestSoFarLongText(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"r\"}}]}\n\n")
	for i := range 3000 {
		sb.WriteString(`data: {"choices":[{"index":0,"delta":{"content":"` + strings.Repeat(string(rune('a'+i%26)), 1+i%300) + `"}}]}` + "\n\n")
		if i%700 == 0 {
			sb.WriteString("data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"more \"}}]}\n\n")
		}
	}
	sb.WriteString("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	for _, mode := range modes {
		o := streamtest.Run(t, pipeline.Must(Graph(Options{})), []byte(sb.String()), mode, []int{4096})
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		checkSoFar(t, mode.String(), o.Events)
		// Keep every SoFar of the text: each must still read as the
		// deltas' concatenation up to it (a log reused or rewritten in
		// place would change the early ones).
		var views []string
		for _, e := range o.Events {
			if e.Type == protocol.EventOutputTextDelta {
				views = append(views, e.SoFar)
			}
		}
		n := 0
		for _, e := range o.Events {
			if e.Type != protocol.EventOutputTextDelta {
				continue
			}
			v := views[n]
			if !strings.HasSuffix(v, e.Delta) || n > 0 && !strings.HasPrefix(v, views[n-1]) {
				t.Fatalf("%s: SoFar %d does not extend the one before with its delta", mode, n)
			}
			n++
		}
	}
}

// Two streams never share a log: the second one's text does not touch
// what the first handed out.
func TestSoFarStreamsApart(t *testing.T) {
	body := func(text string) []byte {
		return []byte(`data: {"choices":[{"index":0,"delta":{"content":"` + text + `"},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
	}
	g := pipeline.Must(Graph(Options{}))
	first := streamtest.Run(t, g, body("first stream"), pipeline.Fused, nil)
	second := streamtest.Run(t, g, body("second"), pipeline.Fused, nil)
	soFar := func(o streamtest.Outcome) string {
		for _, e := range o.Events {
			if e.Type == protocol.EventOutputTextDelta {
				return e.SoFar
			}
		}
		t.Fatal("no text delta")
		return ""
	}
	a, b := soFar(first), soFar(second)
	if a != "first stream" || b != "second" || unsafe.StringData(a) == unsafe.StringData(b) {
		t.Errorf("SoFars %q and %q (shared: %v)", a, b, unsafe.StringData(a) == unsafe.StringData(b))
	}
}

// textLog hands out views that no later append changes, and the views of
// one array share its address.
func TestTextLogViews(t *testing.T) {
	var l textLog
	var kept []handedOut
	var want strings.Builder
	moves := 0
	for i := range 2000 {
		p := []byte(strings.Repeat(string(rune('A'+i%26)), 1+i%50))
		before := cap(l.b)
		d, soFar := l.add(p)
		want.Write(p)
		if d != string(p) || soFar != want.String() {
			t.Fatalf("add %d: delta %q, soFar of %d bytes, want %q and %d", i, d, len(soFar), p, want.Len())
		}
		if cap(l.b) != before {
			moves++
		} else if i > 0 && unsafe.StringData(soFar) != unsafe.StringData(kept[len(kept)-1].view) {
			t.Fatalf("add %d: the log did not move, yet soFar starts elsewhere", i)
		}
		kept = append(kept, handedOut{soFar, strings.Clone(soFar)})
		p[0] = '!' // the caller's bytes are its own
	}
	if moves < 5 {
		t.Fatalf("the log moved %d times; the test wants it to grow", moves)
	}
	for i, k := range kept {
		if k.view != k.copy {
			t.Fatalf("view %d changed", i)
		}
	}
	if l.all() != want.String() {
		t.Error("all() is not the text")
	}
}

// The accumulator alone, without a graph: the SoFar of the refusal and of
// the content of one chunk continue one text.
func TestSoFarContentAndRefusal(t *testing.T) {
	a := NewAccumulateStage()
	var evs []protocol.ResponseEvent
	emit := func(s Step) {
		if s.Kind == StepEvent {
			evs = append(evs, s.Event)
		}
	}
	ctx := context.Background()
	for _, c := range []Chunk{
		{Kind: ChunkData, Choices: []Choice{{Content: [][]byte{[]byte("one "), []byte("two ")}, Refusal: []byte("no")}}},
		{Kind: ChunkData, Choices: []Choice{{Content: [][]byte{[]byte(" three")}, Reasoning: []byte("hm")}}},
		{Kind: ChunkDone},
	} {
		if err := a.Push(ctx, c, emit); err != nil {
			t.Fatal(err)
		}
	}
	checkSoFar(t, "content and refusal", evs)
	var got []string
	for _, e := range evs {
		if e.SoFar != "" {
			got = append(got, e.SoFar)
		}
	}
	want := []string{"one ", "one two ", "one two no", "hm", "one two no three"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("SoFars %q, want %q", got, want)
	}
}
