package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/server"
	"github.com/harnessflow/harnessflow/stages/operator"
)

// extensionFlags are the flags that insert extension stages into a response
// graph (translate now, serve later).
type extensionFlags struct {
	redact    bool
	patterns  stringList
	logEvents bool
	recordDir string
}

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func (e *extensionFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&e.redact, "redact", false, "replace secrets (API keys, tokens, private keys) in the output with [REDACTED:<kind>]")
	fs.Var(&e.patterns, "redact-pattern", "an extra secret regexp to redact (repeatable; implies --redact)")
	fs.BoolVar(&e.logEvents, "log-events", false, "log every event in and out of every stage to stderr (slog, no content)")
	fs.StringVar(&e.recordDir, "record", "", "write the upstream bytes verbatim to a new file in `DIR` (replayable with translate)")
}

// stages makes the requested operator stages through the registry
// (stages/operator), in the order their edits apply: redact (appended),
// record (prepended), log-events (wrapping every node, the others too).
// An error names the flag.
func (e *extensionFlags) stages() ([]*operator.Stage, error) {
	var out []*operator.Stage
	if e.redact || len(e.patterns) > 0 {
		s, err := operator.New(operator.KindRedact, map[string]any{"patterns": []string(e.patterns)})
		if err != nil {
			return nil, fmt.Errorf("--redact-pattern: %w", err)
		}
		out = append(out, s)
	}
	if e.recordDir != "" {
		s, err := operator.New(operator.KindRecord, map[string]any{"dir": e.recordDir})
		if err != nil {
			return nil, fmt.Errorf("--record: %w", err)
		}
		out = append(out, s)
	}
	if e.logEvents {
		s, err := operator.New(operator.KindLogEvents, nil)
		if err != nil {
			return nil, fmt.Errorf("--log-events: %w", err)
		}
		out = append(out, s)
	}
	return out, nil
}

// extend returns a server.Config.Extend putting stages into every response
// graph, for the stream's wire, logging to log; nil without stages.
func extend(stages []*operator.Stage, log io.Writer) func(server.StreamInfo) []pipeline.Edit {
	if len(stages) == 0 {
		return nil
	}
	return func(info server.StreamInfo) []pipeline.Edit {
		return operator.Edits(operator.Stream{Wire: string(info.Wire), Log: log}, stages...)
	}
}
