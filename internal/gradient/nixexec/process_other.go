//go:build !unix

package nixexec

import (
	"syscall"
	"time"
)

func newProcessGroup() *syscall.SysProcAttr { return nil }

// watchCancel on a system without process groups relies on exec's own kill of the process.
func watchCancel(ctx interface{ Done() <-chan struct{} }, pid int, grace time.Duration) func() {
	return func() {}
}
