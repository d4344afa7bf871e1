package server

import "github.com/harnessflow/harnessflow/protocol"

// Request bounds (README "Shared deployments"): besides the body's bytes
// (Config.MaxRequestBytes), the count of its input items and tools. Small
// JSON items decode into much larger structures (about 1.4 KB per item),
// so a body well within the byte bound could still cost the proxy
// gigabytes: the counts are read off the raw body by the syntax check that
// precedes decoding (protocol.DecodeRequestWithin).

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

func (c Config) maxInputItems() int {
	switch {
	case c.MaxInputItems < 0:
		return 0
	case c.MaxInputItems == 0:
		return DefaultMaxInputItems
	}
	return c.MaxInputItems
}

// requestLimits are the request bounds in force.
func (c Config) requestLimits() protocol.RequestLimits {
	return protocol.RequestLimits{InputItems: c.maxInputItems(), Tools: maxTools}
}
