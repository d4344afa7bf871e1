package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/harnessflow/harnessflow/server"
)

// boundFlags are serve's bounds on what one client or upstream may make the
// proxy hold (README "Shared deployments"); with --config an upstream's own
// max_answer_bytes, max_body_bytes and max_compression_ratio win.
type boundFlags struct {
	answerBytes, upstreamBodyBytes, compressionRatio int64
	inputItems, conns                                int
	bodyTimeout                                      time.Duration
}

// boundFlagNames are the flags of boundFlags (allowed with --config).
var boundFlagNames = []string{"max-answer-bytes", "max-upstream-body-bytes", "max-compression-ratio", "max-input-items", "max-conns", "body-timeout"}

func (b *boundFlags) register(fs *flag.FlagSet) {
	fs.Int64Var(&b.answerBytes, "max-answer-bytes", server.DefaultMaxAnswerBytes,
		"end an answer with response.failed (answer_too_large) once its text, tool-call arguments and reasoning pass `N` bytes, and close the upstream (0: no bound)")
	fs.Int64Var(&b.upstreamBodyBytes, "max-upstream-body-bytes", server.DefaultMaxBodyBytes,
		"end an answer once its upstream body, decompressed, passes `N` bytes (0: no bound)")
	fs.Int64Var(&b.compressionRatio, "max-compression-ratio", server.DefaultMaxCompressionRatio,
		"end a gzip answer that inflates more than `N` times, checked past its first MiB (0: no bound)")
	fs.IntVar(&b.inputItems, "max-input-items", server.DefaultMaxInputItems,
		"refuse a request with more than `N` input items, stored history included, with HTTP 413 (0: no bound)")
	fs.IntVar(&b.conns, "max-conns", server.DefaultMaxConns,
		"keep at most `N` client connections open; more wait to be accepted (0: no bound)")
	fs.DurationVar(&b.bodyTimeout, "body-timeout", server.DefaultBodyTimeout,
		"give a client `D` to send its request body, then HTTP 408 (0: no limit)")
}

// check refuses negative values.
func (b *boundFlags) check() error {
	for _, v := range []struct {
		name string
		n    int64
	}{{"max-answer-bytes", b.answerBytes}, {"max-upstream-body-bytes", b.upstreamBodyBytes}, {"max-compression-ratio", b.compressionRatio},
		{"max-input-items", int64(b.inputItems)}, {"max-conns", int64(b.conns)}, {"body-timeout", int64(b.bodyTimeout)}} {
		if v.n < 0 {
			return fmt.Errorf("--%s: want 0 (no bound) or more, got %d", v.name, v.n)
		}
	}
	return nil
}

// apply sets the bounds of cfg (a flag's 0, no bound, is the server's
// negative value).
func (b *boundFlags) apply(cfg *server.Config) {
	off := func(n int64) int64 {
		if n == 0 {
			return -1
		}
		return n
	}
	cfg.AnswerLimits = server.AnswerLimits{Text: off(b.answerBytes), Body: off(b.upstreamBodyBytes), Ratio: off(b.compressionRatio)}
	cfg.MaxInputItems = int(off(int64(b.inputItems)))
	cfg.MaxConns = int(off(int64(b.conns)))
	cfg.BodyTimeout = noLimit(b.bodyTimeout)
}
