// Package all holds every harness of harnessflow: importing it registers
// each into the process registry (harness.Default), and [Registry] returns
// them, so that a program names what it serves with an ordinary import:
//
//	proxy := server.New(server.Config{Upstream: url, Registry: all.Registry()})
package all

import (
	"github.com/harnessflow/harnessflow/harness"
	_ "github.com/harnessflow/harnessflow/harness/claudecode"  // registers "claude-code" and "claude-code-bare"
	_ "github.com/harnessflow/harnessflow/harness/deepseektui" // registers "deepseek-tui"
	_ "github.com/harnessflow/harnessflow/harness/kimicli"     // registers "kimi-cli"
	_ "github.com/harnessflow/harnessflow/harness/kimicode"    // registers "kimi-code"
	_ "github.com/harnessflow/harnessflow/harness/littlecoder" // registers "little-coder"
	_ "github.com/harnessflow/harnessflow/harness/minimal"     // registers "minimal"
	_ "github.com/harnessflow/harnessflow/harness/miniswe"     // registers "mini-swe-agent"
	_ "github.com/harnessflow/harnessflow/harness/native"      // registers "native"
	_ "github.com/harnessflow/harnessflow/harness/opencode"    // registers "opencode"
	_ "github.com/harnessflow/harnessflow/harness/pi"          // registers "pi"
	_ "github.com/harnessflow/harnessflow/harness/qwencode"    // registers "qwen-code"
	_ "github.com/harnessflow/harnessflow/harness/sweagent"    // registers "swe-agent"
	_ "github.com/harnessflow/harnessflow/harness/terminus2"   // registers "terminus-2"
	_ "github.com/harnessflow/harnessflow/harness/zcode"       // registers "zcode"
)

// Registry returns the registry of every harness of harnessflow: the
// process registry once this package's imports have registered theirs.
// It also holds any harness the program registered itself
// (harness.Register); a harness of its own that only one server should
// serve is added to the result with With.
func Registry() *harness.Registry { return harness.Default() }
