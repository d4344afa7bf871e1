package opencode_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/opencode"
	"github.com/harnessflow/harnessflow/prompts"
	"github.com/harnessflow/harnessflow/protocol"
)

// conversation builds the requests Codex sends in one conversation: the
// first turn, then each later turn with the answer and a call appended.
type conversation struct {
	key   string
	input []string
}

func newConversation(key, prompt string) *conversation {
	return &conversation{key: key, input: []string{
		`{"type":"message","role":"developer","content":[{"type":"input_text","text":"You are a coding agent."}]}`,
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n<cwd>/w</cwd>\n</environment_context>"}]}`,
		`{"type":"message","role":"user","content":[{"type":"input_text","text":` + quote(prompt) + `}]}`,
	}}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// next appends one exchange (a call, its output, an answer, the next user
// message).
func (c *conversation) next(n int) {
	id := c.key + "-" + string(rune('a'+n))
	c.input = append(c.input,
		`{"type":"function_call","call_id":"`+id+`","name":"exec_command","arguments":"{\"cmd\":\"ls\"}"}`,
		`{"type":"function_call_output","call_id":"`+id+`","output":"x"}`,
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}`,
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"again"}]}`)
}

func (c *conversation) request(t *testing.T) *protocol.ResponsesRequest {
	t.Helper()
	req, err := protocol.DecodeRequest([]byte(`{"model":"m","prompt_cache_key":"` + c.key + `","stream":true,"input":[` +
		strings.Join(c.input, ",") + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// plan shapes a request with a fresh config (as a separate proxy would).
func plan(t *testing.T, req *protocol.ResponsesRequest) json.RawMessage {
	t.Helper()
	cfg := harness.Config{Now: func() time.Time { return time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC) }}
	turn, err := harness.Plan(context.Background(), cfg, harness.NameOpenCode, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	return turn.Shaped.TitleRequest
}

// titleText returns the quoted user text of a title request.
func titleText(t *testing.T, title json.RawMessage) string {
	t.Helper()
	var body struct {
		Messages []struct{ Role, Content string }
		Tools    []any
	}
	if err := json.Unmarshal(title, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Messages) != 3 || body.Tools != nil {
		t.Fatalf("title request: %s", title)
	}
	return body.Messages[2].Content
}

// The title request comes with the first turn of each conversation and
// with no later turn, for two conversations interleaved.
func TestTitleFirstTurnOnly(t *testing.T) {
	a, b := newConversation("conv-a", "Fix the parser"), newConversation("conv-b", "Write docs")
	if got := titleText(t, plan(t, a.request(t))); got != `"Fix the parser"` {
		t.Errorf("conversation a, first turn: title text %s", got)
	}
	a.next(0)
	if got := titleText(t, plan(t, b.request(t))); got != `"Write docs"` {
		t.Errorf("conversation b, first turn: title text %s", got)
	}
	for i := range 3 {
		if title := plan(t, a.request(t)); title != nil {
			t.Errorf("conversation a, turn %d: title request %s", i+2, title)
		}
		b.next(i)
		if title := plan(t, b.request(t)); title != nil {
			t.Errorf("conversation b, turn %d: title request %s", i+2, title)
		}
		a.next(i + 1)
	}
}

// Two separately configured plans of the same first turn both carry the
// title request, identical; two of a later turn carry none: nothing is
// remembered between plans.
func TestTitleStateless(t *testing.T) {
	c := newConversation("conv-s", "Hello there")
	first, second := plan(t, c.request(t)), plan(t, c.request(t))
	if first == nil || string(first) != string(second) {
		t.Fatalf("first turn: title requests %s and %s, want two identical ones", first, second)
	}
	c.next(0)
	if x, y := plan(t, c.request(t)), plan(t, c.request(t)); x != nil || y != nil {
		t.Errorf("later turn: title requests %s, %s", x, y)
	}
}

func TestFirstTurn(t *testing.T) {
	for _, tt := range []struct {
		input string
		want  bool
	}{
		{`[]`, true},
		{`[{"type":"message","role":"developer","content":[]},{"type":"message","role":"user","content":[]}]`, true},
		{`[{"type":"message","role":"user","content":[]},{"type":"message","role":"assistant","content":[]}]`, false},
		{`[{"type":"message","role":"system","content":[]}]`, false},
		{`[{"type":"additional_tools","role":"developer","tools":[]},{"type":"message","role":"user","content":[]}]`, false},
		{`[{"type":"message","role":"user","content":[]},{"type":"function_call_output","call_id":"x","output":"o"}]`, false},
	} {
		req, err := protocol.DecodeRequest([]byte(`{"model":"m","input":` + tt.input + `}`))
		if err != nil {
			t.Fatal(err)
		}
		if got := opencode.FirstTurn(req); got != tt.want {
			t.Errorf("FirstTurn(%s) = %v, want %v", tt.input, got, tt.want)
		}
	}
}

func TestDetectAgent(t *testing.T) {
	pack := prompts.Default()
	search, err := pack.Text(harness.NameOpenCode, "search")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		instructions string
		want         opencode.Agent
	}{
		{"", opencode.AgentMain},
		{"You are helpful.", opencode.AgentMain},
		{search, opencode.AgentSearch},
		{strings.TrimRight(search, "\n") + " \n\t", opencode.AgentSearch},
		{"  " + search, opencode.AgentMain},
		{"opencode-task-agent", opencode.AgentTask},
		{"opencode-task-agent\n", opencode.AgentTask},
		{"opencode-task-agent please", opencode.AgentMain},
	} {
		got, err := opencode.DetectAgent(&protocol.ResponsesRequest{Instructions: tt.instructions}, pack)
		if err != nil || got != tt.want {
			t.Errorf("DetectAgent(%.30q) = %v, %v; want %v", tt.instructions, got, err, tt.want)
		}
	}
}

func TestQuoteText(t *testing.T) {
	for in, want := range map[string]string{
		"hi":               `"hi"`,
		"a\nb":             "\"a\nb\"",
		`say "x"`:          `"say \"x\""`,
		`printf 'a\n'`:     "\"printf 'a\n'\"",
		"tab\there":        `"tab\there"`,
		"":                 `""`,
		`back\slash`:       `"back\\slash"`,
		"<b>&amp;</b> ünï": `"<b>&amp;</b> ünï"`,
	} {
		if got := opencode.QuoteText(in); got != want {
			t.Errorf("QuoteText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReserialize(t *testing.T) {
	for _, tt := range []struct{ tool, in, want string }{
		{"bash", `{"description":"d","command":"c"}`, `{"description":"d","command":"c"}`},
		{"bash", `{"command":["ls"]}`, `{"command":["ls"]}`},
		{"read", `{"filePath":"f","limit":null}`, `{"filePath":"f","limit":null}`},
		{"edit", `{"filePath":"f","oldString":"o"}`, `{"filePath":"f","oldString":"o"}`},
		{"todowrite", `{"todos":"x"}`, `{"todos":"x"}`},
		{"todowrite", `{"todos":[]}`, `{"todos":[]}`},
		{"grep", `{"pattern":"p","include":7}`, `{"pattern":"p"}`},
		{"task", `{"prompt":"p","description":"d"}`, `{"prompt":"p","description":"d"}`},
		{"other", `{ "z" : 1,"a":2 }`, `{"z":1,"a":2}`},
		{"other", `not json`, `not json`},
	} {
		if got := opencode.Reserialize(tt.tool, tt.in); got != tt.want {
			t.Errorf("Reserialize(%s, %s) = %s, want %s", tt.tool, tt.in, got, tt.want)
		}
	}
}

// Valid JSON stays valid JSON; nothing panics.
func FuzzReserialize(f *testing.F) {
	for _, tool := range opencode.ToolNames {
		f.Add(tool, `{"command":"ls","timeout":1,"workdir":"/","description":"d","filePath":"f","content":"c"}`)
		f.Add(tool, `{"todos":[{"content":"a","status":"completed","priority":1}]}`)
		f.Add(tool, `{"pattern":"p","path":"x","include":"*.go","oldString":"o","newString":"n"}`)
	}
	f.Add("x", `[`)
	f.Fuzz(func(t *testing.T, tool, args string) {
		got := opencode.Reserialize(tool, args)
		if json.Valid([]byte(args)) && !json.Valid([]byte(got)) {
			t.Errorf("Reserialize(%q, %q) = %q: not JSON", tool, args, got)
		}
		_ = opencode.QuoteText(args)
	})
}
