//go:build unix

package discovery

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// setSockopts sets each SOL_SOCKET option to 1 before the socket binds: SO_REUSEADDR and
// SO_REUSEPORT let every node on the host share the beacon port (each hears every
// broadcast), SO_BROADCAST lets the reply socket send to a broadcast address.
func setSockopts(c syscall.RawConn, shared bool) error {
	opts := []int{unix.SO_BROADCAST}
	if shared {
		opts = append(opts, sharedPortOpts...)
	}
	var serr error
	err := c.Control(func(fd uintptr) {
		for _, o := range opts {
			if serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, o, 1); serr != nil {
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
