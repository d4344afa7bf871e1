package server

import (
	"fmt"

	"github.com/harnessflow/harnessflow/internal/jsonx"
)

// Request bounds (README "Shared deployments"): besides the body's bytes
// (Config.MaxRequestBytes), the count of its input items and tools. Small
// JSON items decode into much larger structures (about 1.4 KB per item),
// so a body well within the byte bound could still cost the proxy
// gigabytes: the counts are read off the raw body, before it is decoded.

// DefaultMaxInputItems is Config.MaxInputItems's default. Codex sends a
// session's whole history and compacts it when the context window fills:
// with its default model's 272k tokens, a history of tool calls and their
// outputs (a few hundred tokens a pair) is one or two thousand items, and
// even items of ten tokens each would stay under 30,000 — an estimate from
// the window, not a measured session.
const DefaultMaxInputItems = 50_000

// maxTools bounds the tools of one request (Codex sends a few dozen, with
// MCP servers a few hundred).
const maxTools = 4096

// RequestBoundError is a request over a request bound: HTTP 413.
type RequestBoundError struct {
	// Path is the JSON path of the array that went over ("input", "tools").
	Path string
	// Limit is the bound.
	Limit int
}

// Error names the path and the bound.
func (e *RequestBoundError) Error() string {
	return fmt.Sprintf("%s: more than %d elements (the proxy's bound for one request)", e.Path, e.Limit)
}

func (c Config) maxInputItems() int {
	switch {
	case c.MaxInputItems < 0:
		return 0
	case c.MaxInputItems == 0:
		return DefaultMaxInputItems
	}
	return c.MaxInputItems
}

// checkCounts reads the top-level "input" and "tools" arrays of body and
// returns a *RequestBoundError for one over its bound (maxItems 0: input
// unbounded). A body that does not scan is left to the decoder, which says
// what is wrong with it.
func checkCounts(body []byte, maxItems int) error {
	var sc jsonx.Scanner
	var over *RequestBoundError
	count := func(path string, limit int) bool {
		if sc.Kind() != jsonx.KindArray {
			return sc.Skip()
		}
		n := 0
		return sc.Array(func() bool {
			if n++; limit > 0 && n > limit {
				over = &RequestBoundError{Path: path, Limit: limit}
				return false
			}
			return sc.Skip()
		})
	}
	sc.ParseObject(body, func(key []byte) bool {
		switch string(key) {
		case "input":
			return count("input", maxItems)
		case "tools":
			return count("tools", maxTools)
		}
		return sc.Skip()
	})
	if over != nil {
		return over
	}
	return nil
}
