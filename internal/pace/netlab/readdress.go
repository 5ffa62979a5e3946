package netlab

import (
	"fmt"
	"net/netip"
	"os"
)

// RouteDefault gives the host a default route out of eth0, as a machine on a LAN has one. The
// lab still reaches nothing outside (the bridge has no uplink), but a program that asks the
// kernel which address it routes from — pace-node's auto endpoints do — gets the host's own
// address instead of finding no route at all. Routing twice does nothing.
func (h *Host) RouteDefault() error {
	if err := ip("-n", h.ns, "route", "replace", "default", "dev", hostDev); err != nil {
		return fmt.Errorf("routing %s: %w", h.name, err)
	}
	return nil
}

// Readdress moves the host to another address of the lab's subnet that no host has, as a DHCP
// server handing out a new lease would, and returns it. The new address is added before the old
// one is removed, so the host is never without one and keeps its routes (RouteDefault's among
// them). Its programs keep running and their sockets stay open, but nothing reaches the old
// address any more: a connection made from it is as good as cut.
func (h *Host) Readdress() (string, error) {
	l := h.lab
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return "", ErrClosed
	}
	next, err := l.freeAddr("")
	if err != nil {
		return "", err
	}
	old := h.Addr()
	if err := h.swapAddr(old, next.String()); err != nil {
		return "", fmt.Errorf("readdressing %s: %w", h.name, err)
	}
	h.setAddr(next)
	return next.String(), nil
}

// swapAddr replaces old by next on eth0. With promote_secondaries off (the kernel's default),
// removing the primary address would remove the new one with it, being in the same subnet, and
// a device left with no address loses its routes; so the new one is promoted instead.
func (h *Host) swapAddr(old, next string) error {
	err := h.inside(func() error {
		return os.WriteFile("/proc/sys/net/ipv4/conf/"+hostDev+"/promote_secondaries", []byte("1\n"), 0)
	})
	if err != nil {
		return fmt.Errorf("promoting secondary addresses: %w", err)
	}
	bits := h.lab.subnet.Bits()
	if err := ip("-n", h.ns, "addr", "add", fmt.Sprintf("%s/%d", next, bits), "brd", "+", "dev", hostDev); err != nil {
		return err
	}
	return ip("-n", h.ns, "addr", "del", fmt.Sprintf("%s/%d", old, bits), "dev", hostDev)
}

// setAddr records the host's address; Addr reads it.
func (h *Host) setAddr(a netip.Addr) {
	h.mu.Lock()
	h.addr = a
	h.mu.Unlock()
}
