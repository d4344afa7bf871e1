package responses_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/chatstream"
	"github.com/harnessflow/harnessflow/wire/responses"
)

// soFarMode says how withSoFar sets the SoFar of the deltas.
type soFarMode int

const (
	soFarHonest      soFarMode = iota // a view over an append-only buffer per item and channel
	soFarFresh                        // the same text, a new copy every time
	soFarWrongPrefix                  // a byte of the text before the delta changed (same length)
	soFarWrongSuffix                  // a byte of the delta changed (same length)
	soFarLying                        // mixed: those, other bytes, wrong lengths, stale ones
)

var soFarModes = []soFarMode{soFarHonest, soFarFresh, soFarWrongPrefix, soFarWrongSuffix, soFarLying}

func (m soFarMode) String() string {
	return [...]string{"honest", "fresh", "wrong-prefix", "wrong-suffix", "lying"}[m]
}

// withSoFar returns evs with a SoFar on every delta, as a producer keeping
// one append-only buffer per delta channel (kind, index, item) and
// starting new ones with every item added or done would set it, or (mode)
// a copy of that, or a corruption of it chosen by rng.
func withSoFar(evs []protocol.ResponseEvent, mode soFarMode, rng *rand.Rand) []protocol.ResponseEvent {
	out := make([]protocol.ResponseEvent, len(evs))
	logs := map[string]*[]byte{}
	var prev string
	for i, ev := range evs {
		out[i] = ev
		var ch string
		switch ev.Type {
		case protocol.EventOutputItemAdded, protocol.EventOutputItemDone:
			logs = map[string]*[]byte{} // new buffers: never b[:0]
			continue
		case protocol.EventOutputTextDelta:
			ch = "text"
		case protocol.EventReasoningContentDelta:
			ch = "c" + strconv.Itoa(ev.ContentIndex)
		case protocol.EventReasoningSummaryDelta:
			ch = "s" + strconv.Itoa(ev.SummaryIndex)
		case protocol.EventToolCallInputDelta:
			ch = "tool " + ev.ItemID + " " + ev.CallID
		default:
			continue
		}
		if ev.Delta == "" {
			continue
		}
		b := logs[ch]
		if b == nil {
			b = new([]byte)
			logs[ch] = b
		}
		*b = append(*b, ev.Delta...)
		soFar := unsafe.String(&(*b)[0], len(*b))
		switch mode {
		case soFarFresh:
			soFar = strings.Clone(soFar)
		case soFarWrongPrefix:
			soFar = lie(soFar, ev.Delta, prev, 0, rng)
		case soFarWrongSuffix:
			soFar = lie(soFar, ev.Delta, prev, 1, rng)
		case soFarLying:
			soFar = lie(soFar, ev.Delta, prev, rng.IntN(8), rng)
		}
		out[i].SoFar, prev = soFar, soFar
	}
	return out
}

// lie returns a SoFar for delta that is not the text so far followed by
// delta, in one of eight ways (the last, and a wrong prefix before there
// is one: it is).
func lie(soFar, delta, prev string, how int, rng *rand.Rand) string {
	flip := func(s string, i int) string {
		b := []byte(s)
		b[i] ^= 0x20
		return string(b)
	}
	n := len(soFar) - len(delta)
	switch how {
	case 0:
		if n > 0 {
			return flip(soFar, rng.IntN(n)) // wrong prefix, same length
		}
		return soFar // no prefix yet
	case 1:
		return flip(soFar, n+rng.IntN(len(delta))) // wrong suffix, same length
	case 2:
		return soFar + "x"
	case 3:
		return soFar[1:]
	case 4:
		return prev // stale
	case 5:
		return strings.Repeat("*", len(soFar)) // same length, other bytes
	case 6:
		return delta + soFar[len(delta):] // the delta moved to the front
	}
	return soFar // sometimes right
}

// writeNoFail writes evs and returns the stream (a writer error is part of
// the output, for comparing).
func writeNoFail(evs []protocol.ResponseEvent) []byte {
	var buf bytes.Buffer
	w := responses.NewWriter(&buf, fixedOptions)
	for _, ev := range evs {
		if err := w.Accept(ev); err != nil {
			buf.WriteString("\nerror: " + err.Error())
			break
		}
	}
	return buf.Bytes()
}

// The writer goldens come out byte for byte the same whatever the SoFars:
// honest, copied or lying.
func TestWriterGoldenWithSoFar(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "writer", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden archives (err %v)", err)
	}
	for _, p := range paths {
		arc, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var in, want []byte
		for _, f := range arc.Files {
			switch f.Name {
			case "events.jsonl":
				in = f.Data
			case "want.sse":
				want = f.Data
			}
		}
		evs := decodeEvents(t, p, in)
		for _, mode := range soFarModes {
			for seed := range uint64(4) {
				got := writeSSE(t, withSoFar(evs, mode, rand.New(rand.NewPCG(seed, 1))))
				if diff := cmp.Diff(string(want), string(got)); diff != "" {
					t.Fatalf("%s with %s SoFars (seed %d): SSE differs (-want +got):\n%s", filepath.Base(p), mode, seed, diff)
				}
				if mode == soFarHonest || mode == soFarFresh {
					break
				}
			}
		}
	}
}

// FuzzWriterSoFar: whatever the events and whatever their SoFars claim,
// the stream is the one written without SoFars.
func FuzzWriterSoFar(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}, uint64(1))
	f.Add([]byte{5, 0, 0, 6, 2, 2, 7, 9, 10, 13}, uint64(2))
	f.Add([]byte{3, 4, 3, 1, 8, 11, 12, 2, 14}, uint64(3))
	f.Add([]byte{0, 0, 1, 0, 0, 0x11, 0x11, 0, 7, 7, 0x17, 0, 13, 0}, uint64(4))
	f.Add([]byte{4, 0, 0, 5, 1, 1, 0, 0, 8, 9}, uint64(5))
	f.Add([]byte{0, 0, 0, 1, 1, 1, 2, 2}, uint64(6)) // only implicit items: the writer's texts show
	f.Fuzz(func(t *testing.T, ops []byte, seed uint64) {
		if len(ops) > 128 {
			ops = ops[:128] // longer streams find nothing new and, six writes each, slow the fuzzer down
		}
		var evs []protocol.ResponseEvent
		for i, op := range ops {
			ev := fuzzEvent(op)
			if ev.Delta != "" {
				ev.Delta += strconv.Itoa(i) // deltas that differ, so that a wrong text shows
			}
			evs = append(evs, ev)
		}
		evs = append(evs, protocol.Completed("r", nil))
		want := writeNoFail(evs)
		for _, mode := range soFarModes {
			got := writeNoFail(withSoFar(evs, mode, rand.New(rand.NewPCG(seed, 2))))
			if !bytes.Equal(got, want) {
				t.Fatalf("with %s SoFars the stream differs (-want +got):\n%s", mode, cmp.Diff(string(want), string(got)))
			}
		}
	})
}

// ---------------------------------------------------------------------------
// a stage between the chat accumulator and the writer

// chatUpstream is a chat completions stream whose reasoning and text say
// "secret", inside deltas and as whole deltas.
func chatUpstream() []byte {
	var b strings.Builder
	chunk := func(field, s string) {
		b.WriteString(`data: {"id":"c1","choices":[{"index":0,"delta":{"` + field + `":` + strconv.Quote(s) + `}}]}` + "\n\n")
	}
	for _, s := range []string{"thinking of the secret", " plan, ", "secret", "ly"} {
		chunk("reasoning_content", s)
	}
	for _, s := range []string{"The ", "secret", " is 42; my secret", "s stay ", "secret", "."} {
		chunk("content", s)
	}
	b.WriteString(`data: {"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
	return []byte(b.String())
}

// doneMode is what the rewriting stage does with the message's done item.
type doneMode int

const (
	doneRewritten   doneMode = iota // its text rewritten too (as redaction does)
	doneWithoutText                 // replaced by one without content: the writer's text
	doneDropped                     // dropped: the completed event closes the message
)

func (m doneMode) String() string { return [...]string{"rewritten", "without-text", "dropped"}[m] }

// rewriteNode rewrites "secret" to repl in every text and reasoning delta,
// leaving SoFar as it was (unless clear), drops deltas left empty, and
// treats the message's done item as mode says.
func rewriteNode(repl string, mode doneMode, clear bool) pipeline.Node {
	return pipeline.StageNode("test.rewrite", pipeline.Func[protocol.ResponseEvent, protocol.ResponseEvent](
		func(_ context.Context, ev protocol.ResponseEvent, emit func(protocol.ResponseEvent)) error {
			switch ev.Type {
			case protocol.EventOutputTextDelta, protocol.EventReasoningContentDelta:
				ev.Delta = strings.ReplaceAll(ev.Delta, "secret", repl)
				if ev.Delta == "" {
					return nil
				}
			case protocol.EventOutputItemDone:
				if m, ok := ev.Item.(*protocol.Message); ok {
					switch mode {
					case doneRewritten:
						c := *m
						c.Content = []protocol.ContentItem{protocol.OutputText(strings.ReplaceAll(m.Content[0].Text, "secret", repl))}
						ev.Item = &c
					case doneWithoutText:
						ev.Item = &protocol.Message{ID: m.ID, Role: m.Role}
					case doneDropped:
						return nil
					}
				}
			}
			if clear {
				ev.SoFar = ""
			}
			emit(ev)
			return nil
		}))
}

// proxy runs the chat upstream through the chat graph, the given nodes
// and the writer, in mode, and returns the client's stream.
func proxy(t *testing.T, mode pipeline.Mode, nodes ...pipeline.Node) []byte {
	t.Helper()
	g, err := chatstream.Graph(chatstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) > 0 {
		if g, err = g.Append(nodes...); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	w := responses.NewWriter(&buf, fixedOptions)
	if err := pipeline.Run(context.Background(), g, sources.Reader(bytes.NewReader(chatUpstream())), w, pipeline.WithMode(mode)); err != nil {
		t.Fatal(err)
	}
	if !w.Ended() {
		t.Fatal("no terminal event")
	}
	return buf.Bytes()
}

// clientTexts are the texts of one item as the client received them: the
// deltas' concatenation and what each closing event says.
type clientTexts struct {
	deltas                          string
	textDone, partDone, itemDone    string
	completed                       string
	textDones, partDones, itemDones int
}

// textsOf collects the message's (typ "message") or the reasoning's texts
// from a stream.
func textsOf(t *testing.T, b []byte, typ string) clientTexts {
	t.Helper()
	var c clientTexts
	var deltas strings.Builder
	deltaEv, doneEv, part := "response.output_text.delta", "response.output_text.done", "output_text"
	if typ == protocol.TypeReasoning {
		deltaEv, doneEv, part = "response.reasoning_text.delta", "response.reasoning_text.done", "reasoning_text"
	}
	itemText := func(it map[string]any) string {
		content := asSlice(it["content"])
		if len(content) != 1 {
			t.Fatalf("%s item with %d content parts", typ, len(content))
		}
		return content[0].(map[string]any)["text"].(string)
	}
	for _, ev := range parseSSE(t, b) {
		switch ev.name {
		case deltaEv:
			deltas.WriteString(ev.data["delta"].(string))
		case doneEv:
			c.textDone = ev.data["text"].(string)
			c.textDones++
		case "response.content_part.done":
			if p := ev.data["part"].(map[string]any); p["type"] == part {
				c.partDone = p["text"].(string)
				c.partDones++
			}
		case "response.output_item.done":
			if it := ev.data["item"].(map[string]any); it["type"] == typ {
				c.itemDone = itemText(it)
				c.itemDones++
			}
		case "response.completed":
			for _, it := range asSlice(ev.data["response"].(map[string]any)["output"]) {
				if it := it.(map[string]any); it["type"] == typ {
					c.completed = itemText(it)
				}
			}
		}
	}
	c.deltas = deltas.String()
	return c
}

// A stage between the chat accumulator and the writer rewrites deltas and
// leaves their SoFar (which then no longer matches): whether the rewrite
// keeps the length or not, and whether the closing events take the text
// from the done item or from the writer's own, the client's done events
// and response.completed carry the rewritten text, and the stream is the
// one written when the stage clears SoFar.
func TestWriterRewrittenDeltasWithStaleSoFar(t *testing.T) {
	for _, repl := range []string{"******", "[redacted]", "X"} {
		for _, mode := range []doneMode{doneRewritten, doneWithoutText, doneDropped} {
			for _, pm := range []pipeline.Mode{pipeline.Fused, pipeline.Async} {
				name := repl + "/" + mode.String() + "/" + pm.String()
				got := proxy(t, pm, rewriteNode(repl, mode, false))
				checkWellFormed(t, got)
				checkOpenAIGo(t, got)
				msg := "The " + repl + " is 42; my " + repl + "s stay " + repl + "."
				rsn := "thinking of the " + repl + " plan, " + repl + "ly"
				for _, c := range []struct {
					typ, want string
				}{{protocol.TypeMessage, msg}, {protocol.TypeReasoning, rsn}} {
					tx := textsOf(t, got, c.typ)
					if tx.textDones != 1 || tx.partDones != 1 || tx.itemDones != 1 {
						t.Fatalf("%s: %s closed by %d text, %d part, %d item done events", name, c.typ, tx.textDones, tx.partDones, tx.itemDones)
					}
					if tx.deltas != c.want {
						t.Fatalf("%s: %s deltas %q, want %q", name, c.typ, tx.deltas, c.want)
					}
					for what, text := range map[string]string{"text done": tx.textDone, "part done": tx.partDone,
						"item done": tx.itemDone, "completed": tx.completed} {
						if text != c.want {
							t.Errorf("%s: %s %s carries %q, the deltas said %q", name, c.typ, what, text, c.want)
						}
					}
				}
				if want := proxy(t, pm, rewriteNode(repl, mode, true)); !bytes.Equal(got, want) {
					t.Errorf("%s: the stream depends on the stale SoFars (-cleared +kept):\n%s", name, cmp.Diff(string(want), string(got)))
				}
			}
		}
	}
}

// Without any stage between, the stream is the same with the accumulator's
// SoFars and without them.
func TestWriterChatStreamWithoutSoFar(t *testing.T) {
	clear := pipeline.StageNode("test.clear", pipeline.Map(func(ev protocol.ResponseEvent) protocol.ResponseEvent {
		ev.SoFar = ""
		return ev
	}))
	for _, pm := range []pipeline.Mode{pipeline.Fused, pipeline.Async} {
		with, without := proxy(t, pm), proxy(t, pm, clear)
		if !bytes.Equal(with, without) {
			t.Errorf("%s: SoFars changed the stream (-without +with):\n%s", pm, cmp.Diff(string(without), string(with)))
		}
		tx := textsOf(t, with, protocol.TypeMessage)
		if want := "The secret is 42; my secrets stay secret."; tx.deltas != want || tx.completed != want {
			t.Errorf("%s: message %q, completed %q", pm, tx.deltas, tx.completed)
		}
	}
}

// A long answer, with the escapes the writer's buffer estimate counts, and
// a long tool call after it: the stream is the one written without SoFars,
// and its closing events carry the deltas' text.
func TestWriterLongTextWithSoFar(t *testing.T) {
	var evs []protocol.ResponseEvent
	var text strings.Builder
	evs = append(evs, protocol.Created())
	for i := range 20000 {
		d := strings.Repeat(string(rune('a'+i%26)), 1+i%64)
		if i%97 == 0 {
			d += "\"quoted\"\n\t\\"
		}
		text.WriteString(d)
		evs = append(evs, protocol.TextDelta(d))
	}
	evs = append(evs, protocol.Done(&protocol.Message{ID: "m", Role: protocol.RoleAssistant, Content: []protocol.ContentItem{protocol.OutputText(text.String())}}),
		protocol.Done(&protocol.FunctionCall{Name: "f", CallID: "c", Arguments: strings.Repeat(`{"k":"v"}`, 20000)}),
		protocol.Completed("r", nil))
	want := writeNoFail(evs)
	got := writeNoFail(withSoFar(evs, soFarHonest, nil))
	if !bytes.Equal(got, want) {
		t.Fatal("the long stream differs with SoFars")
	}
	tx := textsOf(t, got, protocol.TypeMessage)
	if tx.textDone != text.String() || tx.completed != text.String() || tx.deltas != text.String() {
		t.Error("the long text's closing events differ from its deltas")
	}
	checkOutputIsDoneItems(t, got)
}

// checkOutputIsDoneItems checks that the output of response.completed is
// the items of the output_item.done events, byte for byte (the writer
// keeps a short item's JSON and encodes a long one again).
func checkOutputIsDoneItems(t *testing.T, b []byte) {
	t.Helper()
	var done, output []string
	for _, line := range strings.Split(string(b), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type     string          `json:"type"`
			Item     json.RawMessage `json:"item"`
			Response struct {
				Output []json.RawMessage `json:"output"`
			} `json:"response"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case "response.output_item.done":
			done = append(done, string(ev.Item))
		case "response.completed":
			for _, it := range ev.Response.Output {
				output = append(output, string(it))
			}
		}
	}
	if len(done) == 0 || len(output) != len(done) {
		t.Fatalf("%d done items, %d in the output", len(done), len(output))
	}
	for i := range done {
		if done[i] != output[i] {
			t.Errorf("output item %d (%d bytes) is not its done item (%d bytes)", i, len(output[i]), len(done[i]))
		}
	}
}

// Deltas with no item around them (the completed event closes the message
// with the writer's own text): a SoFar that lies in any way is caught and
// the client's closing events carry the deltas.
func TestWriterLyingSoFar(t *testing.T) {
	deltas := []string{"abc", "def", "ghi"}
	for _, c := range []struct {
		name   string
		soFars []string
	}{
		{"honest", []string{"abc", "abcdef", "abcdefghi"}},
		{"wrong prefix, same length", []string{"abc", "abXdef", "abXdefghi"}},
		{"wrong suffix, same length", []string{"abc", "abcdeX", "abcdeXghi"}},
		{"same length, other bytes", []string{"abc", "******", "*********"}},
		{"too long", []string{"abc", "abcdefdef", "abcdefdefghi"}},
		{"too short", []string{"abc", "def", "defghi"}},
		{"stale", []string{"abc", "abc", "abc"}},
		{"right after a lie", []string{"abc", "Xbcdef", "abcdefghi"}},
	} {
		evs := []protocol.ResponseEvent{protocol.Created()}
		for i, d := range deltas {
			ev := protocol.TextDelta(d)
			ev.SoFar = strings.Clone(c.soFars[i])
			evs = append(evs, ev)
		}
		evs = append(evs, protocol.Completed("r", nil))
		b := writeNoFail(evs)
		tx := textsOf(t, b, protocol.TypeMessage)
		for what, text := range map[string]string{"deltas": tx.deltas, "text done": tx.textDone, "part done": tx.partDone,
			"item done": tx.itemDone, "completed": tx.completed} {
			if text != "abcdefghi" {
				t.Errorf("%s: %s %q, want %q", c.name, what, text, "abcdefghi")
			}
		}
	}
}

// Closing a long text (its text done, part done and item done events, then
// response.completed with it in the output) allocates about one buffer of
// the text's JSON size, whatever its escapes: not a buffer grown step by
// step, nor a copy of the item's JSON kept for the response object.
func TestWriterClosesLongTextInOneBuffer(t *testing.T) {
	var text strings.Builder
	for i := 0; text.Len() < 4<<20; i++ {
		text.WriteString(`some "quoted" words\ and a line` + "\n\t")
	}
	msg := &protocol.Message{ID: "m", Role: protocol.RoleAssistant, Content: []protocol.ContentItem{protocol.OutputText(text.String())}}
	evs := []protocol.ResponseEvent{protocol.Added(msg)}
	for s := text.String(); s != ""; {
		n := min(len(s), 4096)
		evs = append(evs, protocol.TextDelta(s[:n]))
		s = s[n:]
	}
	evs = withSoFar(evs, soFarHonest, nil)
	var buf countingWriter
	w := responses.NewWriter(&buf, fixedOptions)
	for _, ev := range evs {
		if err := w.Accept(ev); err != nil {
			t.Fatal(err)
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, ev := range []protocol.ResponseEvent{protocol.Done(msg), protocol.Completed("r", nil)} {
		if err := w.Accept(ev); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	quoted, _ := json.Marshal(text.String())
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("closing %d bytes of JSON text allocated %d bytes", len(quoted), allocated)
	if limit := uint64(len(quoted)) * 3 / 2; allocated > limit {
		t.Errorf("closing a text of %d bytes (%d as JSON) allocated %d bytes, more than %d", text.Len(), len(quoted), allocated, limit)
	}
	if buf.n < 4*int64(len(quoted)) {
		t.Errorf("wrote %d bytes: the four closing events should each carry the %d bytes of text", buf.n, len(quoted))
	}
}

// countingWriter counts the bytes written to it.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// Many small items whose JSON adds up past the size from which the writer
// allocates its event buffer up front: the buffer grows geometrically, so
// the bytes allocated per item do not grow with the number of items.
func TestWriterManyItemsAllocateLinearly(t *testing.T) {
	perItem := func(n int) float64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		w := responses.NewWriter(&countingWriter{}, fixedOptions)
		for i := range n {
			call := &protocol.FunctionCall{Name: "f", CallID: "c" + strconv.Itoa(i), Arguments: `{"path":"` + strings.Repeat("x", 200) + `"}`}
			if err := w.Accept(protocol.Done(call)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Accept(protocol.Completed("r", nil)); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
	}
	small, large := perItem(500), perItem(8000)
	t.Logf("bytes allocated per item: %.0f for 500 items, %.0f for 8000", small, large)
	if large > 2*small {
		t.Errorf("%.0f bytes per item for 8000 items, %.0f for 500: the allocations grow faster than the items", large, small)
	}
}
