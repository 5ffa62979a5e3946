//go:build unix

package httpfront

import "syscall"

// openFileLimit is the soft RLIMIT_NOFILE (Go raises it to the hard limit at start).
func openFileLimit() (uint64, bool) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, false
	}
	return r.Cur, true
}
