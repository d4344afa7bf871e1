package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/stages/logmw"
	"github.com/harnessflow/harnessflow/stages/redact"
	"github.com/harnessflow/harnessflow/stages/tap"
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

// apply inserts the requested stages into g. The returned closer must be
// called when the run is over (the recording needs none: each run opens and
// closes its own).
func (e *extensionFlags) apply(g *pipeline.Graph, prefix string, stderr io.Writer) (*pipeline.Graph, func() error, error) {
	closer := func() error { return nil }
	var err error
	if e.redact || len(e.patterns) > 0 {
		cfg := redact.Config{}
		for _, p := range e.patterns {
			cfg.Patterns = append(cfg.Patterns, redact.Pattern{Regexp: p})
		}
		r, rerr := redact.New(cfg)
		if rerr != nil {
			return nil, closer, fmt.Errorf("--redact-pattern: %w", rerr)
		}
		if g, err = g.Append(redact.Node(r)); err != nil {
			return nil, closer, err
		}
	}
	if e.recordDir != "" {
		// Every run of g records into a new file of its own, which the run
		// creates when it starts and closes when it is over.
		announce := func(path string) { fmt.Fprintf(stderr, "harnessflow: recording upstream bytes to %s\n", path) }
		if g, err = g.Prepend(tap.Record(e.recordDir, prefix, announce)); err != nil {
			return nil, closer, err
		}
	}
	if e.logEvents {
		logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		if g, err = logmw.Wrap(g, logger, logmw.Events); err != nil {
			closer()
			return nil, func() error { return nil }, err
		}
	}
	return g, closer, nil
}
