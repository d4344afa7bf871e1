package qwencode_test

import (
	"context"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/protocol"
)

// Qwen Code's own tool_search and tool_call run the client's tool search
// and the tools it loaded: tool_search has kind tool_search, tool_call
// kind tool_call, the loaded tool's wire name is in the kinds (not in the
// tools), and a call of it in the history is shown as Qwen Code's
// tool_call. Without a client tool_search nothing changes.
func TestToolSearchDispatch(t *testing.T) {
	const history = `"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"echo"}]},
	{"type":"tool_search_call","call_id":"c1","execution":"client","arguments":{"query":"echo"}},
	{"type":"tool_search_output","call_id":"c1","status":"completed","execution":"client","tools":[{"type":"namespace","name":"mcp__probe","description":"d","tools":[{"type":"function","name":"echo_text","description":"e","defer_loading":true,"parameters":{"type":"object"}}]}]},
	{"type":"function_call","call_id":"c2","name":"echo_text","namespace":"mcp__probe","arguments":"{\"text\":\"hi\"}"},
	{"type":"function_call_output","call_id":"c2","output":"hi"}]`
	const shell = `{"type":"function","name":"exec_command","parameters":{"type":"object","properties":{"cmd":{"type":"string"}}}}`
	for _, c := range []struct {
		name  string
		tools string
		on    bool
	}{
		{"with search", `[` + shell + `,{"type":"tool_search","execution":"client","description":"s","parameters":{"type":"object","properties":{"query":{"type":"string"}}}}]`, true},
		{"without", `[` + shell + `]`, false},
	} {
		req, err := protocol.DecodeRequest([]byte(`{"model":"m","stream":true,"tools":` + c.tools + `,` + history + `}`))
		if err != nil {
			t.Fatal(err)
		}
		turn, err := harness.Plan(context.Background(), harness.Config{Wire: harness.WireChat}, harness.NameQwenCode, req, nil)
		if err != nil {
			t.Fatal(err)
		}
		k := turn.Shaped.ToolKinds
		body := string(turn.Shaped.Body)
		dispatched := strings.Contains(body, `"name":"tool_call","arguments":"{\"name\":\"mcp__probe_echo_text\",\"arguments\":{\"text\":\"hi\"}}"`)
		if c.on {
			if k["tool_search"].Kind != protocol.KindToolSearch || k["tool_call"].Kind != protocol.KindToolCall ||
				k["mcp__probe_echo_text"] != (protocol.ToolOutputKind{Kind: protocol.KindNamespacedFunction, Name: "echo_text", Namespace: "mcp__probe"}) {
				t.Errorf("%s: kinds %v", c.name, k)
			}
			if !dispatched || strings.Contains(body, `"name":"mcp__probe_echo_text","description"`) {
				t.Errorf("%s: the loaded tool's call is not shown as tool_call (or the tool is offered):\n%s", c.name, body)
			}
		} else if k["tool_search"].Kind != protocol.KindFunction || dispatched {
			t.Errorf("%s: kinds %v, dispatched %t", c.name, k, dispatched)
		}
	}
}
