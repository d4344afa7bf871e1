package harness

import (
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/stages/request"
)

func TestNewModelTable(t *testing.T) {
	for _, tt := range []struct {
		name    string
		entries []ModelCaps
		model   string
		want    ModelCaps
		err     string
	}{
		{name: "catch-all entry first", entries: []ModelCaps{{Reasoning: request.ReasoningThinkingType, ToolFormat: "hermes"}},
			model: "glm-4.6", want: ModelCaps{Reasoning: request.ReasoningThinkingType, ToolFormat: "hermes", Matched: true}},
		{name: "entry before the built-ins", entries: []ModelCaps{{Match: "My-Model", MaxOutputTokens: 100}},
			model: "org/my-model-7b", want: ModelCaps{Match: "my-model", MaxOutputTokens: 100, Matched: true}},
		{name: "built-ins after the entries", entries: []ModelCaps{{Match: "other"}},
			model: "glm-4.6", want: ModelCaps{Match: "glm-4.6", Reasoning: request.ReasoningThinkingToggle, Matched: true}},
		{name: "no entries: the built-ins", model: "unknown-model", want: ModelCaps{}},
		{name: "bad reasoning", entries: []ModelCaps{{Reasoning: "loud"}}, err: `entry 0: unknown reasoning "loud"`},
		{name: "bad effort", entries: []ModelCaps{{}, {Efforts: []string{"huge"}}}, err: `entry 1: efforts: unknown effort "huge"`},
		{name: "bad tool format", entries: []ModelCaps{{ToolFormat: "Hermes!"}}, err: `tool_format: unknown tool format "Hermes!"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			table, err := NewModelTable(tt.entries...)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := table.Lookup(tt.model)
			if got.Match != tt.want.Match || got.Reasoning != tt.want.Reasoning || got.ToolFormat != tt.want.ToolFormat ||
				got.MaxOutputTokens != tt.want.MaxOutputTokens || got.Matched != tt.want.Matched {
				t.Errorf("Lookup(%q) = %+v, want %+v", tt.model, got, tt.want)
			}
		})
	}
}
