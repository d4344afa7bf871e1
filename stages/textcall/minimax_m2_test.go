package textcall

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mmCases() []replyCase {
	return []replyCase{
		{
			name: "one invoke, text before",
			input: "I'll list the files.\n<minimax:tool_call>\n<invoke name=\"shell\">\n<parameter name=\"command\">[\"ls\", \"-la\"]</parameter>\n" +
				"<parameter name=\"workdir\">/tmp</parameter>\n</invoke>\n</minimax:tool_call>",
			tools: glmTools,
			want: Reply{Content: "I'll list the files.\n", Calls: []Call{
				fmtCall("shell", `{"command":["ls","-la"],"workdir":"/tmp"}`),
			}},
		},
		{
			name: "several invokes in one block, text after",
			input: "<minimax:tool_call>\n<invoke name=\"shell\">\n<parameter name=\"command\">[\"pwd\"]</parameter>\n</invoke>\n" +
				"<invoke name='shell'>\n<parameter name='command'>[\"ls\"]</parameter>\n<parameter name=\"timeout_ms\">3000</parameter>\n</invoke>\n</minimax:tool_call>\nBoth done.",
			tools: glmTools,
			want: Reply{Content: "\nBoth done.", Calls: []Call{
				fmtCall("shell", `{"command":["pwd"]}`),
				fmtCall("shell", `{"command":["ls"],"timeout_ms":3000}`),
			}},
		},
		{
			name:  "two blocks separated by white space",
			input: "<minimax:tool_call><invoke name=\"a\"></invoke></minimax:tool_call>\n\n<minimax:tool_call><invoke name=b></invoke></minimax:tool_call>",
			want:  Reply{Calls: []Call{fmtCall("a", `{}`), fmtCall("b", `{}`)}},
		},
		{
			name:  "value on its own lines: exactly one newline stripped each side",
			input: "<minimax:tool_call>\n<invoke name=\"apply_patch\">\n<parameter name=\"input\">\n\n*** Begin Patch\n+<invoke name=\"x\"></parameter\n*** End Patch\n\n</parameter>\n</invoke>\n</minimax:tool_call>",
			tools: glmTools,
			want: Reply{Calls: []Call{fmtCall("apply_patch",
				`{"input":"\n*** Begin Patch\n+<invoke name=\"x\"></parameter\n*** End Patch\n"}`)}},
		},
		{
			name:  "a </parameter> that text follows belongs to the value",
			input: "<minimax:tool_call><invoke name=\"a\"><parameter name=\"p\">x</parameter>y</parameter></invoke></minimax:tool_call>",
			want:  Reply{Calls: []Call{fmtCall("a", `{"p":"x</parameter>y"}`)}},
		},
		{
			name:  "a </parameter></invoke> that text follows belongs to the value",
			input: "<minimax:tool_call><invoke name=\"a\"><parameter name=\"p\">x</parameter></invoke>y</parameter></invoke></minimax:tool_call>",
			want:  Reply{Calls: []Call{fmtCall("a", `{"p":"x</parameter></invoke>y"}`)}},
		},
		{
			name:  "value closed at the very end",
			input: "<minimax:tool_call><invoke name=\"a\"><parameter name=\"p\">x\n</parameter>\n</invoke>\n",
			want:  Reply{Calls: []Call{fmtCall("a", `{"p":"x"}`)}},
		},
		{
			name:  "Python literals and schema typing",
			input: "<minimax:tool_call><invoke name=\"update_plan\"><parameter name=\"plan\">[{'step': 'a', 'status': 'pending'}]</parameter><parameter name=\"meta\">{'x': (1, 2), 'y': False}</parameter><parameter name=\"ratio\">\n1e3\n</parameter><parameter name=\"other\">[1]</parameter></invoke></minimax:tool_call>",
			tools: glmTools,
			want: Reply{Calls: []Call{fmtCall("update_plan",
				`{"plan":[{"step":"a","status":"pending"}],"meta":{"x":[1,2],"y":false},"ratio":1e3,"other":"[1]"}`)}},
		},
		{
			name:  "missing </invoke> before the block's end",
			input: "<minimax:tool_call><invoke name=\"shell\"><parameter name=\"command\">[\"ls\"]</parameter></minimax:tool_call>ok",
			tools: glmTools,
			want:  Reply{Content: "ok", Calls: []Call{fmtCall("shell", `{"command":["ls"]}`)}},
		},
		{
			name:  "missing closers at the end: recovered",
			input: "<minimax:tool_call>\n<invoke name=\"shell\">\n<parameter name=\"command\">[\"ls\"]</parameter>\n</inv",
			tools: glmTools,
			want:  Reply{Calls: []Call{fmtCall("shell", `{"command":["ls"]}`)}},
		},
		{
			name:  "first invoke done, second cut in a value",
			input: "<minimax:tool_call>\n<invoke name=\"a\">\n</invoke>\n<invoke name=\"b\">\n<parameter name=\"x\">unfinished",
			want: Reply{Content: "\n<invoke name=\"b\">\n<parameter name=\"x\">unfinished", Calls: []Call{fmtCall("a", `{}`)},
				Malformed: []string{"MiniMax tool call cut inside a tag or value"}},
		},
		{
			name:  "bad invoke tag: malformed, text read on",
			input: "<minimax:tool_call><invoke name=\"\">x</invoke></minimax:tool_call>",
			want:  Reply{Content: "<minimax:tool_call><invoke name=\"\">x</invoke></minimax:tool_call>", Malformed: []string{"bad MiniMax invoke name tag"}},
		},
		{
			name:  "prose mentioning the block tag",
			input: "MiniMax wraps calls in <minimax:tool_call> ... </minimax:tool_call>.",
			want:  Reply{Content: "MiniMax wraps calls in <minimax:tool_call> ... </minimax:tool_call>."},
		},
		{
			name:  "opener alone at the end",
			input: "See <minimax:tool_call>\n",
			want:  Reply{Content: "See <minimax:tool_call>\n", Malformed: []string{"unterminated MiniMax tool-call block"}},
		},
	}
}

func TestMiniMaxM2Replies(t *testing.T) { runReplyCases(t, "minimax_m2", mmCases()) }

func TestMiniMaxM2Goldens(t *testing.T) { runGoldens(t, "minimax_m2", "minimax_m2") }

func TestMiniMaxM2Auto(t *testing.T) {
	cases := []struct {
		name, input, format string
		calls               int
	}{
		{"block", "Sure.\n<minimax:tool_call>\n<invoke name=\"shell\">\n</invoke>\n</minimax:tool_call>", "minimax_m2", 1},
		{"prose", "The <minimax:tool_call> tag wraps invokes.", "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			chosen, got := autoReply(t, "", c.input)
			if chosen != c.format || len(got.Calls) != c.calls {
				t.Errorf("auto chose %q with %d calls, want %q with %d", chosen, len(got.Calls), c.format, c.calls)
			}
			if c.calls == 0 && got.Content != c.input {
				t.Errorf("content %q, want the input", got.Content)
			}
		})
	}
	// Through auto the replay by bytes and chunks gives the same calls.
	got, err := Collect(replay(t, parserFor(t, Auto, Config{}), mmCases()[1].input))
	if err != nil || len(got.Calls) != 2 {
		t.Fatalf("auto replay: %v %+v", err, got)
	}
}

func TestMiniMaxM2StreamsArgs(t *testing.T) {
	p, _ := NewParser("minimax_m2", Config{Schemas: schemasFor(t, []byte(glmTools))})
	out := p.Feed(nil, "<minimax:tool_call>\n<invoke name=\"apply_patch\">\n<parameter name=\"input\">\n*** Begin Patch\n+line\n")
	var args string
	for _, e := range out {
		if e.Kind == CallArgs {
			args += e.Text
		}
	}
	// The last newline waits: it may be the one before </parameter>.
	if want := `{"input":"*** Begin Patch\n+line`; args != want {
		t.Fatalf("args before the end %q, want %q", args, want)
	}
}

func FuzzMiniMaxM2(f *testing.F) {
	var seeds []string
	for _, c := range mmCases() {
		seeds = append(seeds, c.input)
	}
	fuzzFormat(f, "minimax_m2", true, seeds...)
}

// BenchmarkMyFormats measures the cost per content delta of the glm45,
// glm47, minimax_m2 and gpt_oss parsers on a reply with some text and one
// call carrying a 4 KiB string argument, cut into 8-byte deltas.
func BenchmarkMyFormats(b *testing.B) {
	body := strings.Repeat("+\tfmt.Println(\"line\") // <ok>\n", 128)
	text := strings.Repeat("Some prose before the call. ", 8)
	replies := []struct{ format, model, input string }{
		{"glm45", "", text + "<tool_call>apply_patch\n<arg_key>input</arg_key>\n<arg_value>" + body + "</arg_value>\n</tool_call>"},
		{"glm47", "", text + "<tool_call>apply_patch<arg_key>input</arg_key><arg_value>" + body + "</arg_value></tool_call>"},
		{"minimax_m2", "", text + "<minimax:tool_call>\n<invoke name=\"apply_patch\">\n<parameter name=\"input\">" + body + "</parameter>\n</invoke>\n</minimax:tool_call>"},
		{"gpt_oss", "", "<|channel|>analysis<|message|>" + text + "<|end|><|start|>assistant<|channel|>commentary to=functions.apply_patch <|constrain|>json<|message|>" + quote(body) + "<|call|>"},
		{"gpt_oss/degraded", hmModel, "analysis" + text + "assistantcommentary to=functions.apply_patch json{\"input\":" + quote(body) + "}"},
	}
	replies[3].input = strings.Replace(replies[3].input, "<|message|>"+quote(body), "<|message|>{\"input\":"+quote(body)+"}", 1)
	for _, r := range replies {
		format := strings.Split(r.format, "/")[0]
		b.Run(r.format, func(b *testing.B) {
			cfg := Config{Schemas: schemasFor(b, []byte(glmTools)), Model: r.model}
			deltas := (len(r.input) + 7) / 8
			var out []Event
			b.ReportAllocs()
			for b.Loop() {
				p, _ := NewParser(format, cfg)
				out = out[:0]
				for i := 0; i < len(r.input); i += 8 {
					out = p.Feed(out[:0], r.input[i:min(i+8, len(r.input))])
				}
				out = p.Close(out[:0])
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*deltas), "ns/delta")
		})
	}
}

// TestMiniMaxM2ThroughReader: MiniMax-M2 thinks in <think> blocks; a block
// of calls after it, or inside it, is recovered.
func TestMiniMaxM2ThroughReader(t *testing.T) {
	block := "<minimax:tool_call>\n<invoke name=\"shell\">\n<parameter name=\"command\">[\"ls\"]</parameter>\n</invoke>\n</minimax:tool_call>"
	cases := []struct {
		name, input string
		want        Reply
	}{
		{"think then block", "<think>\nList first.\n</think>\n\n" + block,
			Reply{Reasoning: "\nList first.\n", Calls: []Call{fmtCall("shell", `{"command":["ls"]}`)}}},
		{"block before </think>", "<think>List first." + block + "</think>Listed.",
			Reply{Reasoning: "List first.", Content: "Listed.", Calls: []Call{fmtCall("shell", `{"command":["ls"]}`)}}},
	}
	for _, c := range cases {
		for _, format := range []string{"minimax_m2", Auto} {
			t.Run(c.name+"/"+format, func(t *testing.T) {
				got, err := ParseReply(ReaderOptions{Format: format, Config: Config{Schemas: schemasFor(t, []byte(glmTools))}}, c.input)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(normalize(t, c.want), normalize(t, got)); d != "" {
					t.Errorf("reply (-want +got):\n%s", d)
				}
			})
		}
	}
}
