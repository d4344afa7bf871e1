package operator

import (
	"fmt"
	"log/slog"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/stages/logmw"
	"github.com/harnessflow/harnessflow/stages/redact"
	"github.com/harnessflow/harnessflow/stages/tap"
)

// The built-in kinds.
const (
	// KindRedact replaces secrets in the output (stages/redact); option
	// patterns: extra regexps.
	KindRedact = "redact"
	// KindLogEvents logs every event in and out of every node
	// (stages/logmw, no content); no options.
	KindLogEvents = "log-events"
	// KindRecord writes the upstream bytes of every run to a new file
	// (stages/tap); option dir (required).
	KindRecord = "record"
)

func init() {
	Register(Kind{Name: KindRedact, Anchor: Anchor{Place: Append}, New: newRedact,
		Doc: "replace secrets (API keys, tokens, private keys) in the output with [REDACTED:<kind>]; patterns: extra regexps"})
	Register(Kind{Name: KindLogEvents, Anchor: Anchor{Place: Around}, New: newLogEvents,
		Doc: "log every event in and out of every stage (slog, no content)"})
	Register(Kind{Name: KindRecord, Anchor: Anchor{Place: Prepend}, New: newRecord,
		Doc: "write the upstream bytes verbatim to a new file in dir, one per run (replayable with translate)"})
}

func newRedact(o *Options) (Maker, error) {
	patterns, err := o.Strings("patterns")
	if err != nil {
		return Maker{}, err
	}
	cfg := redact.Config{}
	for _, p := range patterns {
		cfg.Patterns = append(cfg.Patterns, redact.Pattern{Regexp: p})
	}
	r, err := redact.New(cfg)
	if err != nil {
		return Maker{}, o.Errorf("patterns", "%v", err)
	}
	return Maker{Node: func(Stream) pipeline.Node { return redact.Node(r) }}, nil
}

func newLogEvents(*Options) (Maker, error) {
	return Maker{Middleware: func(s Stream) pipeline.Middleware {
		logger := slog.New(slog.NewTextHandler(s.log(), &slog.HandlerOptions{Level: slog.LevelDebug}))
		return logmw.Middleware(logger, logmw.Events)
	}}, nil
}

func newRecord(o *Options) (Maker, error) {
	dir, err := o.String("dir")
	if err != nil {
		return Maker{}, err
	}
	if dir == "" {
		return Maker{}, o.Errorf("dir", "want the directory to record into")
	}
	return Maker{Node: func(s Stream) pipeline.Node {
		// Every run of the graph records into a new file of its own, which
		// the run creates when it starts and closes when it is over.
		log := s.log()
		announce := func(path string) { fmt.Fprintf(log, "harnessflow: recording upstream bytes to %s\n", path) }
		return tap.Record(dir, s.Wire, announce)
	}}, nil
}
