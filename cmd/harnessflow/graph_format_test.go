package main

import (
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/pipeline"
)

// The --format dispatch lives in the CLI (pipeline.Graph.Format is only a
// deprecated shim): each name picks its rendering, others are refused.
func TestFormatGraph(t *testing.T) {
	g := pipeline.Must(pipeline.New("g", pipeline.StageNode("upper", pipeline.Map(strings.ToUpper))))
	for format, want := range map[string]string{"text": g.Describe(), "": g.Describe(), "mermaid": g.Mermaid(), "dot": g.DOT()} {
		if got, err := formatGraph(g, format); err != nil || got != want {
			t.Errorf("formatGraph(%q) = %q, %v", format, got, err)
		}
	}
	if _, err := formatGraph(g, "png"); err == nil || !strings.Contains(err.Error(), `unknown graph format "png"`) {
		t.Errorf("png: %v", err)
	}
}
