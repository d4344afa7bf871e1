// Package all registers every harness of harnessflow. Import it for its side
// effect:
//
//	import _ "github.com/harnessflow/harnessflow/harness/all"
package all

import (
	_ "github.com/harnessflow/harnessflow/harness/minimal" // registers "minimal"
	_ "github.com/harnessflow/harnessflow/harness/native"  // registers "native"
)
