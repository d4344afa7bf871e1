package textcall

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const hmModel = "openai/gpt-oss-120b"

func hmCases() []replyCase {
	return []replyCase{
		{
			name: "analysis then a call, special tokens kept",
			input: "<|channel|>analysis<|message|>Need to list files.<|end|>" +
				"<|start|>assistant<|channel|>commentary to=functions.shell <|constrain|>json<|message|>{\"command\":[\"ls\",\"-la\"]}<|call|>",
			want: Reply{Reasoning: "Need to list files.", Calls: []Call{fmtCall("shell", `{"command":["ls","-la"]}`)}},
		},
		{
			name:  "analysis then final",
			input: "<|channel|>analysis<|message|>User greets.<|end|><|start|>assistant<|channel|>final<|message|>Hello! How can I help?<|return|>",
			want:  Reply{Reasoning: "User greets.", Content: "Hello! How can I help?"},
		},
		{
			name: "recipient in the role part",
			input: "<|channel|>analysis<|message|>Run it.<|end|>" +
				"<|start|>assistant to=functions.shell<|channel|>commentary json<|message|>{\"command\":[\"pwd\"]}<|call|>",
			want: Reply{Reasoning: "Run it.", Calls: []Call{fmtCall("shell", `{"command":["pwd"]}`)}},
		},
		{
			name:  "reply opening with the role part's recipient",
			input: " to=functions.shell<|channel|>commentary <|constrain|>json<|message|>{\"command\":[\"ls\"]}",
			want:  Reply{Calls: []Call{fmtCall("shell", `{"command":["ls"]}`)}},
		},
		{
			name:  "stop token <|call|> left out: recovered",
			input: "<|channel|>commentary to=functions.apply_patch <|constrain|>json<|message|>{\"input\":\"*** Begin Patch\\n*** End Patch\"}",
			want:  Reply{Calls: []Call{fmtCall("apply_patch", `{"input":"*** Begin Patch\n*** End Patch"}`)}},
		},
		{
			name: "preamble in commentary, then two calls",
			input: "<|channel|>commentary<|message|>I'll look around first.<|end|>" +
				"<|start|>assistant<|channel|>commentary to=functions.shell <|constrain|>json<|message|>{\"command\":[\"ls\"]}<|call|>" +
				"<|start|>assistant<|channel|>commentary to=functions.shell <|constrain|>json<|message|>{\"command\":[\"cat\",\"a}b\\\"{\"]}<|call|>",
			want: Reply{Content: "I'll look around first.", Calls: []Call{
				fmtCall("shell", `{"command":["ls"]}`), fmtCall("shell", `{"command":["cat","a}b\"{"]}`),
			}},
		},
		{
			name:  "a built-in recipient keeps its name",
			input: "<|channel|>analysis to=browser.search <|constrain|>json<|message|>{\"query\":\"go generics\"}<|call|>",
			want:  Reply{Calls: []Call{fmtCall("browser.search", `{"query":"go generics"}`)}},
		},
		{
			name:  "arguments cut at the end: malformed",
			input: "<|channel|>analysis<|message|>Go.<|end|><|start|>assistant<|channel|>commentary to=functions.shell <|constrain|>json<|message|>{\"command\":[\"l",
			want: Reply{Reasoning: "Go.", Content: "<|start|>assistant<|channel|>commentary to=functions.shell <|constrain|>json<|message|>{\"command\":[\"l",
				Malformed: []string{"unterminated harmony call arguments"}},
		},
		{
			name:  "arguments that are not JSON: malformed, the rest read on",
			input: "<|channel|>commentary to=functions.shell json<|message|>{\"command\": ls}<|call|><|start|>assistant<|channel|>final<|message|>Sorry.",
			want: Reply{Content: "<|channel|>commentary to=functions.shell json<|message|>{\"command\": ls}<|call|>Sorry.",
				Malformed: []string{"harmony call arguments are not valid JSON"}},
		},
		{
			name:  "arguments not an object",
			input: "<|channel|>commentary to=functions.shell json<|message|>ls -la<|call|>",
			want: Reply{Content: "<|channel|>commentary to=functions.shell json<|message|>ls -la<|call|>",
				Malformed: []string{"harmony call arguments are not a JSON object"}},
		},
		{
			name:  "degraded, model named: analysis then a call",
			model: hmModel,
			input: "analysisNeed to list the files.assistantcommentary to=functions.shell json{\"command\":[\"ls\",\"-la\"]}",
			want:  Reply{Reasoning: "Need to list the files.", Calls: []Call{fmtCall("shell", `{"command":["ls","-la"]}`)}},
		},
		{
			name:  "degraded, model named: recipient in the role part",
			model: hmModel,
			input: "analysisList them.assistant to=functions.shellcommentary json{\"command\":[\"ls\"]}",
			want:  Reply{Reasoning: "List them.", Calls: []Call{fmtCall("shell", `{"command":["ls"]}`)}},
		},
		{
			name:  "degraded without a model name: glued analysis opens it",
			input: "analysisUser says \"Hello World!\" Probably greeting.assistantfinalHello! How can I help you today?",
			want:  Reply{Reasoning: "User says \"Hello World!\" Probably greeting.", Content: "Hello! How can I help you today?"},
		},
		{
			name:  "degraded call opening the reply without a model name",
			input: "commentary to=functions.shell json{\"command\":[\"git\",\"status\"]}",
			want:  Reply{Calls: []Call{fmtCall("shell", `{"command":["git","status"]}`)}},
		},
		{
			name:  "degraded, model named: preamble, call, final",
			model: hmModel,
			input: "commentary**Plan**: check.assistantcommentary to=functions.shell json{\"command\":[\"ls\"]}assistantfinalDone.",
			want:  Reply{Content: "**Plan**: check.Done.", Calls: []Call{fmtCall("shell", `{"command":["ls"]}`)}},
		},
		{
			name:  "prose starting with a channel word is text",
			input: "analysis of the code shows the assistantfinal step is missing.",
			want:  Reply{Content: "analysis of the code shows the assistantfinal step is missing."},
		},
		{
			name:  "prose starting with a channel word is text, model named",
			model: hmModel,
			input: "final answer: the assistant to= field is empty",
			want:  Reply{Content: "final answer: the assistant to= field is empty"},
		},
		{
			name:  "white space before a header that is none is kept",
			input: "\n to=functions.x y {}",
			want:  Reply{Content: "\n to=functions.x y {}"},
		},
		{
			name:  "white space before an unterminated header is kept",
			input: " \n<|channel|>fin",
			want:  Reply{Content: " \n<|channel|>fin", Malformed: []string{"unterminated harmony header"}},
		},
		{
			name:  "a channel word with punctuation is prose, model named",
			model: hmModel,
			input: "analysis: the loop never ends.",
			want:  Reply{Content: "analysis: the loop never ends."},
		},
		{
			name:  "degraded reasoning opening with markdown, model named",
			model: hmModel,
			input: "analysis**Goal**: fix it.assistantfinalFixed.",
			want:  Reply{Reasoning: "**Goal**: fix it.", Content: "Fixed."},
		},
		{
			name:  "plain reply",
			input: "Just text, with <b>tags</b> and a <| that is no token.",
			want:  Reply{Content: "Just text, with <b>tags</b> and a <| that is no token."},
		},
		{
			name:  "unterminated header at the end",
			input: "Hi <|channel|>final",
			want:  Reply{Content: "Hi <|channel|>final", Malformed: []string{"unterminated harmony header"}},
		},
		{
			name:  "header with a stray token",
			input: "<|channel|>final<|end|>x<|message|>y",
			want:  Reply{Content: "<|channel|>final<|end|>x<|message|>y", Malformed: []string{"bad harmony header"}},
		},
	}
}

func TestGPTOSSReplies(t *testing.T) { runReplyCases(t, "gpt_oss", hmCases()) }

func TestGPTOSSGoldens(t *testing.T) { runGoldens(t, "gpt_oss", "gpt_oss") }

func TestGPTOSSAuto(t *testing.T) {
	cases := []struct {
		name, model, input, format string
		calls                      int
		reasoning                  string
	}{
		{"special tokens", "", "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>commentary to=functions.shell <|constrain|>json<|message|>{}<|call|>", "gpt_oss", 1, "Think."},
		{"degraded, model named", hmModel, "analysisThink.assistantcommentary to=functions.shell json{\"command\":[\"ls\"]}", "gpt_oss", 1, "Think."},
		{"degraded call mid-reply, model named", "gpt-oss:20b", "Sure. assistantcommentary to=functions.shell json{\"command\":[\"ls\"]}", "gpt_oss", 1, ""},
		{"degraded, no model name: left alone", "", "analysisThink.assistantcommentary to=functions.shell json{}", "", 0, ""},
		{"prose, model named", hmModel, "analysis of the problem: the final step fails.", "", 0, ""},
		{"prose mentioning a token", "", "The <|channel|> token starts a header.", "", 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			chosen, got := autoReply(t, c.model, c.input)
			if chosen != c.format || len(got.Calls) != c.calls || got.Reasoning != c.reasoning {
				t.Errorf("auto chose %q with %d calls and reasoning %q, want %q, %d, %q (reply %+v)",
					chosen, len(got.Calls), got.Reasoning, c.format, c.calls, c.reasoning, got)
			}
			if c.calls == 0 && got.Content != c.input {
				t.Errorf("content %q, want the input", got.Content)
			}
		})
	}
}

func TestGPTOSSStreamsArgs(t *testing.T) {
	p, _ := NewParser("gpt_oss", Config{})
	out := p.Feed(nil, "<|channel|>commentary to=functions.shell <|constrain|>json<|message|>{\"command\":[\"ls\",")
	var args string
	for _, e := range out {
		if e.Kind == CallArgs {
			args += e.Text
		}
	}
	if want := `{"command":["ls",`; args != want || out[0].Kind != CallBegin || out[0].Name != "shell" {
		t.Fatalf("events %+v, want the call begun and args %q", out, want)
	}
	// Reasoning streams too.
	p, _ = NewParser("gpt_oss", Config{})
	out = p.Feed(nil, "<|channel|>analysis<|message|>Thinking about it<|en")
	if len(out) != 1 || out[0].Kind != Reasoning || out[0].Text != "Thinking about it" {
		t.Fatalf("events %+v, want the reasoning so far", out)
	}
}

func TestGPTOSSQuiet(t *testing.T) {
	p, _ := NewParser("gpt_oss", Config{})
	p.Feed(nil, "<|channel|>final<|message|>Hi")
	if !p.Quiet(" there, all good") || p.Quiet("x<y") {
		t.Fatal("Quiet misjudges a final body")
	}
	q, _ := NewParser("gpt_oss", Config{Model: hmModel})
	q.Feed(nil, "<|channel|>final<|message|>Hi")
	if q.Quiet("the assistant") || q.Quiet("an as") || !q.Quiet("no marker here") {
		t.Fatal("Quiet misjudges degraded markers")
	}
}

func FuzzGPTOSS(f *testing.F) {
	var seeds []string
	for _, c := range hmCases() {
		seeds = append(seeds, c.input)
	}
	seeds = append(seeds, strings.Repeat("<|start|>assistant", 3), "analysisXassistantfinalY")
	fuzzFormat(f, "gpt_oss", false, seeds...)
}

// FuzzGPTOSSModel fuzzes gpt_oss with the model named, so degraded
// markers are read everywhere: chunked replay equals whole, the events
// keep the contract, and Quiet holds its promise.
func FuzzGPTOSSModel(f *testing.F) {
	for _, c := range hmCases() {
		f.Add(c.input, uint64(1))
	}
	f.Fuzz(func(t *testing.T, input string, seed uint64) {
		cfg := Config{Model: hmModel}
		newParser := func() Parser { p, _ := NewParser("gpt_oss", cfg); return p }
		whole := coalesce(feed(t, newParser, input, nil))
		rng := rand.New(rand.NewPCG(seed, 5))
		sizes := randomSizes(rng, len(input), 1+rng.IntN(8))
		if d := cmp.Diff(whole, coalesce(feed(t, newParser, input, sizes))); d != "" {
			t.Fatalf("chunked replay differs (-whole +chunks):\n%s", d)
		}
		if _, err := Collect(whole); err != nil {
			t.Fatal(err)
		}
		checkQuiet(t, newParser(), input, sizes)
	})
}

// TestQuietContract checks Quiet against Feed on every table case of the
// GLM, MiniMax and harmony formats, cut byte by byte and in chunks.
func TestQuietContract(t *testing.T) {
	sets := []struct {
		format string
		cases  []replyCase
	}{{"glm45", glmCases()}, {"glm47", glmCases()}, {"minimax_m2", mmCases()}, {"gpt_oss", hmCases()}}
	for _, set := range sets {
		for _, c := range set.cases {
			for _, sizes := range [][]int{ones(len(c.input)), {3, 5, 7, 11, 13, 17, 19, 23}} {
				p, _ := NewParser(set.format, Config{Model: c.model})
				checkQuiet(t, p, c.input, sizes)
			}
		}
	}
}
