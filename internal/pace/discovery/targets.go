package discovery

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Interface is one network interface as discovery sees it: enough to decide whether its
// directed broadcast is a beacon target.
type Interface struct {
	Name     string
	Flags    net.Flags
	Prefixes []netip.Prefix
}

func systemInterfaces() ([]Interface, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("listing interfaces: %w", err)
	}
	out := make([]Interface, 0, len(ifs))
	for _, ifc := range ifs {
		addrs, err := ifc.Addrs()
		if err != nil {
			continue // an interface that vanished between the two calls
		}
		i := Interface{Name: ifc.Name, Flags: ifc.Flags}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				i.Prefixes = append(i.Prefixes, prefixOf(n))
			}
		}
		out = append(out, i)
	}
	return out, nil
}

func prefixOf(n *net.IPNet) netip.Prefix {
	addr, _ := netip.AddrFromSlice(n.IP)
	ones, bits := n.Mask.Size()
	if addr.Is4In6() && bits == 128 {
		ones -= 96
	}
	return netip.PrefixFrom(addr.Unmap(), ones)
}

var linkLocal4 = netip.MustParsePrefix("169.254.0.0/16")

// broadcastTargets is the directed broadcast of every eligible interface's IPv4 subnet
// (pace-node §9.1): up, not loopback, not point-to-point, able to broadcast, not
// link-local, wider than /31. skipped says why each interface or address was passed over.
func broadcastTargets(ifaces []Interface, port uint16) (targets []netip.AddrPort, skipped []string) {
	for _, ifc := range ifaces {
		var why string
		switch {
		case ifc.Flags&net.FlagUp == 0:
			why = "down"
		case ifc.Flags&net.FlagLoopback != 0:
			why = "loopback"
		case ifc.Flags&net.FlagPointToPoint != 0:
			why = "point-to-point"
		case ifc.Flags&net.FlagBroadcast == 0:
			why = "cannot broadcast"
		}
		if why != "" {
			skipped = append(skipped, ifc.Name+": "+why)
			continue
		}
		found, reasons := subnetBroadcasts(ifc, port)
		targets, skipped = appendNew(targets, found...), append(skipped, reasons...)
	}
	return targets, skipped
}

func subnetBroadcasts(ifc Interface, port uint16) (targets []netip.AddrPort, skipped []string) {
	for _, p := range ifc.Prefixes {
		a := p.Addr()
		switch {
		case !a.Is4():
			continue // discovery is IPv4: beacons are directed broadcasts
		case linkLocal4.Contains(a):
			skipped = append(skipped, fmt.Sprintf("%s %s: link-local", ifc.Name, p))
		case p.Bits() >= 31 || p.Bits() < 0:
			skipped = append(skipped, fmt.Sprintf("%s %s: no broadcast address in a /%d", ifc.Name, p, p.Bits()))
		default:
			targets = append(targets, netip.AddrPortFrom(directedBroadcast(p), port))
		}
	}
	if len(targets) == 0 && len(skipped) == 0 {
		skipped = append(skipped, ifc.Name+": no IPv4 subnet")
	}
	return targets, skipped
}

func directedBroadcast(p netip.Prefix) netip.Addr {
	b := p.Addr().As4()
	for i := p.Bits(); i < 32; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	return netip.AddrFrom4(b)
}

func appendNew(dst []netip.AddrPort, add ...netip.AddrPort) []netip.AddrPort {
	for _, a := range add {
		if !containsAddr(dst, a) {
			dst = append(dst, a)
		}
	}
	return dst
}

func containsAddr(list []netip.AddrPort, a netip.AddrPort) bool {
	for _, b := range list {
		if a == b {
			return true
		}
	}
	return false
}

// target is one explicit beacon target: a host (an IPv4 address or a name resolved every
// round) and a port (0: the beacon port).
type target struct {
	host string
	port uint16
}

var errTarget = errors.New("a discovery target is host:port or host, IPv4")

func parseTarget(s string) (target, error) {
	host, portText, err := net.SplitHostPort(s)
	if err != nil {
		host, portText = s, "" // a bare host beacons on the beacon port
	}
	if host == "" || strings.ContainsAny(host, ":[]") {
		return target{}, fmt.Errorf("%w: %q", errTarget, s)
	}
	if a, err := netip.ParseAddr(host); err == nil && !a.Is4() {
		return target{}, fmt.Errorf("%w: %q is not IPv4", errTarget, s)
	}
	t := target{host: host}
	if portText != "" {
		p, err := strconv.ParseUint(portText, 10, 16)
		if err != nil || p == 0 {
			return target{}, fmt.Errorf("%w: %q has no usable port", errTarget, s)
		}
		t.port = uint16(p)
	}
	return t, nil
}

// resolve returns the target's first IPv4 address on its port (or port when it has none).
func (t target) resolve(ctx context.Context, port uint16) (netip.AddrPort, error) {
	if t.port != 0 {
		port = t.port
	}
	if a, err := netip.ParseAddr(t.host); err == nil {
		return netip.AddrPortFrom(a, port), nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip4", t.host)
	if err == nil && len(addrs) == 0 {
		err = errNoAddress
	}
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("resolving discovery target %s: %w", t.host, err)
	}
	return netip.AddrPortFrom(addrs[0].Unmap(), port), nil
}

var errNoAddress = errors.New("no IPv4 address")
