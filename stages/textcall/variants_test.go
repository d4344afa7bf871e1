package textcall

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/chatstream"
)

// This file pins what holds across the formats: two and three calls in
// one reply (parallel calls) in every format that writes them, and a
// reply whose reasoning block the prompt opened (only </think> in the
// reply) before calls of every format — each replayed whole, byte by byte
// and in random cuttings through a Reader.

// variantTools are the tools the cross-format cases call.
const variantTools = `[{"type":"function","function":{"name":"shell","parameters":{"type":"object","properties":{"cmd":{"type":"string"},"timeout":{"type":"integer"}}}}},
 {"type":"function","function":{"name":"read_file","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}}]`

// variantCall is the i-th call of a case: shell or read_file in turn.
func variantCall(i int) (name, key, value string) {
	if i%2 == 0 {
		return "shell", "cmd", fmt.Sprintf("ls dir%d", i)
	}
	return "read_file", "path", fmt.Sprintf("notes/%d.md", i)
}

// renderCalls writes n calls in format as its models write them.
func renderCalls(format string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		name, key, value := variantCall(i)
		obj := fmt.Sprintf(`{%q: %q}`, key, value)
		switch format {
		case "hermes":
			fmt.Fprintf(&b, "<tool_call>\n{\"name\": %q, \"arguments\": %s}\n</tool_call>\n", name, obj)
		case "qwen3_coder":
			fmt.Fprintf(&b, "<tool_call>\n<function=%s>\n<parameter=%s>\n%s\n</parameter>\n</function>\n</tool_call>\n", name, key, value)
		case "glm45":
			fmt.Fprintf(&b, "<tool_call>%s\n<arg_key>%s</arg_key>\n<arg_value>%s</arg_value>\n</tool_call>\n", name, key, value)
		case "glm47":
			fmt.Fprintf(&b, "<tool_call>%s<arg_key>%s</arg_key><arg_value>%s</arg_value></tool_call>", name, key, value)
		case "llama3_json":
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, `{"name": %q, "parameters": %s}`, name, obj)
		case "mistral":
			fmt.Fprintf(&b, "[TOOL_CALLS]%s[ARGS]%s", name, obj)
		case "kimi_k2":
			if i == 0 {
				b.WriteString("<|tool_calls_section_begin|>")
			}
			fmt.Fprintf(&b, "<|tool_call_begin|>functions.%s:%d<|tool_call_argument_begin|>%s<|tool_call_end|>", name, i, obj)
			if i == n-1 {
				b.WriteString("<|tool_calls_section_end|>")
			}
		case "deepseek_v3", "deepseek_v31":
			if i == 0 {
				b.WriteString("<｜tool▁calls▁begin｜>")
			}
			if format == "deepseek_v3" {
				fmt.Fprintf(&b, "<｜tool▁call▁begin｜>function<｜tool▁sep｜>%s\n```json\n%s\n```<｜tool▁call▁end｜>\n", name, obj)
			} else {
				fmt.Fprintf(&b, "<｜tool▁call▁begin｜>%s<｜tool▁sep｜>%s<｜tool▁call▁end｜>", name, obj)
			}
			if i == n-1 {
				b.WriteString("<｜tool▁calls▁end｜>")
			}
		case "deepseek_v32":
			if i == 0 {
				b.WriteString("<｜DSML｜function_calls>\n")
			}
			fmt.Fprintf(&b, "<｜DSML｜invoke name=%q>\n<｜DSML｜parameter name=%q string=\"true\">%s</｜DSML｜parameter>\n</｜DSML｜invoke>\n", name, key, value)
			if i == n-1 {
				b.WriteString("</｜DSML｜function_calls>")
			}
		case "minimax_m2":
			if i == 0 {
				b.WriteString("<minimax:tool_call>\n")
			}
			fmt.Fprintf(&b, "<invoke name=%q>\n<parameter name=%q>%s</parameter>\n</invoke>\n", name, key, value)
			if i == n-1 {
				b.WriteString("</minimax:tool_call>")
			}
		case "gpt_oss":
			fmt.Fprintf(&b, "<|start|>assistant<|channel|>commentary to=functions.%s <|constrain|>json<|message|>%s<|call|>", name, obj)
		default:
			panic("renderCalls: no rendering for " + format)
		}
	}
	return b.String()
}

// wantCalls are the calls renderCalls(_, n) writes.
func wantCalls(n int) []Call {
	calls := make([]Call, n)
	for i := range calls {
		name, key, value := variantCall(i)
		calls[i] = fmtCall(name, fmt.Sprintf(`{%q:%q}`, key, value))
	}
	return calls
}

// replayReader reads input through Readers made with opts whole, byte by
// byte and in random cuttings, fails when the coalesced events differ,
// and returns the reply.
func replayReader(t *testing.T, opts ReaderOptions, input string) Reply {
	t.Helper()
	run := func(sizes []int) []Event {
		r, err := NewReader(opts)
		if err != nil {
			t.Fatal(err)
		}
		var out []Event
		rest := input
		for _, n := range sizes {
			n = min(n, len(rest))
			out = r.Content(out, rest[:n])
			rest = rest[n:]
		}
		return coalesce(r.Close(r.Content(out, rest)))
	}
	whole := run(nil)
	if d := cmp.Diff(whole, run(ones(len(input)))); d != "" {
		t.Fatalf("byte-at-a-time replay differs (-whole +bytes):\n%s\ninput: %q", d, input)
	}
	rng := rand.New(rand.NewPCG(uint64(len(input)), 11))
	for i := 0; i < 8; i++ {
		if d := cmp.Diff(whole, run(randomSizes(rng, len(input), 1+rng.IntN(16)))); d != "" {
			t.Fatalf("random-chunk replay %d differs (-whole +chunks):\n%s\ninput: %q", i, d, input)
		}
	}
	rep, err := Collect(whole)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// withoutIDs drops the ids markup carried (Kimi's), which the cases do
// not compare.
func withoutIDs(r Reply) Reply {
	calls := make([]Call, len(r.Calls))
	for i, c := range r.Calls {
		c.ID = ""
		calls[i] = c
	}
	r.Calls = calls
	return r
}

// variantFormats are the formats the cross-format cases run.
var variantFormats = []string{"hermes", "qwen3_coder", "glm45", "glm47", "llama3_json", "mistral", "kimi_k2",
	"deepseek_v3", "deepseek_v31", "deepseek_v32", "minimax_m2", "gpt_oss"}

// TestParallelCalls: one, two and three calls in one reply, in every
// format, read by the format and by auto.
func TestParallelCalls(t *testing.T) {
	schemas := schemasFor(t, []byte(variantTools))
	for _, format := range variantFormats {
		for n := 1; n <= 3; n++ {
			input := renderCalls(format, n)
			for _, parser := range []string{format, Auto} {
				t.Run(fmt.Sprintf("%s/%d/%s", format, n, parser), func(t *testing.T) {
					got := withoutIDs(replayReader(t, ReaderOptions{Format: parser, Config: Config{Schemas: schemas}}, input))
					if d := diffReply(t, Reply{Calls: wantCalls(n)}, got); d != "" {
						t.Errorf("reply (-want +got):\n%s\ninput: %q", d, input)
					}
				})
			}
		}
	}
}

// TestThinkingOpenedByPrompt: the template ended the prompt with <think>,
// so the reply starts inside the reasoning and only its closing tag shows;
// calls of every format follow it (or, for a reply with no call, text).
func TestThinkingOpenedByPrompt(t *testing.T) {
	schemas := schemasFor(t, []byte(variantTools))
	const thought = "The user wants\nthe files listed."
	for _, format := range variantFormats {
		if format == "gpt_oss" { // harmony has its own reasoning channel, no </think>
			continue
		}
		for _, parser := range []string{format, Auto} {
			t.Run(format+"/"+parser, func(t *testing.T) {
				opts := ReaderOptions{Format: parser, Config: Config{Schemas: schemas}, ThinkingOpen: true}
				input := thought + "</think>\n\n" + renderCalls(format, 2)
				got := withoutIDs(replayReader(t, opts, input))
				if d := diffReply(t, Reply{Reasoning: thought, Calls: wantCalls(2)}, got); d != "" {
					t.Errorf("reply (-want +got):\n%s", d)
				}
			})
		}
	}
	for _, c := range []struct {
		name, format string
		open         bool
		input        string
		want         Reply
	}{
		{"no call: text after the block", "hermes", true, "Nothing to run.</think>\n\nAll done.",
			Reply{Reasoning: "Nothing to run.", Content: "All done."}},
		{"no call, off", Off, true, "Nothing to run.</think>\nAll done.",
			Reply{Reasoning: "Nothing to run.", Content: "All done."}},
		{"the model writes the opening tag again", Auto, true, "\n<think>\nStill me.\n</think>\nHi.",
			Reply{Reasoning: "\n\nStill me.\n", Content: "Hi."}},
		{"Mistral's closing tag ends a block the prompt opened", "mistral", true, "short[/THINK]Hi.",
			Reply{Reasoning: "short", Content: "Hi."}},
		{"an empty block", "hermes", true, "</think>\n\nHi.", Reply{Content: "Hi."}},
		{"a block never closed stays reasoning", "hermes", true, "I was cut off </thi",
			Reply{Reasoning: "I was cut off </thi"}},
		{"a call inside the opened block", "hermes", true,
			"Let me look.\n<tool_call>{\"name\": \"shell\", \"arguments\": {\"cmd\": \"ls dir0\"}}</tool_call>\n</think>\n\nLooked.",
			Reply{Reasoning: "Let me look.\n", Content: "Looked.", Calls: wantCalls(1)}},
		{"not opened: a closing tag at the start ends a block the reply did not show", Auto, false,
			"\n</think>\n\n" + renderCalls("hermes", 1), Reply{Content: "\n", Calls: wantCalls(1)}},
		{"not opened: a closing tag after text is text", Auto, false, "Close it with </think> later.",
			Reply{Content: "Close it with </think> later."}},
		{"not opened: a partial closing tag at the start is text", Auto, false, "</thin",
			Reply{Content: "</thin"}},
		{"not opened: a block opened by the reply", "hermes", false, "<think>hm</think>ok",
			Reply{Reasoning: "hm", Content: "ok"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := replayReader(t, ReaderOptions{Format: c.format, Config: Config{Schemas: schemas}, ThinkingOpen: c.open}, c.input)
			if d := diffReply(t, c.want, got); d != "" {
				t.Errorf("reply (-want +got):\n%s", d)
			}
		})
	}
}

// TestThinkingOpenHoldsOnlyTheTail: reasoning streams as it arrives; only
// a tail that could be a closing tag waits.
func TestThinkingOpenHoldsOnlyTheTail(t *testing.T) {
	r, err := NewReader(ReaderOptions{Format: Auto, ThinkingOpen: true})
	if err != nil {
		t.Fatal(err)
	}
	var got string
	for _, e := range r.Content(nil, "I should look at a.go</thi") {
		if e.Kind != Reasoning {
			t.Fatalf("event %+v before the block closed", e)
		}
		got += e.Text
	}
	if got != "I should look at a.go" {
		t.Fatalf("reasoning passed on = %q, want all but the partial tag", got)
	}
	rep, err := Collect(r.Close(r.Content(nil, "nk>\nDone.")))
	if err != nil || rep.Content != "Done." || rep.Reasoning != "" {
		t.Fatalf("after the tag: %+v, %v", rep, err)
	}
}

// TestServerReasoningWins: when the server sent the reasoning in its own
// field, a block the prompt opened was split by the server; the content
// is content (a closing tag leaking at its start is dropped).
func TestServerReasoningWins(t *testing.T) {
	for _, content := range []string{"Hello.", "</think>\n\nHello."} {
		r, err := NewReader(ReaderOptions{Format: Auto, ThinkingOpen: true})
		if err != nil {
			t.Fatal(err)
		}
		if r.QuietReasoning("I think") {
			t.Fatal("the server's first reasoning is quiet while the opened block waits")
		}
		ev := r.Reasoning(nil, "I think")
		ev = r.Content(ev, content)
		rep, err := Collect(r.Close(ev))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Reasoning != "I think" || rep.Content != "Hello." {
			t.Errorf("content %q: %+v", content, rep)
		}
	}
}

func FuzzThinkingOpen(f *testing.F) {
	for _, s := range []string{"a</think>b", "<think>x</think>", "[/THINK]y", "</thi", "  \n</think>\n\n<tool_call>{\"name\":\"a\",\"arguments\":{}}</tool_call>"} {
		f.Add(s, uint64(1), true)
		f.Add(s, uint64(2), false)
	}
	f.Fuzz(func(t *testing.T, input string, seed uint64, open bool) {
		run := func(sizes []int) []Event {
			r, _ := NewReader(ReaderOptions{Format: Auto, ThinkingOpen: open})
			var out []Event
			rest := input
			for _, n := range sizes {
				n = min(n, len(rest))
				out = r.Content(out, rest[:n])
				rest = rest[n:]
			}
			return coalesce(r.Close(r.Content(out, rest)))
		}
		whole := run(nil)
		rng := rand.New(rand.NewPCG(seed, 5))
		if d := cmp.Diff(whole, run(randomSizes(rng, len(input), 1+rng.IntN(8)))); d != "" {
			t.Fatalf("chunked replay differs (-whole +chunks):\n%s", d)
		}
		if _, err := Collect(whole); err != nil {
			t.Fatal(err)
		}
	})
}

// runThinkingOpen runs an SSE body through the chat graph with
// chat.textcalls (auto, ThinkingOpen) and returns the events as JSON.
func runThinkingOpen(t *testing.T, body string) string {
	t.Helper()
	n, err := Node(Options{Format: Auto, ThinkingOpen: true})
	if err != nil {
		t.Fatal(err)
	}
	g, err := chatstream.Graph(chatstream.Options{})
	if err == nil {
		g, err = g.InsertBefore(chatstream.AccumulateName, n)
	}
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	err = pipeline.Run(context.Background(), g, sources.Reader(strings.NewReader(body)),
		pipeline.SinkFunc[protocol.ResponseEvent](func(ev protocol.ResponseEvent) error {
			b, err := ev.MarshalJSON()
			out.Write(b)
			out.WriteByte('\n')
			return err
		}))
	if err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestStageThinkingOpen: through the stage, a reply that starts inside the
// block the prompt opened gives reasoning and the call; with the server's
// reasoning field first, the content is content.
func TestStageThinkingOpen(t *testing.T) {
	call := "<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"cmd\": \"ls\"}}\n</tool_call>"
	events := runThinkingOpen(t, sseOf("I'm\nthink", "ing</th", "ink>\n\n"+call[:9], call[9:]))
	for _, want := range []string{`I'm\nthink`, `"name":"shell"`} {
		if !strings.Contains(events, want) {
			t.Errorf("events lack %s:\n%s", want, events)
		}
	}
	for _, leak := range []string{"think>", "tool_call>", "output_text.delta"} {
		if strings.Contains(events, leak) {
			t.Errorf("events show %s:\n%s", leak, events)
		}
	}
	server := "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"Mine.\"}}]}\n\n" + sseOf("Hello there.")
	events = runThinkingOpen(t, server)
	if !strings.Contains(events, "Mine.") || !strings.Contains(events, `"delta":"Hello there."`) {
		t.Errorf("the server's reasoning and the content:\n%s", events)
	}
}
