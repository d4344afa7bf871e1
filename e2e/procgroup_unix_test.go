//go:build unix

package e2e

import (
	"errors"
	"os/exec"
	"syscall"
)

// ownProcessGroup starts cmd as the leader of a new process group and makes
// cancelling it kill the whole group, so that the children a client spawns
// (Codex's Node launcher starts a native binary, which starts shells) die
// with it.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
}

// groupAlive reports whether any process of the group led by pid is still
// running.
func groupAlive(pid int) bool {
	return syscall.Kill(-pid, 0) == nil
}

// killGroup sends SIGKILL to the process group led by pid; a group that is
// already gone is not an error.
func killGroup(pid int) error {
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}
