package request

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"

	"github.com/harnessflow/harnessflow/pipeline"
)

// sdkUnmodelled lists the fields we may set that openai-go's
// ChatCompletionNewParams does not model, by where they sit. The oracle
// cannot vouch for them; every other field must survive the round trip.
//
//   - stream: the SDK sets it itself (New vs NewStreaming);
//   - thinking, reasoning_content: provider extensions (DeepSeek, Kimi, GLM);
//   - audio_url: the reference's input_audio form for a URL that is not a
//     data URL (OpenAI takes only {"input_audio":{"data","format"}}).
var sdkUnmodelled = struct{ body, message, part []string }{
	body:    []string{"stream", "thinking"},
	message: []string{"reasoning_content"},
	part:    []string{"audio_url"},
}

// oracleDiff round-trips a chat body through the official SDK's request type
// and reports what it lost or changed, after taking out sdkUnmodelled.
func oracleDiff(t *testing.T, body []byte) string {
	t.Helper()
	var params openai.ChatCompletionNewParams
	if err := json.Unmarshal(body, &params); err != nil {
		t.Fatalf("openai-go cannot decode the body: %v\n%s", err, body)
	}
	again, err := json.Marshal(params)
	if err != nil {
		t.Fatalf("openai-go cannot encode the body back: %v", err)
	}
	want := jsonValue(t, "body", body).(map[string]any)
	sdk := jsonValue(t, "openai-go re-encoding", again).(map[string]any)
	// openai-go v3.98.0 decodes a named function tool_choice into its
	// allowed_tools variant and loses the function name; check such a choice
	// against the named-choice type directly.
	if choice, ok := want["tool_choice"].(map[string]any); ok {
		raw, _ := json.Marshal(choice)
		var named openai.ChatCompletionNamedToolChoiceParam
		if err := json.Unmarshal(raw, &named); err != nil {
			t.Fatalf("openai-go cannot decode tool_choice %s: %v", raw, err)
		}
		back, err := json.Marshal(named)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(any(choice), jsonValue(t, "tool_choice", back)); d != "" {
			return "tool_choice (-ours +sdk):\n" + d
		}
		delete(want, "tool_choice")
		delete(sdk, "tool_choice")
	}
	for _, k := range sdkUnmodelled.body {
		delete(want, k)
	}
	msgs, _ := want["messages"].([]any)
	for _, m := range msgs {
		m := m.(map[string]any)
		for _, k := range sdkUnmodelled.message {
			delete(m, k)
		}
		if parts, ok := m["content"].([]any); ok {
			for _, p := range parts {
				p := p.(map[string]any)
				for _, k := range sdkUnmodelled.part {
					delete(p, k)
				}
			}
		}
	}
	return cmp.Diff(want, sdk)
}

// TestOpenAIOracle: every chat body of the goldens unmarshals into openai-go
// v3's ChatCompletionNewParams and marshals back without losing or changing a
// field we set.
func TestOpenAIOracle(t *testing.T) {
	n := 0
	for _, g := range loadGoldens(t) {
		got := shapeGolden(g, pipeline.Fused)
		if got.err != nil {
			continue
		}
		n++
		t.Run(strings.TrimSuffix(filepath.Base(g.path), ".txtar"), func(t *testing.T) {
			if d := oracleDiff(t, got.shaped.Body); d != "" {
				t.Errorf("openai-go round trip lost or changed fields (-ours +sdk):\n%s", d)
			}
		})
	}
	if n < 30 {
		t.Fatalf("only %d goldens produced a body", n)
	}
}

// TestOpenAIOracleCatchesLoss shows the oracle fails on fields the SDK does
// not know: a misspelt field or a wrong shape must not pass.
func TestOpenAIOracleCatchesLoss(t *testing.T) {
	for name, body := range map[string]string{
		"misspelt field":  `{"model":"m","messages":[{"role":"user","content":"hi"}],"tool_choise":"auto"}`,
		"tool call shape": `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","name":"f"}]}]}`,
		"part shape":      `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","url":"x"}]}]}`,
		"tool choice":     `{"model":"m","messages":[],"tools":[],"tool_choice":{"type":"function","name":"f"}}`,
	} {
		if oracleDiff(t, []byte(body)) == "" {
			t.Errorf("%s: the oracle did not notice", name)
		}
	}
}
