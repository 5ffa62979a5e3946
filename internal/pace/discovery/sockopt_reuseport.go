//go:build unix && !solaris

package discovery

import "golang.org/x/sys/unix"

// sharedPortOpts let every node on the host bind the beacon port.
var sharedPortOpts = []int{unix.SO_REUSEADDR, unix.SO_REUSEPORT}
