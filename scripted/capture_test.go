package scripted_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/scripted"
)

// {{capture}} quotes what a text-protocol harness sent back: the last user
// message (an observation) or, when a tool result follows it, that result.
func TestCapture(t *testing.T) {
	yes, no := true, false
	s := &scripted.Script{Turns: []scripted.Turn{
		{When: &scripted.Match{ToolResult: &yes}, Text: "Tool said: {{capture}}", Capture: `(?s)<output>\n(.*?)</output>`},
		{When: &scripted.Match{UserContains: "OBSERVATION:", ToolResult: &no}, Text: "Saw: {{capture}}.", Capture: `(?s)OBSERVATION:\n(.*)`},
		{Text: "none: [{{capture}}]", Capture: `nothing here`},
	}}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	h := scripted.New(s)
	for _, c := range []struct{ messages, want string }{
		{`{"role":"user","content":"task"},{"role":"assistant","content":"x"},{"role":"user","content":"OBSERVATION:\nfile made\n"}`, "Saw: file made."},
		{`{"role":"user","content":"task"},{"role":"assistant","content":"","tool_calls":[{"id":"c","type":"function","function":{"name":"bash","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"<returncode>0</returncode>\n<output>\nok\n</output>"}`, "Tool said: ok"},
		{`{"role":"user","content":"hello"}`, "none: []"},
	} {
		w := serve(t, h, http.MethodPost, "/v1/chat/completions", `{"model":"m","messages":[`+c.messages+`]}`)
		var out struct {
			Choices []struct {
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil || len(out.Choices) != 1 {
			t.Fatalf("answer %s: %v", w.Body, err)
		}
		if got := out.Choices[0].Message.Content; got != c.want {
			t.Errorf("text %q, want %q", got, c.want)
		}
	}
	bad := &scripted.Script{Turns: []scripted.Turn{{Text: "x", Capture: "("}}}
	if err := bad.Check(); err == nil || !strings.Contains(err.Error(), "capture") {
		t.Errorf("Check of a bad capture: %v", err)
	}
}
