package server

import "github.com/harnessflow/harnessflow/harness"

// workspace is the configured workspace policy; "" means none.
func (c Config) workspace() harness.WorkspacePolicy {
	if c.Workspace == "" {
		return harness.WorkspaceNone
	}
	return c.Workspace
}
