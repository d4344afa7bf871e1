// Package e2e holds opt-in end-to-end tests that drive real, unmodified
// coding-agent clients through the harnessflow proxy.
//
// The tests start the proxy in-process on a loopback port, in front of the
// built-in scripted model (scripted), so they need no network and no
// API key. Each test skips unless its client is named by an environment
// variable:
//
//	HARNESSFLOW_CODEX   path to a Codex CLI binary (codex_test.go)
//	HARNESSFLOW_CLAUDE  path to a Claude Code binary (claude_inbound_test.go)
//	HARNESSFLOW_OPENCODE  path to an opencode binary (opencode_inbound_test.go)
//
// The Claude Code and opencode tests pass inside a network namespace with
// only loopback (`unshare --net --map-root-user` with `ip link set lo up`,
// the test binary built with `go test -c`), which keeps the clients offline.
//
// scripts/e2e-codex.sh installs the pinned Codex release and runs the Codex
// test.
package e2e
