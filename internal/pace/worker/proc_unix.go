//go:build unix

package worker

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup starts the compiler as the leader of a new process
// group, so killing the group reaches every process the driver started.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func killProcessGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

func exitCodeOf(e *exec.ExitError) uint32 {
	if ws, ok := e.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return uint32(exitSignalBase + int(ws.Signal()))
	}
	return uint32(e.ExitCode())
}
