package chatstream

import (
	"encoding/json"
	"testing"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/streamtest"
)

// loadFixtures reads testdata/fixtures (copied with their schema,
// testdata/fixtures/README.md, from the shared corpus).
func loadFixtures(t testing.TB) []streamtest.Fixture {
	t.Helper()
	fs := streamtest.LoadFixtures(t, fixtureDir)
	if len(fs) < 15 {
		t.Fatalf("want the chat fixtures in %s, found %d", fixtureDir, len(fs))
	}
	return fs
}

// quirk is what a fixture says beside its expectation about an opt-in
// quirk.
type quirk struct {
	Requires string `json:"requires_quirk"`
	Without  *struct {
		Arguments *string `json:"tool_calls_arguments"`
		Valid     *bool   `json:"arguments_valid_json"`
	} `json:"expected_without_quirk"`
}

// optionsFor returns the Options a fixture's expectation implies: custom
// tool kinds for its custom calls, and the quirk it requires.
func optionsFor(t testing.TB, f streamtest.Fixture) (Options, quirk) {
	t.Helper()
	var q quirk
	if err := json.Unmarshal(f.Expect, &q); err != nil {
		t.Fatal(err)
	}
	if q.Requires != "" && q.Requires != "cumulative_arguments" {
		t.Fatalf("unknown quirk %q", q.Requires)
	}
	opts := Options{ToolKinds: protocol.ToolKinds{}, CumulativeArguments: q.Requires != ""}
	calls, _ := f.Expected["tool_calls"].([]any)
	for _, c := range calls {
		if c := c.(map[string]any); c["kind"] == protocol.KindCustom {
			opts.ToolKinds[c["name"].(string)] = protocol.ToolOutputKind{Kind: protocol.KindCustom}
		}
	}
	return opts, q
}

// TestFixtures replays every fixture (see streamtest.CheckFixture), checks
// it against its expectation, and checks what only chat streams show: the
// upstream's finish reason on the End step, and that a failed stream emits
// no message or reasoning done item.
func TestFixtures(t *testing.T) {
	for _, f := range loadFixtures(t) {
		t.Run(f.Name, func(t *testing.T) {
			opts, q := optionsFor(t, f)
			g := pipeline.Must(spyEnd(pipeline.Must(Graph(opts))))
			o := streamtest.CheckFixture(t, g, f)
			end := endOf(t, o)
			native, _ := f.Expected["native_finish_reason"].(string)
			if _, given := f.Expected["native_finish_reason"]; given && end.FinishReason != native {
				t.Errorf("native finish reason %q, want %q", end.FinishReason, native)
			}
			if end.Err != nil && end.Err.Kind == protocol.ErrKindTruncated && native == "" && end.FinishReason != "" {
				t.Errorf("truncated stream saw finish reason %q", end.FinishReason)
			}
			if last := o.Events[len(o.Events)-1]; last.Type == protocol.EventFailed {
				for _, e := range o.Events {
					switch e.Item.(type) {
					case *protocol.Message, *protocol.Reasoning:
						if e.Type == protocol.EventOutputItemDone {
							t.Errorf("a failed stream emitted a done %s item", e.Item.ItemType())
						}
					}
				}
			}
			if q.Requires != "" {
				checkWithoutQuirk(t, f, q)
			}
		})
	}
}

// checkWithoutQuirk replays a quirk fixture with the quirk off and checks
// expected_without_quirk: the arguments are surfaced as concatenated, not
// guessed.
func checkWithoutQuirk(t *testing.T, f streamtest.Fixture, q quirk) {
	w := q.Without
	if w == nil || w.Arguments == nil {
		t.Fatal("no expected_without_quirk.tool_calls_arguments")
	}
	o := streamtest.Replay(t, pipeline.Must(Graph(Options{})), f.Data)
	if o.Err != nil {
		t.Fatalf("without quirk: run error %v", o.Err)
	}
	var calls []*protocol.FunctionCall
	for _, e := range o.Events {
		if c, ok := e.Item.(*protocol.FunctionCall); ok && e.Type == protocol.EventOutputItemDone {
			calls = append(calls, c)
		}
	}
	if len(calls) != 1 {
		t.Fatalf("without quirk: %d calls, want 1", len(calls))
	}
	if args := calls[0].Arguments; args != *w.Arguments {
		t.Errorf("without quirk: arguments %q, want %q", args, *w.Arguments)
	} else if w.Valid != nil && json.Valid([]byte(args)) != *w.Valid {
		t.Errorf("without quirk: arguments valid JSON = %v, want %v", !*w.Valid, *w.Valid)
	}
}

// TestFixtureCheckerCanFail makes sure the expectation check is not
// vacuous: every tampered expectation must be reported.
func TestFixtureCheckerCanFail(t *testing.T) {
	if ExtraContentKey != streamtest.ProviderMetadataKey {
		t.Fatalf("streamtest checks provider metadata under %q, not %q", streamtest.ProviderMetadataKey, ExtraContentKey)
	}
	tool := streamtest.ToolCall
	streamtest.CheckTampers(t, pipeline.Must(Graph(Options{})), loadFixtures(t), streamtest.Tampers{
		"c01": {
			func(e map[string]any) { e["text"] = "other" },
			func(e map[string]any) { e["finish_reason"] = "length" },
			func(e map[string]any) { e["usage"] = map[string]any{"input_tokens": 1.0} },
			func(e map[string]any) { e["terminal"] = "eof_without_terminal" },
		},
		"c02": {
			func(e map[string]any) { e["reasoning"].(map[string]any)["text"] = "x" },
			func(e map[string]any) { e["reasoning"] = nil },
			func(e map[string]any) { e["usage"].(map[string]any)["reasoning_output_tokens"] = 0.0 },
		},
		"c06": {
			func(e map[string]any) { e["finish_reason"] = "stop" },
			func(e map[string]any) { tool(e, 0)["provider_metadata"] = map[string]any{"google": map[string]any{}} },
			func(e map[string]any) { tool(e, 1)["arguments"] = `{"path": "docs/ARCHITECTURE.md"}` },
			func(e map[string]any) { tool(e, 1)["arguments_json"] = map[string]any{} },
			func(e map[string]any) { tool(e, 1)["id"] = "function-call-1" },
			func(e map[string]any) { e["tool_calls"] = e["tool_calls"].([]any)[:1] },
		},
		"c08": {
			func(e map[string]any) { e["response_id"] = "chatcmpl-x" },
			func(e map[string]any) { e["model"] = "gpt-x" },
		},
		"c09": {
			func(e map[string]any) { e["finish_reason"] = "error" },
			func(e map[string]any) { e["error"].(map[string]any)["retryable"] = false },
			func(e map[string]any) { e["tool_calls"] = e["partial_tool_calls"] },
		},
		"c10": {
			func(e map[string]any) { e["error"].(map[string]any)["kind"] = "upstream_truncated" },
			func(e map[string]any) { e["error"].(map[string]any)["type"] = "api_error" },
			func(e map[string]any) { e["error"].(map[string]any)["code"] = "server_error" },
			func(e map[string]any) { e["error"].(map[string]any)["message"] = "x" },
			func(e map[string]any) { e["finish_reason"] = nil },
		},
		"c13": {
			func(e map[string]any) { tool(e, 0)["arguments_len_bytes"] = 243795.0 },
			func(e map[string]any) { tool(e, 0)["arguments_sha256"] = "45858067" },
			func(e map[string]any) { tool(e, 0)["arguments_prefix"] = `{"path":"other` },
			func(e map[string]any) { tool(e, 0)["decoded_content_len_runes"] = 200024.0 },
			func(e map[string]any) { tool(e, 0)["name"] = "read_file" },
		},
	})
}
