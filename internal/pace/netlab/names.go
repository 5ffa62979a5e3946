package netlab

import (
	"fmt"
	"net/netip"
	"os"
	"regexp"
	"strconv"
	"strings"
)

const (
	// nsPrefix starts every namespace a lab makes, so a sweep never touches anyone else's.
	nsPrefix = "netlab_"
	// netnsDir is where ip netns keeps its namespaces, one bind mount per name.
	netnsDir = "/run/netns"
	// bridgeDev is the bridge inside a lab's bridge namespace; its alias records the subnet.
	bridgeDev = "br0"
	// hostDev is a host's end of its veth pair, inside the host's namespace.
	hostDev = "eth0"
	// portPrefix names the bridge's end of a host's veth pair: "p-" and the host name, at most
	// 15 bytes in all, the kernel's limit for interface names.
	portPrefix = "p-"
	// subnetCount is the number of /24 subnets under subnetBase.
	subnetCount = 2048
)

var (
	// subnetBase is where lab subnets start: 10.200.0.0/13 holds subnetCount of them.
	subnetBase = netip.AddrFrom4([4]byte{10, 200, 0, 0})

	// labName and hostName start with a letter, so a named lab never looks like an owned one
	// ("<pid>.<n>"), and hold no "_", the separator inside namespace names. A host name leaves
	// room for portPrefix within 15 bytes.
	labName  = regexp.MustCompile(`^[a-z][a-z0-9-]{0,19}$`)
	hostName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,12}$`)
)

// bridgeNS is the namespace holding lab id's bridge.
func bridgeNS(id string) string { return nsPrefix + id }

// hostNS is the namespace of host in lab id.
func hostNS(id, host string) string { return nsPrefix + id + "_" + host }

// portName is the bridge-side interface of host's veth pair.
func portName(host string) string { return portPrefix + host }

// ownedID is the id of the n-th lab this process owns.
func ownedID(n int) string { return fmt.Sprintf("%d.%d", os.Getpid(), n) }

// ownerPID returns the process that owns the lab a namespace belongs to; ok is false for
// namespaces of named labs and for names that are not a lab's at all.
func ownerPID(ns string) (pid int, ok bool) {
	rest, found := strings.CutPrefix(ns, nsPrefix)
	if !found {
		return 0, false
	}
	digits, _, found := strings.Cut(rest, ".")
	if !found {
		return 0, false
	}
	pid, err := strconv.Atoi(digits)
	return pid, err == nil && pid > 0
}

// subnetAt is the idx-th lab subnet, 10.200.0.0/24 upwards.
func subnetAt(idx int) netip.Prefix {
	b := subnetBase.As4()
	b[1] += byte(idx >> 8)
	b[2] = byte(idx)
	return netip.PrefixFrom(netip.AddrFrom4(b), 24)
}

// hostAddr is the address of the i-th host (1 to 254) in subnet.
func hostAddr(subnet netip.Prefix, i int) netip.Addr {
	b := subnet.Addr().As4()
	b[3] = byte(i)
	return netip.AddrFrom4(b)
}

// broadcastOf is the directed broadcast address of a /24.
func broadcastOf(subnet netip.Prefix) netip.Addr { return hostAddr(subnet, 255) }
