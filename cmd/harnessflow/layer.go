package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/prompts"
	"github.com/harnessflow/harnessflow/stages/textcall"
	"github.com/harnessflow/harnessflow/stages/toolprompt"
)

// layerFlags are the flags that configure how turns are planned, shared by
// serve, shape, translate and graph so that they plan alike.
type layerFlags struct {
	prompts       *string
	modelCaps     *string
	variants      variantFlag
	terminusExec  *string
	toolFormat    *string
	toolsInPrompt *bool
	// toolFormatDefault is --tool-format's default: auto for serve, off
	// for the commands that show one thing at a time.
	toolFormatDefault string
}

// variantFlag collects --variant HARNESS=VALUE flags.
type variantFlag map[string]string

func (v variantFlag) String() string { return "" }

func (v variantFlag) Set(s string) error {
	h, val, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(h) == "" {
		return fmt.Errorf("want HARNESS=VARIANT, got %q", s)
	}
	v[strings.TrimSpace(h)] = strings.TrimSpace(val)
	return nil
}

func (l *layerFlags) register(fs *flag.FlagSet) {
	l.prompts = fs.String("prompts", "", "prompt pack `DIR` overlaid on the embedded one (DIR/HARNESS/NAME.tmpl, markers.json)")
	l.variants = variantFlag{}
	fs.Var(l.variants, "variant", "harness variant for every model, `HARNESS=VARIANT` (repeatable; e.g. mini-swe-agent=text, terminus-2=xml,plain)")
	l.terminusExec = fs.String("terminus-exec", "", "deprecated: use --variant terminus-2=plain (or =tmux); kept as an alias of that variant")
	l.modelCaps = fs.String("model-caps", "", "model capabilities `FILE` (JSON array of {\"match\",\"reasoning\",\"efforts\",\"max_output_tokens\",\"variants\",\"tools_in_prompt\",\"tool_format\",\"max_tokens_field\",\"prompt_cache_key\",\"metadata\",\"unsupported\"})")
	def := l.toolFormatDefault
	if def == "" {
		def = textcall.Off
	}
	l.toolFormat = fs.String("tool-format", def, "tool calls and reasoning a chat server left in the answer's text: auto, off or `FORMAT` ("+strings.Join(textcall.Names(), ", ")+")")
	l.toolsInPrompt = fs.Bool("tools-in-prompt", false, "render the request's tools into the prompt in the tool format (auto: qwen3_coder for Qwen3-Coder models, else hermes) and send no tools field, for chat servers without tool support")
}

// config returns the planning configuration for wire and base URL.
func (l *layerFlags) config(wire harness.Wire, baseURL string) (harness.Config, error) {
	cfg := harness.Config{Wire: wire, BaseURL: baseURL, ToolFormat: *l.toolFormat, ToolsInPrompt: *l.toolsInPrompt}
	if err := textcall.CheckName(cfg.ToolFormat); err != nil {
		return cfg, fmt.Errorf("--tool-format: %w", err)
	}
	if cfg.ToolsInPrompt {
		if cfg.ToolFormat == textcall.Off {
			// The answer to tools in the prompt is text: it must be read.
			cfg.ToolFormat = textcall.Auto
		}
		if _, err := toolprompt.Resolve(cfg.ToolFormat, ""); err != nil {
			return cfg, fmt.Errorf("--tools-in-prompt: %w", err)
		}
	}
	if len(l.variants) > 0 || *l.terminusExec != "" {
		cfg.Variants = map[string]string{}
		for h, v := range l.variants {
			if err := harness.CheckVariant(h, v); err != nil {
				return cfg, fmt.Errorf("--variant: %w", err)
			}
			cfg.Variants[h] = v
		}
		switch e := *l.terminusExec; e {
		case "":
		case "tmux", "plain":
			if v := cfg.Variants[harness.NameTerminus2]; v != "" {
				cfg.Variants[harness.NameTerminus2] = v + "," + e
			} else {
				cfg.Variants[harness.NameTerminus2] = e
			}
		default:
			return cfg, fmt.Errorf("--terminus-exec: want tmux or plain, got %q", e)
		}
	}
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
