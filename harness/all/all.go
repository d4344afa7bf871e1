// Package all registers every harness of harnessflow. Import it for its side
// effect:
//
//	import _ "github.com/harnessflow/harnessflow/harness/all"
package all

import (
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
