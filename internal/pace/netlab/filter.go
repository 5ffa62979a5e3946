package netlab

import (
	"errors"
	"fmt"
	"os/exec"
)

// ErrNoFilter: the nft command is not installed, so ports cannot be blocked.
var ErrNoFilter = errors.New("blocking a port needs nft, from the Debian package nftables")

// filterTable declares the host's filter: a set of blocked UDP ports and an input chain that
// drops datagrams to them. Declaring what exists already changes nothing and keeps the set's
// ports; flushing the chain and adding its one rule again leaves exactly one rule however
// often this runs.
const filterTable = `table inet netlab {
	set blocked_udp { type inet_service; }
	chain input { type filter hook input priority filter; policy accept; }
}
flush chain inet netlab input
add rule inet netlab input udp dport @blocked_udp drop
`

// BlockUDPPort drops every UDP datagram arriving at port on this host, unicast or broadcast,
// as a host firewall would; what the host sends is untouched. Blocking twice does nothing.
func (h *Host) BlockUDPPort(port uint16) error {
	return h.nft(fmt.Sprintf("add element inet netlab blocked_udp { %d }\n", port))
}

// UnblockUDPPort lets datagrams to port through again. Unblocking a port that was never
// blocked does nothing.
func (h *Host) UnblockUDPPort(port uint16) error {
	// Adding first makes the delete succeed whether or not the port was in the set; both
	// happen in one transaction.
	return h.nft(fmt.Sprintf("add element inet netlab blocked_udp { %d }\ndelete element inet netlab blocked_udp { %d }\n", port, port))
}

// nft applies the filter table and then script inside the host's namespace, atomically.
func (h *Host) nft(script string) error {
	if _, err := exec.LookPath("nft"); err != nil {
		return ErrNoFilter
	}
	if _, err := run(filterTable+script, "ip", "netns", "exec", h.ns, "nft", "-f", "-"); err != nil {
		return fmt.Errorf("filter on %s: %w", h.name, err)
	}
	return nil
}
