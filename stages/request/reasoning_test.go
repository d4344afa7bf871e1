package request

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/harnessflow/harnessflow/protocol"
)

// reasoningKeys returns the reasoning fields of a chat body as compact JSON
// of an object holding only them.
func reasoningKeys(t *testing.T, body []byte) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	out := map[string]json.RawMessage{}
	for _, k := range []string{"reasoning_effort", "thinking", "chat_template_kwargs", "reasoning"} {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	data, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func shapeEffort(t *testing.T, opts Options, effort string) string {
	t.Helper()
	req := &protocol.ResponsesRequest{Model: "m", Input: protocol.Items{protocol.UserMessage("hi")}, Stream: true}
	if effort != "-" {
		req.Reasoning = &protocol.ReasoningConfig{Effort: effort}
	}
	g, err := NewChatGraph(opts)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Shape(context.Background(), g, req)
	if err != nil {
		t.Fatal(err)
	}
	return reasoningKeys(t, out.Body)
}

// TestReasoningForms shapes a Codex request with each effort (and none:
// "-" is no reasoning object, "" an empty effort) under each control.
func TestReasoningForms(t *testing.T) {
	const (
		nothing = `{}`
		tOn     = `{"thinking":{"type":"enabled"}}`
		tOff    = `{"thinking":{"type":"disabled"}}`
		etOn    = `{"chat_template_kwargs":{"enable_thinking":true}}`
		etOff   = `{"chat_template_kwargs":{"enable_thinking":false}}`
		ttOn    = `{"chat_template_kwargs":{"thinking":true}}`
		ttOff   = `{"chat_template_kwargs":{"thinking":false}}`
		eLow    = `{"reasoning_effort":"low"}`
		eMedium = `{"reasoning_effort":"medium"}`
		eHigh   = `{"reasoning_effort":"high"}`
	)
	or := func(e string) string {
		b, _ := json.Marshal(map[string]any{"reasoning": map[string]string{"effort": e}})
		return string(b)
	}
	efforts := []string{"-", "", "none", "minimal", "low", "medium", "high", "xhigh", "MAX", "thinking"}
	tests := []struct {
		control ReasoningControl
		efforts []string
		base    string
		want    []string // one per effort above
	}{
		{ReasoningDefault, nil, "", []string{nothing, nothing, nothing, nothing, nothing, nothing, nothing, nothing, nothing, nothing}},
		// The thinking toggle is today's: on unless the effort is none.
		{ReasoningThinkingToggle, nil, "", []string{tOn, tOn, tOff, tOn, tOn, tOn, tOn, tOn, tOn, tOn}},
		{ReasoningEffortField, nil, "", []string{nothing, nothing, eLow, eLow, eLow, eMedium, eHigh, eHigh, eHigh, `{"reasoning_effort":"thinking"}`}},
		{ReasoningEffortField, []string{"none", "low", "high"}, "", []string{nothing, nothing, `{"reasoning_effort":"none"}`, eLow, eLow, eHigh, eHigh, eHigh, eHigh, `{"reasoning_effort":"thinking"}`}},
		{ReasoningTemplateEnableThinking, nil, "", []string{nothing, nothing, etOff, etOff, etOn, etOn, etOn, etOn, etOn, etOn}},
		{ReasoningTemplateThinking, nil, "", []string{nothing, nothing, ttOff, ttOff, ttOn, ttOn, ttOn, ttOn, ttOn, ttOn}},
		// A model that cannot turn thinking off: none maps to low, on.
		{ReasoningTemplateThinking, []string{"low", "high"}, "", []string{nothing, nothing, ttOn, ttOn, ttOn, ttOn, ttOn, ttOn, ttOn, ttOn}},
		{ReasoningThinkingType, nil, "", []string{nothing, nothing, tOff, tOff, tOn, tOn, tOn, tOn, tOn, tOn}},
		{ReasoningOpenRouter, nil, "", []string{nothing, nothing, or("none"), or("minimal"), or("low"), or("medium"), or("high"), or("xhigh"), or("xhigh"), or("thinking")}},
		// On OpenRouter every effort-following control takes its form …
		{ReasoningTemplateEnableThinking, nil, "https://openrouter.ai/api/v1", []string{nothing, nothing, or("none"), or("minimal"), or("low"), or("medium"), or("high"), or("xhigh"), or("xhigh"), or("thinking")}},
		{ReasoningEffortField, nil, "https://openrouter.ai/api/v1", []string{nothing, nothing, or("none"), or("minimal"), or("low"), or("medium"), or("high"), or("xhigh"), or("xhigh"), or("thinking")}},
		// … but the thinking toggle stays as it was.
		{ReasoningThinkingToggle, nil, "https://openrouter.ai/api/v1", []string{tOn, tOn, tOff, tOn, tOn, tOn, tOn, tOn, tOn, tOn}},
	}
	for _, tt := range tests {
		for i, e := range efforts {
			got := shapeEffort(t, Options{ReasoningControl: tt.control, Efforts: tt.efforts, BaseURL: tt.base}, e)
			if got != tt.want[i] {
				t.Errorf("%q efforts %v base %q, effort %q: %s, want %s", tt.control, tt.efforts, tt.base, e, got, tt.want[i])
			}
		}
	}
}

// TestReasoningSendEffort: SendEffort still sends ChatEffort's value with
// the default control and the toggle, and does not add to the other forms.
func TestReasoningSendEffort(t *testing.T) {
	for _, tt := range []struct {
		control ReasoningControl
		effort  string
		want    string
	}{
		{ReasoningDefault, "xhigh", `{"reasoning_effort":"high"}`},
		{ReasoningDefault, "none", `{}`},
		{ReasoningThinkingToggle, "thinking", `{"thinking":{"type":"enabled"}}`},
		{ReasoningThinkingToggle, "minimal", `{"reasoning_effort":"low","thinking":{"type":"enabled"}}`},
		{ReasoningTemplateThinking, "high", `{"chat_template_kwargs":{"thinking":true}}`},
		{ReasoningEffortField, "minimal", `{"reasoning_effort":"low"}`},
	} {
		if got := shapeEffort(t, Options{ReasoningControl: tt.control, SendEffort: true}, tt.effort); got != tt.want {
			t.Errorf("%q %q: %s, want %s", tt.control, tt.effort, got, tt.want)
		}
	}
}

func TestNearestEffort(t *testing.T) {
	for _, tt := range []struct {
		effort   string
		accepted []string
		want     string
	}{
		{"High", nil, "high"},
		{"medium", []string{"low", "high"}, "high"}, // a tie goes up
		{"minimal", []string{"low", "medium", "high"}, "low"},
		{"xhigh", []string{"low", "medium", "high"}, "high"},
		{"ultra", []string{"high", "xhigh"}, "xhigh"},
		{"none", []string{"none", "high"}, "none"},
		{"none", []string{"medium", "high"}, "medium"},
		{"thinking", []string{"low"}, "thinking"}, // off the scale: as it is
		{"low", []string{"fast", "deep"}, "low"},  // nothing accepted is on the scale
		{" LOW ", []string{"Low"}, "low"},
	} {
		if got := NearestEffort(tt.effort, tt.accepted); got != tt.want {
			t.Errorf("NearestEffort(%q, %v) = %q, want %q", tt.effort, tt.accepted, got, tt.want)
		}
	}
}

func TestSetReasoningMergesTemplateKwargs(t *testing.T) {
	g := NewShaping(&protocol.ResponsesRequest{}).Body
	setTemplateKwarg(&g, "enable_thinking", true)
	setTemplateKwarg(&g, "thinking", false)
	if got := string(g.Extra["chat_template_kwargs"]); got != `{"enable_thinking":true,"thinking":false}` {
		t.Errorf("chat_template_kwargs = %s", got)
	}
	if SetReasoning(&g, ReasoningThinkingToggle, "high", nil) || SetReasoning(&g, ReasoningDefault, "high", nil) {
		t.Error("SetReasoning claims the default or the toggle")
	}
	for _, c := range ReasoningControls() {
		if !c.Known() {
			t.Errorf("%q not known", c)
		}
	}
	if ReasoningControl("effort").Known() {
		t.Error(`"effort" known`)
	}
}
