//go:build solaris

package discovery

import "golang.org/x/sys/unix"

// sharedPortOpts: Solaris and illumos have no SO_REUSEPORT; SO_REUSEADDR shares a UDP port.
var sharedPortOpts = []int{unix.SO_REUSEADDR}
