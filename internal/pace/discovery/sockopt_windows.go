//go:build windows

package discovery

import (
	"fmt"
	"syscall"
)

// setSockopts: Windows has no SO_REUSEPORT; SO_REUSEADDR alone lets sockets share a UDP
// port, and SO_BROADCAST lets the reply socket send to a broadcast address.
func setSockopts(c syscall.RawConn, shared bool) error {
	opts := []int{syscall.SO_BROADCAST}
	if shared {
		opts = append(opts, syscall.SO_REUSEADDR)
	}
	var serr error
	err := c.Control(func(fd uintptr) {
		for _, o := range opts {
			if serr = syscall.SetsockoptInt(syscall.Handle(fd), syscall.SOL_SOCKET, o, 1); serr != nil {
				serr = fmt.Errorf("socket option %d: %w", o, serr)
				return
			}
		}
	})
	if err != nil {
		return fmt.Errorf("reaching the socket: %w", err)
	}
	return serr
}
