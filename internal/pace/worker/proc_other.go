//go:build !unix

package worker

import "os/exec"

func ownProcessGroup(*exec.Cmd) {}

func killProcessGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}

func exitCodeOf(e *exec.ExitError) uint32 {
	if c := e.ExitCode(); c >= 0 {
		return uint32(c)
	}
	return 1
}
