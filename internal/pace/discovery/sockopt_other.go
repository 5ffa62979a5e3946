//go:build !unix && !windows

package discovery

import "syscall"

// setSockopts: platforms without socket options bind plainly; the beacon port is then not
// shared, and broadcast targets may be refused by the kernel (counted as send errors).
func setSockopts(syscall.RawConn, bool) error { return nil }
