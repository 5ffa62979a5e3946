package tier

import (
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync/atomic"
	"time"
)

// hostAddrs answers "is this peer this machine?": loopback always is; otherwise the address
// must be one of the host's interface addresses, a set re-read every refresh interval so an
// address gained or lost (DHCP, a VPN coming up) is learned without a restart.
type hostAddrs struct {
	list  func() ([]netip.Addr, error)
	now   func() time.Time
	every time.Duration
	log   *slog.Logger

	cur        atomic.Pointer[addrSet]
	refreshing atomic.Bool
}

// addrSet is one reading of the host's addresses; it is never modified once published.
type addrSet struct {
	addrs map[netip.Addr]struct{}
	at    time.Time
}

func newHostAddrs(list func() ([]netip.Addr, error), now func() time.Time, every time.Duration, log *slog.Logger) *hostAddrs {
	h := &hostAddrs{list: list, now: now, every: every, log: log}
	h.cur.Store(h.read(&addrSet{}))
	return h
}

// isLocal reports whether a is this machine.
func (h *hostAddrs) isLocal(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	if !a.IsValid() {
		return false
	}
	if a.IsLoopback() {
		return true
	}
	_, ok := h.current().addrs[a]
	return ok
}

// current returns the address set, re-reading it first when it is older than the interval.
// One caller re-reads; the others meanwhile use the previous set rather than wait.
func (h *hostAddrs) current() *addrSet {
	s := h.cur.Load()
	if h.now().Sub(s.at) < h.every || !h.refreshing.CompareAndSwap(false, true) {
		return s
	}
	defer h.refreshing.Store(false)
	next := h.read(s)
	h.cur.Store(next)
	return next
}

// read lists the addresses; on failure it keeps the previous set (stamped now, so a failing
// lister is retried once per interval rather than on every request).
func (h *hostAddrs) read(prev *addrSet) *addrSet {
	now := h.now()
	list, err := h.list()
	if err != nil {
		h.log.Warn("cache tier: reading this host's addresses failed; keeping the previous set", "err", err)
		return &addrSet{addrs: prev.addrs, at: now}
	}
	addrs := make(map[netip.Addr]struct{}, len(list))
	for _, a := range list {
		addrs[a.Unmap().WithZone("")] = struct{}{}
	}
	return &addrSet{addrs: addrs, at: now}
}

// InterfaceAddrs lists this host's interface addresses; it is the default Config.HostAddrs.
func InterfaceAddrs() ([]netip.Addr, error) {
	ifaddrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("listing interface addresses: %w", err)
	}
	out := make([]netip.Addr, 0, len(ifaddrs))
	for _, ia := range ifaddrs {
		var ip net.IP
		switch v := ia.(type) {
		case *net.IPNet:
			ip = v.IP
		case *net.IPAddr:
			ip = v.IP
		}
		if a, ok := netip.AddrFromSlice(ip); ok {
			out = append(out, a.Unmap())
		}
	}
	return out, nil
}

// peerAddr extracts the IP of a connection's remote address; ok is false when there is none
// (such a peer is never this machine).
func peerAddr(a net.Addr) (netip.Addr, bool) {
	switch v := a.(type) {
	case *net.TCPAddr:
		if v == nil {
			return netip.Addr{}, false
		}
		ip, ok := netip.AddrFromSlice(v.IP)
		return ip, ok
	case nil:
		return netip.Addr{}, false
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr(), true
}
