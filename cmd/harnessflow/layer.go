package main

import (
	"flag"
	"fmt"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/prompts"
)

// layerFlags are the flags that configure how turns are planned, shared by
// serve, shape, translate and graph so that they plan alike.
type layerFlags struct {
	prompts   *string
	modelCaps *string
}

func (l *layerFlags) register(fs *flag.FlagSet) {
	l.prompts = fs.String("prompts", "", "prompt pack `DIR` overlaid on the embedded one (DIR/HARNESS/NAME.tmpl, markers.json)")
	l.modelCaps = fs.String("model-caps", "", "model capabilities `FILE` (JSON array of {\"match\",\"reasoning\",\"efforts\",\"max_output_tokens\",\"variants\"})")
}

// config returns the planning configuration for wire and base URL.
func (l *layerFlags) config(wire harness.Wire, baseURL string) (harness.Config, error) {
	cfg := harness.Config{Wire: wire, BaseURL: baseURL}
	if *l.prompts != "" {
		p, err := prompts.Load(*l.prompts)
		if err != nil {
			return cfg, fmt.Errorf("--prompts: %w", err)
		}
		cfg.Prompts = p
	}
	if *l.modelCaps != "" {
		t, err := harness.LoadModelTable(*l.modelCaps)
		if err != nil {
			return cfg, fmt.Errorf("--model-caps: %w", err)
		}
		cfg.Models = t
	}
	return cfg, nil
}
