//go:build linux

package wsconn

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// setDialSocketOptions runs in the dialer's Control hook, before connect: Nagle off, and
// TCP_USER_TIMEOUT so that data unacknowledged for userTimeout fails the connection.
func setDialSocketOptions(fd uintptr, userTimeout time.Duration) error {
	if err := unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
		return fmt.Errorf("set TCP_NODELAY: %w", err)
	}
	ms := int(userTimeout / time.Millisecond)
	if err := unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, ms); err != nil {
		return fmt.Errorf("set TCP_USER_TIMEOUT: %w", err)
	}
	return nil
}
