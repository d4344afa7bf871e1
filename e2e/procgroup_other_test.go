//go:build !unix

package e2e

import "os/exec"

// ownProcessGroup makes cancelling cmd kill its process (no process groups
// here: children may outlive it).
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.Cancel = func() error { return cmd.Process.Kill() }
}

// groupAlive reports false: without process groups there is nothing to
// check.
func groupAlive(int) bool { return false }

// killGroup does nothing without process groups.
func killGroup(int) error { return nil }
