package netlab

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"
)

func TestReaddressedHostIsReachedAtItsNewAddressOnly(t *testing.T) {
	t.Parallel()
	l, hosts := ForTest(t, "a", "b")
	a, b := hosts[0], hosts[1]
	for range 2 { // the second one is a no-op
		if err := a.RouteDefault(); err != nil {
			t.Fatal(err)
		}
	}
	startHelper(t, a, "serve-tcp", net.JoinHostPort("0.0.0.0", greetPort), a.Name())
	old := a.Addr()
	if got := routedFrom(t, a); got != old {
		t.Fatalf("before the move a routes from %s; want %s", got, old)
	}
	next, err := a.Readdress()
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case next == old || next == b.Addr():
		t.Fatalf("Readdress gave %s; a had %s and b has %s", next, old, b.Addr())
	case !l.Subnet().Contains(mustAddr(t, next)) || a.Addr() != next:
		t.Fatalf("Readdress gave %s (Addr says %s); want an address of %s", next, a.Addr(), l.Subnet())
	}
	if _, err := greet(b, a, 2*time.Second); err != nil {
		t.Errorf("b -> a at its new address %s: %v", next, err)
	}
	if got, err := greetAt(b, old, unreachable); err == nil {
		t.Errorf("b -> a at its old address %s: got %q", old, got)
	}
	if got := routedFrom(t, a); got != next {
		t.Errorf("after the move a routes from %s; want %s (its default route kept)", got, next)
	}
	if c, err := l.AddHost("c"); err != nil {
		t.Fatal(err)
	} else if c.Addr() == next {
		t.Errorf("a new host got a's new address %s", next)
	}
}

// routedFrom is the address the host routes from, found as pace-node's auto endpoints find it:
// a UDP socket connected to an address outside the lab, which sends nothing.
func routedFrom(t *testing.T, h *Host) string {
	t.Helper()
	c, err := h.DialContext(context.Background(), "udp", "203.0.113.1:9")
	if err != nil {
		t.Fatalf("%s routes nowhere: %v", h.Name(), err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).IP.String()
}

func mustAddr(t *testing.T, s string) netip.Addr {
	t.Helper()
	a, err := netip.ParseAddr(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
