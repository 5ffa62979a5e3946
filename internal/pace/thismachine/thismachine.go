// Package thismachine answers "is this peer this machine?": loopback always is; otherwise the
// address must be one of the host's interface addresses, a set re-read periodically so an
// address gained or lost (DHCP, a VPN coming up) is learned without a restart. The node's
// cache tier serves only this machine, and admission admits it without credentials; both ask
// the same set.
package thismachine

import (
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync/atomic"
	"time"
)

// Set is this host's addresses, refreshed every interval. It is safe for concurrent use.
type Set struct {
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

// New reads the addresses through list (InterfaceAddrs in production) and re-reads them when a
// reading is older than every.
func New(list func() ([]netip.Addr, error), now func() time.Time, every time.Duration, log *slog.Logger) *Set {
	h := &Set{list: list, now: now, every: every, log: log}
	h.cur.Store(h.read(&addrSet{}))
	return h
}

// Contains reports whether a is this machine.
func (h *Set) Contains(a netip.Addr) bool {
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
func (h *Set) current() *addrSet {
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
func (h *Set) read(prev *addrSet) *addrSet {
	now := h.now()
	list, err := h.list()
	if err != nil {
		h.log.Warn("reading this host's addresses failed; keeping the previous set", "err", err)
		return &addrSet{addrs: prev.addrs, at: now}
	}
	addrs := make(map[netip.Addr]struct{}, len(list))
	for _, a := range list {
		addrs[a.Unmap().WithZone("")] = struct{}{}
	}
	return &addrSet{addrs: addrs, at: now}
}

// InterfaceAddrs lists this host's interface addresses.
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

// PeerAddr extracts the IP of a connection's remote address; ok is false when there is none
// (such a peer is never this machine).
func PeerAddr(a net.Addr) (netip.Addr, bool) {
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

// IsPeer reports whether a connection's remote address is this machine.
func (h *Set) IsPeer(remote net.Addr) bool {
	a, ok := PeerAddr(remote)
	return ok && h.Contains(a)
}
