package anthropicstream

import (
	"testing"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/stages/streamtest"
)

// TestFixtures replays testdata/fixtures/*.sse (copied from the shared wire
// corpus) and checks them against their expect.json.
func TestFixtures(t *testing.T) {
	streamtest.RunFixtures(t, pipeline.Must(Graph(Options{})), streamtest.LoadFixtures(t, fixtureDir))
}

// TestFixtureCheckerCanFail makes sure the expectation check is not vacuous:
// every tampered expectation must be reported.
func TestFixtureCheckerCanFail(t *testing.T) {
	tool := streamtest.ToolCall
	streamtest.CheckTampers(t, pipeline.Must(Graph(Options{})), streamtest.LoadFixtures(t, fixtureDir), streamtest.Tampers{
		"a01": {
			func(e map[string]any) { e["text"] = "other" },
			func(e map[string]any) { e["text_blocks"] = []any{"a", "b"} },
			func(e map[string]any) { e["usage"].(map[string]any)["input_tokens"] = 412.0 },
			func(e map[string]any) { e["usage"].(map[string]any)["total_tokens"] = 2519.0 },
			func(e map[string]any) { e["response_id"] = "msg_x" },
			func(e map[string]any) { e["model"] = "claude-x" },
			func(e map[string]any) { e["terminal"] = "eof_without_terminal" },
			func(e map[string]any) { e["new_key"] = 1.0 },
			func(e map[string]any) { e["finish_reason"] = "length" },
		},
		"a02": {
			func(e map[string]any) { e["reasoning"].(map[string]any)["signature"] = "forged" },
			func(e map[string]any) { e["reasoning"].(map[string]any)["text"] = "x" },
			func(e map[string]any) { e["reasoning"] = nil },
		},
		"a03": {
			func(e map[string]any) {
				tool(e, 0)["arguments"] = `{"command":"go test ./internal/wire/... -run TestDecoder -count=1","timeout":120}`
			},
			func(e map[string]any) { tool(e, 0)["arguments_json"] = map[string]any{} },
			func(e map[string]any) { tool(e, 0)["id"] = "toolu_other" },
			func(e map[string]any) { e["finish_reason"] = "stop" },
		},
		"a04": {
			func(e map[string]any) { tool(e, 1)["name"] = "other" },
			func(e map[string]any) { e["tool_calls"] = e["tool_calls"].([]any)[:1] },
			func(e map[string]any) {
				e["server_tool_calls"] = []any{map[string]any{"id": "toolu_01WxYz0123456789AbCdEfGh"}}
			},
		},
		"a05": {
			func(e map[string]any) { e["error"].(map[string]any)["retryable"] = false },
			func(e map[string]any) { e["error"].(map[string]any)["type"] = "api_error" },
			func(e map[string]any) { e["error"].(map[string]any)["request_id"] = "req_x" },
			func(e map[string]any) { e["error"] = nil },
			func(e map[string]any) { e["usage"] = map[string]any{"input_tokens": 845.0} },
			func(e map[string]any) { e["finish_reason"] = "stop" },
			func(e map[string]any) { e["response_id"] = "msg_x" },
		},
	})
}
