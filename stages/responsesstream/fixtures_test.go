package responsesstream

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
		"r01": {
			func(e map[string]any) { e["text"] = "other" },
			func(e map[string]any) { e["reasoning"].(map[string]any)["summary"] = []any{"x"} },
			func(e map[string]any) { e["reasoning"].(map[string]any)["encrypted_content"] = "forged" },
			func(e map[string]any) { e["items"].([]any)[1].(map[string]any)["id"] = "msg_x" },
			func(e map[string]any) { e["usage"].(map[string]any)["cached_input_tokens"] = 0.0 },
			func(e map[string]any) { e["usage"].(map[string]any)["reasoning_output_tokens"] = 0.0 },
			func(e map[string]any) { e["response_id"] = "resp_x" },
			func(e map[string]any) { e["model"] = "gpt-x" },
			func(e map[string]any) { e["status"] = "failed" },
			func(e map[string]any) { e["finish_reason"] = "tool_calls" },
		},
		"r02": {
			func(e map[string]any) { tool(e, 0)["arguments"] = "{}" },
			func(e map[string]any) { tool(e, 0)["item_id"] = "fc_x" },
			func(e map[string]any) { tool(e, 1)["kind"] = "function" },
			func(e map[string]any) { tool(e, 1)["input"] = "*** Begin Patch\n" },
			func(e map[string]any) { tool(e, 1)["id"] = "call_x" },
			func(e map[string]any) { e["finish_reason"] = "stop" },
		},
		"r03": {
			func(e map[string]any) { e["error"].(map[string]any)["code"] = "rate_limit_exceeded" },
			func(e map[string]any) { e["error"].(map[string]any)["retryable"] = false },
			func(e map[string]any) { e["terminal"] = "response.completed" },
			func(e map[string]any) { e["response_id"] = "resp_x" },
			func(e map[string]any) { e["finish_reason"] = nil },
		},
		"r05": {
			func(e map[string]any) { e["error"].(map[string]any)["retry_after_ms"] = 126.0 },
			func(e map[string]any) { e["error"].(map[string]any)["message"] = "x" },
			func(e map[string]any) { e["error"].(map[string]any)["kind"] = "upstream_truncated" },
		},
	})
}
