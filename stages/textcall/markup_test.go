package textcall

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/protocol"
)

// TestSpecialTokenQuiet checks Quiet of the kimi_k2, deepseek and mistral
// parsers: true only when Feed gives the text back as one Text event.
func TestSpecialTokenQuiet(t *testing.T) {
	for _, c := range []struct {
		format, before, s string
		quiet             bool
	}{
		{"kimi_k2", "", "plain text, no markers", true},
		{"kimi_k2", "", "a < b", false},
		{"kimi_k2", "held <|tool_c", "plain", false},
		{"kimi_k2", "<|tool_calls_section_begin|><|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>{", "\"x\": 1", false},
		{"kimi_k2", "<|tool_call_begin|>a:0<|tool_call_argument_begin|>{}<|tool_call_end|> done", "more text", true},
		{"deepseek_v3", "", "天气 plain", true},
		{"deepseek_v3", "", "<｜", false},
		{"deepseek_v31", "<｜tool▁call▁begin｜>a<｜tool▁sep｜>{", "1", false},
		{"deepseek_v32", "", "no tags here", true},
		{"deepseek_v32", "", "<｜DSML｜", false},
		{"deepseek_v32", `<｜DSML｜invoke name="f"><｜DSML｜parameter name="a" string="true">`, "value", false},
		{"mistral", "", "text (with parens)", true},
		{"mistral", "", "a [link]", false},
		{"mistral", "[TOOL_CALLS]a[ARGS]{", `"x": 1`, false},
	} {
		p, _ := NewParser(c.format, Config{})
		p.Feed(nil, c.before)
		if got := p.Quiet(c.s); got != c.quiet {
			t.Errorf("%s after %q: Quiet(%q) = %v, want %v", c.format, c.before, c.s, got, c.quiet)
			continue
		}
		if c.quiet {
			if d := cmp.Diff([]Event{{Kind: Text, Text: c.s}}, p.Feed(nil, c.s)); d != "" {
				t.Errorf("%s: quiet text changed by Feed (-want +got):\n%s", c.format, d)
			}
		}
	}
}

func TestObjScan(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		done bool
	}{
		{`{}rest`, 2, true},
		{`{"a": "}"}x`, 10, true},
		{`{"a": "\"}"} x`, 12, true},
		{`{"a": [1, {"b": 2}]}`, 20, true},
		{`{"a": "\\"}!`, 11, true},
		{`{"a": 1`, 7, false},
	} {
		var o objScan
		n, done := o.scan(c.in)
		if n != c.n || done != c.done {
			t.Errorf("scan(%q) = %d, %v; want %d, %v", c.in, n, done, c.n, c.done)
		}
	}
	// The same object in pieces.
	var o objScan
	total := 0
	for _, piece := range []string{`{"a": "`, `\`, `"}`, `"}tail`} {
		n, done := o.scan(piece)
		total += n
		if done {
			break
		}
	}
	if total != len(`{"a": "\"}"}`) {
		t.Errorf("in pieces: consumed %d", total)
	}
}

// TestSpecialTokenThink runs whole replies through a Reader: reasoning in
// <think> (DeepSeek R1, Kimi K2 Thinking), a reply that starts inside
// reasoning the prompt opened (DeepSeek V3.1 thinking mode), and calls
// written before </think>.
func TestSpecialTokenThink(t *testing.T) {
	for _, c := range []struct {
		name, format, input string
		open                bool
		want                Reply
	}{
		{
			name:   "R1: think, then a call",
			format: "deepseek_v3",
			input:  "<think>\nNeed the list.\n</think>\n\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>ls\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
			want:   Reply{Reasoning: "\nNeed the list.\n", Calls: []Call{{Name: "ls", Arguments: []byte(`{}`)}}},
		},
		{
			name:   "V3.1 thinking opened by the prompt: a lone </think>",
			format: "deepseek_v31",
			open:   true,
			input:  "Read it first.</think>Reading.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read<｜tool▁sep｜>{\"path\": \"a\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
			want:   Reply{Reasoning: "Read it first.", Content: "Reading.", Calls: []Call{{Name: "read", Arguments: []byte(`{"path":"a"}`)}}},
		},
		{
			name:   "Kimi: a call before </think>",
			format: "kimi_k2",
			input:  "<think>I will list.<|tool_calls_section_begin|><|tool_call_begin|>functions.ls:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|></think>Listed.",
			want:   Reply{Reasoning: "I will list.", Content: "Listed.", Calls: []Call{{Name: "ls", ID: "functions.ls:0", Arguments: []byte(`{}`)}}},
		},
		{
			name:   "V3.2: a DSML call before </think>, auto",
			format: "auto",
			input:  "<think>Checking.\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"ls\">\n<｜DSML｜parameter name=\"d\" string=\"true\">.</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls></think>",
			want:   Reply{Reasoning: "Checking.\n\n", Calls: []Call{{Name: "ls", Arguments: []byte(`{"d":"."}`)}}},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, sizes := range [][]int{nil, ones(len(c.input)), {2, 3, 5, 7, 11, 13, 17}} {
				got, _ := readReply(t, ReaderOptions{Format: c.format, ThinkingOpen: c.open}, c.input, sizes)
				if d := diffReply(t, c.want, got); d != "" {
					t.Fatalf("sizes %v: reply (-want +got):\n%s", sizes, d)
				}
			}
		})
	}
}

// TestSpecialTokenStage runs replies of each format through the chat
// response graph with chat.textcalls (auto and the format): the calls
// become function calls (apply_patch a custom tool call), the id the
// markup carried is the call id, and the reply ends with tool_calls.
func TestSpecialTokenStage(t *testing.T) {
	kinds := protocol.ToolKinds{"apply_patch": {Kind: protocol.KindCustom}}
	patch := `{"input": "*** Begin Patch\n*** End Patch"}`
	for _, c := range []struct {
		format string
		pieces []string
		ids    [2]string
	}{
		{"kimi_k2", []string{"Fixing.<|tool_calls_sec", "tion_begin|><|tool_call_begin|>functions.shell:0<|tool_call_argument_begin|>{\"command\": [\"ls\"]}<|tool_call_end|>",
			"<|tool_call_begin|>functions.apply_patch:1<|tool_call_argument_begin|>" + patch + "<|tool_call_end|><|tool_calls_section_end|>"},
			[2]string{"functions.shell:0", "functions.apply_patch:1"}},
		{"deepseek_v31", []string{"Fixing.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>shell<｜tool", "▁sep｜>{\"command\": [\"ls\"]}<｜tool▁call▁end｜>",
			"<｜tool▁call▁begin｜>apply_patch<｜tool▁sep｜>" + patch + "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
			[2]string{"call_chatcmpl-1_0", "call_chatcmpl-1_1"}},
		{"mistral", []string{"Fixing.[TOOL_CALLS]shell[CALL_ID]a1B2c3D4e[AR", "GS]{\"command\": [\"ls\"]}",
			"[TOOL_CALLS]apply_patch[ARGS]" + patch},
			[2]string{"a1B2c3D4e", "call_chatcmpl-1_1"}},
	} {
		for _, format := range []string{Auto, c.format} {
			got := runAll(t, format, kinds, sseOf(c.pieces...))
			want := []string{
				`{"type":"server_model","model":"m"}`,
				`{"type":"created"}`,
				`{"type":"output_item.added","item":{"type":"message","id":"chat-message-1","role":"assistant","content":[{"type":"output_text","text":""}]}}`,
				`{"type":"output_text.delta","delta":"Fixing."}`,
				// The first call is done when its markup ends, before the
				// message (done at the end of the stream).
				`{"type":"output_item.done","item":{"type":"function_call","name":"shell","arguments":"{\"command\": [\"ls\"]}","call_id":"` + c.ids[0] + `"}}`,
				`{"type":"output_item.done","item":{"type":"message","id":"chat-message-1","role":"assistant","content":[{"type":"output_text","text":"Fixing."}]}}`,
				`{"type":"output_item.done","item":{"type":"custom_tool_call","call_id":"` + c.ids[1] + `","name":"apply_patch","input":"*** Begin Patch\n*** End Patch"}}`,
				`{"type":"completed","response_id":"chatcmpl-1","finish_reason":"tool_calls"}`,
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s through %s (-want +got):\n%s", c.format, format, d)
			}
		}
	}
}

// TestHeldTail checks HeldTail against its definition (the longest suffix
// of s that is a proper prefix of a marker), on a table and on random
// texts over the markers' own bytes.
func TestHeldTail(t *testing.T) {
	naive := func(s string, markers ...string) int {
		held := 0
		for _, m := range markers {
			for k := 1; k < len(m) && k <= len(s); k++ {
				if strings.HasSuffix(s, m[:k]) && k > held {
					held = k
				}
			}
		}
		return held
	}
	for _, c := range []struct {
		s       string
		markers []string
		want    int
	}{
		{"text <tool_c", []string{"<tool_call>"}, 7},
		{"text <tool_call>", []string{"<tool_call>"}, 0},
		{"a <b <", []string{"<tool_call>"}, 1},
		{"x [TOOL", []string{"<tool_call>", "[TOOL_CALLS]"}, 5},
		{"<<", []string{"<<<"}, 2},
		{"", []string{"<a>"}, 0},
		{"天气 <｜tool", []string{"<｜tool▁calls▁begin｜>"}, len("<｜tool")},
	} {
		if got := HeldTail(c.s, c.markers...); got != c.want {
			t.Errorf("HeldTail(%q, %q) = %d, want %d", c.s, c.markers, got, c.want)
		}
	}
	markers := []string{"<tool_call>", "<<a<", "[TOOL_CALLS]", "<|x|>"}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := "<tol_ca>[TOLS]|x "
	for i := 0; i < 20000; i++ {
		b := make([]byte, rng.IntN(16))
		for j := range b {
			b[j] = alphabet[rng.IntN(len(alphabet))]
		}
		s := string(b)
		for _, ms := range [][]string{markers, markers[:1], markers[1:2]} {
			if got, want := HeldTail(s, ms...), naive(s, ms...); got != want {
				t.Fatalf("HeldTail(%q, %q) = %d, want %d", s, ms, got, want)
			}
		}
	}
}
