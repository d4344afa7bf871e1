//go:build unix

package calibrate

import (
	"os/exec"
	"syscall"
)

// ownGroup makes the command the leader of a new process group, so that
// killGroup ends the agent and every process it started.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills the process group the command leads.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // gone already is fine
	}
}
